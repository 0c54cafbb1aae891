package filter

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/tree"
)

// A step is one segment of a compiled select path: a member name, an array
// index, or [*] (every element).
type step struct {
	key   string
	index int // >= 0 for an index step
	kind  stepKind
}

type stepKind uint8

const (
	stepKey stepKind = iota
	stepIndex
	stepAll
)

// PathError reports a malformed path in a [Spec]. Field names the spec
// field ("select", "exclude", "root", ...) and Path the offending text.
type PathError struct {
	Field string
	Path  string
	Msg   string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("%s path %q: %s", e.Field, e.Path, e.Msg)
}

// splitDots splits a dotted path at unescaped dots. A backslash escapes the
// next character, so `a\.b` is the single key "a.b". It keeps escapes in
// the segments for the caller to interpret.
func splitDots(p string) []string {
	var segs []string
	start := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '.':
			segs = append(segs, p[start:i])
			start = i + 1
		}
	}
	return append(segs, p[start:])
}

// parseSource compiles a select source path: dot-separated member names,
// each optionally followed by [N] or [*] suffixes; a segment may be only
// an index, as in "[0].name".
func parseSource(field, p string) ([]step, error) {
	bad := func(msg string) error { return &PathError{Field: field, Path: p, Msg: msg} }
	if p == "" {
		return nil, bad("empty path")
	}
	var steps []step
	for _, seg := range splitDots(p) {
		if seg == "" {
			return nil, bad("empty segment")
		}
		// The member name runs up to the first unescaped '['.
		var name strings.Builder
		i := 0
		for ; i < len(seg) && seg[i] != '['; i++ {
			if seg[i] == '\\' {
				if i+1 == len(seg) {
					return nil, bad("trailing backslash")
				}
				i++
			} else if seg[i] == ']' {
				return nil, bad("unexpected ']'")
			}
			name.WriteByte(seg[i])
		}
		if name.Len() > 0 {
			steps = append(steps, step{key: name.String(), kind: stepKey})
		}
		for i < len(seg) {
			if seg[i] != '[' {
				return nil, bad(fmt.Sprintf("unexpected %q after ']'", seg[i:]))
			}
			end := strings.IndexByte(seg[i:], ']')
			if end < 0 {
				return nil, bad("missing ']'")
			}
			idx := seg[i+1 : i+end]
			switch {
			case idx == "*":
				steps = append(steps, step{kind: stepAll})
			default:
				n, err := strconv.Atoi(idx)
				if err != nil || n < 0 || idx != strconv.Itoa(n) {
					return nil, bad(fmt.Sprintf("index [%s] is not a non-negative integer or *", idx))
				}
				steps = append(steps, step{index: n, kind: stepIndex})
			}
			i += end + 1
		}
	}
	return steps, nil
}

// parseKeys compiles an output key path: dot-separated member names with
// backslash escapes, no indexes.
func parseKeys(field, p string) ([]string, error) {
	bad := func(msg string) error { return &PathError{Field: field, Path: p, Msg: msg} }
	if p == "" {
		return nil, bad("empty output key")
	}
	var keys []string
	for _, seg := range splitDots(p) {
		k, err := unescape(seg)
		if err != nil {
			return nil, bad(err.Error())
		}
		if k == "" {
			return nil, bad("empty segment")
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func unescape(seg string) (string, error) {
	if !strings.Contains(seg, `\`) {
		return seg, nil
	}
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		if seg[i] == '\\' {
			if i+1 == len(seg) {
				return "", fmt.Errorf("trailing backslash")
			}
			i++
		}
		b.WriteByte(seg[i])
	}
	return b.String(), nil
}

// resolve returns the value at steps in v. A path that reaches null counts
// as found. [*] maps the rest of the path over an array and collects the
// elements where it resolves; it is found when v is an array.
func resolve(v tree.Value, steps []step) (tree.Value, bool) {
	for n, s := range steps {
		switch s.kind {
		case stepKey:
			if v.Kind() != tree.KindObject {
				return tree.Value{}, false
			}
			x, ok := v.Get(s.key)
			if !ok {
				return tree.Value{}, false
			}
			v = x
		case stepIndex:
			if v.Kind() != tree.KindArray || s.index >= v.Len() {
				return tree.Value{}, false
			}
			v = v.Index(s.index)
		case stepAll:
			if v.Kind() != tree.KindArray {
				return tree.Value{}, false
			}
			rest := steps[n+1:]
			out := make([]tree.Value, 0, v.Len())
			for _, x := range v.Items() {
				if y, ok := resolve(x, rest); ok {
					out = append(out, y)
				}
			}
			return tree.Array(out...), true
		}
	}
	return v, true
}

// A glob matches one member name; '*' matches any run of bytes and a
// backslash escapes the next byte.
type glob struct {
	parts []string // literal parts between stars
	star  bool     // contains at least one star
}

func parseGlob(seg string) (glob, error) {
	var parts []string
	var cur strings.Builder
	star := false
	for i := 0; i < len(seg); i++ {
		switch seg[i] {
		case '\\':
			if i+1 == len(seg) {
				return glob{}, fmt.Errorf("trailing backslash")
			}
			i++
			cur.WriteByte(seg[i])
		case '*':
			star = true
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(seg[i])
		}
	}
	parts = append(parts, cur.String())
	return glob{parts: parts, star: star}, nil
}

func (g glob) match(s string) bool {
	if !g.star {
		return s == g.parts[0]
	}
	first, last := g.parts[0], g.parts[len(g.parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	s = s[len(first) : len(s)-len(last)]
	for _, p := range g.parts[1 : len(g.parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

// A pattern is a compiled exclude entry: globs for the last len(segs)
// member names of a path, array positions ignored.
type pattern struct {
	segs []glob
}

func parsePattern(p string) (pattern, error) {
	bad := func(msg string) error { return &PathError{Field: "exclude", Path: p, Msg: msg} }
	if p == "" {
		return pattern{}, bad("empty pattern")
	}
	var pat pattern
	for _, seg := range splitDots(p) {
		if seg == "" {
			return pattern{}, bad("empty segment")
		}
		g, err := parseGlob(seg)
		if err != nil {
			return pattern{}, bad(err.Error())
		}
		pat.segs = append(pat.segs, g)
	}
	return pat, nil
}

// matches reports whether the pattern matches a member named key whose
// enclosing member names (outermost first) are parents.
func (p pattern) matches(parents []string, key string) bool {
	n := len(p.segs)
	if !p.segs[n-1].match(key) {
		return false
	}
	if n-1 > len(parents) {
		return false
	}
	for i := 0; i < n-1; i++ {
		if !p.segs[n-2-i].match(parents[len(parents)-1-i]) {
			return false
		}
	}
	return true
}

// parseRoot turns a root setting into pointer tokens. "#" (or "") is the
// whole document; otherwise an RFC 6901 pointer, optionally in its URI
// fragment form "#/items".
func parseRoot(p string) ([]string, error) {
	s := p
	if strings.HasPrefix(s, "#") {
		// The URI fragment form percent-encodes (RFC 6901 section 6).
		u, err := url.PathUnescape(s[1:])
		if err != nil {
			return nil, &PathError{Field: "root", Path: p, Msg: "bad percent-encoding"}
		}
		s = u
	}
	toks, err := tree.Pointer(s).Tokens()
	if err != nil {
		return nil, &PathError{Field: "root", Path: p, Msg: err.Error()}
	}
	return toks, nil
}
