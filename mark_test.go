package terse

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// cutNotes returns text without the in-band notes that follow its
// document: from the first line that opens with "> [" or "[chunks] "
// and is not inside the document (what precedes it decodes).
func cutNotes(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "> [") || strings.HasPrefix(l, "[chunks] ") {
			doc := strings.Join(lines[:i], "\n")
			if _, err := render.Decode(doc); err == nil || i == 0 {
				return doc
			}
		}
	}
	return text
}

// TestAutoMarked runs every corpus JSON document through the auto
// pipeline at the proxy's default budget and at tight ones, and checks
// that each text a model reads either opens with the render.Marker line
// or is read by strict TOON as the same value (the whole document, or
// the shown part of a fitted one), or is not valid TOON at all; that the
// document with its notes cut off decodes (render.Decode) to the input
// when whole; and that budgets and savings hold. It logs what the marker
// costs at the default budget.
func TestAutoMarked(t *testing.T) {
	files := corpus.Files(t, ".json")
	if testing.Short() && len(files) > 12 {
		files = files[:12]
	}
	// fit.DefaultBudget is the pipeline's default, 20,000 the proxy's
	// for Claude Code (mcpproxy.ClaudeCodeBudget).
	budgets := []int{fit.DefaultBudget, 20000, 2000, 300, 40}
	if testing.Short() {
		budgets = []int{fit.DefaultBudget, 300}
	}
	p, err := New(&Options{Format: "auto", Store: &store.Mem{}})
	if err != nil {
		t.Fatal(err)
	}
	c := tokens.O200kBase()
	ctx := context.Background()
	var docs, whole, fitted, marked int
	markTokens, outTokens := map[int]int{}, map[int]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			continue // not every .json in the corpus is one document
		}
		docs++
		name := corpus.Name(f)
		for _, b := range budgets {
			res, err := p.Process(ctx, data, &Request{Budget: b})
			if err != nil {
				t.Fatalf("%s at %d: %v", name, b, err)
			}
			checkReport(t, name, res)
			text, r := res.Text, res.Report
			if r.Truncated {
				fitted++
			} else {
				whole++
			}
			doc := cutNotes(text)
			if doc == "" {
				continue // notes only: no document
			}
			shown, err := render.Decode(doc)
			if err != nil {
				t.Errorf("%s at %d: the document does not decode: %v", name, b, err)
				continue
			}
			if !r.Truncated && !tree.Equal(shown, v) {
				t.Errorf("%s at %d: the whole document decodes to another value", name, b)
			}
			outTokens[b] += r.OutputTokens
			if render.Marked(text) {
				marked++
				markTokens[b] += r.OutputTokens - c.Count(text[len(render.Marker)+1:])
				continue
			}
			if doc[0] == '{' || doc[0] == '[' {
				if doc != string(tree.AppendJSON(nil, shown)) {
					t.Errorf("%s at %d: unmarked, and the document opens like JSON but is not its compact JSON", name, b)
				}
				continue // JSON, read as JSON (render.Mark, terse decode)
			}
			if tv, err := toon.UnmarshalString(text, nil); err == nil && !tree.Equal(tv, shown) {
				t.Errorf("%s at %d: unmarked, and strict TOON reads it as another value", name, b)
			}
		}
	}
	if docs == 0 {
		t.Fatal("no JSON document checked")
	}
	t.Logf("%d JSON documents at budgets %v: %d whole and %d fitted results, %d marked", docs, budgets, whole, fitted, marked)
	for _, b := range budgets {
		t.Logf("budget %d: the marker adds %d tokens to %d output tokens (%.3f%%)", b, markTokens[b], outTokens[b]-markTokens[b],
			100*float64(markTokens[b])/float64(max(outTokens[b]-markTokens[b], 1)))
	}
}

// TestAutoMarkedBudgetEdge checks a budget equal to the whole unmarked
// document: the room kept for the marker does not trim a document that
// needs no marker, and one that needs it is trimmed or shown whole
// within the budget.
func TestAutoMarkedBudgetEdge(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		json     string
		needMark bool
	}{
		{`{"name":"widgets","stars":12,"tags":["a","b","c"],"owner":{"login":"octocat","id":7}}`, false},
		{issueList(20), false},
		{`[{"id":1,"url":"https://x.example/repos/a/1","state":"open"},{"id":2,"url":"https://x.example/repos/a/2","state":"closed"},{"id":3,"url":"https://x.example/repos/a/3","state":"open"}]`, true},
	} {
		v, err := tree.Parse([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		c := tokens.O200kBase()
		unmarked := string(Auto(c, "").Append(nil, v))
		if got := render.Mark(unmarked, v) != unmarked; got != tc.needMark {
			t.Fatalf("%s: needs a marker %v, want %v:\n%s", tc.json, got, tc.needMark, unmarked)
		}
		p, err := New(&Options{Format: "auto", Store: &store.Mem{}})
		if err != nil {
			t.Fatal(err)
		}
		n := c.Count(unmarked)
		res, err := p.Process(ctx, []byte(tc.json), &Request{Budget: n})
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, tc.json, res)
		if !tc.needMark && (res.Report.Truncated || res.Text != unmarked) {
			t.Errorf("%s at budget %d: got\n%s\nwant the whole unmarked document", tc.json, n, res.Text)
		}
		if tc.needMark && !res.Report.Truncated && !render.Marked(res.Text) && res.Text != string(tree.AppendJSON(nil, v)) {
			t.Errorf("%s at budget %d: whole, unmarked and not compact JSON:\n%s", tc.json, n, res.Text)
		}
	}
}

// issueList is the compact JSON of {"items": [...]} with n issues.
func issueList(n int) string {
	var sb strings.Builder
	sb.WriteString(`{"items":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"title":"Issue %d about the export of reports to spreadsheets","state":"open"}`, i, i)
	}
	sb.WriteString("]}")
	return sb.String()
}

// TestMarkKnownAgrees: the auto format's check of a whole document tells
// whether TOON reads it (autoMemo.readsAsTOON), and marking with that
// answer gives what render.Mark, which decodes again, gives.
func TestMarkKnownAgrees(t *testing.T) {
	files := corpus.Files(t, ".json")
	if testing.Short() && len(files) > 24 {
		files = files[:24]
	}
	plain := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			continue
		}
		format, memo := newAuto(nil, "")
		text := string(format.Append(nil, v))
		known, toon := memo.readsAsTOON(v, text)
		if !known {
			t.Fatalf("%s: the verified encoding is not remembered", f)
		}
		if toon {
			plain++
		}
		if got, want := render.MarkKnown(text, v, toon), render.Mark(text, v); got != want {
			t.Errorf("%s: marked differently (TOON reads it: %v)", f, toon)
		}
	}
	t.Logf("%d documents TOON reads as they are", plain)
}
