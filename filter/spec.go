package filter

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Spec declares a filter: what to keep of a tool's output. It is plain
// data, written by people in config; [Compile] checks it and turns it into a
// [Rule]. The zero Spec keeps everything.
type Spec struct {
	// Root locates the item array (or the single object) the operations
	// apply to, as an RFC 6901 JSON Pointer ("/items", "/data/issues/nodes"),
	// optionally in URI fragment form ("#/items"). "#" means the whole
	// document. Empty means detect it; see [Rule.Apply].
	Root string

	// Select lists the fields to keep, in output order. When it is empty
	// every field is kept.
	Select []Field
	// Exclude lists member-name patterns removed at any depth of each item
	// (after Select). A pattern is dot-separated globs matched against the
	// last member names of a path, array positions ignored: "node_id",
	// "*_url", "user.*_url". A backslash escapes '.', '*' or '\'.
	Exclude []string
	// MaxItems keeps only the first MaxItems items of a list; 0 means all.
	MaxItems int
	// DropNulls removes object members whose value is null, at any depth,
	// also inside arrays. Array elements are never removed, since their
	// position carries meaning.
	DropNulls bool
	// DropEmpty removes object members whose value is "", [] or {}, at any
	// depth (also members that become empty after filtering).
	DropEmpty bool

	// Text filters text output (logs, command output): plain text input or
	// a top-level JSON string. Nil means text passes unchanged.
	Text *TextSpec
	// Compact renders the filtered items as text with templates instead of
	// JSON. Nil means JSON output.
	Compact *CompactSpec

	// Recover is the clause that closes each in-band note and tells the
	// model how to get what was left out, e.g. "call with
	// _output_mode=raw for all". Empty means no such clause; set it only
	// when the caller really offers that way back.
	Recover string
}

// Field is one select entry: the output key Out gets the value at the
// source path Path.
//
// Path is dot-separated member names, each optionally followed by indexes:
// "user.login", "labels[0].name", "[0]", and "[*]" to map the rest of the
// path over an array ("labels[*].name" gives the array of label names). A
// backslash escapes '.', '[' or '\' in a member name.
//
// Out is dot-separated too: "user.login" as an output key builds the nested
// object {"user": {"login": ...}}. Empty Out means Path (which must then
// have no indexes).
type Field struct {
	Out  string
	Path string
}

// ParseField parses the config form "out=path" or "path" of a select
// entry. Paths are checked by [Compile]; ParseField only rejects an empty
// side of the '='.
func ParseField(s string) (Field, error) {
	if out, path, ok := strings.Cut(s, "="); ok {
		f := Field{Out: strings.TrimSpace(out), Path: strings.TrimSpace(path)}
		if f.Out == "" || f.Path == "" {
			return f, &PathError{Field: "select", Path: s, Msg: `want "out=path" or "path"`}
		}
		return f, nil
	}
	return Field{Path: strings.TrimSpace(s)}, nil
}

// TextSpec filters lines of text. The steps run in this order: strip ANSI
// escapes, drop lines matching an Exclude pattern, keep only lines matching
// an Include pattern (when there are any), collapse runs of identical lines
// that were adjacent in the input, then keep Head lines from the start
// and/or Tail lines from the end.
type TextSpec struct {
	// Include keeps only lines matching at least one of these regular
	// expressions (RE2 syntax). Empty keeps every line.
	Include []string
	// Exclude drops lines matching any of these regular expressions.
	Exclude []string
	// Head keeps the first Head lines; 0 means no limit from the start.
	Head int
	// Tail keeps the last Tail lines; 0 means no limit from the end. With
	// both, the first Head and the last Tail lines are kept.
	Tail int
	// Collapse replaces a run of N identical adjacent lines with one line
	// followed by " (xN)".
	Collapse bool
	// StripANSI removes ANSI CSI escape sequences (colours, cursor moves).
	StripANSI bool
	// OnEmpty replaces an output with no lines left; empty means leave it
	// empty.
	OnEmpty string
}

// CompactSpec renders items with Go text/template templates (see package
// text/template). The header and footer see .Total (items before
// filtering), .Count (items shown) and .Remaining (Total - Count). The item
// template sees the fields of one filtered item as .name, .user.login and
// so on; a missing field, or one reached through a missing or null parent,
// renders as the empty string.
type CompactSpec struct {
	Header string
	Item   string // required
	Footer string
}

// CompileError reports every problem found in a [Spec], in the order of the
// Spec's fields.
type CompileError struct {
	Errs []error
}

func (e *CompileError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return "filter: " + strings.Join(msgs, "; ")
}

// Unwrap returns the individual errors.
func (e *CompileError) Unwrap() []error { return e.Errs }

