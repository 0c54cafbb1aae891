// Package replay walks the tool results of the agent transcripts in the
// shared corpus (corpus/agent-sessions) for the tests that replay them
// through text shaping, and tabulates their tokens before and after per
// shape. It is used by tests only.
package replay

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/hook"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tree"
	"github.com/terse-dev/terse/tune"
)

// Result is one tool result of a transcript, in transcript order.
type Result struct {
	tune.Result
	// File is the transcript the result was read from.
	File string
	// Context names the context the result is in: its session (the main
	// conversation or one sub-agent) and compactions before it. Results
	// of one context are what the model has at once.
	Context Context
	// Earlier is the latest earlier result of the same context that is
	// byte-identical to this one and that the model still has as it was,
	// or nil: this one can be a reference to it.
	Earlier *tune.Result
}

// Context is a session (by its place in the corpus) and a partition of
// it (compactions before).
type Context struct{ Session, Partition int }

// Results reads every transcript of the corpus, in file and transcript
// order; tb is skipped when the corpus is absent.
func Results(tb testing.TB) []Result {
	tb.Helper()
	dir := corpus.Dir(tb, "corpus/agent-sessions")
	files, err := tune.LogFiles(dir)
	if err != nil {
		tb.Fatal(err)
	}
	logs, err := tune.ReadLogs(files)
	if err != nil {
		tb.Fatal(err)
	}
	var out []Result
	for n, s := range logs.Sessions {
		rs := make([]Result, len(s.Results))
		for i := range s.Results {
			rs[i] = Result{Result: s.Results[i], File: s.File, Context: Context{n, s.Results[i].Partition}}
		}
		earlier(s.Results, rs)
		out = append(out, rs...)
	}
	return out
}

// mutating are the tools whose call writes the path it names.
var mutating = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// MinRefBytes is the smallest result a reference replaces (the dedup
// stage's default).
const MinRefBytes = 200

// earlier sets Earlier of every result of a session: the latest result
// before it in its session (one context: the main conversation or one
// sub-agent) that the model still has as it was, byte-identical to it
// and of the same tool: after the last compaction before it, not a call
// on a path written since (a Write or Edit of that path between the
// two), with an id to name it by, and not itself replaced by a reference.
// These are the rules the hook's transcript reader applies.
func earlier(rs []tune.Result, out []Result) {
	for i := range rs {
		r := &rs[i]
		if r.ID == "" || len(r.Text) < MinRefBytes || r.IsError {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			p := &rs[j]
			if p.Partition != r.Partition {
				break
			}
			if mutating[p.Tool] && r.Path != "" && p.Path == r.Path {
				break
			}
			if p.Tool == r.Tool && p.Text == r.Text && p.ID != "" && !p.IsError && out[j].Earlier == nil {
				out[i].Earlier = p
				break
			}
		}
	}
}

// Row is the figures of one shape.
type Row struct {
	Results, Changed, Before, After int
}

// Table adds up tokens before and after per shape.
type Table struct {
	rows  map[string]*Row
	Total Row
}

// Add counts one result of shape.
func (t *Table) Add(shape string, changed bool, before, after int) {
	if t.rows == nil {
		t.rows = map[string]*Row{}
	}
	w := t.rows[shape]
	if w == nil {
		w = &Row{}
		t.rows[shape] = w
	}
	for _, r := range []*Row{w, &t.Total} {
		r.Results++
		if changed {
			r.Changed++
		}
		r.Before += before
		r.After += after
	}
}

// Row returns the figures of shape.
func (t *Table) Row(shape string) Row {
	if w := t.rows[shape]; w != nil {
		return *w
	}
	return Row{}
}

// Saved is the share of tokens saved, in percent.
func (r Row) Saved() float64 {
	return 100 * float64(r.Before-r.After) / float64(max(1, r.Before))
}

