package mcpproxy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// Call describes the tools/call whose result is being transformed.
type Call struct {
	// Session names the dedup and chunk partition: the client session and
	// its partition generation, e.g. "stdio/0". It changes when the client
	// compacts its context (see [Proxy]).
	Session string
	// Client is the clientInfo.name the client sent at initialize.
	Client string
	// Tool is the tool's name as the upstream server knows it.
	Tool string
	// Arguments are the arguments forwarded upstream, reserved parameters
	// removed. Nil when the call had none.
	Arguments json.RawMessage
	// Budget is the token budget for this text block; 0 means none.
	Budget int
	// IsError reports whether the upstream marked the result isError.
	IsError bool
}

// Output is a transformed text block.
type Output struct {
	// Text is what the model will read.
	Text string
	// Format names the encoding of Text ("json", "toon", ...); empty means
	// Text is the input, unchanged, and the block is left as it was.
	Format string
	// TokensBefore and TokensAfter count the input and Text with the
	// transformer's tokenizer.
	TokensBefore, TokensAfter int
	// Saved splits TokensBefore-TokensAfter by source ("encoding", "dedup",
	// "filter", "fit"). It may be nil.
	Saved map[string]int
}

// A Transformer rewrites the text of tool results. The proxy calls it once
// per text content block that passes the size and tool filters.
// Implementations must be safe for concurrent use and deterministic: the
// same call and text give the same Output.
//
// An error leaves the block unchanged (and is counted) unless the proxy was
// told to fail on errors.
type Transformer interface {
	Transform(ctx context.Context, call *Call, text string) (Output, error)
}

// A ChunkStore answers _chunk requests: the text of chunk ref (as quoted in
// an earlier result's chunk hint) of the given session and tool. The proxy
// asks the Transformer itself when it implements ChunkStore.
type ChunkStore interface {
	Chunk(ctx context.Context, session, tool, ref string) (string, error)
}

// SessionHooks is implemented by Transformers that keep per-session state.
// Reset drops everything tied to a partition that is being abandoned (the
// client compacted its context, so earlier results are no longer visible);
// Invalidate is called before a mutating tool call is forwarded, so that
// reads of what it changes are not answered from dedup state.
type SessionHooks interface {
	Reset(session string)
	Invalidate(session string, call *Call)
}

// ErrChunkNotFound is returned by ChunkStore implementations for an unknown
// or expired chunk reference.
var ErrChunkNotFound = errors.New("chunk not found")

// Compact is the built-in Transformer. It re-encodes JSON text as compact
// JSON (verified lossless by parsing the output back and comparing trees),
// answers an exact repeat of a call within a session partition with a
// one-line reference hint, and splits text that exceeds the call's budget
// into chunks the model fetches with _chunk. Text that is not JSON is left
// as is unless it exceeds the budget.
//
// The zero value is ready to use and counts tokens with [tokens.Estimate].
type Compact struct {
	// Counter counts tokens; nil means tokens.Estimate().
	Counter tokens.Counter

	mu       sync.Mutex
	seen     map[string]map[[32]byte][]string // session -> digest of tool+args+text -> paths the call read
	chunks   map[string][]string              // session + "\x00" + ref -> chunk texts
	sessions map[string][]string              // session -> refs (for Reset)
	next     int
}

func (c *Compact) counter() tokens.Counter {
	if c.Counter == nil {
		return tokens.Estimate()
	}
	return c.Counter
}

// Transform implements [Transformer].
func (c *Compact) Transform(ctx context.Context, call *Call, text string) (Output, error) {
	return c.transform(call, text, true)
}

// Fit is Transform without re-encoding: the proxy uses it for text larger
// than its MaxSizeBytes, which is only cut to the budget.
func (c *Compact) Fit(ctx context.Context, call *Call, text string) (Output, error) {
	return c.transform(call, text, false)
}

