package terse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
	"github.com/terse-dev/terse/tune"
)

// sameDocs reports whether docs are the JSON documents of text, in order.
func sameDocs(docs []tree.Value, text string) bool {
	dec := json.NewDecoder(strings.NewReader(text))
	for i := 0; ; i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err == io.EOF && i == len(docs)
		}
		v, err := tree.Parse(raw)
		if err != nil || i >= len(docs) || !tree.Equal(v, docs[i]) {
			return false
		}
	}
}

// TestReplayShapes replays the tool result of every transcript in the
// shared corpus (agent-sessions) through a Pipeline as the CLI and the
// MCP proxy build it (format auto, text shaping on, a chunk store), with
// each call's tool, arguments and working directory. It checks that
// every lossless result expands to the original byte for byte, every
// display result to its terminal view, every elision's chunks join back
// to the original, and no anchor is lost; it logs o200k tokens before and
// after per shape and in total, and the results changed per class. A
// text of JSON documents (shape "json") must decode to the original's
// documents.
//
//	go test -run TestReplayShapes -v .
func TestReplayShapes(t *testing.T) {
	dir := corpus.Dir(t, "corpus/agent-sessions")
	files, err := tune.LogFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := tune.ReadLogs(files)
	if err != nil {
		t.Fatal(err)
	}
	c := tokens.O200kBase()
	st := &store.Mem{}
	p, err := terse.New(&terse.Options{Format: "auto", Tokenizer: c, Store: st, Shape: &shape.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type row struct{ n, changed, before, after int }
	rows := map[string]*row{}
	classes := map[string]int{}
	var total row
	lost, elided, joined, expanded, fitted := 0, 0, 0, 0, 0
	for _, s := range logs.Sessions {
		for _, r := range s.Results {
			res, err := p.ProcessString(ctx, r.Text, &terse.Request{Tool: r.Tool, ToolInput: string(r.Input), WorkDir: r.WorkDir})
			if err != nil {
				// Not JSON after all (a text opening with "{"): as text.
				res, err = p.ProcessText(ctx, r.Text, &terse.Request{Tool: r.Tool, ToolInput: string(r.Input), WorkDir: r.WorkDir})
				if err != nil {
					t.Fatalf("%s %s: %v", s.File, r.Tool, err)
				}
			}
			rep := res.Report
			name := rep.Shape
			switch {
			case rep.Kind == "json" || rep.Format != "text":
				name = "(json)"
			case name == "":
				name = "(text)"
			}
			w := rows[name]
			if w == nil {
				w = &row{}
				rows[name] = w
			}
			before := c.Count(r.Text)
			after := rep.OutputTokens
			if res.Text != r.Text {
				w.changed++
				total.changed++
			}
			if rep.Truncated {
				fitted++
			}
			if rep.ShapeClass != "" {
				classes[rep.ShapeClass]++
			}
			switch {
			case rep.Truncated:
				// Fitted after shaping: the fit's own chunks hold it.
			case rep.Shape == "json" && rep.ShapeClass == "lossless":
				docs, err := terse.DecodeJSONDocuments(res.Text)
				if err != nil || !sameDocs(docs, r.Text) {
					t.Errorf("%s %s: JSON documents do not decode to the original's (%v)", s.File, r.Tool, err)
				} else {
					expanded++
				}
			case rep.ShapeClass == "lossless" || rep.ShapeClass == "display":
				back, err := shape.Expand(res.Text)
				want := r.Text
				if rep.ShapeClass == "display" {
					want = shape.TerminalView(r.Text)
				}
				if err != nil || back != want {
					t.Errorf("%s %s: expand differs from the original (%v)", s.File, r.Tool, err)
				} else {
					expanded++
				}
			case rep.ShapeClass == "elide":
				elided++
				if rep.Anchors != nil {
					lost += rep.Anchors.Lost
				}
				if joinFetched(t, ctx, p, res.Text) == strings.TrimSuffix(r.Text, "\n") {
					joined++
				} else {
					t.Errorf("%s %s: the chunks of an elision do not join back to the original", s.File, r.Tool)
				}
			}
			w.n++
			w.before += before
			w.after += after
			total.n++
			total.before += before
			total.after += after
		}
	}
	names := make([]string, 0, len(rows))
	for k := range rows {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	pct := func(a, b int) float64 { return 100 * float64(a-b) / float64(max(1, a)) }
	fmt.Fprintf(&sb, "%-8s %7s %8s %9s %9s %7s\n", "shape", "results", "changed", "before", "after", "saved")
	for _, k := range names {
		w := rows[k]
		fmt.Fprintf(&sb, "%-8s %7d %8d %9d %9d %6.1f%%\n", k, w.n, w.changed, w.before, w.after, pct(w.before, w.after))
	}
	fmt.Fprintf(&sb, "%-8s %7d %8d %9d %9d %6.1f%%\n", "total", total.n, total.changed, total.before, total.after, pct(total.before, total.after))
	fmt.Fprintf(&sb, "shaped per class: %v; fitted to the budget: %d\n", classes, fitted)
	fmt.Fprintf(&sb, "expand byte-identical: %d of %d; elisions joined back: %d of %d; anchors lost: %d\n",
		expanded, classes["lossless"]+classes["display"], joined, elided, lost)
	t.Log("\n" + sb.String())
	if lost > 0 {
		t.Errorf("%d anchors lost", lost)
	}
}

var (
	fetchLine = regexp.MustCompile(`get chunk N whole: terse chunk (c_[0-9a-f]+) N\]`)
)

// joinFetched fetches every chunk an elided text names and joins them.
func joinFetched(t *testing.T, ctx context.Context, p *terse.Pipeline, text string) string {
	t.Helper()
	m := fetchLine.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no fetch command in %q", text[:min(300, len(text))])
	}
	var parts []string
	for n := 1; ; n++ {
		ch, err := p.Chunk(ctx, m[1], n, &terse.Request{Budget: 1 << 20})
		if err != nil {
			t.Fatalf("chunk %d of %s: %v", n, m[1], err)
		}
		head, body, _ := strings.Cut(ch.Text, "\n")
		v, err := inband.Parse(head)
		h, ok := v.(inband.ChunkHead)
		if err != nil || !ok || h.Parts {
			t.Fatalf("chunk %d of %s: %q", n, m[1], ch.Text[:min(200, len(ch.Text))])
		}
		parts = append(parts, body)
		if n == h.Of {
			return strings.Join(parts, "\n")
		}
	}
}
