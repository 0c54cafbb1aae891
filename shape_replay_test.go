package terse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/internal/replay"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
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
// each call's tool, arguments and working directory, once per read form
// (the default first). It checks that every lossless result expands to
// the original byte for byte, every display result to its terminal view,
// every elision's chunks join back to the original, and no anchor is
// lost; it logs o200k tokens before and after per shape and in total,
// and the results changed per class. A text of JSON documents (shape
// "json") must decode to the original's documents.
//
// It also logs what a surface that reads the transcript (the hook) would
// save on top: a result byte-identical to an earlier one the model still
// has, written as the dedup dialect's reference to that call
// (hook.RefHint).
//
//	go test -run TestReplayShapes -v .
func TestReplayShapes(t *testing.T) {
	results := replay.Results(t)
	c := tokens.O200kBase()
	for _, form := range shape.ReadForms {
		t.Run(form, func(t *testing.T) {
			st := &store.Mem{}
			p, err := terse.New(&terse.Options{Format: "auto", Tokenizer: c, Store: st, Shape: &shape.Options{ReadForm: form}})
			if err != nil {
				t.Fatal(err)
			}
			// As terse api sends results: shaped losslessly at most (its
			// ceiling), a form kept only when it costs fewer tokens,
			// then references.
			api, err := terse.New(&terse.Options{Format: "auto", Tokenizer: c, Shape: &shape.Options{ReadForm: form, Ceiling: shape.Lossless}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			var tab, tabRefs replay.Table
			var refs replay.Refs
			classes := map[string]int{}
			lost, elided, joined, expanded, fitted := 0, 0, 0, 0, 0
			for _, r := range results {
				res, err := p.ProcessString(ctx, r.Text, &terse.Request{Tool: r.Tool, ToolInput: string(r.Input), WorkDir: r.WorkDir})
				if err != nil {
					// Not JSON after all (a text opening with "{"): as text.
					res, err = p.ProcessText(ctx, r.Text, &terse.Request{Tool: r.Tool, ToolInput: string(r.Input), WorkDir: r.WorkDir})
					if err != nil {
						t.Fatalf("%s %s: %v", r.File, r.Tool, err)
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
				before := c.Count(r.Text)
				after := rep.OutputTokens
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
						t.Errorf("%s %s: JSON documents do not decode to the original's (%v)", r.File, r.Tool, err)
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
						t.Errorf("%s %s: expand differs from the original (%v)", r.File, r.Tool, err)
					} else {
						expanded++
					}
				case rep.ShapeClass == "elide":
					elided++
					if rep.Anchors != nil {
						lost += rep.Anchors.Lost
					}
					got, err := replay.JoinChunks(func(n int) (string, error) {
						ch, err := p.Chunk(ctx, fetchHandle(t, res.Text), n, &terse.Request{Budget: 1 << 20})
						return ch.Text, err
					})
					if err == nil && got == strings.TrimSuffix(r.Text, "\n") {
						joined++
					} else {
						t.Errorf("%s %s: the chunks of an elision do not join back to the original (%v)", r.File, r.Tool, err)
					}
				}
				tab.Add(name, res.Text != r.Text, before, after)
				// As terse api: lossless shaping, then references to
				// what the model still has (whole results, runs of
				// lines), each checked to resolve.
				sent := apiForm(t, api, r)
				shown, err := refs.Apply(r, sent)
				if err != nil {
					t.Errorf("%s %s: %v", r.File, r.Tool, err)
				}
				tabRefs.Add(name, shown != r.Text, before, c.Count(shown))
			}
			var sb strings.Builder
			sb.WriteString(tab.String())
			fmt.Fprintf(&sb, "shaped per class: %v; fitted to the budget: %d\n", classes, fitted)
			fmt.Fprintf(&sb, "expand byte-identical: %d of %d; elisions joined back: %d of %d; anchors lost: %d\n",
				expanded, classes["lossless"]+classes["display"], joined, elided, lost)
			fmt.Fprintf(&sb, "as terse api sends them: shaped losslessly at most, then references to what the model still has (%d results whole, %d with %d line references, all resolved; %d error, verdict and file:line lines of commands' outputs among them, all in view):\n%s",
				refs.Whole, refs.Lined, refs.Runs, refs.KeptInView, tabRefs.String())
			t.Log("\n" + sb.String())
			if lost > 0 {
				t.Errorf("%d anchors lost", lost)
			}
		})
	}
}

// apiForm is the text terse api sends for r before references: its
// lossless shaping (a shaped text that expands back, JSON that decodes
// to the original, documents that decode to the original's) when that
// costs fewer tokens, else the original.
func apiForm(t *testing.T, p *terse.Pipeline, r replay.Result) string {
	t.Helper()
	if len(r.Text) < 64 {
		return r.Text
	}
	req := &terse.Request{Tool: r.Tool, ToolInput: string(r.Input), WorkDir: r.WorkDir}
	res, err := p.ProcessString(context.Background(), r.Text, req)
	if err != nil {
		res, err = p.ProcessText(context.Background(), r.Text, req)
		if err != nil {
			return r.Text
		}
	}
	rep := &res.Report
	switch {
	case rep.Truncated || rep.ShapeClass != "" && rep.ShapeClass != shape.Lossless.String():
		t.Errorf("%s %s: terse api's pipeline gave a %s shaping", r.File, r.Tool, rep.ShapeClass)
		return r.Text
	case rep.Shape == "json" && rep.ShapeClass == shape.Lossless.String():
		if docs, err := terse.DecodeJSONDocuments(res.Text); err != nil || !sameDocs(docs, r.Text) {
			return r.Text
		}
	case rep.ShapeClass == shape.Lossless.String():
		if back, err := shape.Expand(res.Text); err != nil || back != r.Text {
			return r.Text
		}
	}
	if c := p.Counter(); c.Count(res.Text) >= c.Count(r.Text) {
		return r.Text
	}
	return res.Text
}

var fetchLine = regexp.MustCompile(`get chunk N whole: terse chunk (c_[0-9a-f]+) N\]`)

// fetchHandle is the handle of the fetch command an elided text names.
func fetchHandle(t *testing.T, text string) string {
	t.Helper()
	m := fetchLine.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no fetch command in %q", text[:min(300, len(text))])
	}
	return m[1]
}
