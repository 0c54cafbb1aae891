package terse

import (
	"sync"
	"unsafe"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// What a Pipeline remembers so as not to do the same work twice: token
// counts of long texts, and whole encodings.

// countCache is a Counter that remembers the counts of recent long texts.
// One result is counted several times over on its way through the
// stages: render counts the candidates it chooses between, and the fitter
// and the Report count the chosen text again. When full, it forgets its
// shortest text (the cheapest to count again) other than the last few
// added, so that a whole document counted before fitting is still known
// after it. Counts are the counter's own, so results do not change. Safe
// for concurrent use.
type countCache struct {
	tokens.Counter
	mu   sync.Mutex
	ents []countEntry
	seq  uint64
}

type countEntry struct {
	s   string
	n   int
	seq uint64 // when it was added
}

const (
	countCacheMin    = 512 // shorter texts are counted every time
	countCacheSize   = 32  // texts remembered
	countCacheRecent = 8   // the last texts added, never forgotten first
)

func newCountCache(c tokens.Counter) *countCache { return &countCache{Counter: c} }

func (c *countCache) Count(s string) int {
	if len(s) < countCacheMin {
		return c.Counter.Count(s)
	}
	if n, ok := c.lookup(s); ok {
		return n
	}
	n := c.Counter.Count(s)
	c.add(s, n)
	return n
}

// CountBytes is Count for bytes (tokens.CountBytes uses it). It finds
// known texts but adds none: bytes may change after the call, and copying
// every new text would cost more than it saves (the texts counted again
// are the strings render counted).
func (c *countCache) CountBytes(b []byte) int {
	if len(b) >= countCacheMin {
		// b is only read during the lookup.
		if n, ok := c.lookup(unsafe.String(unsafe.SliceData(b), len(b))); ok {
			return n
		}
	}
	return tokens.CountBytes(c.Counter, b)
}

// Known returns the count of s when the cache has it, without counting
// (the fitter asks before it counts a prefix to see that a text does not
// fit).
func (c *countCache) Known(s string) (int, bool) {
	if len(s) < countCacheMin {
		return 0, false
	}
	return c.lookup(s)
}

func (c *countCache) lookup(s string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.ents {
		if len(e.s) == len(s) && e.s == s {
			return e.n, true
		}
	}
	return 0, false
}

func (c *countCache) add(s string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	e := countEntry{s, n, c.seq}
	if len(c.ents) < countCacheSize {
		c.ents = append(c.ents, e)
		return
	}
	// The shortest text goes, but not one of the last few added: render
	// counts its candidates just before the fitter counts the winner.
	k := -1
	for i, x := range c.ents {
		if x.seq+countCacheRecent <= c.seq && (k < 0 || len(x.s) < len(c.ents[k].s)) {
			k = i
		}
	}
	c.ents[k] = e
}

// autoMemo remembers the last few encodings, drafted (unverified) or
// verified. A result is drafted whole to see whether it fits; if it does,
// its verified encoding only checks the draft (what render.Encode's own
// check does: decode and compare, compact JSON if that fails), and if it
// does not, the Report measures that draft again. The fitter's final text
// is checked the same way. Values are compared by identity (tree.Value
// ==), which implies equal trees. When full, it forgets its shortest
// text other than the last few put (the fitter drafts many items between
// the whole document and the Report). Safe for concurrent use.
type autoMemo struct {
	mu   sync.Mutex
	ents [8]autoEntry
	seq  uint64
	// known is the compact JSON of one value the caller already holds
	// (knowCompact), so that encoding that value does not write it again.
	known autoEntry
}

// knowCompact tells the memo that s is v's compact JSON (the last value
// told wins; values are compared by identity).
func (m *autoMemo) knowCompact(v tree.Value, s string) {
	m.mu.Lock()
	m.known = autoEntry{v: v, text: s}
	m.mu.Unlock()
}

// readsAsTOON reports whether text is v's verified encoding and, if so,
// whether TOON reads it as v (render.ReadsAsTOON, found when verifying).
func (m *autoMemo) readsAsTOON(v tree.Value, text string) (known, toon bool) {
	e, ok := m.get(v)
	if !ok || !e.verified || e.text != text {
		return false, false
	}
	return true, e.toon
}

// compactOf is the compact JSON knowCompact gave for v, or "".
func (m *autoMemo) compactOf(v tree.Value) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.known.text != "" && m.known.v == v {
		return m.known.text
	}
	return ""
}

type autoEntry struct {
	v        tree.Value
	text     string
	verified bool
	// toon: verified by TOON reading text as v (render.ReadsAsTOON), so
	// that it needs no marker; the auto reading was not decoded then.
	toon bool
	seq  uint64 // when it was put
}

const autoMemoRecent = 4 // the last entries put, never forgotten first

func (m *autoMemo) get(v tree.Value) (autoEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.ents {
		if e.text != "" && e.v == v {
			return e, true
		}
	}
	return autoEntry{}, false
}

func (m *autoMemo) put(e autoEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	e.seq = m.seq
	k := -1
	for i, x := range m.ents {
		switch {
		case x.text != "" && x.v == e.v:
			m.ents[i] = e
			return
		case x.text == "":
			if k < 0 || m.ents[k].text != "" {
				k = i
			}
		case x.seq+autoMemoRecent < m.seq && (k < 0 || m.ents[k].text != "" && len(x.text) < len(m.ents[k].text)):
			k = i
		}
	}
	m.ents[k] = e
}

func (m *autoMemo) encoder(ro render.Options, draft bool) func(dst []byte, v tree.Value) []byte {
	ro.SkipVerify = true
	return func(dst []byte, v tree.Value) []byte {
		e, ok := m.get(v)
		if !ok {
			ro := ro
			ro.Compact = m.compactOf(v)
			s, _, err := render.Encode(v, &ro)
			if err != nil {
				return tree.AppendJSON(dst, v)
			}
			e = autoEntry{v: v, text: s}
			if draft {
				m.put(e)
			}
		}
		if !draft && !e.verified {
			// One decoding: a text TOON reads as v is faithful and goes
			// unmarked (a Pipeline asks readsAsTOON before marking);
			// another is checked as auto.
			if e.toon = render.ReadsAsTOON(e.text, v); !e.toon && render.Verify(e.text, v) != nil {
				// As render.Encode does when its check fails.
				e.text = string(tree.AppendJSON(nil, v))
			}
			e.verified = true
			m.put(e)
		}
		if len(dst) == 0 {
			// The remembered text itself: the fitter never writes what
			// a format returns (fit.Format), and an append to it copies.
			return unsafe.Slice(unsafe.StringData(e.text), len(e.text))
		}
		return append(dst, e.text...)
	}
}
