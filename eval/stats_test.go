package eval

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMcNemarExact(t *testing.T) {
	// Two-sided exact p-values, as R's binom.test(min(b,c), b+c) gives
	// them (the exact McNemar test is that binomial test).
	for _, c := range []struct {
		b, c int
		want float64
	}{
		{0, 0, 1},
		{3, 3, 1},
		{0, 5, 0.0625},         // 2/32
		{1, 9, 0.021484375},    // 2·11/1024
		{10, 2, 0.03857421875}, // 2·79/4096
		{0, 1, 1},
		{40, 60, 0.05688793364},
		{5, 15, 0.04138946533},
	} {
		got := McNemarExact(c.b, c.c)
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("McNemarExact(%d, %d) = %.11f, want %.11f", c.b, c.c, got, c.want)
		}
	}
}

// TestBootstrapCoverage checks on synthetic paired data with a known
// difference that the 95 % interval covers it about 95 % of the time.
func TestBootstrapCoverage(t *testing.T) {
	const (
		sims = 200
		n    = 150
		reps = 800
	)
	rng := rand.New(rand.NewPCG(42, 7))
	// Each question is right in x with probability 0.85; y agrees with x
	// except that it flips a right answer to wrong with probability 0.2
	// and a wrong one to right with probability 0.3:
	// E[y] − E[x] = 0.15·0.3 − 0.85·0.2 = −0.125.
	truth := 0.15*0.3 - 0.85*0.2
	covered := 0
	for s := range sims {
		x := make([]bool, n)
		y := make([]bool, n)
		for i := range x {
			x[i] = rng.Float64() < 0.85
			if x[i] {
				y[i] = rng.Float64() >= 0.2
			} else {
				y[i] = rng.Float64() < 0.3
			}
		}
		lo, hi := BootstrapDiff(x, y, reps, 0.95, uint64(s))
		if lo > hi {
			t.Fatalf("interval [%v, %v] reversed", lo, hi)
		}
		if lo <= truth && truth <= hi {
			covered++
		}
	}
	cov := float64(covered) / sims
	t.Logf("coverage %.3f over %d simulations", cov, sims)
	if cov < 0.90 || cov > 0.99 {
		t.Errorf("coverage %.3f, want about 0.95", cov)
	}
}

func TestBootstrapDegenerate(t *testing.T) {
	x := []bool{true, true, false, true}
	if lo, hi := BootstrapDiff(x, x, 100, 0.95, 1); lo != 0 || hi != 0 {
		t.Errorf("identical outcomes: [%v, %v], want [0, 0]", lo, hi)
	}
	if lo, hi := BootstrapDiff(nil, nil, 100, 0.95, 1); lo != 0 || hi != 0 {
		t.Errorf("no data: [%v, %v]", lo, hi)
	}
	all := []bool{true, true, true}
	none := []bool{false, false, false}
	if lo, hi := BootstrapDiff(all, none, 100, 0.95, 1); lo != -1 || hi != -1 {
		t.Errorf("all lost: [%v, %v], want [-1, -1]", lo, hi)
	}
}
