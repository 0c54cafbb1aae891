package eval

import (
	"math"
	"math/rand/v2"
	"slices"
)

// McNemarExact returns the two-sided p-value of the exact McNemar test for
// paired outcomes: b pairs right only in the first condition, c right only
// in the second. Under the null hypothesis the b+c discordant pairs split
// as Binomial(b+c, 1/2); p = min(1, 2·P(X ≤ min(b, c))).
func McNemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	// Sum the binomial probabilities in log space: n can be large.
	sum := 0.0
	for i := 0; i <= k; i++ {
		sum += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
	}
	return math.Min(1, 2*sum)
}

func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// BootstrapDiff returns the percentile bootstrap confidence interval, at
// level conf (0.95), of the difference in accuracy mean(y) − mean(x) of
// paired outcomes, from reps resamples of the pairs drawn with a generator
// seeded by seed.
func BootstrapDiff(x, y []bool, reps int, conf float64, seed uint64) (lo, hi float64) {
	n := len(x)
	if n == 0 || n != len(y) || reps <= 0 {
		return 0, 0
	}
	// Each pair contributes −1, 0 or +1 to the difference.
	d := make([]int8, n)
	for i := range x {
		d[i] = int8(b2i(y[i]) - b2i(x[i]))
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	diffs := make([]float64, reps)
	for r := range diffs {
		s := 0
		for range n {
			s += int(d[rng.IntN(n)])
		}
		diffs[r] = float64(s) / float64(n)
	}
	slices.Sort(diffs)
	alpha := (1 - conf) / 2
	return quantile(diffs, alpha), quantile(diffs, 1-alpha)
}

// quantile is the type-7 (linear) quantile of sorted xs.
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 1 {
		return xs[0]
	}
	h := p * float64(len(xs)-1)
	i := int(math.Floor(h))
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
