package tokens

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Runs of one character.
//
// A run (one character repeated, as in a rule of "-", a blank field of
// spaces or a padded value) is one piece however long it is, often with a
// few other bytes around it (the quote before a JSON string, the `","`
// after it), and merging a piece costs more per byte than the words of
// ordinary text. Chunked merging (see chunked.go) counts a piece as
// chunks merged alone, exact when the boundary between each two chunks
// holds; along a run the chunks and their checks repeat. So a run piece
// P + c^k + S (prefix P and suffix S of a few bytes) counts as
//
//   - a head: P and the first characters, up to a boundary the merge of
//     a window of W bytes picks (none when P is empty);
//   - L strides: c^(b/len(c)), the part before the boundary b that the
//     window of the bare run picks;
//   - a tail: c^m + S, with m·len(c) in (W−b, W];
//
// provided the boundaries head|stride, stride|stride and stride|tail hold.
// runTable remembers, per character, the head of each prefix, the stride,
// and the count and check of each tail, and the count of each piece short
// enough to merge whole (runs up to 2W bytes), so a run of any length
// costs a comparison of its bytes and a few lookups once its character,
// prefix, suffix and tail have been seen. Where a check fails (none does
// for the characters tested) the piece is merged as any other.

// Run parameters: a window's boundary is the last part starting at or
// before runStride bytes (past the prefix), and the window extends
// 2·maxLen bytes past that, as chunked merging's overlap does, so the
// parts before the boundary are ones the next bytes did not disturb.
const (
	runStride = 256
	runBits   = 6  // 1<<runBits characters remembered per encoding
	runAffix  = 8  // longest prefix or suffix of a run piece
	runEnds   = 16 // prefixes and suffixes remembered per character
)

// runTable remembers runs of recent characters for one encoding. Safe for
// concurrent use.
type runTable struct {
	slots [1 << runBits]atomic.Pointer[runChar]
}

// runChar is what is known of the runs of one character.
type runChar struct {
	char   string // the character's UTF-8 bytes
	window int    // W, in bytes (a multiple of len(char))

	strideOnce sync.Once
	stride     int          // b, in bytes; 0 when strides do not hold
	strideN    int          // the tokens of a stride
	strideLog  []mergeEvent // the merges of a stride merged alone

	mu    sync.Mutex
	ends  map[string]*runAffixes // by prefix and suffix (affixKey)
	heads map[string]*runHead    // by prefix
}

// runAffixes holds, for one prefix and suffix, counts[m] = 1 + the count of
// prefix + c^m + suffix merged whole (m·len(c) ≤ 2W), 0 until known; and
// for the bare prefix, tails[m] = 0 until known, 1 if the boundary between
// a stride and c^m + suffix fails, 2 if it holds.
type runAffixes struct {
	counts []atomic.Int32
	tails  []atomic.Int32
}

// runHead is the head chunk of runs with one prefix: its length in bytes
// (0 when it cannot be used), tokens and merges.
type runHead struct {
	once sync.Once
	len  int
	n    int
	log  []mergeEvent
}

// runCount returns the count of piece and true when piece is a run piece
// (a run of one character of more than mergeScanMax bytes, with at most
// runAffix bytes before and after it); false otherwise, or when the run
// cannot be counted by chunks.
func (t *rankTable) runCount(piece string) (int, bool) {
	pre, ch, k, suf, ok := splitRun(piece)
	if !ok {
		return 0, false
	}
	c := t.runChar(ch)
	p := len(ch)
	if k*p <= 2*c.window {
		e := c.end(pre, suf)
		if e == nil {
			return 0, false
		}
		return e.count(t, piece, k), true
	}
	c.strideOnce.Do(func() { c.findStride(t) })
	b := c.stride
	if b == 0 {
		return 0, false
	}
	// The head: the prefix and the first characters, when there is a
	// prefix.
	s, n := 0, 0
	if pre != "" {
		h := c.head(t, pre, piece)
		if h == nil || h.len == 0 {
			return 0, false
		}
		s, n = h.len, h.n
	}
	// The strides, then a tail of (W−b, W] bytes of the run and the
	// suffix; run is the run bytes after the head.
	run := len(piece) - len(suf) - s
	strides := (run - c.window + b - 1) / b
	if strides < 1 {
		return 0, false
	}
	m := (run - strides*b) / p
	e := c.end("", suf)
	if e == nil {
		return 0, false
	}
	t0 := s + strides*b // where the tail starts
	if !e.tailHolds(t, c, piece[t0-b:], m) {
		return 0, false
	}
	return n + strides*c.strideN + e.count(t, piece[t0:], m), true
}

// splitRun splits piece into a prefix, a character, the number of times
// it repeats and a suffix, if piece is a run piece.
func splitRun(piece string) (pre, ch string, k int, suf string, ok bool) {
	if len(piece) <= mergeScanMax {
		return "", "", 0, "", false
	}
	mid := len(piece) / 2
	for mid > 0 && !utf8.RuneStart(piece[mid]) {
		mid--
	}
	r, p := utf8.DecodeRuneInString(piece[mid:])
	if r == utf8.RuneError && p == 1 {
		return "", "", 0, "", false
	}
	ch = piece[mid : mid+p]
	i, j := mid, mid+p
	if p == 1 {
		c := ch[0]
		for i > 0 && piece[i-1] == c {
			i--
		}
		for j < len(piece) && piece[j] == c {
			j++
		}
	} else {
		for i >= p && piece[i-p:i] == ch {
			i -= p
		}
		for j+p <= len(piece) && piece[j:j+p] == ch {
			j += p
		}
	}
	if i > runAffix || len(piece)-j > runAffix || j-i <= mergeScanMax {
		return "", "", 0, "", false
	}
	return piece[:i], ch, (j - i) / p, piece[j:], true
}