func (c *Compact) transform(call *Call, text string, parse bool) (Output, error) {
	tc := c.counter()
	out := Output{Text: text}
	before := tc.Count(text)
	out.TokensBefore = before
	saved := map[string]int{}

	if !parse {
		// fit only
	} else if v, err := tree.ParseString(text); err == nil {
		compact := tree.AppendJSON(nil, v)
		back, err := tree.Parse(compact)
		if err != nil || !tree.Equal(v, back) {
			return Output{}, fmt.Errorf("compact JSON of %s does not round-trip", call.Tool)
		}
		if len(compact) < len(text) {
			out.Text = string(compact)
			out.Format = "json"
		}
	}
	after := tc.Count(out.Text)
	if out.Format != "" {
		saved["encoding"] = before - after
	}

	if call.Session != "" && !call.IsError {
		if c.repeat(call, out.Text) {
			hint := "> [ref: same result as your earlier " + call.Tool + " call with these arguments]"
			saved["dedup"] = after - tc.Count(hint)
			out.Text, out.Format = hint, "ref"
			after = tc.Count(hint)
		}
	}

	if call.Budget > 0 && after > call.Budget {
		first, err := c.split(call, out.Text, tc)
		if err != nil {
			return Output{}, err
		}
		n := tc.Count(first)
		saved["fit"] = after - n
		out.Text, after = first, n
		if out.Format == "" {
			out.Format = "text"
		}
	}
	out.TokensAfter = after
	if out.Format != "" {
		out.Saved = saved
	}
	return out, nil
}

// repeat records text as a result of call and reports whether the same
// tool, arguments and text were already seen in the session.
func (c *Compact) repeat(call *Call, text string) bool {
	h := sha256.New()
	h.Write([]byte(call.Tool))
	h.Write([]byte{0})
	h.Write(call.Arguments)
	h.Write([]byte{0})
	h.Write([]byte(text))
	var d [32]byte
	h.Sum(d[:0])
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]map[[32]byte][]string{}
	}
	m := c.seen[call.Session]
	if m == nil {
		m = map[[32]byte][]string{}
		c.seen[call.Session] = m
	}
	if _, ok := m[d]; ok {
		return true
	}
	m[d] = argPaths(call.Arguments)
	return false
}

// pathKeys are argument names that name what a call reads or writes.
var pathKeys = []string{"path", "paths", "file", "files", "filename", "source", "destination", "uri", "url", "key", "name", "names", "entityname", "id"}

// argPaths returns the string values of path-like top-level arguments
// (and of arrays of strings under such keys).
func argPaths(args []byte) []string {
	v, err := tree.Parse(args)
	if err != nil || v.Kind() != tree.KindObject {
		return nil
	}
	var out []string
	for _, m := range v.Members() {
		k := strings.ToLower(m.Key)
		if !slices.Contains(pathKeys, k) && !strings.HasSuffix(k, "path") {
			continue
		}
		switch m.Value.Kind() {
		case tree.KindString:
			out = append(out, m.Value.Str())
		case tree.KindArray:
			for _, it := range m.Value.Items() {
				if it.Kind() == tree.KindString {
					out = append(out, it.Str())
				}
			}
		}
	}
	return out
}

// overlaps reports whether a written path touches a read one: equal, or
// one is a directory prefix of the other.
func overlaps(w, r string) bool {
	w, r = strings.TrimSuffix(w, "/"), strings.TrimSuffix(r, "/")
	return w == r || strings.HasPrefix(r, w+"/") || strings.HasPrefix(w, r+"/")
}

// Reset implements [SessionHooks]: the partition's dedup memory is dropped.
// Chunks stay retrievable for the life of the proxy.
func (c *Compact) Reset(session string) {
	c.mu.Lock()
	delete(c.seen, session)
	c.mu.Unlock()
}

