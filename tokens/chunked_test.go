package tokens

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Merging in chunks gives the count of merging whole, on runs, repeated
// short strings and random text over small alphabets (long pieces whose
// merges interact across any boundary), for several chunk sizes, through
// both encodings.
func TestChunkedMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var pieces []string
	for _, u := range []string{"a", " ", "!", "\n", "日", "ab", "aab", "=-", "é", "😀", "x\u0301", "abc123"} {
		for _, n := range []int{3000, 7777, 20011} {
			pieces = append(pieces, strings.Repeat(u, n/len(u)))
		}
	}
	for _, alpha := range []string{"ab", "abc", "aeiou", "abcdefghijklmnopqrstuvwxyz", " \n", "=-!", "eE"} {
		for range 4 {
			var b strings.Builder
			for b.Len() < 12000 {
				if rng.IntN(50) == 0 { // occasional long runs
					b.WriteString(strings.Repeat(string(alpha[rng.IntN(len(alpha))]), rng.IntN(300)))
				}
				b.WriteByte(alpha[rng.IntN(len(alpha))])
			}
			pieces = append(pieces, b.String())
		}
	}
	for _, c := range []*bpeCounter{O200kBase().(*bpeCounter), Cl100kBase().(*bpeCounter)} {
		for _, p := range pieces {
			var m merger
			want := m.run(c.ranks, p, false)
			for _, size := range []int{300, 1000, 4096} {
				got, ok := c.ranks.bpeCountChunked(p, size, 64)
				if !ok {
					t.Logf("%s %.12q… (%d bytes), chunks of %d: merged whole", c.name, p, len(p), size)
					continue
				}
				if got != want {
					t.Errorf("%s %.12q… (%d bytes), chunks of %d: %d, want %d", c.name, p, len(p), size, got, want)
				}
			}
		}
	}
}

// boundaryHolds is never wrong: where it says merging whole does not cross
// an offset, the two sides' counts add up to the whole count; it says so
// somewhere in every piece tried, and it refuses the offsets a run's
// parity makes wrong.
func TestBoundaryHolds(t *testing.T) {
	r := O200kBase().(*bpeCounter).ranks
	logOf := func(p string, off int) ([]mergeEvent, int) {
		var m merger
		n := m.run(r, p, true)
		return append([]mergeEvent(nil), m.log...), n
	}
	for _, p := range []string{strings.Repeat("a", 700), strings.Repeat(" ", 400), strings.Repeat("ab", 300), strings.Repeat("=-", 200) + strings.Repeat("-", 99)} {
		var m merger
		whole := m.run(r, p, false)
		holds, refused := 0, 0
		for b := 1; b < len(p); b++ {
			left, nl := logOf(p[:b], 0)
			right, nr := logOf(p[b:], b)
			if r.boundaryHolds(p, b, left, 0, right, b) {
				holds++
				if nl+nr != whole {
					t.Fatalf("%.8q… at %d: holds, but %d+%d != %d", p, b, nl, nr, whole)
				}
			} else if nl+nr != whole {
				refused++
			}
		}
		if holds == 0 || refused == 0 {
			t.Errorf("%.8q…: %d offsets hold, %d wrong ones refused", p, holds, refused)
		}
	}
}

// Long pieces through Count (chunked at the default size, chunks reused
// along runs) count as merging whole does.
func TestLongPiecesMatchWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("merges several megabytes")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	letters := make([]byte, 300_000)
	for i := range letters {
		letters[i] = "abcdefghijklmnopqrstuvwxyz"[rng.IntN(26)]
	}
	c := O200kBase().(*bpeCounter)
	for _, p := range []string{
		strings.Repeat("a", 1<<20), strings.Repeat(" ", 1<<20+7), strings.Repeat("日", 300_001),
		strings.Repeat("ab", 200_000) + "a", string(letters),
		strings.Repeat("a", 100_000) + strings.Repeat("b", 100_000) + strings.Repeat("a", 100_001),
	} {
		var m merger
		if got, want := c.Count(p), m.run(c.ranks, p, false); got != want {
			t.Errorf("Count(%.8q… %d bytes) = %d, merged whole %d", p, len(p), got, want)
		}
		// Merged in chunks, so in bounded time per byte and bounded
		// memory, not whole.
		if _, ok := c.ranks.bpeCountChunked(p, chunkSize, chunkOverlap); !ok {
			t.Errorf("%.8q… (%d bytes) was not merged in chunks", p, len(p))
		}
	}
}

// FuzzChunked: merging in chunks counts as merging whole, for pieces made
// by repeating a fuzzed unit (with a fuzzed tail), at fuzzed chunk sizes.
func FuzzChunked(f *testing.F) {
	for _, u := range []string{"a", " ", "!", "\n", "日", "ab", "=-", "\xed\xa0\xbd", `\ud83d`, "aab", "abcdefghij"} {
		f.Add(u, "", uint16(300), uint16(64))
	}
	f.Add("xy", "xyzzy", uint16(257), uint16(1))
	f.Fuzz(func(t *testing.T, unit, tail string, size, overlap uint16) {
		if unit == "" || size < 16 {
			return
		}
		p := strings.Repeat(unit, 3000/len(unit)+1)[:3000] + tail
		for _, c := range []*bpeCounter{O200kBase().(*bpeCounter), Cl100kBase().(*bpeCounter)} {
			var m merger
			want := m.run(c.ranks, p, false)
			if got, ok := c.ranks.bpeCountChunked(p, int(size), int(overlap)); ok && got != want {
				t.Fatalf("%s chunks of %d+%d of %.16q…: %d, want %d", c.name, size, overlap, p, got, want)
			}
		}
	})
}
