package tokens

import (
	"encoding/binary"
	"fmt"
	"math"
)

// rankTable maps token bytes to their BPE rank: an open-addressing hash table
// over one blob holding every token's bytes in rank order. Each slot packs a
// token's rank, length, offset in the blob and a tag of its hash into one
// little-endian word, so a lookup touches one slot and, on a tag match, the
// blob. The table is a rank image (see buildRankImage) read in place: an
// image compiled into the binary is used without decoding it, so the first
// count costs no start-up work beyond the pages it touches. Lookups do not
// allocate and the table is read-only, so it is safe for concurrent use.
type rankTable struct {
	slots  string // 8 bytes a slot; a zero slot is empty
	blob   string // token bytes, in rank order
	mask   uint64
	n      int // number of ranks
	maxLen int // longest token

	byteRank [256]uint32 // the rank of each single byte

	runs runTable // runs of one character, remembered (see runs.go)
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

// A rank image is, little-endian: the 16-byte magic, then the number of
// ranks, the longest token's length, the number of slots (a power of two)
// and the blob's length as uint32s; then the slots, 8 bytes each; then the
// blob.
const (
	rankMagic      = "terse-ranks-v1\n\x00"
	rankHeaderSize = 32
)

// buildRankImage returns the rank image of the token bytes of ranks
// 0..len(toks)-1.
func buildRankImage(toks []string) ([]byte, error) {
	n, size, maxLen := len(toks), 0, 0
	for _, s := range toks {
		size += len(s)
		maxLen = max(maxLen, len(s))
	}
	if n >= 1<<slotRankBits-1 || maxLen >= 1<<slotLenBits || size >= 1<<slotOffBits {
		return nil, fmt.Errorf("%d ranks, %d bytes, longest token %d: too large", n, size, maxLen)
	}
	nslots := 1
	for nslots < 2*n {
		nslots <<= 1
	}
	img := make([]byte, rankHeaderSize+8*nslots, rankHeaderSize+8*nslots+size)
	copy(img, rankMagic)
	binary.LittleEndian.PutUint32(img[16:], uint32(n))
	binary.LittleEndian.PutUint32(img[20:], uint32(maxLen))
	binary.LittleEndian.PutUint32(img[24:], uint32(nslots))
	binary.LittleEndian.PutUint32(img[28:], uint32(size))
	slots := img[rankHeaderSize:]
	mask := uint64(nslots - 1)
	blobStart := len(img)
	for r, s := range toks {
		off := len(img) - blobStart
		img = append(img, s...)
		if s == "" {
			continue
		}
		h := hashPiece(s)
		i := h & mask
		for {
			e := binary.LittleEndian.Uint64(slots[8*i:])
			if e == 0 {
				break
			}
			if int(e>>slotRankBits&(1<<slotLenBits-1)) == len(s) {
				o := blobStart + int(e>>(slotRankBits+slotLenBits)&(1<<slotOffBits-1))
				if string(img[o:o+len(s)]) == s {
					return nil, fmt.Errorf("rank %d: token %q repeats rank %d", r, s, e&(1<<slotRankBits-1)-1)
				}
			}
			i = (i + 1) & mask
		}
		binary.LittleEndian.PutUint64(slots[8*i:], h>>slotTagShift<<slotTagShift|
			uint64(off)<<(slotRankBits+slotLenBits)|
			uint64(len(s))<<slotRankBits|
			uint64(r+1))
	}
	return img, nil
}

// loadRankTable returns the table of a rank image, read in place.
func loadRankTable(img string) (*rankTable, error) {
	if len(img) < rankHeaderSize || img[:16] != rankMagic {
		return nil, fmt.Errorf("not a rank image")
	}
	u32 := func(at int) int { return int(binary.LittleEndian.Uint32([]byte(img[at : at+4]))) }
	n, maxLen, nslots, size := u32(16), u32(20), u32(24), u32(28)
	if nslots&(nslots-1) != 0 || len(img) != rankHeaderSize+8*nslots+size {
		return nil, fmt.Errorf("rank image: %d bytes, want %d", len(img), rankHeaderSize+8*nslots+size)
	}
	t := &rankTable{
		slots:  img[rankHeaderSize : rankHeaderSize+8*nslots],
		blob:   img[rankHeaderSize+8*nslots:],
		mask:   uint64(nslots - 1),
		n:      n,
		maxLen: maxLen,
	}
	// The single bytes are ranks 0-255 in the byte encoder's order of
	// the GPT-2 family (o200k_base and cl100k_base alike:
	// TestByteRanks): known without a lookup, each of which would touch
	// a page of the image that a short process then maps for nothing.
	for i, b := range byteOrder() {
		t.byteRank[b] = uint32(i)
	}
	return t, nil
}

// byteOrder returns the byte values in the order of their ranks: the
// printable ones ('!' to '~', '¡' to '¬', '®' to 'ÿ') first, then the
// rest in increasing order.
func byteOrder() []byte {
	order := make([]byte, 0, 256)
	printable := func(b int) bool { return '!' <= b && b <= '~' || 0xa1 <= b && b <= 0xac || 0xae <= b && b <= 0xff }
	for b := range 256 {
		if printable(b) {
			order = append(order, byte(b))
		}
	}
	for b := range 256 {
		if !printable(b) {
			order = append(order, byte(b))
		}
	}
	return order
}

// slot returns slot i.
func (t *rankTable) slot(i uint64) uint64 {
	s := t.slots[8*i : 8*i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func (t *rankTable) hash(s string) uint64 { return hashPiece(s) }

// hashPiece is the hash of the rank images and of the piece cache: fixed,
// so images can be built ahead of time; a hostile text cannot lengthen the
// probes of a table it cannot write, and the piece cache only evicts.
func hashPiece(s string) uint64 {
	const m1, m2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9
	h := uint64(len(s)) * m1
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = (h ^ w) * m2
		h ^= h >> 31
		s = s[8:]
	}
	var w uint64
	for i := 0; i < len(s); i++ {
		w |= uint64(s[i]) << (8 * i)
	}
	h = (h ^ w) * m1
	// fmix64 from MurmurHash3: every input bit reaches the tag and the index.
	h ^= h >> 33
	h *= 0xFF51AFD7ED558CCD
	h ^= h >> 33
	h *= 0xC4CEB9FE1A85EC53
	h ^= h >> 33
	return h
}

// rankHashed returns the rank of s whose hash is h, or noRank.
func (t *rankTable) rankHashed(s string, h uint64) uint32 {
	tag := h >> slotTagShift
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slot(i)
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
// pieces); longer pieces use bpeCountLong.
const mergeScanMax = 128

// bpeCount returns the number of tokens byte-pair encoding merges piece into.
func (t *rankTable) bpeCount(piece string) int {
	if len(piece) <= 1 {
		return len(piece)
	}
	if len(piece) > mergeScanMax {
		return t.bpeCountLong(piece)
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

// mergeNode is a part in bpeCountLong's linked list: tok is the part's
// rank, rank the rank of merging it with the next part.
type mergeNode struct {
	prev, next int32
	tok, rank  uint32
}

// bpeCountLong returns the same count as the scan for a long piece: pieces
// longer than chunkedMin merge in chunks (see bpeCountChunked), others
// whole.
func (t *rankTable) bpeCountLong(piece string) int {
	if len(piece) > chunkedMin {
		if n, ok := t.bpeCountChunked(piece, chunkSize, chunkOverlap); ok {
			return n
		}
	}
	if len(piece) > chunkedMin {
		var m merger // not pooled: it would keep the memory of a huge piece
		return m.run(t, piece, false)
	}
	m := mergers.Get().(*merger)
	defer mergers.Put(m)
	return m.run(t, piece, false)
}

// merger merges one piece: merges are taken by rank, then leftmost first,
// as tiktoken takes them, from a min-heap of pending merges, with stale
// entries skipped, in O(n log n). The rank of two adjacent
// parts is looked up once per pair of part ranks (a run merges the same
// pairs over and over). Its memory is reused from run to run.
type merger struct {
	nodes []mergeNode
	pairs []pairEntry
	heap  []uint64     // pending merges, see siftDown
	log   []mergeEvent // the merges of the last run, in order, if asked
}

// mergeEvent is one merge: the parts [at, end) became one part of rank
// rank.
type mergeEvent struct {
	rank    uint32
	at, end int32
}

// run merges piece and returns its token count; with log set it records
// the merges in m.log, and m.nodes holds the final parts.
func (m *merger) run(t *rankTable, piece string, log bool) int {
	n := int32(len(piece))
	if cap(m.nodes) < int(n)+1 {
		m.nodes = make([]mergeNode, n+1)
	}
	nodes := m.nodes[:n+1]
	for i := range nodes {
		nodes[i] = mergeNode{prev: int32(i) - 1, next: int32(i) + 1, rank: noRank}
	}
	nodes[n].next = -1
	size := 64
	for size < int(n) && size < 1<<pairCacheBits {
		size <<= 1
	}
	if cap(m.pairs) < size {
		m.pairs = make([]pairEntry, size)
	}
	pairs := m.pairs[:size]
	clear(pairs)
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		k := nodes[j].next
		if k < 0 {
			return noRank
		}
		if int(k-i) > t.maxLen {
			return noRank
		}
		key := uint64(nodes[i].tok+1)<<32 | uint64(nodes[j].tok+1)
		e := &pairs[(key*0x9E3779B97F4A7C15)>>(64-pairCacheBits)&uint64(len(pairs)-1)]
		if e.key != key {
			e.key, e.rank = key, t.rank(piece[i:k])
		}
		return e.rank
	}
	for i := int32(0); i < n; i++ {
		nodes[i].tok = t.byteRank[piece[i]]
	}
	h := m.heap[:0]
	for i := int32(0); i+2 <= n; i++ {
		r := rankOf(i)
		nodes[i].rank = r
		if r != noRank {
			h = append(h, uint64(r)<<32|uint64(i))
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	m.log = m.log[:0]
	count := int(n)
	for len(h) > 0 {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		siftDown(h, 0)
		r, i := uint32(top>>32), int32(uint32(top))
		if nodes[i].rank != r {
			continue // stale
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		nodes[i].tok = r
		if k >= 0 {
			nodes[k].prev = i
		}
		if log {
			m.log = append(m.log, mergeEvent{r, i, k})
		}
		count--
		for _, b := range [2]int32{nodes[i].prev, i} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankOf(b)
			if nodes[b].rank != noRank {
				h = append(h, uint64(nodes[b].rank)<<32|uint64(b))
				siftUp(h, len(h)-1)
			}
		}
	}
	m.heap = h
	return count
}

// siftDown and siftUp keep h a binary min-heap. Its entries are pending
// merges, rank<<32 | offset, so the least is the merge of least rank, then
// leftmost, the one tiktoken takes next.
func siftDown(h []uint64, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if h[i] <= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

func siftUp(h []uint64, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// pairCacheBits bounds bpeCountLong's cache of pair ranks to 1<<pairCacheBits
// entries.
const pairCacheBits = 12

type pairEntry struct {
	key  uint64 // (left rank + 1) << 32 | (right rank + 1); 0 when empty
	rank uint32
}
