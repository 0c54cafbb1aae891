package render

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/terse-dev/terse/tree"
)

// ---- analysis: URL prefixes ----

// isURL reports whether s looks like an absolute URL.
func isURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 || i > 10 {
		return false
	}
	for j := 0; j < len(s); j++ {
		if s[j] < 0x21 || s[j] == 0x7f || s[j] == '"' || s[j] == '\\' {
			return false
		}
	}
	return true
}

// selectPrefixes declares URL prefixes where they pay: greedy, each round
// taking the prefix whose declaration saves the most, until none saves
// enough. Gains only shrink as prefixes are chosen, so stale gains are
// upper bounds and a lazy max-heap recomputes only the top candidates.
func (e *autoEncoder) selectPrefixes(root tree.Value) {
	sc := &e.px
	if sc.cands == nil {
		sc.cands = map[string]int32{}
	}
	nurls, ncuts := e.collectURLs(root)
	if nurls < 2 || ncuts > math.MaxInt32 { // cuts are numbered in int32
		return
	}
	sc.cutURLs(nurls, ncuts)
	chosen := sc.choosePrefixes(nurls)
	if len(chosen) == 0 {
		return
	}
	e.indexPrefixes(chosen)
}

// collectURLs lists the distinct URLs written in root, in document order,
// as the first candidates: URL ui is sc.list[ui].p, seen sc.counts[ui]
// times; its own text is the candidate of its last cut. It returns their
// number and the number of their cuts.
func (e *autoEncoder) collectURLs(root tree.Value) (nurls, ncuts int) {
	sc := &e.px
	cands := sc.cands // prefix → its index in list
	list, counts := sc.list[:0], sc.counts[:0]
	e.walkWritten(root, func(v tree.Value) {
		if v.Kind() == tree.KindString && !v.Escaped() && isURL(v.Str()) {
			s := v.Str()
			ci, ok := cands[s]
			if !ok {
				ci = int32(len(list))
				cands[s] = ci
				list = append(list, prefixCand{p: s, first: -1, last: -1})
				counts = append(counts, 0)
				ncuts += 1 + strings.Count(s[strings.Index(s, "://")+3:], "/")
			}
			counts[ci]++
		}
	})
	sc.list, sc.counts = list, counts
	return len(list), ncuts
}

// cutURLs cuts every URL at '/' and its end, where the cost model is
// additive, and adds each cut as a candidate prefix. The cuts of all
// URLs, in URL order, have flat indexes f: cum[f] is the cost of the URL
// up to the cut, ui[f] the URL, and next[f] the next use (in URL order)
// of the same prefix. Their number is known, so each slice is allocated
// once at its size.
func (sc *prefixScratch) cutURLs(nurls, ncuts int) {
	cands, list := sc.cands, sc.list
	cum := slices.Grow(sc.cum[:0], ncuts)
	uiOf, next := slices.Grow(sc.ui[:0], ncuts), slices.Grow(sc.next[:0], ncuts)
	for ui := range nurls {
		u := list[ui].p
		start := strings.Index(u, "://") + 3
		prev, acc := 0, 0.0
		for j := start; j <= len(u); j++ {
			if j < len(u) && u[j] != '/' {
				continue
			}
			acc += approxTokens(u[prev:j])
			prev = j
			f := int32(len(cum))
			cum = append(cum, acc)
			uiOf = append(uiOf, int32(ui))
			next = append(next, -1)
			if ci, ok := cands[u[:j]]; ok {
				c := &list[ci]
				if c.first < 0 {
					c.first = f
				} else {
					next[c.last] = f
				}
				c.last = f
				c.n++
			} else {
				cands[u[:j]] = int32(len(list))
				list = append(list, prefixCand{p: u[:j], first: f, last: f, n: 1})
			}
		}
	}
	sc.list, sc.cum, sc.ui, sc.next = list, cum, uiOf, next
}

// gain is what declaring c saves now: every use of it by a URL whose
// chosen prefix (sc.best) is shorter, less its declaration line.
func (sc *prefixScratch) gain(c *prefixCand) float64 {
	next, uiOf, best, cum, counts := sc.next, sc.ui, sc.best, sc.cum, sc.counts
	g := -(approxTokens(c.p) + 3) // the declaration line
	for f := c.first; f >= 0; f = next[f] {
		ui := uiOf[f]
		b := best[ui]
		if f+1 <= b {
			continue
		}
		saved := cum[f]
		if b > 0 {
			saved -= cum[b-1]
		} else {
			saved -= 1.5 // the ~N reference
		}
		g += float64(counts[ui]) * saved
	}
	return g
}

