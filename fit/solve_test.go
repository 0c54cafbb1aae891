package fit

import (
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

// TestSolversAgainstExact compares every solver with the exact DP on 10,000
// random instances and reports the achieved share of the optimum.
func TestSolversAgainstExact(t *testing.T) {
	const runs = 10000
	solvers := []struct {
		name       string
		fn         func(*problem) solution
		avg, worst float64 // required minimum
	}{
		{SolverGreedy, solveGreedy, 0.9, 0.7},
		{SolverWFQ, solveWFQ, 0.6, 0},
		{SolverHeadTail, solveHeadTail, 0.3, 0},
	}
	sum := make([]float64, len(solvers))
	worst := make([]float64, len(solvers))
	for k := range worst {
		worst[k] = 1
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range runs {
		p := randomProblem(r, 30)
		ow, ov := p.eval(solveExact(p))
		if ow > p.capacity {
			t.Fatalf("exact exceeds capacity: %d > %d", ow, p.capacity)
		}
		for k, sv := range solvers {
			w, v := p.eval(sv.fn(p))
			if w > p.capacity {
				t.Fatalf("%s exceeds capacity: %d > %d", sv.name, w, p.capacity)
			}
			if v > ov+1e-9 {
				t.Fatalf("%s beats the exact solver: %g > %g", sv.name, v, ov)
			}
			ratio := 1.0
			if ov > 0 {
				ratio = v / ov
			}
			sum[k] += ratio
			worst[k] = min(worst[k], ratio)
		}
	}
	for k, sv := range solvers {
		avg := sum[k] / runs
		t.Logf("%s vs exact on %d instances: average %.4f, worst %.4f", sv.name, runs, avg, worst[k])
		if avg < sv.avg || worst[k] < sv.worst {
			t.Errorf("%s: average %.4f worst %.4f, want ≥ %.2f and ≥ %.2f", sv.name, avg, worst[k], sv.avg, sv.worst)
		}
	}
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

func TestExactSmall(t *testing.T) {
	// items (50,0.5),(10,0.8),(10,0.9), capacity 25 → items 1 and 2.
	p := &problem{items: [][]option{{{50, 0.5}}, {{10, 0.8}}, {{10, 0.9}}}, capacity: 25}
	s := solveExact(p)
	if s[0] != -1 || s[1] != 0 || s[2] != 0 {
		t.Errorf("solveExact = %v, want [-1 0 0]", s)
	}
	p.capacity = 5
	if s := solveExact(p); s[0] != -1 || s[1] != -1 || s[2] != -1 {
		t.Errorf("solveExact(nothing fits) = %v, want all skipped", s)
	}
}

// textbookExact is the plain DP, one table per capacity: the reference
// for exactTable.
func textbookExact(p *problem) solution {
	n, c := len(p.items), max(p.capacity, 0)
	best := make([]float64, c+1)
	next := make([]float64, c+1)
	pick := make([]int8, n*(c+1))
	for i, opts := range p.items {
		row := pick[i*(c+1) : (i+1)*(c+1)]
		for x := 0; x <= c; x++ {
			b, ch := best[x], int8(0)
			for o, op := range opts {
				if op.w <= x {
					if v := best[x-op.w] + op.v; v > b+1e-12 {
						b, ch = v, int8(o+1)
					}
				}
			}
			next[x], row[x] = b, ch
		}
		best, next = next, best
	}
	s := skipAll(n)
	x := c
	for i := n - 1; i >= 0; i-- {
		if ch := pick[i*(c+1)+x]; ch > 0 {
			s[i] = ch - 1
			x -= p.items[i][s[i]].w
		}
	}
	return s
}

// TestExactTableReuse checks that one table read at any capacity it covers
// gives exactly the solution of a fresh DP at that capacity (the fitter
// reuses the table as it moves the capacity).
func TestExactTableReuse(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		p := randomProblem(r, 30)
		tab := newExactTable(p, p.capacity)
		for _, c := range []int{0, 1, p.capacity / 3, p.capacity / 2, p.capacity - 1, p.capacity} {
			q := &problem{items: p.items, capacity: c}
			got, want := tab.solution(q, c), textbookExact(q)
			if !slices.Equal(got, want) {
				t.Fatalf("table(%d) read at %d = %v, want %v", p.capacity, c, got, want)
			}
			if got := solveExact(q); !slices.Equal(got, want) {
				t.Fatalf("solveExact at %d = %v, want %v", c, got, want)
			}
		}
	}
}
