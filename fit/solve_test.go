package fit

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomProblem makes an instance shaped like real fitting: each item has
// up to three options (full, standard, minimal) with decreasing weight and
// value, and the capacity is a random share of the all-full weight.
func randomProblem(r *rand.Rand, maxItems int) *problem {
	n := 1 + r.IntN(maxItems)
	p := &problem{}
	total := 0
	for range n {
		full := 5 + r.IntN(100)
		val := 0.05 + r.Float64()
		opts := []option{{full, val}}
		if r.IntN(4) > 0 {
			std := 1 + full*(20+r.IntN(60))/100
			opts = append(opts, option{std, val * (0.5 + 0.3*r.Float64())})
			if r.IntN(4) > 0 {
				opts = append(opts, option{1 + std*(10+r.IntN(50))/100, val * (0.2 + 0.2*r.Float64())})
			}
		}
		p.items = append(p.items, opts)
		total += full
	}
	p.capacity = 1 + r.IntN(total)
	return p
}

func TestHull(t *testing.T) {
	opts := []option{{100, 1}, {50, 0.9}, {10, 0.1}, {60, 0.5}}
	got := hull(opts)
	// (60,0.5) is dominated by (50,0.9); (10,0.1) lies below the chord
	// from (0,0) to (50,0.9).
	want := []int{1, 0}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("hull = %v, want %v", got, want)
	}
}

// TestShowFirst checks the upgrade order on random instances: every item
// is shown (at its cheapest option) before any item gains detail, each
// item's steps follow one another from where the last one left it, and
// every step adds value.
func TestShowFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		p := randomProblem(r, 40)
		steps := showFirst(p)
		at := make([]int, len(p.items))
		for i := range at {
			at[i] = -1
		}
		shown := 0
		for j, st := range steps {
			if st.from != at[st.item] {
				t.Fatalf("step %d of item %d from option %d, the item is at %d", j, st.item, st.from, at[st.item])
			}
			if st.from < 0 {
				if shown != j {
					t.Fatalf("item %d shown at step %d, after an item gained detail", st.item, j)
				}
				shown++
			} else if p.items[st.item][st.to].v <= p.items[st.item][st.from].v {
				t.Fatalf("step %d of item %d adds no value", j, st.item)
			}
			at[st.item] = st.to
		}
		if shown != len(p.items) {
			t.Fatalf("%d of %d items shown", shown, len(p.items))
		}
		for i, opts := range p.items {
			best := slices.MaxFunc(opts, func(a, b option) int { return cmp.Compare(a.v, b.v) })
			if p.items[i][at[i]].v != best.v {
				t.Fatalf("item %d ends at value %v, its best is %v", i, p.items[i][at[i]].v, best.v)
			}
		}
	}
}
