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

// Dispatch thresholds. exactCells bounds the DP table (items × capacity).
const (
	exactMaxItems  = 64
	exactCells     = 4 << 20
	greedyMaxItems = 5000
	headTailMin    = 10000
)

// solve picks a solver by size and runs it. linear marks text whose items
// are lines in order (head+tail applies to it when it is huge).
func solve(p *problem, linear bool) (solution, string) {
	n := len(p.items)
	switch {
	case p.capacity <= 0:
		return skipAll(n), SolverGreedy
	case exactFits(n, p.capacity):
		return solveExact(p), SolverExact
	case linear && n >= headTailMin:
		return solveHeadTail(p), SolverHeadTail
	case n <= greedyMaxItems:
		return solveGreedy(p), SolverGreedy
	}
	return solveWFQ(p), SolverWFQ
}

// solveExact is the textbook DP over capacity, O(items × capacity ×
// options). Ties keep the cheaper, earlier choice, so results are
// deterministic.
func solveExact(p *problem) solution {
	return newExactTable(p, p.capacity).solution(p, p.capacity)
}

// exactTable is the exact solver's table of choices for every capacity up
// to its own. The row of capacity x depends only on smaller capacities, so
// the solution read from a table at any capacity it covers is the one
// solveExact gives for that capacity: a table is built once and read again
// as the fitter moves the capacity.
type exactTable struct {
	capacity int
	pick     []int8 // option+1 chosen for item i at capacity x
}

func newExactTable(p *problem, capacity int) *exactTable {
	n, c := len(p.items), max(capacity, 0)
	best := make([]float64, c+1)
	next := make([]float64, c+1)
	pick := make([]int8, n*(c+1))
	for i, opts := range p.items {
		row := pick[i*(c+1) : (i+1)*(c+1)]
		// Option by option over all capacities: at each capacity the
		// comparisons come in the same order as option by option at that
		// capacity (skip first, then each option against the best so far),
		// so the choices are the same, in tight loops.
		copy(next, best)
		for o, op := range opts {
			w := max(op.w, 0)
			if w > c {
				continue
			}
			src, dst, r, ch := best[:c+1-w], next[w:c+1], row[w:c+1], int8(o+1)
			for x, b := range src {
				if v := b + op.v; v > dst[x]+1e-12 {
					dst[x], r[x] = v, ch
				}
			}
		}
		best, next = next, best
	}
	return &exactTable{capacity: c, pick: pick}
}

// solution reads the optimal solution at capacity (at most t.capacity).
func (t *exactTable) solution(p *problem, capacity int) solution {
	n, stride := len(p.items), t.capacity+1
	s := skipAll(n)
	x := max(capacity, 0)
	for i := n - 1; i >= 0; i-- {
		if ch := t.pick[i*stride+x]; ch > 0 {
			s[i] = int8(ch) - 1
			x -= p.items[i][s[i]].w
		}
	}
	return s
}

// exactFits reports whether the exact solver is used for n items at
// capacity.
func exactFits(n, capacity int) bool {
	return n <= exactMaxItems && n*(capacity+1) <= exactCells
}

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

// solveGreedy is the greedy for the multiple-choice knapsack: every item's
// options are reduced to their convex hull, all hull steps are taken in
// order of incremental efficiency (value per token) while they fit, and an
// item whose next step does not fit stops there. Then the leftover capacity
// is spent on the best single upgrade per item, and the result is compared
// with the best single option alone (the classic guard that bounds the worst
// case).
func solveGreedy(p *problem) solution {
	steps := hullSteps(p)
	best, critical := greedyRun(p, steps, -1, -1)
	_, bv := p.eval(best)
	try := func(s solution) {
		if _, v := p.eval(s); v > bv+1e-12 {
			best, bv = s, v
		}
	}
	// The item whose step was the first not to fit decides the classic
	// worst case: also try each of its options forced in first.
	if critical >= 0 {
		for o := range p.items[critical] {
			s, _ := greedyRun(p, steps, critical, o)
			try(s)
		}
	}
	// Guard: the best single option on its own, topped up.
	bi, bo, sv := -1, -1, 0.0
	for i, opts := range p.items {
		for o, op := range opts {
			if op.w <= p.capacity && op.v > sv {
				bi, bo, sv = i, o, op.v
			}
		}
	}
	if bi >= 0 && sv > bv {
		s, _ := greedyRun(p, steps, bi, bo)
		try(s)
	}
	return best
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
	up := hullSteps(rest)
	slices.SortStableFunc(up, func(a, b step) int {
		return cmp.Compare(bits.Len(uint(max(a.dw, 0))), bits.Len(uint(max(b.dw, 0))))
	})
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
		bucket int
		st     step
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
		ks[j] = keyed{b, s}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(b.bucket, a.bucket); c != 0 {
			return c
		}
		if c := cmp.Compare(a.st.item, b.st.item); c != 0 {
			return c
		}
		return cmp.Compare(a.st.dw, b.st.dw)
	})
	for j := range ks {
		steps[j] = ks[j].st
	}
	return steps
}

