package fit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/terse-dev/terse/store"
)

// DefaultStoreTimeout bounds every store call when Options.StoreTimeout is
// zero: a store that does not answer in time counts as failed.
const DefaultStoreTimeout = 500 * time.Millisecond

// publicKey keys handles when Options.Key is empty: handles are then
// deterministic across processes (same scope and content, same handle),
// but guessable by whoever knows the content and the scope.
var publicKey = []byte("terse chunk handles")

// span is a part of the source: the units [A, B), or, when End > 0, the
// bytes [Off, End) of unit A's text (its compact JSON, or the line).
type span struct {
	A   int `json:"a"`
	B   int `json:"b"`
	Off int `json:"o,omitempty"`
	End int `json:"e,omitempty"`
}

func (s span) cut() bool { return s.End > 0 }

// header is the first line of a stored view: what [FetchChunk] needs to
// cut and render its chunks. A view stored by a fit holds the payload
// after the header; a view made by splitting a chunk names the view that
// holds it (Payload).
type header struct {
	V       int    `json:"v"`
	Scope   string `json:"scope"`             // scopeTag of Options.Scope
	Payload string `json:"payload,omitempty"` // handle of the view holding the payload; "" is this one
	Kind    string `json:"kind"`              // json, text, diff
	Pointer string `json:"pointer,omitempty"`
	Mode    int    `json:"mode,omitempty"`
	Format  string `json:"format,omitempty"`
	Label   string `json:"label,omitempty"`
	Unit    string `json:"unit"`
	Total   int    `json:"total"`
	// Files holds, for a diff, each unit's line range [start, end).
	Files  [][2]int `json:"files,omitempty"`
	Chunks []span   `json:"chunks"`
}

const headerVersion = 2

// wellFormed reports whether the names h gives its units and its source
// are ones a fit writes. A chunk's text repeats them, so a damaged or
// forged view with other names is treated as gone rather than echoed
// (a long one would break the budget).
func (h *header) wellFormed() bool {
	switch h.Kind {
	case "json":
		return (h.Unit == "items" || h.Unit == "members") &&
			(h.Label == "" || h.Label == h.Pointer || h.Label == "the root array" || h.Label == "the root object")
	case "text":
		return h.Unit == "lines" && h.Label == ""
	case "diff":
		return (h.Unit == "files" || h.Unit == "lines") &&
			(h.Label == "the diff" || h.Label == "the diff (file 1 is its preamble)")
	}
	return false
}

// scopeTag is what a view stores of its scope: a digest, so the store
// never holds session ids.
func scopeTag(scope string) string {
	sum := sha256.Sum256([]byte("terse scope\x00" + scope))
	return hex.EncodeToString(sum[:16])
}

// mint returns the handle of a view: a MAC of its scope and content under
// Options.Key, so that it is unguessable without the key and the same
// view in another scope gets another handle. The MAC is written as 16
// decimal digits ("c_" and 16 of the hex digits handles are checked
// for): a tokenizer reads 1–3 digits as one token, so every handle costs
// the same number of tokens wherever it is quoted, and what fits a
// budget never depends on which handle a key or a scope gave.
func mint(o Options, blob ...[]byte) string {
	key := o.Key
	if len(key) == 0 {
		key = publicKey
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(o.Scope))
	m.Write([]byte{0})
	for _, b := range blob {
		m.Write(b)
	}
	return "c_" + fmt.Sprintf("%016d", binary.BigEndian.Uint64(m.Sum(nil)[:8])%1e16)
}

// sampleHandle stands for a handle wherever a text is measured before
// its handle is known: it costs what every handle costs (see mint).
const sampleHandle = "c_0123456789012345"

// StoreError reports a chunk store that failed or did not answer in time.
// A fit whose chunks cannot be stored still fits its budget (see
// Result.StoreErr); a chunk fetch returns it.
type StoreError struct {
	Op  string // "put" or "get"
	Err error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("fit: chunk store %s failed: %v", e.Op, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

// put stores a view, bounded by the store timeout.
func put(ctx context.Context, o Options, h header, payload []byte) (string, error) {
	h.V, h.Scope = headerVersion, scopeTag(o.Scope)
	hj, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	hj = append(hj, '\n')
	handle := mint(o, hj, payload)
	ctx, cancel := context.WithTimeout(ctx, putTimeout(o.StoreTimeout, len(payload)))
	defer cancel()
	if err := store.PutParts(ctx, o.Store, handle, hj, payload); err != nil {
		return "", &StoreError{"put", err}
	}
	return handle, nil
}

// putTimeout is the time a put of n bytes may take: the store call's
// bound, plus the time to hash and write a large payload on a slow disk
// (a second per 16 MB), so that a multi-megabyte result is not reported
// unretrievable only because it is large.
func putTimeout(base time.Duration, n int) time.Duration {
	return base + time.Duration(n/(16<<20))*time.Second
}

// get loads a view and its payload, checking its scope.
func get(ctx context.Context, o Options, handle string) (header, []byte, error) {
	h, payload, err := getBlob(ctx, o, handle)
	if err != nil || h.Payload == "" {
		return h, payload, err
	}
	ph, payload, err := getBlob(ctx, o, h.Payload)
	if err != nil {
		if _, ok := errors.AsType[*ExpiredError](err); ok {
			return h, nil, &ExpiredError{handle}
		}
		return h, nil, err
	}
	if ph.Kind != h.Kind {
		return h, nil, &ExpiredError{handle}
	}
	return h, payload, nil
}

func getBlob(ctx context.Context, o Options, handle string) (header, []byte, error) {
	var h header
	if !store.ValidKey(handle) {
		return h, nil, &ExpiredError{handle}
	}
	ctx, cancel := context.WithTimeout(ctx, o.StoreTimeout)
	defer cancel()
	blob, err := o.Store.Get(ctx, handle)
	if errors.Is(err, store.ErrNotFound) {
		return h, nil, &ExpiredError{handle}
	}
	if err != nil {
		return h, nil, &StoreError{"get", err}
	}
	nl := bytes.IndexByte(blob, '\n')
	if nl < 0 || json.Unmarshal(blob[:nl], &h) != nil || h.V != headerVersion || !h.wellFormed() {
		return h, nil, &ExpiredError{handle}
	}
	if h.Scope != scopeTag(o.Scope) {
		return h, nil, &ScopeError{handle}
	}
	return h, blob[nl+1:], nil
}

// ExpiredError is returned by [Chunk] for a handle that is unknown or has
// expired. Its message is terminal and says how to get the data again; it
// is part of the API.
type ExpiredError struct {
	Handle string
}

func (e *ExpiredError) Error() string {
	return "chunk handle " + e.Handle + " is unknown or expired (chunks are kept for a while after last use); " +
		"re-run the original call to get the data again"
}

// ScopeError is returned by [Chunk] for a handle minted in another scope
// (another session or conversation). Its message is terminal; it is part
// of the API.
type ScopeError struct {
	Handle string
}

func (e *ScopeError) Error() string {
	return "chunk handle " + e.Handle + " belongs to another session and cannot be read from this one; " +
		"re-run the original call in this session to get the data"
}

// ChunkRangeError is returned by [Chunk] for a chunk number out of range.
type ChunkRangeError struct {
	Handle string
	N      int
	Chunks int
}

func (e *ChunkRangeError) Error() string {
	return fmt.Sprintf("chunk %d of %s does not exist: chunks are numbered 1 to %d", e.N, e.Handle, e.Chunks)
}
