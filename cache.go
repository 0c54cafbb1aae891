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
// shortest text (the cheapest to count again), so that a whole document
// counted before fitting is still known after it. Counts are the
// counter's own, so results do not change. Safe for concurrent use.
type countCache struct {
	tokens.Counter
	mu   sync.Mutex
	ents []countEntry
}

type countEntry struct {
	s string
	n int
}

const (
	countCacheMin  = 512 // shorter texts are counted every time
	countCacheSize = 32  // texts remembered
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

// CountBytes is Count for bytes (tokens.CountBytes uses it): a known text
// is not copied.
func (c *countCache) CountBytes(b []byte) int {
	if len(b) < countCacheMin {
		return tokens.CountBytes(c.Counter, b)
	}
	// b is only read during the lookup; a new entry is a copy.
	if n, ok := c.lookup(unsafe.String(unsafe.SliceData(b), len(b))); ok {
		return n
	}
	n := tokens.CountBytes(c.Counter, b)
	c.add(string(b), n)
	return n
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
	if len(c.ents) < countCacheSize {
		c.ents = append(c.ents, countEntry{s, n})
		return
	}
	k := 0
	for i, e := range c.ents {
		if len(e.s) < len(c.ents[k].s) {
			k = i
		}
	}
	c.ents[k] = countEntry{s, n}
}

// autoMemo remembers the last two verified encodings: a result that does
// not fit is encoded whole once to find out, and the Report measures that
// encoding again (a drafted, unverified encoding is never remembered).
// Values are compared by identity (tree.Value ==), which implies equal
// trees. Safe for concurrent use.
type autoMemo struct {
	mu   sync.Mutex
	v    [2]tree.Value
	text [2]string
	next int
}

func (m *autoMemo) get(v tree.Value) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.v {
		if m.text[k] != "" && m.v[k] == v {
			return m.text[k], true
		}
	}
	return "", false
}

func (m *autoMemo) put(v tree.Value, text string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.v[m.next], m.text[m.next] = v, text
	m.next = 1 - m.next
}

func (m *autoMemo) encoder(ro render.Options, draft bool) func(dst []byte, v tree.Value) []byte {
	ro.SkipVerify = draft
	return func(dst []byte, v tree.Value) []byte {
		if s, ok := m.get(v); ok {
			return append(dst, s...)
		}
		s, _, err := render.Encode(v, &ro)
		if err != nil {
			return tree.AppendJSON(dst, v)
		}
		if !draft {
			m.put(v, s)
		}
		return append(dst, s...)
	}
}