// greedyRun takes the steps in order while they fit, with item forced (if
// not -1) fixed at option fo first; then it spends the leftover with
// upgrade. It returns the solution and the first item whose step did not
// fit (-1 if none).
func greedyRun(p *problem, steps []step, forced, fo int) (solution, int) {
	s := skipAll(len(p.items))
	left := p.capacity
	if forced >= 0 {
		if w := p.items[forced][fo].w; w <= left {
			s[forced] = int8(fo)
			left -= w
		}
	}
	blocked := make([]bool, len(p.items))
	critical := -1
	for _, st := range steps {
		if st.item == forced || blocked[st.item] || int(s[st.item]) != st.from {
			continue
		}
		if st.dw > left {
			blocked[st.item] = true
			if critical < 0 {
				critical = st.item
			}
			continue
		}
		s[st.item] = int8(st.to)
		left -= st.dw
	}
	upgrade(p, s, left)
	return s, critical
}

// upgrade spends left on improving single items: repeatedly the upgrade
// (any option, not only hull steps) with the best value gain that fits.
func upgrade(p *problem, s solution, left int) {
	for range 64 {
		bi, bo, bg := -1, -1, 1e-12
		for i, opts := range p.items {
			cw, cv := 0, 0.0
			if s[i] >= 0 {
				cw, cv = opts[s[i]].w, opts[s[i]].v
			}
			for o, op := range opts {
				if g := op.v - cv; g > bg && op.w-cw <= left {
					bi, bo, bg = i, o, g
				}
			}
		}
		if bi < 0 {
			return
		}
		if s[bi] >= 0 {
			left += p.items[bi][s[bi]].w
		}
		s[bi] = int8(bo)
		left -= p.items[bi][bo].w
	}
}

// solveWFQ allocates capacity to items in proportion to their value
// (weighted fair queueing, one round), gives each item the best option
// within its allocation, then hands the leftover to items in order of value.
// It is O(n log n) and never exceeds the capacity.
func solveWFQ(p *problem) solution {
	n := len(p.items)
	s := skipAll(n)
	vmax := make([]float64, n)
	total := 0.0
	for i, opts := range p.items {
		for _, o := range opts {
			vmax[i] = max(vmax[i], o.v)
		}
		total += vmax[i]
	}
	if total == 0 {
		return s
	}
	left := p.capacity
	for i, opts := range p.items {
		alloc := int(float64(p.capacity) * vmax[i] / total)
		bo, bv := -1, 0.0
		for o, op := range opts {
			if op.w <= alloc && op.w <= left && op.v > bv {
				bo, bv = o, op.v
			}
		}
		if bo >= 0 {
			s[i] = int8(bo)
			left -= opts[bo].w
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(vmax[b], vmax[a]) })
	for _, i := range order {
		opts := p.items[i]
		cw, cv := 0, 0.0
		if s[i] >= 0 {
			cw, cv = opts[s[i]].w, opts[s[i]].v
		}
		bo, bv := s[i], cv
		for o, op := range opts {
			if op.v > bv && op.w-cw <= left {
				bo, bv = int8(o), op.v
			}
		}
		if bo != s[i] {
			s[i] = bo
			left -= opts[bo].w - cw
		}
	}
	return s
}

// boostValue marks items whose value is at least this as boosted (error
// lines and their context under the head_tail strategy).
const boostValue = 2.0

// solveHeadTail is for huge linear text, O(n): boosted items first (up to
// half the capacity, latest first), then a contiguous head with 30 % of the
// rest and a contiguous tail with everything left. Each item's richest
// option that fits is used; lines are never split.
func solveHeadTail(p *problem) solution { return solveHeadTailShare(p, 0.3) }

// solveHeadTailShare is solveHeadTail with the head's share of the
// capacity left after boosted items (1 keeps a prefix, 0 a suffix).
func solveHeadTailShare(p *problem, share float64) solution {
	n := len(p.items)
	s := skipAll(n)
	left := p.capacity
	take := func(i int, limit int) bool {
		for o, op := range p.items[i] {
			if op.w <= limit && op.w <= left {
				s[i] = int8(o)
				left -= op.w
				return true
			}
		}
		return false
	}
	boostCap := p.capacity / 2
	for i := n - 1; i >= 0 && boostCap > 0; i-- {
		if len(p.items[i]) > 0 && p.items[i][0].v >= boostValue {
			before := left
			if take(i, boostCap) {
				boostCap -= before - left
			}
		}
	}
	head := int(float64(left) * share)
	for i := 0; i < n; i++ {
		if s[i] >= 0 {
			continue
		}
		before := left
		if !take(i, head) {
			break
		}
		head -= before - left
	}
	// The tail steps over a line too long for what is left (it is declared
	// as a gap) rather than giving up on the tail.
	for i := n - 1; i >= 0 && left > 0; i-- {
		if s[i] < 0 {
			take(i, left)
		}
	}
	return s
}
