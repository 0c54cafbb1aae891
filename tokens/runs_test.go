package tokens

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// wholeCount counts s piece by piece, merging each piece whole (no cache,
// no chunks, no run memo): the reference for the run memo.
func wholeCount(c *bpeCounter, m *merger, s string) int {
	n := 0
	for len(s) > 0 {
		e := c.split(s)
		p := s[:e]
		if len(p) <= c.ranks.maxLen && c.ranks.rank(p) != noRank {
			n++
		} else {
			n += m.run(c.ranks, p, false)
		}
		s = s[e:]
	}
	return n
}

// TestRunsN9: a run of one character counts as merging each piece whole
// does, for characters whose runs merge into tokens of different lengths
// (up to 128 bytes for spaces) and multi-byte ones, in both encodings,
// bare and as JSON strings (the run piece then has a prefix or suffix
// such as a quote, or `","` after a run of punctuation): every length up
// to 1,600 characters (runs merged whole, and every tail length after
// one and two strides) and every 97th up to 12,000. TERSE_RUNS_FULL=1
// checks every length up to 12,000 (minutes of CPU).
func TestRunsN9(t *testing.T) {
	full := os.Getenv("TERSE_RUNS_FULL") != ""
	const maxN = 12000
	frames := [][2]string{{"", ""}, {`["`, `"]`}, {`{"k":"x","v":"`, `","w":1}`}}
	for _, c := range []*bpeCounter{newO200k(), newCl100k()} {
		chars := []string{"a", " ", "-", "=", "é", "日", "😀"}
		if c.name == Cl100kBaseName && !full {
			chars = []string{"a", " ", "-", "é"}
		}
		for _, ch := range chars {
			for fi, f := range frames {
				if fi > 0 && c.name == Cl100kBaseName && !full {
					continue
				}
				t.Run(fmt.Sprintf("%s/%q/%d", c.name, ch, fi), func(t *testing.T) {
					t.Parallel()
					var m merger
					run := strings.Repeat(ch, maxN)
					for n := 1; n <= maxN; n++ {
						if !full && n > 1600 && n%97 != 0 {
							continue
						}
						s := f[0] + run[:n*len(ch)] + f[1]
						if got, want := c.Count(s), wholeCount(c, &m, s); got != want {
							t.Fatalf("%s Count(%q + %q × %d + %q) = %d, merged whole %d", c.name, f[0], ch, n, f[1], got, want)
						}
						// A bare run over 128 bytes is counted as a run, by
						// lookups, not merged.
						if fi == 0 && len(s) > mergeScanMax && ch != " " {
							if _, ok := c.ranks.runCount(s); !ok {
								t.Fatalf("%s: a run of %q × %d is not counted as a run", c.name, ch, n)
							}
						}
					}
				})
			}
		}
	}
}

// Run memos are shared: counting runs concurrently (run with -race), the
// memos filling as they go, agrees with merging whole.
func TestRunsConcurrent(t *testing.T) {
	c := newO200k()
	var texts []string
	for i, ch := range []string{"a", "-", " ", "é"} {
		for _, n := range []int{150, 700, 1500, 3000 + i} {
			texts = append(texts, `["`+strings.Repeat(ch, n)+`"]`)
		}
	}
	want := make([]int, len(texts))
	var m merger
	for i, s := range texts {
		want[i] = wholeCount(c, &m, s)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range 3 * len(texts) {
				i := (g*5 + k) % len(texts)
				if got := c.Count(texts[i]); got != want[i] {
					t.Errorf("Count(%.20q…) = %d concurrently, want %d", texts[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}