// choosePrefixes takes, round by round, the candidate whose declaration
// saves the most, until none saves enough or 64 are chosen, from a lazy
// max-heap of gains that only shrink.
func (sc *prefixScratch) choosePrefixes(nurls int) []string {
	list, next, uiOf, counts := sc.list, sc.next, sc.ui, sc.counts
	best := slices.Grow(sc.best[:0], nurls) // per URL: flat index+1 of the chosen prefix's cut, 0 none
	for range nurls {
		best = append(best, 0)
	}
	sc.best = best
	h := sc.heap[:0]
	for ci := range list {
		c := &list[ci]
		if c.n < 2 && counts[uiOf[c.first]] < 2 {
			continue
		}
		h = append(h, prefixGain{c.p, sc.gain(c), ci})
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	var chosen []string
	const maxPrefixes = 64
	for len(h) > 0 && len(chosen) < maxPrefixes {
		top := h[0]
		g := sc.gain(&list[top.ci])
		if len(h) > 1 {
			// Look at the best of the others, as if top were popped.
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
			siftDown(h, 0)
			if !top.better(prefixGain{top.p, g, top.ci}, h[0]) {
				top.gain = g
				h = append(h, top)
				siftUp(h, len(h)-1)
				continue
			}
		} else {
			h = h[:0]
		}
		if g < 2 {
			break
		}
		chosen = append(chosen, top.p)
		c := &list[top.ci]
		for f := c.first; f >= 0; f = next[f] {
			if f+1 > best[uiOf[f]] {
				best[uiOf[f]] = f + 1
			}
		}
	}
	sc.heap = h[:0]
	return chosen
}

// indexPrefixes declares the chosen prefixes, sorted, and indexes them
// for prefixed.
func (e *autoEncoder) indexPrefixes(chosen []string) {
	slices.Sort(chosen)
	e.prefixes = chosen
	e.pre = prefixIndex{ids: map[string]int{}, common: chosen[0], shortest: len(chosen[0])}
	for i, p := range chosen {
		e.pre.ids[p] = i + 1
		k := 0
		for k < len(p) && k < len(e.pre.common) && p[k] == e.pre.common[k] {
			k++
		}
		e.pre.common = e.pre.common[:k]
		e.pre.shortest, e.pre.longest = min(e.pre.shortest, len(p)), max(e.pre.longest, len(p))
	}
}

// prefixIndex is what prefixed looks up: the declared prefixes' ids,
// their common beginning and their shortest and longest length.
type prefixIndex struct {
	ids               map[string]int
	common            string
	shortest, longest int
}

// prefixed returns the id of the longest declared prefix of s that ends
// at one of its cuts (a '/' after the scheme, or its end), and that
// prefix's length; 0 when s is not a URL with one. Each URL gets the
// longest of the chosen prefixes among its cuts, so this is what the
// selection chose for it, found again instead of kept per URL.
func (e *autoEncoder) prefixed(s string) (id, n int) {
	px := &e.pre
	if len(s) < px.shortest || !strings.HasPrefix(s, px.common) {
		return 0, 0
	}
	// The cuts of s that could be a declared prefix, longest first.
	for j := min(len(s), px.longest); j >= px.shortest; j-- {
		if j < len(s) && s[j] != '/' {
			continue
		}
		if id, ok := px.ids[s[:j]]; ok {
			// The prefix is part of a URL: s is one when the rest
			// holds no character a URL cannot (see isURL).
			for i := j; i < len(s); i++ {
				if c := s[i]; c < 0x21 || c == 0x7f || c == '"' || c == '\\' {
					return 0, 0
				}
			}
			return id, j
		}
	}
	return 0, 0
}

// prefixScratch is selectPrefixes' working memory, kept with a pooled
// encoder. Its indexes are int32: a large document has millions of cuts.
type prefixScratch struct {
	cands  map[string]int32
	counts []int
	list   []prefixCand
	cum    []float64
	ui     []int32
	next   []int32
	best   []int32
	heap   []prefixGain
}

func (sc *prefixScratch) reset() {
	clear(sc.cands)
	clear(sc.list)
	clear(sc.heap[:cap(sc.heap)])
	sc.list, sc.heap = sc.list[:0], sc.heap[:0]
}

// prefixCand is a candidate prefix and the chain of its uses.
type prefixCand struct {
	p           string
	first, last int32 // flat cut indexes of its first and last use; -1 none yet
	n           int32 // uses
}

type prefixGain struct {
	p    string
	gain float64
	ci   int
}

// better orders by gain, then by text, so that the choice is deterministic.
func (prefixGain) better(a, b prefixGain) bool {
	if a.gain != b.gain {
		return a.gain > b.gain
	}
	return a.p < b.p
}

// siftDown and siftUp keep h a max-heap by better.
func siftDown(h []prefixGain, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && h[r].better(h[r], h[l]) {
			j = r
		}
		if !h[j].better(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func siftUp(h []prefixGain, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].better(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// content returns the text a string is written with: its prefix reference
// or, in a document that declares prefixes, the string with a leading '~'
// doubled. Such a text is written in the encoder's scratch space, valid
// until the next call: it is priced or written at once, and a large
// document's URLs are not each given a copy.
func (e *autoEncoder) content(s string) string {
	if len(e.prefixes) == 0 {
		return s
	}
	b := e.scratch[:0]
	if id, n := e.prefixed(s); id != 0 {
		b = append(b, '~')
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, s[n:]...)
	} else if strings.HasPrefix(s, "~") {
		b = append(append(b, '~'), s...)
	} else {
		return s
	}
	e.scratch = b
	return unsafe.String(unsafe.SliceData(b), len(b))
}
