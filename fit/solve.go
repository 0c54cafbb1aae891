package fit

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// option is one way to emit an item: its token cost in the output format and
// the value it contributes. Skipping an item (cost 0, value 0) is implicit.
type option struct {
	w int
	v float64
}

// problem is a multiple-choice knapsack: choose at most one option per item
// so that the total weight is at most capacity and the total value is
// maximal.
type problem struct {
	items    [][]option
	capacity int
}

// solution holds the chosen option index per item, -1 for skipped: a
// byte each, as an item has at most three options (its levels).
type solution []int8

func (p *problem) eval(s solution) (w int, v float64) {
	for i, o := range s {
		if o >= 0 {
			w += p.items[i][o].w
			v += p.items[i][o].v
		}
	}
	return w, v
}

func skipAll(n int) solution {
	s := make(solution, n)
	for i := range s {
		s[i] = -1
	}
	return s
}

// Solver names, as the Report shows them.
const (
	SolverNone     = "none"     // nothing needed trimming
	SolverExact    = "exact"    // dynamic programming, optimal
	SolverGreedy   = "greedy"   // incremental efficiency over convex hulls
	SolverWFQ      = "wfq"      // proportional (weighted fair) allocation
	SolverHeadTail = "headtail" // head and tail of linear text, boosted lines first
)

// step is one move along an item's convex hull: from option from (-1 is
// skip) to option to, costing dw for dv more value.
type step struct {
	item, from, to int
	dw             int
	dv             float64
}

// hull returns the upper convex hull of an item's options, starting at
// skip (0,0): the options an LP relaxation would ever use, in order of
// increasing weight and decreasing incremental efficiency.
func hull(opts []option) []int {
	idx := make([]int, 0, len(opts))
	for i, o := range opts {
		if o.v > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(opts[a].w, opts[b].w); c != 0 {
			return c
		}
		return cmp.Compare(opts[b].v, opts[a].v)
	})
	h := []int{-1}
	pt := func(i int) (float64, float64) {
		if i < 0 {
			return 0, 0
		}
		return float64(opts[i].w), opts[i].v
	}
	for _, i := range idx {
		wi, vi := pt(i)
		if _, lv := pt(h[len(h)-1]); vi <= lv {
			continue // dominated: no more value for at least the weight
		}
		for len(h) >= 2 {
			w1, v1 := pt(h[len(h)-2])
			w2, v2 := pt(h[len(h)-1])
			// drop the middle point when it lies on or below the chord
			if (v2-v1)*(wi-w1) <= (vi-v1)*(w2-w1) {
				h = h[:len(h)-1]
				continue
			}
			break
		}
		h = append(h, i)
	}
	return h[1:]
}

// showFirst is the order in which items gain detail: first every item
// is shown at its cheapest option, the most valuable items first (ties
// by item index); then every item's hull steps from there, in order of
// decreasing incremental efficiency (see hullSteps), smaller steps
// first. More items are shown before any is made richer.
func showFirst(p *problem) []step {
	n := len(p.items)
	cheap := make([]int, n)
	order := make([]int, 0, n)
	for i, opts := range p.items {
		cheap[i] = -1
		for o, op := range opts {
			if cheap[i] < 0 || op.w < opts[cheap[i]].w {
				cheap[i] = o
			}
		}
		if cheap[i] >= 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(p.items[b][cheap[b]].v, p.items[a][cheap[a]].v)
	})
	steps := make([]step, 0, 2*n)
	for _, i := range order {
		op := p.items[i][cheap[i]]
		steps = append(steps, step{i, -1, cheap[i], op.w, op.v})
	}
	// From the cheapest option, the richer ones' hull.
	rest := &problem{items: make([][]option, n)}
	back := make([][]int, n) // option index in rest → in p
	for i, opts := range p.items {
		if cheap[i] < 0 {
			continue
		}
		c := opts[cheap[i]]
		for o, op := range opts {
			if o != cheap[i] && op.v > c.v {
				rest.items[i] = append(rest.items[i], option{op.w - c.w, op.v - c.v})
				back[i] = append(back[i], o)
			}
		}
	}
	// Smaller steps first (by powers of two of their cost), so that a
	// large one does not hold back the many that would fit beside it;
	// among steps of about one size, by efficiency.
	// A step's size is the largest of its item's steps so far, so that
	// an item's steps keep their order.
	up := hullSteps(rest)
	size := make([]int, len(up))
	largest := make([]int, n)
	for j, st := range up {
		largest[st.item] = max(largest[st.item], bits.Len(uint(max(st.dw, 0))))
		size[j] = largest[st.item]
	}
	idx := make([]int, len(up))
	for j := range idx {
		idx[j] = j
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(size[a], size[b]) })
	sorted := make([]step, len(up))
	for j, k := range idx {
		sorted[j] = up[k]
	}
	up = sorted
	for _, st := range up {
		st.to = back[st.item][st.to]
		if st.from < 0 {
			st.from = cheap[st.item]
		} else {
			st.from = back[st.item][st.from]
		}
		steps = append(steps, st)
	}
	return steps
}

// hullSteps lists every item's hull steps in order of decreasing
// incremental efficiency (ties by item index, so the order is stable).
func hullSteps(p *problem) []step {
	var steps []step
	for i, opts := range p.items {
		prev, pw, pv := -1, 0, 0.0
		for _, o := range hull(opts) {
			steps = append(steps, step{i, prev, o, opts[o].w - pw, opts[o].v - pv})
			prev, pw, pv = o, opts[o].w, opts[o].v
		}
	}
	// Efficiencies within a factor of 1.1 count as equal, and then the
	// earlier item goes first: items of similar worth stay contiguous,
	// which keeps the declared gaps few and short.
	type keyed struct {
		bucket, ord int
		st          step
	}
	ks := make([]keyed, len(steps))
	for j, s := range steps {
		b := math.MaxInt
		switch {
		case s.dw <= 0:
		case s.dv <= 0:
			b = math.MinInt
		default:
			b = int(math.Floor(math.Log(s.dv/float64(s.dw)) / math.Log(1.1)))
		}
		ks[j] = keyed{b, j, s}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(b.bucket, a.bucket); c != 0 {
			return c
		}
		if c := cmp.Compare(a.st.item, b.st.item); c != 0 {
			return c
		}
		return cmp.Compare(a.ord, b.ord) // an item's steps in their order
	})
	for j := range ks {
		steps[j] = ks[j].st
	}
	return steps
}

// boostValue is the value of boosted lines (error lines and their
// context under the head_tail strategy).
const boostValue = 2.0
