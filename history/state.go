package history

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"unsafe"

	"github.com/terse-dev/terse/tree"
)

// StateVersion is the version of the [State] document this package writes.
const StateVersion = 1

// State is what [Reduce] remembers between calls. It travels as a small
// JSON document:
//
//	{"version":1,"boundary":120,"dropped":0,"first":"…","last":"…","calls":41,"prefix_changes":3}
//
// Boundary and Dropped index the normalised conversation: messages before
// Boundary have their assistant and tool content replaced by placeholders,
// and assistant and tool messages before Dropped are removed. First and
// Last fingerprint the messages at 0 and Boundary-1, so a state that no
// longer fits its conversation is noticed. The zero State means "no
// trimming yet".
type State struct {
	Version       int    `json:"version"`
	Boundary      int    `json:"boundary"`
	Dropped       int    `json:"dropped"`
	First         string `json:"first,omitempty"`
	Last          string `json:"last,omitempty"`
	Calls         int    `json:"calls"`          // Reduce calls so far
	PrefixChanges int    `json:"prefix_changes"` // calls that changed the cached prefix

	problem string // why the document was not a valid state
}

// ParseState reads a state document. Empty input is the zero State. A JSON
// syntax error is returned as a [*tree.SyntaxError]; "{}" is the zero
// State; a document with the
// wrong shape or types is not an error here: it is returned as a State
// that [Reduce] reports as a mismatch and recomputes. On a syntax error the
// State returned beside the error is such a State too, so a caller may warn
// and carry on.
func ParseState(data []byte) (State, error) {
	var s State
	if len(data) == 0 {
		return s, nil
	}
	v, err := tree.Parse(data)
	if err != nil {
		s.problem = "state is not JSON: " + err.Error()
		return s, err
	}
	if v.Kind() != tree.KindObject {
		s.problem = "state is a JSON " + v.Kind().String() + ", want an object"
		return s, nil
	}
	num := func(key string, dst *int) {
		x, ok := v.Get(key)
		if !ok {
			return
		}
		i, err := x.Int()
		if x.Kind() != tree.KindNumber || err != nil || i < 0 || i > 1<<31 {
			if s.problem == "" {
				s.problem = fmt.Sprintf("%s is %s, want a non-negative integer", key, x)
			}
			return
		}
		*dst = int(i)
	}
	str := func(key string, dst *string) {
		x, ok := v.Get(key)
		if !ok {
			return
		}
		if x.Kind() != tree.KindString {
			if s.problem == "" {
				s.problem = fmt.Sprintf("%s is %s, want a string", key, x)
			}
			return
		}
		*dst = x.Str()
	}
	num("version", &s.Version)
	num("boundary", &s.Boundary)
	num("dropped", &s.Dropped)
	str("first", &s.First)
	str("last", &s.Last)
	num("calls", &s.Calls)
	num("prefix_changes", &s.PrefixChanges)
	if s.problem == "" && !v.Has("version") && (v.Has("boundary") || v.Has("dropped")) {
		s.problem = "version is missing"
	}
	return s, nil
}

// AppendJSON appends the state as one line of compact JSON, members in a
// fixed order.
func (s State) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"version":`...)
	dst = strconv.AppendInt(dst, int64(s.Version), 10)
	dst = append(dst, `,"boundary":`...)
	dst = strconv.AppendInt(dst, int64(s.Boundary), 10)
	dst = append(dst, `,"dropped":`...)
	dst = strconv.AppendInt(dst, int64(s.Dropped), 10)
	if s.First != "" {
		dst = append(dst, `,"first":`...)
		dst = tree.AppendString(dst, s.First)
	}
	if s.Last != "" {
		dst = append(dst, `,"last":`...)
		dst = tree.AppendString(dst, s.Last)
	}
	dst = append(dst, `,"calls":`...)
	dst = strconv.AppendInt(dst, int64(s.Calls), 10)
	dst = append(dst, `,"prefix_changes":`...)
	dst = strconv.AppendInt(dst, int64(s.PrefixChanges), 10)
	return append(dst, '}')
}

// MarshalJSON implements json.Marshaler.
func (s State) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// UnmarshalJSON implements json.Unmarshaler with [ParseState].
func (s *State) UnmarshalJSON(data []byte) error {
	x, err := ParseState(data)
	if err != nil {
		return err
	}
	*s = x
	return nil
}

// Fingerprint returns a short stable hash of a message's content: role and
// every modelled field of every part (not the provider JSON it came from).
func Fingerprint(m *Message) string {
	h := sha256.New()
	var buf []byte
	str := func(s string) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(s)))
		h.Write(buf)
		h.Write(unsafe.Slice(unsafe.StringData(s), len(s))) // not retained
	}
	var parts func(ps []Part)
	parts = func(ps []Part) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(ps)))
		h.Write(buf)
		for i := range ps {
			p := &ps[i]
			flags := byte(p.Kind) | boolBit(p.IsError, 0x40) | boolBit(p.Redacted, 0x80)
			h.Write([]byte{flags})
			str(p.Text)
			str(p.ID)
			str(p.Name)
			str(p.Args)
			str(p.MediaType)
			str(p.Data)
			str(p.URL)
			str(p.Signature)
			if p.Kind == Opaque {
				str(p.raw.String())
			}
			parts(p.Content)
		}
	}
	str(string(m.Role))
	parts(m.Parts)
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:8])
}

func boolBit(b bool, bit byte) byte {
	if b {
		return bit
	}
	return 0
}