// Invalidate implements [SessionHooks]. A mutating call with path-like
// arguments (path, uri, name, ...) forgets the reads of the same paths (or
// paths under them, or above them); one without forgets every read of the
// partition.
func (c *Compact) Invalidate(session string, call *Call) {
	written := argPaths(call.Arguments)
	if len(written) == 0 {
		c.Reset(session)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for d, read := range c.seen[session] {
		if len(read) == 0 {
			delete(c.seen[session], d) // unknown reach: may have changed
			continue
		}
		for _, r := range read {
			if slices.ContainsFunc(written, func(w string) bool { return overlaps(w, r) }) {
				delete(c.seen[session], d)
				break
			}
		}
	}
}

// chunkHint is the line that follows every chunk. Its wording is read by
// models: treat it as API.
func chunkHint(i, n int, ref string) string {
	if i == n {
		return fmt.Sprintf("> [chunk %d/%d of %s: end]", i, n, ref)
	}
	return fmt.Sprintf("> [chunk %d/%d of %s: next with _chunk \"%s.%d\"]", i, n, ref, ref, i+1)
}

// split cuts text into chunks that fit call.Budget with their hint lines,
// stores them and returns the first one.
func (c *Compact) split(call *Call, text string, tc tokens.Counter) (string, error) {
	// Hints grow with their numbers; 2 more tokens cover a BPE merge
	// across the join.
	reserve := tc.Count("\n"+chunkHint(99999, 99999, "r99999")) + 2
	room := call.Budget - reserve
	if room < 16 {
		return "", fmt.Errorf("budget %d tokens is too small to chunk a result", call.Budget)
	}
	var parts []string
	for rest := text; rest != ""; {
		// Start from the proportional byte length and shrink until it fits.
		n := len(rest)
		if t := tc.Count(rest); t > room {
			n = len(rest) * room / t
		}
		for {
			n = cutPoint(rest, n)
			if n == 0 || tc.Count(rest[:n]) <= room {
				break
			}
			n = n * 9 / 10
		}
		if n == 0 {
			return "", fmt.Errorf("budget %d tokens cannot hold one character of the result", call.Budget)
		}
		parts = append(parts, rest[:n])
		rest = rest[n:]
	}
	c.mu.Lock()
	c.next++
	ref := "r" + strconv.Itoa(c.next)
	if c.chunks == nil {
		c.chunks = map[string][]string{}
		c.sessions = map[string][]string{}
	}
	sess := storeSession(call.Session)
	for i := range parts {
		parts[i] = parts[i] + "\n" + chunkHint(i+1, len(parts), ref)
		if n := tc.Count(parts[i]); n > call.Budget {
			c.mu.Unlock()
			return "", fmt.Errorf("chunk %d of %s is %d tokens, over the budget of %d", i+1, ref, n, call.Budget)
		}
	}
	c.chunks[sess+"\x00"+call.Tool+"\x00"+ref] = parts
	c.mu.Unlock()
	return parts[0], nil
}

// storeSession strips the partition generation: chunks outlive compaction.
func storeSession(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[:i]
	}
	return s
}

// cutPoint moves n back to a UTF-8 boundary, preferring the end of a line
// when one is near.
func cutPoint(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i > n*3/4 {
		return i + 1
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// Chunk implements [ChunkStore]. ref is "rN.K": chunk K of result rN.
func (c *Compact) Chunk(ctx context.Context, session, tool, ref string) (string, error) {
	base, k, ok := strings.Cut(ref, ".")
	i, err := strconv.Atoi(k)
	if !ok || err != nil || i < 1 {
		return "", fmt.Errorf("%w: %q is not a chunk handle like \"r1.2\"", ErrChunkNotFound, ref)
	}
	c.mu.Lock()
	parts := c.chunks[storeSession(session)+"\x00"+tool+"\x00"+base]
	c.mu.Unlock()
	if i > len(parts) {
		return "", fmt.Errorf("%w: %q for tool %s", ErrChunkNotFound, ref, tool)
	}
	return parts[i-1], nil
}