// Rule is a compiled [Spec]. It is immutable and safe for concurrent use:
// compile once, apply to many payloads.
type Rule struct {
	spec     Spec
	rootSet  bool
	root     []string
	fields   []field
	shape    *outNode
	excludes []pattern
	text     *textRule
	compact  *compactRule
}

type field struct {
	path  string // source path as written, for reports
	steps []step
	out   []string
}

// outNode is the output shape of a select: members in order, each either a
// leaf (field index) or a nested object.
type outNode struct {
	keys     []string
	children []*outNode // nil entry for a leaf
	leaf     []int      // field index, -1 for a nested object
}

func (n *outNode) add(keys []string, idx int) error {
	for i, k := range n.keys {
		if k != keys[0] {
			continue
		}
		if len(keys) == 1 || n.children[i] == nil {
			return errors.New("output key conflicts with an earlier select entry")
		}
		return n.children[i].add(keys[1:], idx)
	}
	n.keys = append(n.keys, keys[0])
	if len(keys) == 1 {
		n.children = append(n.children, nil)
		n.leaf = append(n.leaf, idx)
		return nil
	}
	c := &outNode{}
	n.children = append(n.children, c)
	n.leaf = append(n.leaf, -1)
	return c.add(keys[1:], idx)
}

// Compile checks s and returns its Rule. Errors name the offending field
// and path; all problems are reported at once in a [*CompileError].
func Compile(s Spec) (*Rule, error) {
	r := &Rule{spec: s, shape: &outNode{}}
	r.spec.Select = append([]Field(nil), s.Select...)
	r.spec.Exclude = append([]string(nil), s.Exclude...)
	var errs []error
	if s.Root != "" {
		toks, err := parseRoot(s.Root)
		if err != nil {
			errs = append(errs, err)
		}
		r.rootSet, r.root = true, toks
	}
	for _, f := range s.Select {
		steps, err := parseSource("select", f.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out := f.Out
		if out == "" {
			if strings.ContainsAny(f.Path, "[]") {
				errs = append(errs, &PathError{Field: "select", Path: f.Path, Msg: "a path with indexes needs an output key (out=path)"})
				continue
			}
			out = f.Path
		}
		keys, err := parseKeys("select", out)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := r.shape.add(keys, len(r.fields)); err != nil {
			errs = append(errs, &PathError{Field: "select", Path: out, Msg: err.Error()})
			continue
		}
		r.fields = append(r.fields, field{path: f.Path, steps: steps, out: keys})
	}
	for _, p := range s.Exclude {
		pat, err := parsePattern(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.excludes = append(r.excludes, pat)
	}
	if s.MaxItems < 0 {
		errs = append(errs, fmt.Errorf("max_items %d: must be >= 0", s.MaxItems))
	}
	if s.Text != nil {
		t, terrs := compileText(*s.Text)
		errs = append(errs, terrs...)
		r.text = t
	}
	if s.Compact != nil {
		c, err := compileCompact(*s.Compact)
		if err != nil {
			errs = append(errs, err)
		}
		r.compact = c
	}
	if len(errs) > 0 {
		return nil, &CompileError{Errs: errs}
	}
	return r, nil
}

// Spec returns a copy of the Spec the Rule was compiled from.
func (r *Rule) Spec() Spec {
	s := r.spec
	s.Select = append([]Field(nil), s.Select...)
	s.Exclude = append([]string(nil), s.Exclude...)
	return s
}

// structural reports whether the rule has any JSON operation.
func (r *Rule) structural() bool {
	return r.rootSet || len(r.fields) > 0 || len(r.excludes) > 0 || r.spec.MaxItems > 0 ||
		r.spec.DropNulls || r.spec.DropEmpty || r.compact != nil
}

type textRule struct {
	spec    TextSpec
	include []*regexp.Regexp
	exclude []*regexp.Regexp
}

func compileText(s TextSpec) (*textRule, []error) {
	t := &textRule{spec: s}
	var errs []error
	comp := func(field string, pats []string) []*regexp.Regexp {
		var out []*regexp.Regexp
		for _, p := range pats {
			if p == "" {
				errs = append(errs, fmt.Errorf("text.%s: empty pattern", field))
				continue
			}
			re, err := regexp.Compile(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("text.%s pattern %q: %v", field, p, err))
				continue
			}
			out = append(out, re)
		}
		return out
	}
	t.include = comp("include", s.Include)
	t.exclude = comp("exclude", s.Exclude)
	if s.Head < 0 {
		errs = append(errs, fmt.Errorf("text.head %d: must be >= 0", s.Head))
	}
	if s.Tail < 0 {
		errs = append(errs, fmt.Errorf("text.tail %d: must be >= 0", s.Tail))
	}
	t.spec.Include = append([]string(nil), s.Include...)
	t.spec.Exclude = append([]string(nil), s.Exclude...)
	return t, errs
}
