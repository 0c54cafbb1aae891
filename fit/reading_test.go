package fit

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/terse-dev/terse/fit/readtest"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// TestReading asks questions generated from corpus lists trimmed at
// several budgets — how many items in total, is item K shown whole, which
// exact call returns it whole — and has them answered by a reader that
// follows only the text (readtest): it parses the notes, the hint and the
// chunk index, and makes the chunk calls, with the same budget, until the
// item comes back whole. Every answer must be right.
func TestReading(t *testing.T) {
	files := corpus.Files(t, ".json")
	c := tokens.O200kBase()
	st := &store.Mem{}
	ctx := context.Background()
	asked, right, calls, maxCalls := 0, 0, 0, 0
	lists := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			continue
		}
		p, ok := FindItems(v)
		if !ok {
			continue
		}
		arr, _ := tree.Lookup(v, p)
		if arr.Len() < 5 {
			continue
		}
		lists++
		items := arr.Items()
		for _, cs := range readingCases {
			budget := cs.budget
			o := &Options{Budget: budget, Counter: c, Store: st, Scope: "reader", Format: cs.format, Fetch: cs.fetch}
			res, err := FitJSON(ctx, v, o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Stats.Truncated || res.Stats.Unit != "items" {
				continue
			}
			name := fmt.Sprintf("%s as %s at %d", corpus.Name(f), o.Format.Name, budget)
			r, err := readtest.Parse(res.Text)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			fetch := fetchAsSaid(ctx, t, name, r, o)
			asked++
			if r.FetchBudget == DefaultFetchBudget {
				right++
			} else {
				t.Errorf("%s: what a fetch without a budget gets: read %d, want %d", name, r.FetchBudget, DefaultFetchBudget)
			}
			if cs.format.Name == "toon" {
				r.Decode = func(s string) (tree.Value, error) { return toon.UnmarshalString(s, nil) }
			}
			n := len(items)
			asked++
			if got := r.TotalItems(); got == n {
				right++
			} else {
				t.Errorf("%s: total items: read %d, want %d", name, got, n)
			}
			for _, k := range questionItems(n) {
				asked += 2
				whole, err := r.ShownWhole(k)
				if want := res.sel[k-1] == Full; err == nil && whole == want {
					right++
				} else {
					t.Errorf("%s: is item %d shown whole: read %v (%v), want %v", name, k, whole, err, want)
				}
				got, nc, err := r.Retrieve(fetch, k)
				calls, maxCalls = calls+nc, max(maxCalls, nc)
				if call := r.CallFor(k); call != "" && !strings.Contains(call, fmt.Sprint(r.ChunkOf(k))) {
					t.Errorf("%s: item %d: call %q does not name chunk %d", name, k, call, r.ChunkOf(k))
				}
				if r.Chunks != nil && !r.Over(k) && nc != 1 {
					t.Errorf("%s: item %d: its chunk is not marked over budget, but took %d calls", name, k, nc)
				}
				if want := string(tree.AppendJSON(nil, items[k-1])); err == nil && got == want {
					right++
				} else {
					t.Errorf("%s: item %d via %q (%d calls): %v\ngot  %.200s\nwant %.200s", name, k, r.CallFor(k), nc, err, got, want)
				}
			}
		}
	}
	// Logs and other text: the same questions about lines.
	texts := 0
	for _, f := range corpus.Files(t, ".log", ".txt") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := splitLines(string(data))
		for _, budget := range []int{300, 1000} {
			o := &Options{Budget: budget, Counter: c, Store: st, Scope: "reader"}
			res, err := FitText(ctx, string(data), o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Stats.Truncated || res.Stats.Kind != "text" {
				continue
			}
			texts++
			name := fmt.Sprintf("%s at %d", corpus.Name(f), budget)
			r, err := readtest.Parse(res.Text)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			fetch := fetchAsSaid(ctx, t, name, r, o)
			asked++
			if r.FetchBudget == DefaultFetchBudget {
				right++
			} else {
				t.Errorf("%s: what a fetch without a budget gets: read %d, want %d", name, r.FetchBudget, DefaultFetchBudget)
			}
			asked++
			if got := r.TotalItems(); got == len(src) {
				right++
			} else {
				t.Errorf("%s: total lines: read %d, want %d", name, got, len(src))
			}
			for _, k := range questionItems(len(src)) {
				asked += 2
				whole, err := r.ShownWhole(k)
				if want := res.sel[k-1] == Full; err == nil && whole == want {
					right++
				} else {
					t.Errorf("%s: is line %d shown whole: read %v (%v), want %v", name, k, whole, err, want)
				}
				got, nc, err := r.Retrieve(fetch, k)
				calls, maxCalls = calls+nc, max(maxCalls, nc)
				if call := r.CallFor(k); call != "" && !strings.Contains(call, fmt.Sprint(r.ChunkOf(k))) {
					t.Errorf("%s: item %d: call %q does not name chunk %d", name, k, call, r.ChunkOf(k))
				}
				if r.Chunks != nil && !r.Over(k) && nc != 1 {
					t.Errorf("%s: line %d: its chunk is not marked over budget, but took %d calls", name, k, nc)
				}
				if err == nil && got == src[k-1] {
					right++
				} else {
					t.Errorf("%s: line %d via %q (%d calls): %v\ngot  %.200q\nwant %.200q", name, k, r.CallFor(k), nc, err, got, src[k-1])
				}
			}
		}
	}
	if asked == 0 {
		t.Skip("no corpus lists")
	}
	t.Logf("%d lists and %d texts, %d questions, %d right (%.1f %%), %d chunk calls (at most %d for one item)", lists, texts, asked, right, 100*float64(right)/float64(asked), calls, maxCalls)
}