// String writes the table, shapes sorted by name, then the total.
func (t *Table) String() string {
	names := make([]string, 0, len(t.rows))
	for k := range t.rows {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-8s %7s %8s %9s %9s %7s\n", "shape", "results", "changed", "before", "after", "saved")
	line := func(name string, w Row) {
		fmt.Fprintf(&sb, "%-8s %7d %8d %9d %9d %6.1f%%\n", name, w.Results, w.Changed, w.Before, w.After, w.Saved())
	}
	for _, k := range names {
		line(k, *t.rows[k])
	}
	line("total", t.Total)
	return sb.String()
}

// chunkHead reads the line that opens a fetched chunk of an elided
// text ("> [chunk 2 of 5 of c_…: lines 99–196 of 520, in full]"): the
// chunk count, or false for any other line.
func chunkHead(line string, n int) (total int, ok bool) {
	v, err := inband.Parse(line)
	h, isHead := v.(inband.ChunkHead)
	if err != nil || !isHead || h.Parts || h.N != n {
		return 0, false
	}
	unit, _, _, ok := inband.ParseSpan(h.Where)
	if !ok || unit != "line" || !strings.Contains(h.Where, " of ") {
		return 0, false
	}
	return h.Of, true
}

// JoinChunks fetches chunk 1, 2, … of an elision with fetch until the
// last one its heads name, and joins their lines.
func JoinChunks(fetch func(n int) (string, error)) (string, error) {
	var parts []string
	for n := 1; ; n++ {
		text, err := fetch(n)
		if err != nil {
			return "", fmt.Errorf("chunk %d: %w", n, err)
		}
		head, body, hasBody := strings.Cut(text, "\n")
		total, ok := chunkHead(head, n)
		if !ok || !hasBody {
			return "", fmt.Errorf("chunk %d: unexpected text %q", n, text[:min(200, len(text))])
		}
		parts = append(parts, body)
		if n >= total {
			return strings.Join(parts, "\n"), nil
		}
	}
}

// Refs gives each result, in order, the references a surface that sees
// the whole context (terse api) writes for it: a whole reference to a
// byte-identical earlier result ([Result.Earlier]), else line references
// ([dedup.Lines]) to runs of lines of earlier results as they were
// shown, the error and verdict lines and file:line findings of a
// command's output kept in view
// (shape.Outcome); and checks that every line reference resolves to the text it
// stands for. The zero value is ready to use.
type Refs struct {
	lines map[Context]*dedup.Lines
	shown map[Context]map[string]string // name → text before references
	// Whole and Lined count the results given a whole reference and line
	// references; Runs counts the line references; KeptInView counts the
	// error and verdict lines and file:line findings of commands' outputs given line references
	// (every one stays in view).
	Whole, Lined, Runs, KeptInView int
}

// Apply returns what the model is shown of r, whose text as shaped is
// text: a reference when one is smaller, else text.
func (x *Refs) Apply(r Result, text string) (string, error) {
	in, _ := tree.Parse(r.Input)
	if r.Earlier != nil {
		earlier, _ := tree.Parse(r.Earlier.Input)
		if s := hook.RefHint(r.Tool, hook.Ref{ID: r.Earlier.ID, Input: earlier}); len(s) < len(text) {
			x.Whole++
			return s, nil
		}
	}
	if r.ID == "" || r.IsError || len(r.Text) < MinRefBytes {
		return text, nil
	}
	if x.lines == nil {
		x.lines = make(map[Context]*dedup.Lines)
		x.shown = make(map[Context]map[string]string)
	}
	l := x.lines[r.Context]
	if l == nil {
		l = &dedup.Lines{}
		x.lines[r.Context] = l
		x.shown[r.Context] = make(map[string]string)
	}
	name := hook.RefName(r.Tool, hook.Ref{ID: r.ID, Input: in})
	var keep func(string) bool
	if shape.Outcome(r.Text, shape.Call{Tool: r.Tool, Input: r.Input}) {
		keep = shape.InView
	}
	s, n := l.Refer(text, keep)
	if n > 0 && len(s) < len(text) {
		back, err := dedup.ResolveLines(s, func(name string) (string, bool) {
			t, ok := x.shown[r.Context][name]
			return t, ok
		})
		if err != nil {
			return text, err
		}
		if back != text {
			return text, fmt.Errorf("%s: line references resolve to another text", r.ID)
		}
		if keep != nil && errorLines(s) != errorLines(text) {
			return text, fmt.Errorf("%s: an error, verdict or file:line line of a command's output is not in view", r.ID)
		}
		if keep != nil {
			x.KeptInView += errorLines(s)
		}
		x.Lined++
		x.Runs += n
	}
	// Lines are counted in the text before its own references.
	l.Add(name, text)
	x.shown[r.Context][name] = text
	if n > 0 && len(s) < len(text) {
		return s, nil
	}
	return text, nil
}

// errorLines counts the lines of text shape.InView keeps in view (not
// counting references, whose call labels may hold such words).
func errorLines(text string) int {
	n := 0
	for l := range strings.SplitSeq(text, "\n") {
		if !strings.HasPrefix(l, "> [ref: ") && shape.InView(l) {
			n++
		}
	}
	return n
}
