package terse

import (
	"strings"
	"sync"
	"testing"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// countingCounter counts calls to the counter it wraps.
type countingCounter struct {
	tokens.Counter
	mu    sync.Mutex
	calls int
}

func (c *countingCounter) Count(s string) int {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.Counter.Count(s)
}

func TestCountCache(t *testing.T) {
	inner := &countingCounter{Counter: tokens.O200kBase()}
	c := newCountCache(inner)
	if c.Name() != inner.Name() || c.Exact() != inner.Exact() {
		t.Errorf("countCache = %s/%v, want %s/%v", c.Name(), c.Exact(), inner.Name(), inner.Exact())
	}
	text := func(i int) string { return strings.Repeat("word ", 200+i) + string(rune('a'+i%26)) }
	long := strings.Repeat("a long document, ", 1000)
	want := inner.Counter.Count(long)
	if got := c.Count(long); got != want {
		t.Fatalf("Count(long) = %d, want %d", got, want)
	}
	// Many shorter texts later, the long one is still known.
	for i := range 3 * countCacheSize {
		s := text(i)
		if got, want := c.Count(s), inner.Counter.Count(s); got != want {
			t.Fatalf("Count(text %d) = %d, want %d", i, got, want)
		}
		if got, want := tokens.CountBytes(c, []byte(s)), inner.Counter.Count(s); got != want {
			t.Fatalf("CountBytes(text %d) = %d, want %d", i, got, want)
		}
	}
	calls := inner.calls
	if got := tokens.CountBytes(c, []byte(long)); got != want {
		t.Errorf("CountBytes(long) = %d, want %d", got, want)
	}
	if got := c.Count("short"); got != inner.Counter.Count("short") {
		t.Errorf("Count(short) = %d", got)
	}
	if inner.calls != calls+1 {
		t.Errorf("counter called %d times for a known long text and a short one, want 1", inner.calls-calls)
	}
	// Full of longer texts, a short one just added is still known after
	// a few more (render counts candidates, then the fitter the winner).
	for i := range countCacheSize {
		c.Count(strings.Repeat("long text ", 300+i))
	}
	short := strings.Repeat("s ", countCacheMin)
	c.Count(short)
	for i := range countCacheRecent - 1 {
		c.Count(strings.Repeat("other ", 100+i))
	}
	calls = inner.calls
	if got := c.Count(short); got != inner.Counter.Count(short) || inner.calls != calls {
		t.Errorf("a recent short text was forgotten (%d counter calls)", inner.calls-calls)
	}
	// Concurrent use (go test -race).
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				s := text(g*50 + i)
				if got, want := c.Count(s), inner.Counter.Count(s); got != want {
					t.Errorf("concurrent Count = %d, want %d", got, want)
				}
			}
		})
	}
	wg.Wait()
}

// TestAutoMemo checks that the auto format's memory of its last verified
// encodings gives the same text as encoding again, and never mixes up
// values.
func TestAutoMemo(t *testing.T) {
	a, b := tree.Array(tree.Object(tree.Member{Key: "id", Value: tree.Int(1)}, tree.Member{Key: "name", Value: tree.String("x")})),
		tree.Object(tree.Member{Key: "k", Value: tree.String("v")})
	f := Auto(nil, "")
	fresh := func(v tree.Value) string {
		s, _, err := render.Encode(v, &render.Options{Counter: tokens.O200kBase(), Unmarked: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	vals := []tree.Value{a, b, a, tree.Array(a.Items()...), b}
	for round := range 3 {
		for i, v := range vals {
			// Drafts first, verified first, and alternating.
			draftFirst := round == 0 || round == 2 && i%2 == 0
			if draftFirst {
				if got, want := string(f.Draft(nil, v)), fresh(v); got != want {
					t.Errorf("Draft(%s) = %q, want %q", v, got, want)
				}
			}
			if got, want := string(f.Append(nil, v)), fresh(v); got != want {
				t.Errorf("Append(%s) = %q, want %q", v, got, want)
			}
			if got, want := string(f.Draft(nil, v)), fresh(v); got != want {
				t.Errorf("Draft(%s) = %q, want %q", v, got, want)
			}
		}
	}
	if got := string(f.Append([]byte("prefix "), a)); got != "prefix "+fresh(a) {
		t.Errorf("Append(prefix, a) = %q", got)
	}

	// A long document drafted before many short items (as the fitter
	// does) is still remembered after them: drafting it again counts
	// nothing.
	counter := &countingCounter{Counter: tokens.O200kBase()}
	g := Auto(counter, "")
	var items []tree.Value
	for i := range 40 {
		items = append(items, tree.Object(tree.Member{Key: "id", Value: tree.Int(int64(i))}, tree.Member{Key: "title", Value: tree.String(strings.Repeat("t", i))}))
	}
	doc := tree.Array(items...)
	want := string(g.Draft(nil, doc))
	for _, it := range items {
		g.Draft(nil, it)
	}
	calls := counter.calls
	if got := string(g.Draft(nil, doc)); got != want || counter.calls != calls {
		t.Errorf("Draft(doc) again: %d counts, same text %v", counter.calls-calls, got == want)
	}
	if got := string(g.Append(nil, doc)); got != fresh(doc) || counter.calls != calls {
		t.Errorf("Append(doc) after its draft: %d counts, text %q, want %q", counter.calls-calls, got, fresh(doc))
	}
}

func TestCountCacheKnown(t *testing.T) {
	c := newCountCache(tokens.O200kBase())
	long := strings.Repeat("a known text, ", 100)
	if _, ok := c.Known(long); ok {
		t.Fatal("known before it was counted")
	}
	n := c.Count(long)
	if got, ok := c.Known(long); !ok || got != n {
		t.Fatalf("Known = %d, %v; want %d, true", got, ok, n)
	}
	if _, ok := c.Known("short"); ok {
		t.Fatal("short texts are not remembered")
	}
}
