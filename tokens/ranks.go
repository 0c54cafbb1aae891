package tokens

import (
	"fmt"
	"hash/maphash"
	"math"
)

// rankTable maps token bytes to their BPE rank: an open-addressing hash table
// over one blob holding every token's bytes in rank order. Each slot packs a
// token's rank, length, offset in the blob and a tag of its hash into one
// word, so a lookup touches one slot and, on a tag match, the blob. Lookups
// do not allocate and the table is read-only once built, so it is safe for
// concurrent use.
type rankTable struct {
	seed   maphash.Seed
	blob   string   // token bytes, in rank order
	offs   []uint32 // token r is blob[offs[r]:offs[r+1]]
	slots  []uint64 // packed as below; 0 for an empty slot
	mask   uint64
	maxLen int // longest token
}

// Slot layout: rank+1 in bits 0-19, length in bits 20-27, blob offset in
// bits 28-51, hash tag (the hash's top 12 bits) in bits 52-63.
const (
	slotRankBits = 20
	slotLenBits  = 8
	slotOffBits  = 24
	slotTagShift = slotRankBits + slotLenBits + slotOffBits
)

// noRank marks a pair that does not merge.
const noRank = math.MaxUint32

// newRankTable builds a table from the token bytes of ranks 0..n-1, as
// token(r) returns them.
func newRankTable(n int, token func(rank int) (string, error)) (*rankTable, error) {
	t := &rankTable{seed: maphash.MakeSeed(), offs: make([]uint32, n+1)}
	parts := make([]string, n)
	size := 0
	for r := range n {
		s, err := token(r)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		parts[r] = s
		size += len(s)
		t.maxLen = max(t.maxLen, len(s))
	}
	if n >= 1<<slotRankBits-1 || t.maxLen >= 1<<slotLenBits || size >= 1<<slotOffBits {
		return nil, fmt.Errorf("%d ranks, %d bytes, longest token %d: too large", n, size, t.maxLen)
	}
	blob := make([]byte, 0, size)
	for r, s := range parts {
		t.offs[r] = uint32(len(blob))
		blob = append(blob, s...)
	}
	t.offs[n] = uint32(len(blob))
	t.blob = string(blob)

	slots := 1
	for slots < 2*n {
		slots <<= 1
	}
	t.slots = make([]uint64, slots)
	t.mask = uint64(slots - 1)
	for r, s := range parts {
		if s == "" {
			continue
		}
		h := t.hash(s)
		if t.rankHashed(s, h) != noRank {
			return nil, fmt.Errorf("rank %d: token %q repeats rank %d", r, s, t.rank(s))
		}
		i := h & t.mask
		for t.slots[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = h>>slotTagShift<<slotTagShift |
			uint64(t.offs[r])<<(slotRankBits+slotLenBits) |
			uint64(len(s))<<slotRankBits |
			uint64(r+1)
	}
	return t, nil
}

func (t *rankTable) token(r uint32) string { return t.blob[t.offs[r]:t.offs[r+1]] }

func (t *rankTable) hash(s string) uint64 { return maphash.String(t.seed, s) }

// rankHashed returns the rank of s whose hash is h, or noRank.
func (t *rankTable) rankHashed(s string, h uint64) uint32 {
	tag := h >> slotTagShift
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i]
		if e == 0 {
			return noRank
		}
		if e>>slotTagShift == tag && int(e>>slotRankBits&(1<<slotLenBits-1)) == len(s) {
			off := int(e >> (slotRankBits + slotLenBits) & (1<<slotOffBits - 1))
			if t.blob[off:off+len(s)] == s {
				return uint32(e&(1<<slotRankBits-1)) - 1
			}
		}
	}
}

// rank returns the rank of s, or noRank.
func (t *rankTable) rank(s string) uint32 {
	if len(s) > t.maxLen {
		return noRank
	}
	return t.rankHashed(s, t.hash(s))
}

// part is a boundary in a piece being merged: the byte offset where a part
// starts and the rank of merging it with the part after it.
type part struct {
	start int32
	rank  uint32
}

// mergeScanMax is the piece length up to which bpeCount merges with a
// linear scan per merge (tiktoken's algorithm, quadratic but fast for short
// pieces); longer pieces use a heap.
const mergeScanMax = 128

// bpeCount returns the number of tokens byte-pair encoding merges piece into.
func (t *rankTable) bpeCount(piece string) int {
	if len(piece) <= 1 {
		return len(piece)
	}
	if len(piece) > mergeScanMax {
		return t.bpeCountHeap(piece)
	}
	var buf [mergeScanMax + 1]part
	parts := buf[:0]
	minRank, minAt := uint32(noRank), 0
	for i := 0; i < len(piece)-1; i++ {
		r := t.rank(piece[i : i+2])
		if r < minRank {
			minRank, minAt = r, i
		}
		parts = append(parts, part{int32(i), r})
	}
	parts = append(parts, part{int32(len(piece) - 1), noRank}, part{int32(len(piece)), noRank})

	// rankAt is the rank of merging parts i and i+1 once i+1 and i+2 merged.
	rankAt := func(i int) uint32 {
		if i+3 < len(parts) {
			return t.rank(piece[parts[i].start:parts[i+3].start])
		}
		return noRank
	}
	for minRank != noRank {
		i := minAt
		if i > 0 {
			parts[i-1].rank = rankAt(i - 1)
		}
		parts[i].rank = rankAt(i)
		parts = append(parts[:i+1], parts[i+2:]...)
		minRank, minAt = noRank, 0
		for j, p := range parts[:len(parts)-1] {
			if p.rank < minRank {
				minRank, minAt = p.rank, j
			}
		}
	}
	return len(parts) - 1
}

// mergeNode is a part boundary in bpeCountHeap's linked list; rank is the
// rank of merging the part with the next one.
type mergeNode struct {
	prev, next int32
	rank       uint32
}

// candidate is a pending merge: the pair starting at node at, of rank rank.
type candidate struct {
	rank uint32
	at   int32
}

// bpeCountHeap returns the same count as the scan in O(n log n): a min-heap
// of candidate merges ordered by rank then offset (so the leftmost of equal
// ranks merges first), with stale entries skipped.
func (t *rankTable) bpeCountHeap(piece string) int {
	n := int32(len(piece))
	nodes := make([]mergeNode, n+1)
	for i := range nodes {
		nodes[i] = mergeNode{prev: int32(i) - 1, next: int32(i) + 1, rank: noRank}
	}
	nodes[n].next = -1
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		k := nodes[j].next
		if k < 0 {
			return noRank
		}
		return t.rank(piece[i:k])
	}
	h := make(candidateHeap, 0, n)
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != noRank {
			nodes[i].rank = r
			h = append(h, candidate{r, i})
		}
	}
	h.init()
	count := int(n)
	for len(h) > 0 {
		top := h.pop()
		i := top.at
		if nodes[i].rank != top.rank {
			continue // stale
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		count--
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankOf(b)
			if nodes[b].rank != noRank {
				h.push(candidate{nodes[b].rank, b})
			}
		}
	}
	return count
}

type candidateHeap []candidate

func (h candidateHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].at < h[b].at
}

func (h candidateHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *candidateHeap) push(c candidate) {
	*h = append(*h, c)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

func (h *candidateHeap) pop() candidate {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h candidateHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
