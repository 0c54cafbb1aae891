package fit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// largeList is a list of n issue-like objects of about 1.5 KB each: over
// exactBytes, so its costs are estimated.
func largeList(t *testing.T, n int) tree.Value {
	t.Helper()
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"number":%d,"title":"issue %d: %s","state":"open","url":"https://api.example.com/repos/o/r/issues/%d","html_url":"https://example.com/o/r/issues/%d","node_id":"I_kwDO%08d","user":{"login":"user%d","id":%d,"avatar_url":"https://avatars.example.com/u/%d?v=4"},"labels":[{"name":"bug"},{"name":"area/%d"}],"created_at":"2024-01-%02dT10:00:00Z","updated_at":"2024-02-%02dT10:00:00Z","body":"%s"}`,
			i, 1000+i, i, strings.Repeat("word ", 5+i%7), i, i, i, i%13, i%13, i%13, i%5, 1+i%28, 1+i%28, strings.Repeat(fmt.Sprintf("line %d of the report, with details. ", i), 25))
	}
	sb.WriteByte(']')
	v, err := tree.ParseString(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// memoCounter remembers counts, as the root package's count cache does,
// and says so with Known.
type memoCounter struct {
	tokens.Counter
	mu sync.Mutex
	m  map[string]int
}

func (c *memoCounter) Count(s string) int {
	if n, ok := c.Known(s); ok {
		return n
	}
	n := c.Counter.Count(s)
	c.mu.Lock()
	c.m[s] = n
	c.mu.Unlock()
	return n
}

func (c *memoCounter) Known(s string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.m[s]
	return n, ok
}

// TestCompactOption: a caller's compact JSON replaces FitJSON's own
// encoding without changing the result.
func TestCompactOption(t *testing.T) {
	for _, n := range []int{3, 60, 120} {
		v := largeList(t, n)
		for _, budget := range []int{500, 4000, 1 << 20} {
			o := &Options{Budget: budget, Store: &store.Mem{}}
			want, err := FitJSON(context.Background(), v, o)
			if err != nil {
				t.Fatal(err)
			}
			o.Compact = tree.AppendJSON(nil, v)
			got, err := FitJSON(context.Background(), v, o)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != want.Text {
				t.Errorf("%d items at %d: with Compact the text differs", n, budget)
			}
		}
	}
}

// TestEstimatedBudgets: large inputs, priced from samples (and from the
// whole count when the counter knows it), still fit by the real count and
// keep most of the budget.
func TestEstimatedBudgets(t *testing.T) {
	c := tokens.O200kBase()
	for _, v := range []tree.Value{largeList(t, 60), largeList(t, 120)} {
		for _, known := range []bool{false, true} {
			for _, f := range []Format{JSON, toonFormat, autoFormat} {
				for _, budget := range []int{1000, 8000, 20000} {
					var ctr tokens.Counter = c
					if known {
						ctr = &memoCounter{Counter: c, m: map[string]int{}}
					}
					r, err := FitJSON(context.Background(), v, &Options{Budget: budget, Counter: ctr, Format: f, Store: &store.Mem{}})
					if err != nil {
						t.Fatal(err)
					}
					n := c.Count(r.Text)
					if n > budget {
						t.Errorf("%d items, known %v, %s at %d: %d tokens", v.Len(), known, f.Name, budget, n)
					}
					if !r.Stats.Truncated {
						continue // it fits whole
					}
					if r.Stats.Tokens != n {
						t.Errorf("%d items, known %v, %s at %d: %d tokens, stats say %d", v.Len(), known, f.Name, budget, n, r.Stats.Tokens)
					}
					if kept := r.Stats.Full + r.Stats.Standard + r.Stats.Minimal; kept == 0 || n < budget/2 {
						t.Errorf("%d items, known %v, %s at %d: %d items kept in %d tokens", v.Len(), known, f.Name, budget, kept, n)
					}
				}
			}
		}
	}
}
