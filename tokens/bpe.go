package tokens

import (
	_ "embed"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
)

// Encoding names.
const (
	O200kBaseName  = "o200k_base"
	Cl100kBaseName = "cl100k_base"
)

// O200kBase returns the exact counter for OpenAI's o200k_base encoding (GPT-4o,
// GPT-4.1, o-series). Its ranks are compiled into the binary and read in
// place; the counter is shared and safe for concurrent use. Counts equal tiktoken's.
func O200kBase() Counter { return o200k() }

// Cl100kBase returns the exact counter for OpenAI's cl100k_base encoding
// (GPT-4, GPT-3.5). Its ranks are read in place; the counter is shared
// and safe for concurrent use. Counts equal tiktoken's.
func Cl100kBase() Counter { return cl100k() }

// The rank images of the encodings, built by TestRankImages from
// tiktoken-go/tokenizer's vocabularies (go test ./tokens -run RankImages
// -update rewrites them).
var (
	//go:embed o200k_base.ranks
	o200kImage string
	//go:embed cl100k_base.ranks
	cl100kImage string
)

var (
	o200kRanks  = sync.OnceValue(func() *rankTable { return mustRanks(O200kBaseName, o200kImage) })
	cl100kRanks = sync.OnceValue(func() *rankTable { return mustRanks(Cl100kBaseName, cl100kImage) })
	o200k       = sync.OnceValue(func() *bpeCounter { return newO200k() })
	cl100k      = sync.OnceValue(func() *bpeCounter { return newCl100k() })
)

func newO200k() *bpeCounter {
	return &bpeCounter{name: O200kBaseName, ranks: o200kRanks(), split: splitO200k}
}

func newCl100k() *bpeCounter {
	return &bpeCounter{name: Cl100kBaseName, ranks: cl100kRanks(), split: splitCl100k}
}

// mustRanks reads the rank image of the encoding name in place.
func mustRanks(name, img string) *rankTable {
	t, err := loadRankTable(img)
	if err != nil {
		panic("tokens: " + name + ": " + err.Error())
	}
	return t
}

// bpeCounter counts the tokens of one BPE encoding: its own pre-tokenizer
// splits the text into pieces, a piece found whole in the ranks is one token,
// and other pieces are merged by byte-pair encoding, their counts kept in a
// bounded cache.
type bpeCounter struct {
	name  string
	ranks *rankTable
	split func(string) int
	cache pieceCache
}

func (c *bpeCounter) Name() string { return c.name }
func (c *bpeCounter) Exact() bool  { return true }

// Count returns the number of tokens s encodes to. Invalid UTF-8 is counted
// as if each maximal invalid subsequence were U+FFFD, as tiktoken sees text
// decoded with errors="replace".
func (c *bpeCounter) Count(s string) int {
	if !utf8.ValidString(s) {
		s = replaceInvalid(s)
	}
	n := 0
	for len(s) > 0 {
		e := c.split(s)
		n += c.countPiece(s[:e])
		s = s[e:]
	}
	return n
}

// CountBytes is Count for a byte slice, without copying it; b must not
// change during the call.
func (c *bpeCounter) CountBytes(b []byte) int {
	return c.Count(unsafe.String(unsafe.SliceData(b), len(b)))
}

func (c *bpeCounter) countPiece(p string) int {
	if len(p) > c.ranks.maxLen && len(p) > cacheMaxPiece {
		if n, ok := c.ranks.runCount(p); ok {
			return n
		}
		return c.ranks.bpeCount(p)
	}
	h := c.ranks.hash(p)
	if len(p) <= c.ranks.maxLen && c.ranks.rankHashed(p, h) != noRank {
		return 1
	}
	if n, ok := c.cache.get(p, h); ok {
		return n
	}
	n := c.ranks.bpeCount(p)
	c.cache.put(p, h, n)
	return n
}

// CountBytes returns c.Count(string(b)), without copying b when c supports
// it (the BPE counters do); b must not change during the call.
func CountBytes(c Counter, b []byte) int {
	if bc, ok := c.(interface{ CountBytes([]byte) int }); ok {
		return bc.CountBytes(b)
	}
	return c.Count(string(b))
}

// pieceCache is a bounded, lock-free, direct-mapped cache from a piece to its
// token count. A slot holds an immutable entry; a new piece replaces whatever
// its slot held. Safe for concurrent use.
type pieceCache struct {
	slots [cacheSlots]atomic.Pointer[cacheEntry]
}

const (
	cacheBits  = 16
	cacheSlots = 1 << cacheBits
	// cacheMaxPiece is the longest piece cached, which bounds the cache's
	// memory to about cacheSlots × (cacheMaxPiece + 40) bytes.
	cacheMaxPiece = 128
)

type cacheEntry struct {
	piece string
	n     int
}

func (c *pieceCache) get(p string, h uint64) (int, bool) {
	e := c.slots[h>>(64-cacheBits)].Load()
	if e != nil && e.piece == p {
		return e.n, true
	}
	return 0, false
}

func (c *pieceCache) put(p string, h uint64, n int) {
	if len(p) > cacheMaxPiece {
		return
	}
	// Clone: p may share memory with a large text, or with a caller's bytes.
	c.slots[h>>(64-cacheBits)].Store(&cacheEntry{strings.Clone(p), n})
}

// replaceInvalid replaces each maximal invalid subsequence of s with U+FFFD
// (the WHATWG and Python "replace" rule).
func replaceInvalid(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
			n = maximalSubpart(s)
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// maximalSubpart returns the length of the invalid sequence at the start of
// s: a lead byte and the continuation bytes that could still have completed
// it.
func maximalSubpart(s string) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i <= need && i < len(s); i++ {
		c := s[i]
		if i == 1 && (c < lo || c > hi) || i > 1 && (c < 0x80 || c > 0xBF) {
			break
		}
	}
	return i
}
