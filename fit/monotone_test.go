package fit

import (
	"context"
	"fmt"
	"os"
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
