package history

import (
	"errors"
	"fmt"

	"github.com/terse-dev/terse/tree"
)

// Format is a provider's request shape.
type Format uint8

// The request formats.
const (
	// Anthropic is the Anthropic Messages API request body.
	Anthropic Format = iota + 1
	// OpenAI is the OpenAI Chat Completions request body.
	OpenAI
	// Responses is the OpenAI Responses API request body.
	Responses
)

func (f Format) String() string {
	switch f {
	case Anthropic:
		return "anthropic"
	case OpenAI:
		return "openai"
	case Responses:
		return "responses"
	}
	return "unknown"
}

// ParseFormat returns the format named "anthropic", "openai" or
// "responses".
func ParseFormat(name string) (Format, error) {
	switch name {
	case "anthropic":
		return Anthropic, nil
	case "openai":
		return OpenAI, nil
	case "responses":
		return Responses, nil
	}
	return 0, fmt.Errorf("unknown format %q (want anthropic, openai or responses)", name)
}

// Request is a decoded provider request: its conversation in the neutral
// model, its tool definitions, and everything else as raw JSON.
//
// Edit Messages freely (Reduce returns a new slice to assign); parts keep
// a link to the provider blocks they came from so that fields the model
// does not name survive [Request.AppendJSON].
type Request struct {
	Format   Format
	Messages []Message
	Tools    []Tool

	raw  tree.Value   // the whole request object
	srcs []tree.Value // provider messages (src-1 indexes this); Anthropic's system value is one of them
	sys  int32        // Anthropic: src of the top-level system value (0: none)
}

// FormatError reports a request whose JSON is well formed but whose shape
// is not the format's.
type FormatError struct {
	Pointer tree.Pointer // where, e.g. "/messages/3/role"
	Msg     string
}

func (e *FormatError) Error() string {
	if e.Pointer == "" {
		return e.Msg
	}
	return string(e.Pointer) + ": " + e.Msg
}

func shapeErr(p tree.Pointer, format string, args ...any) error {
	return &FormatError{Pointer: p, Msg: fmt.Sprintf(format, args...)}
}

// Decode parses a request in format f. A zero f detects the format with
// [DetectFormat]. JSON syntax errors are [*tree.SyntaxError]s; shape errors
// are [*FormatError]s.
func Decode(data []byte, f Format) (*Request, error) {
	v, err := tree.Parse(data)
	if err != nil {
		return nil, err
	}
	if f == 0 {
		f = DetectFormat(v)
	}
	switch f {
	case Anthropic:
		return decodeAnthropic(v)
	case OpenAI:
		return decodeOpenAI(v)
	case Responses:
		return decodeResponses(v)
	}
	return nil, errors.New("history: unknown format")
}

// DecodeOpenAI parses an OpenAI Chat Completions request body.
func DecodeOpenAI(data []byte) (*Request, error) { return Decode(data, OpenAI) }

// DetectFormat guesses a request's format: Responses when it has "input"
// and no "messages"; Anthropic when it has a top-level "system", or a
// message whose content blocks are tool_use, tool_result or thinking, or
// whose role is not one Anthropic allows elsewhere; OpenAI otherwise.
func DetectFormat(v tree.Value) Format {
	if v.Has("input") && !v.Has("messages") {
		return Responses
	}
	if v.Has("system") {
		return Anthropic
	}
	msgs, _ := v.Get("messages")
	for _, m := range msgs.Items() {
		role, _ := m.Get("role")
		switch role.Str() {
		case "system", "developer", "tool", "function":
			return OpenAI
		}
		if m.Has("tool_calls") || m.Has("tool_call_id") {
			return OpenAI
		}
		c, _ := m.Get("content")
		for _, b := range c.Items() {
			t, _ := b.Get("type")
			switch t.Str() {
			case "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document":
				return Anthropic
			case "image_url", "input_audio", "file":
				return OpenAI
			}
		}
	}
	return OpenAI
}

// AppendJSON appends the request as compact JSON. Members, blocks and
// fields the model does not name are written as they were read; when the
// messages were not changed the output equals the input's compact form.
func (r *Request) AppendJSON(dst []byte) ([]byte, error) {
	v, err := r.Value()
	if err != nil {
		return dst, err
	}
	return tree.AppendJSON(dst, v), nil
}

// Value returns the request as a JSON tree.
func (r *Request) Value() (tree.Value, error) {
	switch r.Format {
	case Anthropic:
		return r.encodeAnthropic()
	case OpenAI:
		return r.encodeOpenAI()
	case Responses:
		return r.encodeResponses()
	}
	return tree.Value{}, errors.New("history: request has no format")
}

