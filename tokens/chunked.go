package tokens

import "sync"

// Chunked merging of long pieces.
//
// Byte-pair merging is not local: whether two bytes end up in one token can
// depend on merges far away (in a run of one character, on its parity from
// the start). But a boundary that no merge ever crosses splits the work
// exactly: the merges on each side are then those of merging that side
// alone, in the same order. bpeCountChunked merges a long piece chunk by
// chunk, picks boundaries that merging on its own never crossed, and
// checks, from the two sides' merge logs, that merging the whole piece
// would not cross them either:
//
//   - Merging [s, e+overlap) alone, a boundary b near e between two of its
//     final parts was never crossed, so those merges restricted to [s, b)
//     are exactly the merges of [s, b) alone. The next chunk starts at b.
//   - The whole piece would cross b only by merging X, the part that ends at
//     b, with Y, the part that starts there, when that pair is the least
//     pending merge (by rank, then offset). Replaying the two sides' logs
//     in the order the whole piece would merge them (always the lesser of
//     the two next merges), while tracking X and Y, shows whether the pair
//     XY ever comes first, and whether it would still be pending at the end.
//
// If a check fails (none of the pieces tested and fuzzed needs it), the
// piece is merged whole. A chunk's working memory is reused, so a piece of
// any length merges in the memory of one chunk, in cache; a chunk equal to
// one of the last few (along a run) reuses their merges, so runs cost about
// a comparison of their bytes.

// Chunking parameters: pieces longer than chunkedMin are merged in chunks
// of about chunkSize bytes, each merged with chunkOverlap more bytes so its
// boundary is picked from parts the next bytes did not disturb.
const (
	chunkedMin   = 16 << 10
	chunkSize    = 8 << 10
	chunkOverlap = 1 << 10
)

// memoChunks is how many recent chunks (and boundaries between them) are
// remembered: along a run of a short period, chunks start at a few phases
// of it and repeat.
const memoChunks = 4

var mergers = sync.Pool{New: func() any { return new(merger) }}

// bpeCountChunked returns the count of piece merged in chunks of about size
// bytes, with overlap more bytes merged past each chunk's end, and true;
// or false if a boundary cannot be shown exact, and the piece must be
// merged whole. A chunk whose bytes equal one of the last few chunks' (as
// along a run) reuses its merges, and a boundary between the same two
// chunks as one of the last few checked is not checked again, so a long
// run costs little more than comparing its bytes.
func (t *rankTable) bpeCountChunked(piece string, size, overlap int) (int, bool) {
	overlap = max(overlap, 2*t.maxLen)
	m := mergers.Get().(*merger)
	defer mergers.Put(m)
	type chunk struct { // a chunk merged
		ext  string
		b, n int
		log  []mergeEvent // offsets within the chunk
	}
	var (
		logs      [2][]mergeEvent // the merges of the previous and current chunk, offsets within the chunk
		prev, cur = &logs[0], &logs[1]
		prevStart int
		memo      [memoChunks]chunk // the last chunks merged, for runs and short periods
		memoNext  int
		checked   [memoChunks]struct{ left, right string } // the last boundaries shown exact
		checkNext int
	)
	count := 0
	for s := 0; s < len(piece); {
		e := min(len(piece), s+size+overlap)
		ext := piece[s:e]
		var b, n int
		hit := false
		if e < len(piece) {
			for i := range memo {
				if c := &memo[i]; c.ext == ext {
					b, n, hit = c.b, c.n, true
					*cur = append((*cur)[:0], c.log...)
					break
				}
			}
		}
		if !hit {
			m.run(t, ext, true)
			// The boundary: the start of the last final part at or before
			// size (the end, at the piece's end).
			b = len(ext)
			if e < len(piece) {
				b = 0
				for i := int32(0); i >= 0 && int(i) <= size; i = m.nodes[i].next {
					b = int(i)
				}
				if b == 0 {
					return 0, false
				}
			}
			// Count the parts before b and keep the merges inside [0, b).
			for i := int32(0); int(i) < b; i = m.nodes[i].next {
				n++
			}
			*cur = (*cur)[:0]
			for _, ev := range m.log {
				if int(ev.end) <= b {
					*cur = append(*cur, ev)
				}
			}
			c := &memo[memoNext]
			memoNext = (memoNext + 1) % len(memo)
			c.ext, c.b, c.n = ext, b, n
			c.log = append(c.log[:0], *cur...)
		}
		if s > 0 {
			left, right := piece[prevStart:s], piece[s:s+b]
			known := false
			for i := range checked {
				if c := &checked[i]; c.left == left && c.right == right && left != "" {
					known = true
					break
				}
			}
			if !known {
				if !t.boundaryHolds(piece, s, *prev, prevStart, *cur, s) {
					return 0, false
				}
				checked[checkNext].left, checked[checkNext].right = left, right
				checkNext = (checkNext + 1) % len(checked)
			}
		}
		count += n
		prev, cur = cur, prev
		prevStart = s
		s += b
	}
	return count, true
}

// boundaryHolds reports whether merging the whole piece never merges
// across offset b, given the merges left of b (left, offsets from leftOff)
// and right of b (right, offsets from rightOff), each in its own order, as
// merged alone.
func (t *rankTable) boundaryHolds(piece string, b int, left []mergeEvent, leftOff int, right []mergeEvent, rightOff int) bool {
	lo, ro := int32(leftOff), int32(rightOff)
	xs, ye := b-1, b+1 // X is [xs, b), Y is [b, ye)
	cross := t.rank(piece[xs:ye])
	i, j := 0, 0
	for {
		// The next merge of each side, by (rank, offset); none is +inf.
		lr, la := uint32(noRank), int32(0)
		if i < len(left) {
			lr, la = left[i].rank, left[i].at+lo
		}
		rr, ra := uint32(noRank), int32(0)
		if j < len(right) {
			rr, ra = right[j].rank, right[j].at+ro
		}
		if cross != noRank && less(cross, int32(xs), lr, la) && less(cross, int32(xs), rr, ra) {
			return false // XY would merge first
		}
		if i == len(left) && j == len(right) {
			return true
		}
		if j == len(right) || i < len(left) && less(lr, la, rr, ra) {
			if int(left[i].end+lo) == b {
				xs = int(la)
				cross = t.rank(piece[xs:ye])
			}
			i++
		} else {
			if int(ra) == b {
				ye = int(right[j].end + ro)
				cross = t.rank(piece[xs:ye])
			}
			j++
		}
	}
}

// less orders merges by rank, then offset; noRank sorts last.
func less(r1 uint32, a1 int32, r2 uint32, a2 int32) bool {
	if r1 != r2 {
		return r1 < r2
	}
	return r2 != noRank && a1 < a2
}
