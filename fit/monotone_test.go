package fit

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// monotoneBudgets are the budgets the monotonicity property is checked
// at, increasing.
var monotoneBudgets = []int{300, 450, 600, 800, 1000, 1250, 1500, 1750, 2000, 2500, 3000, 4000, 6000, 10000}

// shownLess compares two selections of the same source, at a smaller
// and a larger budget: it names what the larger shows less of (fewer
// items, fewer items whole, or an item at a poorer level), or "".
func shownLess(small, large []Level) string {
	shown := func(sel []Level) (n, whole int) {
		for _, l := range sel {
			if l != Skip {
				n++
			}
			if l == Full {
				whole++
			}
		}
		return
	}
	ns, ws := shown(small)
	nl, wl := shown(large)
	switch {
	case nl < ns:
		return fmt.Sprintf("%d items shown, %d at the smaller budget", nl, ns)
	case wl < ws:
		return fmt.Sprintf("%d items whole, %d at the smaller budget", wl, ws)
	}
	for i := range small {
		if large[i] > small[i] {
			return fmt.Sprintf("item %d %s, %s at the smaller budget", i+1, large[i], small[i])
		}
	}
	return ""
}

// TestMonotoneBudget is the property that a larger budget never shows
// less: over every corpus list, at increasing budgets, no fewer items,
// no fewer items whole, and no item at a poorer level.
func TestMonotoneBudget(t *testing.T) {
	c := tokens.O200kBase()
	ctx := context.Background()
	checked, bad := 0, 0
	for _, f := range corpus.Files(t, ".json") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			continue
		}
		var prev []Level
		prevB := 0
		for _, b := range monotoneBudgets {
			res, err := FitJSON(ctx, v, &Options{Budget: b, Counter: c, Store: &store.Mem{}})
			if err != nil {
				t.Fatal(err)
			}
			if res.sel == nil {
				break // it fits whole
			}
			if prev != nil && len(prev) == len(res.sel) {
				checked++
				if why := shownLess(prev, res.sel); why != "" {
					bad++
					t.Errorf("%s: at %d than at %d: %s", corpus.Name(f), b, prevB, why)
				}
			}
			prev, prevB = res.sel, b
		}
	}
	t.Logf("%d budget steps checked, %d show less", checked, bad)
}

// TestMonotonePulls is the reported case: compact of a 30-item GitHub
// pull request list showed 30 of 30 items at a budget of 1,500 and 27 at
// 2,000.
func TestMonotonePulls(t *testing.T) {
	data, err := os.ReadFile(corpus.Dir(t, "corpus") + "/github/pygithub__repo-pulls.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := tree.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	c := tokens.O200kBase()
	for _, f := range []Format{JSON, toonFormat, autoFormat} {
		var prev []Level
		for b := 1400; b <= 2600; b += 50 {
			res, err := FitJSON(context.Background(), v, &Options{Budget: b, Counter: c, Format: f, Store: &store.Mem{}})
			if err != nil {
				t.Fatal(err)
			}
			if prev != nil {
				if why := shownLess(prev, res.sel); why != "" {
					t.Errorf("%s at %d than at %d: %s", f.Name, b, b-50, why)
				}
			}
			prev = res.sel
		}
	}
}

// TestMonotoneText is the property for text: over every corpus log and
// text, a larger budget never shows fewer lines, or a line cut that a
// smaller budget showed whole.
func TestMonotoneText(t *testing.T) {
	c := tokens.O200kBase()
	checked, bad := 0, 0
	for _, f := range corpus.Files(t, ".log", ".txt", ".diff") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var prev []Level
		prevB := 0
		for _, b := range monotoneBudgets {
			res, err := FitText(context.Background(), string(data), &Options{Budget: b, Counter: c, Store: &store.Mem{}})
			if err != nil {
				t.Fatal(err)
			}
			if res.sel == nil {
				break
			}
			if prev != nil && len(prev) == len(res.sel) {
				checked++
				if why := shownLess(prev, res.sel); why != "" {
					bad++
					t.Errorf("%s: at %d than at %d: %s", corpus.Name(f), b, prevB, why)
				}
			}
			prev, prevB = res.sel, b
		}
	}
	t.Logf("%d budget steps checked, %d show less", checked, bad)
}

// FuzzMonotoneBudget is the property on generated lists: items of
// fuzzed sizes and fields, at two budgets, the larger never shows less.
func FuzzMonotoneBudget(f *testing.F) {
	f.Add([]byte("\x05\x40\x10\xff\x01\x80"), 300, 500)
	f.Add([]byte("abcdefghijklmnopqrstuvwxyz0123456789"), 600, 2000)
	c := tokens.O200kBase()
	f.Fuzz(func(t *testing.T, seed []byte, b1, b2 int) {
		if len(seed) == 0 || len(seed) > 64 || b1 < 100 || b2 <= b1 || b2 > 20000 {
			return
		}
		var sb strings.Builder
		sb.WriteByte('[')
		for i, x := range seed {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"id":%d,"title":"item %d","state":%q,"url":"https://example.com/%d","body":%q}`,
				i, i, []string{"open", "closed"}[x%2], i, strings.Repeat(fmt.Sprintf("w%d ", x), int(x)*3))
		}
		sb.WriteByte(']')
		v, err := tree.ParseString(sb.String())
		if err != nil {
			t.Fatal(err)
		}
		r1, err := FitJSON(context.Background(), v, &Options{Budget: b1, Counter: c})
		if err != nil {
			t.Fatal(err)
		}
		r2, err := FitJSON(context.Background(), v, &Options{Budget: b2, Counter: c})
		if err != nil {
			t.Fatal(err)
		}
		if r1.sel == nil || r2.sel == nil {
			return // one fits whole (the larger, then)
		}
		if why := shownLess(r1.sel, r2.sel); why != "" {
			t.Errorf("at %d than at %d: %s", b2, b1, why)
		}
	})
}