// fetchAsSaid fetches chunks with exactly the call the text names: no
// budget of its own, so the budget the text says a fetch gets; every
// answer must keep it.
func fetchAsSaid(ctx context.Context, t *testing.T, name string, r *readtest.Response, o *Options) readtest.Fetch {
	fo := *o
	fo.Budget = r.FetchBudget
	return func(h string, n int) (string, error) {
		res, err := FetchChunk(ctx, h, n, &fo)
		if err == nil && res.Tokens > r.FetchBudget {
			t.Errorf("%s: chunk %d of %s: %d tokens, over the %d the text says a fetch returns", name, n, h, res.Tokens, r.FetchBudget)
		}
		return res.Text, err
	}
}

// readingCases are the budgets and formats lists are trimmed at.
var readingCases = []struct {
	budget int
	format Format
	fetch  string
}{{300, JSON, ""}, {1000, JSON, ""}, {4000, JSON, ""}, {1000, toonFormat, ""}, {2000, JSON, proxyFetch}}

// proxyFetch is how the MCP engine names a chunk call.
const proxyFetch = `this tool with _chunk "{handle}.{n}"`

// questionItems picks the items asked about: first, middle, last and two
// more spread between (1-based).
func questionItems(n int) []int {
	ks := []int{1, n/3 + 1, n/2 + 1, 2*n/3 + 1, n}
	var out []int
	for _, k := range ks {
		if len(out) == 0 || out[len(out)-1] != k {
			out = append(out, k)
		}
	}
	return out
}

// TestReadingShortNote asks the reader's questions of results whose
// budget leaves room for the hint alone (no chunk index): how many
// items, what a fetch gets, and which call returns item K whole — from
// the chunk ranges the hint lists — answered by following only the text,
// in one call for every item whose chunk is not marked over budget.
func TestReadingShortNote(t *testing.T) {
	ctx := context.Background()
	c := tokens.O200kBase()
	asked, right, notes := 0, 0, 0
	var docs []tree.Value
	docs = append(docs, list30(t))
	for _, f := range corpus.Files(t, ".json") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := tree.Parse(data); err == nil {
			if p, ok := FindItems(v); ok {
				if arr, _ := tree.Lookup(v, p); arr.Len() >= 5 {
					docs = append(docs, v)
				}
			}
		}
	}
	for _, v := range docs {
		for _, budget := range []int{40, 80, 120} {
			o := &Options{Budget: budget, Counter: c, Store: &store.Mem{}, Scope: "reader"}
			res, err := FitJSON(ctx, v, o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Stats.Truncated || res.Stats.Unit != "items" || strings.Contains(res.Text, "[chunks]") {
				continue
			}
			notes++
			r, err := readtest.Parse(res.Text)
			if err != nil {
				t.Fatal(err)
			}
			p := tree.Pointer(res.Stats.Pointer)
			arr, _ := tree.Lookup(v, p)
			items := arr.Items()
			asked += 2
			if r.TotalItems() == len(items) {
				right++
			} else {
				t.Errorf("at %d: total %d, want %d:\n%s", budget, r.TotalItems(), len(items), res.Text)
			}
			if r.FetchBudget == DefaultFetchBudget {
				right++
			} else {
				t.Errorf("at %d: a fetch gets %d, want %d:\n%s", budget, r.FetchBudget, DefaultFetchBudget, res.Text)
			}
			fetch := fetchAsSaid(ctx, t, fmt.Sprint(budget), r, o)
			for _, k := range questionItems(len(items)) {
				asked++
				got, nc, err := r.Retrieve(fetch, k)
				if want := string(tree.AppendJSON(nil, items[k-1])); err == nil && got == want && (r.Over(k) || nc == 1) {
					right++
				} else {
					t.Errorf("at %d: item %d via %q: %d calls, %v\n%s", budget, k, r.CallFor(k), nc, err, res.Text)
				}
			}
		}
	}
	if notes == 0 {
		t.Skip("no result with the hint alone")
	}
	t.Logf("%d results with the hint alone, %d questions, %d right", notes, asked, right)
}