// piece is a run of parts that becomes one provider message: consecutive
// parts from the same provider message are put back together.
type piece struct {
	src   int32
	role  Role
	parts []Part
}

// pieces splits messages into provider-message pieces.
func pieces(msgs []Message) []piece {
	var out []piece
	add := func(src int32, role Role, ps []Part) {
		if n := len(out); n > 0 && src != 0 && out[n-1].src == src {
			out[n-1].parts = append(out[n-1].parts, ps...)
			return
		}
		out = append(out, piece{src: src, role: role, parts: append([]Part(nil), ps...)})
	}
	for _, m := range msgs {
		if len(m.Parts) == 0 {
			add(m.src, m.Role, nil)
			continue
		}
		start := 0
		for i := 1; i <= len(m.Parts); i++ {
			if i == len(m.Parts) || m.Parts[i].src != m.Parts[start].src {
				add(m.Parts[start].src, m.Role, m.Parts[start:i])
				start = i
			}
		}
	}
	return out
}

// source returns the provider message piece p came from when p holds
// exactly what decoding that message gives (same role, same parts), so
// that it can be written back as it was read; ok is false when p is new
// or was edited. Writing an unchanged message verbatim is what makes
// decode → encode give back every member the model does not name, in
// whatever shape the sender wrote it.
func (r *Request) source(p piece) (raw tree.Value, ok bool) {
	if p.src == 0 {
		return raw, false
	}
	raw = r.srcs[p.src-1]
	if p.src == r.sys || raw.Kind() != tree.KindObject {
		return raw, false
	}
	var m Message
	var err error
	switch r.Format {
	case Anthropic:
		m, err = anthropicMessage(raw, "")
	case OpenAI:
		m, err = openaiMessage(raw, "")
	case Responses:
		m, err = responsesItem(raw, "")
	default:
		return raw, false
	}
	return raw, err == nil && m.Role == p.role && equalParts(m.Parts, p.parts)
}

// patch returns raw (an object) with the members in set replacing those of
// the same key, in place, set members raw lacks appended, and members
// named in drop removed. A member whose value is unchanged is left as it
// was, duplicates included, so that patching with unchanged values gives
// raw back; a changed one replaces every member of its key. A raw that is
// not an object yields set alone.
func patch(raw tree.Value, set []tree.Member, drop ...string) tree.Value {
	if raw.Kind() != tree.KindObject {
		return tree.Object(set...)
	}
	mems := raw.Members()
	same := make([]bool, len(set))
	present := make([]bool, len(set))
	changed := len(drop) > 0
	for i, s := range set {
		if v, ok := raw.Get(s.Key); ok {
			present[i] = true
			same[i] = tree.Equal(v, s.Value)
		}
		changed = changed || !same[i]
	}
	if !changed {
		return raw
	}
	out := make([]tree.Member, 0, len(mems)+len(set))
	used := make([]bool, len(set))
outer:
	for _, m := range mems {
		for _, d := range drop {
			if m.Key == d {
				continue outer
			}
		}
		for i, s := range set {
			if s.Key == m.Key && !same[i] {
				if !used[i] {
					out = append(out, s)
					used[i] = true
				}
				continue outer
			}
		}
		out = append(out, m)
	}
	for i, s := range set {
		if !present[i] {
			out = append(out, s)
		}
	}
	return tree.Object(out...)
}

func member(k string, v tree.Value) tree.Member { return tree.Member{Key: k, Value: v} }

// get returns v's member key (null when absent).
func get(v tree.Value, key string) tree.Value {
	x, _ := v.Get(key)
	return x
}

// argsValue parses tool-call arguments, falling back to an empty object.
func argsValue(args string) tree.Value {
	if args == "" {
		return tree.Object()
	}
	v, err := tree.ParseString(args)
	if err != nil {
		return tree.Object()
	}
	return v
}

// toolsFrom reads tool definitions; name, description and schema are found
// either at the top of each entry (Anthropic) or under "function"
// (OpenAI).
func toolsFrom(v tree.Value) []Tool {
	var out []Tool
	for _, t := range v.Items() {
		if fn, ok := t.Get("function"); ok {
			t = fn
		}
		schema, ok := t.Get("input_schema")
		if !ok {
			schema = get(t, "parameters")
		}
		out = append(out, Tool{Name: get(t, "name").Str(), Description: get(t, "description").Str(), Schema: schema})
	}
	return out
}

// Field returns the request's top-level member key ("model", "stream",
// ...), as sent.
func (r *Request) Field(key string) (tree.Value, bool) { return r.raw.Get(key) }