// runChar returns the entry of the character ch, making it if its slot
// holds another.
func (t *rankTable) runChar(ch string) *runChar {
	var h uint32
	for i := range len(ch) {
		h = h*31 + uint32(ch[i])
	}
	slot := &t.runs.slots[(h*0x9E3779B9)>>(32-runBits)]
	if c := slot.Load(); c != nil && c.char == ch {
		return c
	}
	w := runStride + 2*t.maxLen
	w -= w % len(ch)
	c := &runChar{char: strings.Clone(ch), window: w}
	slot.Store(c)
	return c
}

// affixKey is the key of a prefix and a suffix in runChar.ends.
func affixKey(pre, suf string) string {
	return string(rune('0'+len(pre))) + pre + suf
}

// end returns the entry of the prefix and suffix, or nil when the
// character has too many.
func (c *runChar) end(pre, suf string) *runAffixes {
	key := affixKey(pre, suf)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.ends[key]; e != nil {
		return e
	}
	if len(c.ends) >= runEnds {
		return nil
	}
	if c.ends == nil {
		c.ends = map[string]*runAffixes{}
	}
	n := 2*c.window/len(c.char) + 1
	e := &runAffixes{counts: make([]atomic.Int32, n)}
	if pre == "" {
		e.tails = make([]atomic.Int32, n)
	}
	c.ends[strings.Clone(key)] = e
	return e
}

// count returns the count of text, which is the entry's prefix, m
// characters and its suffix, merged whole.
func (e *runAffixes) count(t *rankTable, text string, m int) int {
	if n := e.counts[m].Load(); n > 0 {
		return int(n - 1)
	}
	n := t.bpeCount(text)
	e.counts[m].Store(int32(n + 1))
	return n
}

// findStride merges a window of the bare run alone and keeps its
// boundary, the tokens and merges before it, if the boundary between two
// strides holds.
func (c *runChar) findStride(t *rankTable) {
	window := strings.Repeat(c.char, c.window/len(c.char))
	m := mergers.Get().(*merger)
	defer mergers.Put(m)
	m.run(t, window, true)
	b, n := 0, 0
	for i := int32(0); i >= 0 && int(i) <= runStride; i = m.nodes[i].next {
		b = int(i)
	}
	if b == 0 || b%len(c.char) != 0 || 2*b > len(window) {
		return
	}
	for i := int32(0); int(i) < b; i = m.nodes[i].next {
		n++
	}
	var log []mergeEvent
	for _, ev := range m.log {
		if int(ev.end) <= b {
			log = append(log, ev)
		}
	}
	if !t.boundaryHolds(window[:2*b], b, log, 0, log, b) {
		return
	}
	c.stride, c.strideN, c.strideLog = b, n, log
}

// head returns the head of runs with the prefix pre (piece is one of
// them, longer than 2W), or nil when the character has too many.
func (c *runChar) head(t *rankTable, pre, piece string) *runHead {
	c.mu.Lock()
	h := c.heads[pre]
	if h == nil {
		if len(c.heads) >= runEnds {
			c.mu.Unlock()
			return nil
		}
		if c.heads == nil {
			c.heads = map[string]*runHead{}
		}
		h = &runHead{}
		c.heads[strings.Clone(pre)] = h
	}
	c.mu.Unlock()
	h.once.Do(func() { h.find(t, c, len(pre), piece[:len(pre)+c.window]) })
	return h
}

// find merges the window (the prefix and W bytes of the run) alone and
// keeps the boundary it picks, if the boundary between the head and a
// stride holds.
func (h *runHead) find(t *rankTable, c *runChar, pre int, window string) {
	m := mergers.Get().(*merger)
	defer mergers.Put(m)
	m.run(t, window, true)
	b, n := 0, 0
	for i := int32(0); i >= 0 && int(i) <= pre+runStride; i = m.nodes[i].next {
		b = int(i)
	}
	if b <= pre || (b-pre)%len(c.char) != 0 {
		return
	}
	for i := int32(0); int(i) < b; i = m.nodes[i].next {
		n++
	}
	var log []mergeEvent
	for _, ev := range m.log {
		if int(ev.end) <= b {
			log = append(log, ev)
		}
	}
	span := window[:b] + strings.Repeat(c.char, c.stride/len(c.char))
	if !t.boundaryHolds(span, b, log, 0, c.strideLog, b) {
		return
	}
	h.len, h.n, h.log = b, n, log
}

// tailHolds reports whether the boundary between a stride and the tail
// after it (m characters and the suffix) holds; span is the stride and
// the tail.
func (e *runAffixes) tailHolds(t *rankTable, c *runChar, span string, m int) bool {
	switch e.tails[m].Load() {
	case 1:
		return false
	case 2:
		return true
	}
	b := c.stride
	mg := mergers.Get().(*merger)
	defer mergers.Put(mg)
	n := mg.run(t, span[b:], true)
	e.counts[m].Store(int32(n + 1))
	ok := t.boundaryHolds(span, b, c.strideLog, 0, mg.log, b)
	v := int32(1)
	if ok {
		v = 2
	}
	e.tails[m].Store(v)
	return ok
}
