package render

import (
	"cmp"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/terse-dev/terse/tree"
)

// form is how one value is written in an auto document.
type form uint8

const (
	formInline form = iota // one line: inline JSON, a bare scalar or @N
	formBlock              // an object as key: value lines
	formTable              // an array of objects as a header and rows
	formList               // an array as "- " items
	formFence              // a multi-line string as a fenced block
)

// choice is the chooser's decision for one container. A large document
// holds one per container it writes, so it is kept small: what only a
// table needs is apart.
type choice struct {
	inline float64 // cost written inline
	best   float64 // cost of the cheapest form allowed in a block
	form   form
	forced bool    // holds a fenced key (Options.FenceKeys): written as a block
	table  *layout // the table's columns, when form is formTable
}

// layout is the header of a table.
type layout struct {
	cols   []string   // table columns
	nulls  []bool     // table columns that are null in every row
	groups [][]string // table columns spread over one cell per sub-key
}

// group is a set of equal containers: a legend candidate.
type group struct {
	rep  tree.Value
	size int // compact JSON bytes (approximate)
	n    int // occurrences in the whole tree
	uses int // occurrences left after factoring
	sel  bool
	id   int
}

// autoEncoder holds the state of one auto encoding.
type autoEncoder struct {
	opts      *Options
	fenceKeys map[string]bool

	seed   maphash.Seed
	groups map[uint64][]*group
	nodeG  map[tree.Value]*group // container → its group (large containers seen twice or more), until the legend is chosen
	refs   []refEntry            // the containers written as references, sorted by key: what ref looks up
	// hashes collects the hashes of the large containers (the first
	// pass of findRepeats); repeats holds those seen twice or more, which
	// the second pass (grouping) groups.
	hashes   []uint32
	repeats  map[uint32]bool
	grouping bool

	legend   []*group // selected, by id-1
	prefixes []string // declared prefixes, sorted, by id-1
	pre      prefixIndex

	scratch []byte // see content
	memo    map[tree.Value]*choice
	// forgetFlat leaves flat containers' choices out of the memo (a large
	// document; see chooseAt).
	forgetFlat bool
	costs      map[costKey]float64 // see approx and scalarCost

	px prefixScratch
}

// minLegendBytes is the smallest container (in compact JSON bytes) worth a
// legend entry: smaller ones cost about as much as their reference.
const minLegendBytes = 24

var seed = maphash.MakeSeed()

// encoders keeps released encoders, so that encoding many small values
// (the fitter prices each item) reuses their maps instead of growing new
// ones every call.
var encoders = sync.Pool{New: func() any {
	return &autoEncoder{
		seed:   seed,
		groups: map[uint64][]*group{},
		nodeG:  map[tree.Value]*group{},
		memo:   map[tree.Value]*choice{},
		costs:  map[costKey]float64{},
	}
}}

// maxPooledNodes bounds the encoders kept for reuse: the maps of a large
// document are dropped rather than held.
const maxPooledNodes = 4096

func newAutoEncoder(opts *Options) *autoEncoder {
	e := encoders.Get().(*autoEncoder)
	e.opts = opts
	if len(opts.FenceKeys) > 0 {
		e.fenceKeys = map[string]bool{}
		for _, k := range opts.FenceKeys {
			e.fenceKeys[k] = true
		}
	}
	return e
}

// release returns e to the pool; e must not be used after.
func (e *autoEncoder) release() {
	if len(e.memo) > maxPooledNodes || e.nodeG == nil || len(e.refs) > maxPooledNodes || len(e.hashes) > maxPooledNodes || len(e.costs) > maxPooledNodes || len(e.px.cum) > 4*maxPooledNodes {
		return
	}
	clear(e.groups)
	clear(e.nodeG)
	clear(e.memo)
	clear(e.costs)
	clear(e.repeats)
	e.px.reset()
	scratch := e.scratch
	if cap(scratch) > 1<<16 {
		scratch = nil
	}
	*e = autoEncoder{seed: seed, groups: e.groups, nodeG: e.nodeG, refs: e.refs[:0], memo: e.memo, costs: e.costs, px: e.px, scratch: scratch,
		hashes: e.hashes[:0], repeats: e.repeats}
	encoders.Put(e)
}

// encode appends the auto document of v to b.
func (e *autoEncoder) encode(b []byte, v tree.Value) []byte {
	e.prepare(v)
	return e.write(b, v)
}

// prepare analyses v and chooses how each part of it is written: legend
// entries, prefixes and forms. A caller that sizes a large output buffer
// allocates it after prepare, whose scratch is let go by then.
func (e *autoEncoder) prepare(v tree.Value) {
	if !e.opts.NoFactor {
		e.findRepeats(v)
		e.selectLegend(v)
		e.selectPrefixes(v)
		if len(e.px.cum) > 4*maxPooledNodes {
			// A large document's prefix scratch is let go before the
			// encoding, not held until the encoder is released.
			e.px = prefixScratch{}
		}
	}
	e.choose(v)
	if len(e.memo) > maxPooledNodes {
		e.keepWritten(v)
	}
}

// keepWritten keeps the choices the writer (and formats) look up: the
// root's and, below it, those of the containers written as key: value
// blocks and list items, where the writer chooses each child's form. A
// table or an inline value is written without looking at its children's
// choices, so a large array written as a table keeps one choice, not one
// per row.
func (e *autoEncoder) keepWritten(root tree.Value) {
	keep := map[tree.Value]*choice{}
	var visit func(v tree.Value)
	visit = func(v tree.Value) {
		c := e.memo[v]
		if c == nil {
			return
		}
		keep[v] = c
		switch c.form {
		case formBlock:
			for _, m := range v.Members() {
				if e.ref(m.Value) == 0 {
					visit(m.Value)
				}
			}
		case formList:
			for _, it := range v.Items() {
				if e.ref(it) == 0 {
					visit(it)
				}
			}
		}
	}
	visit(root)
	e.memo = keep
}

// write appends the auto document of v, prepared, to b.
func (e *autoEncoder) write(b []byte, v tree.Value) []byte {
	for i, p := range e.prefixes {
		b = append(b, '~')
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, " = "...)
		b = append(b, p...)
		b = append(b, '\n')
	}
	for i, g := range e.legend {
		b = append(b, '@')
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, " = "...)
		b = e.appendInline(b, g.rep, true)
		b = append(b, '\n')
	}
	b = e.appendRoot(b, v)
	return b
}

// ---- analysis: equal containers ----

func (e *autoEncoder) hashString(k byte, s string) uint64 {
	var h maphash.Hash
	h.SetSeed(e.seed)
	h.WriteByte(k)
	h.WriteString(s)
	return h.Sum64()
}

// findRepeats groups the large containers of v that occur more than once
// by equality (groups and nodeG). A first pass only collects their hashes;
// a second groups those whose hash was seen twice or more, so that a
// large document of distinct items costs a slice of hashes, not a group
// and a map entry per container.
func (e *autoEncoder) findRepeats(v tree.Value) {
	e.hashes, e.grouping = e.hashes[:0], false
	e.analyze(v)
	h := e.hashes
	slices.Sort(h)
	if cap(h) > 4*maxPooledNodes {
		e.hashes = nil // a large document's hashes are let go now
	}
	if e.repeats == nil {
		e.repeats = map[uint32]bool{}
	}
	for i := 1; i < len(h); i++ {
		if h[i] == h[i-1] {
			e.repeats[h[i]] = true
		}
	}
	if len(e.repeats) == 0 {
		return
	}
	e.grouping = true
	e.analyze(v)
}

// analyze hashes every container bottom-up. It collects the hashes of the
// large ones (the first pass), or groups by equality those whose hash
// repeats. It returns v's hash and compact JSON size (approximate).
func (e *autoEncoder) analyze(v tree.Value) (uint64, int) {
	switch v.Kind() {
	case tree.KindNull:
		return 1, 4
	case tree.KindBool:
		if v.Bool() {
			return 2, 4
		}
		return 3, 5
	case tree.KindNumber:
		return e.hashString('n', v.Num()), len(v.Num())
	case tree.KindString:
		return e.hashString('s', v.Str()), len(v.Str()) + 2
	}
	var h maphash.Hash
	h.SetSeed(e.seed)
	size := 2
	var buf [8]byte
	put := func(x uint64) {
		for i := range buf {
			buf[i] = byte(x >> (8 * i))
		}
		h.Write(buf[:])
	}
	if v.Kind() == tree.KindArray {
		h.WriteByte('a')
		for _, it := range v.Items() {
			ch, cs := e.analyze(it)
			put(ch)
			size += cs + 1
		}
	} else {
		h.WriteByte('o')
		for _, m := range v.Members() {
			h.WriteString(m.Key)
			h.WriteByte(0)
			ch, cs := e.analyze(m.Value)
			put(ch)
			size += len(m.Key) + 4 + cs
		}
	}
	sum := h.Sum64()
	if size >= minLegendBytes && v.Len() > 0 {
		// The first pass keeps half of each hash: a collision only costs
		// the second pass an equality check.
		if !e.grouping {
			e.hashes = append(e.hashes, uint32(sum))
			return sum, size
		}
		if !e.repeats[uint32(sum)] {
			return sum, size
		}
		var g *group
		for _, c := range e.groups[sum] {
			if tree.Equal(c.rep, v) {
				g = c
				break
			}
		}
		if g == nil {
			g = &group{rep: v, size: size}
			e.groups[sum] = append(e.groups[sum], g)
		}
		g.n++
		e.nodeG[v] = g
	}
	return sum, size
}

// selectLegend picks the repeated containers that become legend entries.
// Candidates are groups seen at least twice; a pass in document order counts
// how often each would still be written once outer entries are factored
// out, and entries used only once are dropped until nothing changes.
func (e *autoEncoder) selectLegend(root tree.Value) {
	var cands []*group
	for _, gs := range e.groups {
		for _, g := range gs {
			if g.n >= 2 {
				g.sel = true
				cands = append(cands, g)
			}
		}
	}
	if len(cands) == 0 {
		return
	}
	for round := 0; round < 4; round++ {
		for _, g := range cands {
			g.uses = 0
		}
		var visit func(v tree.Value)
		visit = func(v tree.Value) {
			if v.Kind() < tree.KindArray {
				return
			}
			if g := e.nodeG[v]; g != nil && g.sel {
				g.uses++
				if g.uses > 1 {
					return
				}
			}
			e.eachChild(v, visit)
		}
		visit(root)
		changed := false
		for _, g := range cands {
			// A declaration costs about 3 tokens and each reference 2.
			if g.sel && (g.uses < 2 || float64(g.uses-1)*float64(g.size)/4 <= 3+2*float64(g.uses)) {
				g.sel = false
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	// Number entries so that each is defined before it is used: children
	// before parents, in document order.
	var define func(v tree.Value, top bool)
	define = func(v tree.Value, top bool) {
		if v.Kind() < tree.KindArray {
			return
		}
		g := e.nodeG[v]
		if g != nil && g.sel && !top {
			if g.id != 0 {
				return
			}
			g.id = -1 // in progress
			define(g.rep, true)
			e.legend = append(e.legend, g)
			g.id = len(e.legend)
			return
		}
		e.eachChild(v, func(c tree.Value) { define(c, false) })
	}
	define(root, true)
	// The root itself is never a legend entry.
	if g := e.nodeG[root]; g != nil && g.sel && g.id == 0 {
		g.sel = false
	}
	// From here on only ref asks which container is which entry: the
	// references go into a sorted slice (16 bytes each), and a large
	// document's map of every repeat is let go.
	n := 0
	for _, g := range e.nodeG {
		if g.sel && g.id > 0 {
			n++
		}
	}
	e.refs = slices.Grow(e.refs[:0], n)
	for v, g := range e.nodeG {
		if k, ok := refKey(v); ok && g.sel && g.id > 0 {
			k.id = int32(g.id)
			e.refs = append(e.refs, k)
		}
	}
	slices.SortFunc(e.refs, refEntry.compare)
	if len(e.nodeG) > maxPooledNodes {
		e.nodeG = nil
	}
}

// refEntry is a container written as a legend reference, in 16 bytes:
// it is named by the address of its items or members, their number and
// its kind (what tree.Value equality, ==, compares), and holds its id.
type refEntry struct {
	p  uintptr // the tree holding the container is alive while it is used
	nk uint32  // length << 1 | 1 for an object
	id int32
}

// refKey returns v's name as a refEntry without id; false for a
// container too long to be named (2^31 items or more), which is then
// never a reference.
func refKey(v tree.Value) (refEntry, bool) {
	if v.Len() >= 1<<31 {
		return refEntry{}, false
	}
	if v.Kind() == tree.KindObject {
		return refEntry{p: uintptr(unsafe.Pointer(unsafe.SliceData(v.Members()))), nk: uint32(v.Len())<<1 | 1}, true
	}
	return refEntry{p: uintptr(unsafe.Pointer(unsafe.SliceData(v.Items()))), nk: uint32(v.Len()) << 1}, true
}

// compare orders entries by name.
func (a refEntry) compare(b refEntry) int {
	if a.p != b.p {
		return cmp.Compare(a.p, b.p)
	}
	return cmp.Compare(a.nk, b.nk)
}

func (e *autoEncoder) eachChild(v tree.Value, fn func(tree.Value)) {
	if v.Kind() == tree.KindArray {
		for _, it := range v.Items() {
			fn(it)
		}
	} else if v.Kind() == tree.KindObject {
		for _, m := range v.Members() {
			fn(m.Value)
		}
	}
}

// ref returns the legend id of v, or 0.
func (e *autoEncoder) ref(v tree.Value) int {
	if v.Kind() < tree.KindArray || len(e.legend) == 0 {
		return 0
	}
	k, ok := refKey(v)
	if !ok {
		return 0
	}
	i, ok := slices.BinarySearchFunc(e.refs, k, refEntry.compare)
	if ok {
		return int(e.refs[i].id)
	}
	return 0
}

// walkWritten calls fn for every value that is written once factoring is
// applied: legend definitions once, references not expanded.
func (e *autoEncoder) walkWritten(root tree.Value, fn func(tree.Value)) {
	var visit func(v tree.Value, top bool)
	visit = func(v tree.Value, top bool) {
		if !top && e.ref(v) != 0 {
			return
		}
		fn(v)
		e.eachChild(v, func(c tree.Value) { visit(c, false) })
	}
	for _, g := range e.legend {
		visit(g.rep, true)
	}
	visit(root, true)
}

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

// ---- the chooser ----

// approxTokens is the chooser's cost model: a quick count of BPE-like
// pieces (letter runs, digit groups of three, punctuation). It only ranks
// alternatives; the result is measured with the real counter afterwards.
func approxTokens(s string) float64 {
	var n float64
	run, kind := 0, uint8(0)
	for i := 0; i < len(s); i++ {
		k := charClass[s[i]]
		if k != kind && run > 0 {
			if kind == 1 {
				n += float64((run + 5) / 6)
			} else {
				n += float64((run + 2) / 3)
			}
			run = 0
		}
		kind = k
		if k == 0 {
			if s[i] != ' ' || i+1 >= len(s) || s[i+1] == ' ' {
				n += 0.8
			}
			continue
		}
		run++
	}
	if run > 0 {
		if kind == 1 {
			n += float64((run + 5) / 6)
		} else {
			n += float64((run + 2) / 3)
		}
	}
	return n
}

// charClass is 1 for letters (and non-ASCII bytes), 2 for digits, 0 for
// punctuation and space.
var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			t[c] = 1
		case c >= '0' && c <= '9':
			t[c] = 2
		}
	}
	return t
}()

func (e *autoEncoder) keyCost(k string) float64 {
	if isBareKey(k) {
		return approxTokens(k)
	}
	return approxTokens(k) + 1
}

// scalarCost is the cost of a scalar inline (bare false) or as a cell or
// key:value value (bare true).
func (e *autoEncoder) scalarCost(v tree.Value, bare, cell bool) float64 {
	switch v.Kind() {
	case tree.KindNull, tree.KindBool:
		return 1
	case tree.KindNumber:
		return float64((len(v.Num()) + 2) / 3)
	}
	if len(v.Str()) < minMemoString {
		return e.stringCost(v.Str(), bare, cell)
	}
	k := stringKey(v.Str(), 1)
	if bare {
		k.mode |= 2
	}
	if cell {
		k.mode |= 4
	}
	if c, ok := e.costs[k]; ok {
		return c
	}
	c := e.stringCost(v.Str(), bare, cell)
	if len(e.costs) < maxCosts {
		e.costs[k] = c
	}
	return c
}

// approx is approxTokens, remembered for long strings: the chooser, the
// fence test and the writer look at the same long strings several times.
func (e *autoEncoder) approx(s string) float64 {
	if len(s) < minMemoString {
		return approxTokens(s)
	}
	k := stringKey(s, 0)
	if c, ok := e.costs[k]; ok {
		return c
	}
	c := approxTokens(s)
	if len(e.costs) < maxCosts {
		e.costs[k] = c
	}
	return c
}

// minMemoString is the length from which string costs are remembered,
// up to maxCosts of them: a large document may hold millions of long
// strings, and those past the first are counted again when asked.
const (
	minMemoString = 64
	maxCosts      = 1 << 16
)

// costKey names a string by its bytes' address and length (the same
// string value, cheap to hash) and a cost of it (mode).
type costKey struct {
	p    *byte
	n    int
	mode uint8 // 0 approxTokens; else 1 | 2 if bare | 4 if cell: scalarCost
}

func stringKey(s string, mode uint8) costKey {
	return costKey{unsafe.StringData(s), len(s), mode}
}

// stringCost is scalarCost for a string.
func (e *autoEncoder) stringCost(str string, bare, cell bool) float64 {
	s := e.content(str)
	var c float64
	if unsafe.StringData(s) == unsafe.StringData(str) { // str itself
		c = e.approx(s)
	} else {
		// A new string: remembering its cost by its address would only
		// fill the map (scalarCost remembers the result by str's).
		c = approxTokens(s)
	}
	if bare && isBareString(s, cell) {
		return c
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' || s[i] < 0x20 {
			c += 0.5
		}
	}
	return c + 1
}

// choose computes the cost and form of every container reachable from v,
// the root (or a value whose form does not depend on its depth: see
// chooseAt).
func (e *autoEncoder) choose(v tree.Value) *choice { return e.chooseAt(v, 0) }

// chooseAt computes the cost and form of v, a value at depth, and of every
// container below it. Depth only tells whether v is a member's value
// (depth > 0: its block lines are indented); the root and array items
// are priced at depth 0. A node has one depth, so the memo is by node. In
// a large document (forgetFlat) a flat container (no container inside)
// is not remembered: it costs little to choose again, and a large array
// of small objects has millions of them. Its inline cost and whether it
// is forced do not depend on depth; its best form does, so whoever asks
// for that passes the depth.
func (e *autoEncoder) chooseAt(v tree.Value, depth int) *choice {
	if v.Kind() < tree.KindArray {
		return nil
	}
	if c := e.memo[v]; c != nil {
		return c
	}
	c := &choice{}
	if !e.forgetFlat || !flat(v) {
		e.memo[v] = c
	}
	if v.Kind() == tree.KindObject {
		e.chooseObject(c, v, depth)
		return c
	}
	items := v.Items()
	inl := 1.0
	for _, it := range items {
		inl += e.inlineCost(it) + 0.5
	}
	c.inline, c.best, c.form = inl, inl, formInline
	if len(items) == 0 {
		return c
	}
	e.chooseList(c, items)
	if c.forced {
		return c
	}
	if cols, ok := e.tableColumns(items); ok {
		e.chooseTable(c, items, cols)
	}
	return c
}

// chooseObject prices an object inline and as a block of member lines.
func (e *autoEncoder) chooseObject(c *choice, v tree.Value, depth int) {
	// A member line costs its newline and ": "; indentation adds
	// about half a token below the top level.
	line := 1.5
	if depth > 0 {
		line = 2.5
	}
	inl, blk := 1.0, 0.0
	for _, m := range v.Members() {
		k := e.keyCost(m.Key)
		blk += line + k + e.memberCost(m.Key, m.Value, depth+1)
		inl += k + 1 + e.inlineCost(m.Value)
		if e.ref(m.Value) == 0 && (e.fenceKeys[m.Key] && e.fenceOK(m.Key, m.Value) || e.isForced(m.Value)) {
			c.forced = true
		}
	}
	c.inline, c.best, c.form = inl, inl, formInline
	if v.Len() > 0 && (blk < inl || c.forced) {
		c.best, c.form = blk, formBlock
	}
}

// chooseList prices an array as a list of item lines (an object item as
// its block), taken when cheaper or forced.
func (e *autoEncoder) chooseList(c *choice, items []tree.Value) {
	var list float64
	for _, it := range items {
		list += 1
		if ic := e.chooseAt(it, 0); ic != nil && it.Kind() == tree.KindObject && e.ref(it) == 0 && ic.form == formBlock {
			list += ic.best
		} else {
			list += e.inlineCost(it)
		}
	}
	for _, it := range items {
		if e.ref(it) == 0 && it.Kind() == tree.KindObject && e.isForced(it) {
			c.forced = true
		}
	}
	if list+2 < c.best || c.forced {
		c.best, c.form = list+2, formList
	}
}

// chooseTable prices an array of objects as a table over cols (null
// columns declared once, nested objects as column groups), taken when
// cheapest.
func (e *autoEncoder) chooseTable(c *choice, items []tree.Value, cols []string) {
	nulls := nullColumns(items, cols)
	groups := e.columnGroups(items, cols, nulls)
	t := 3.0
	cells := 0
	for i, k := range cols {
		t += e.keyCost(k) + 0.7
		switch {
		case nulls[i]:
			t += 1
		case groups[i] != nil:
			for _, sk := range groups[i] {
				t += e.keyCost(sk) + 0.7
			}
			t += 1
			cells += len(groups[i])
		default:
			cells++
		}
	}
	for _, it := range items {
		t += 1 + 0.7*float64(cells-1)
		for _, m := range it.Members() {
			i := slices.Index(cols, m.Key)
			switch {
			case nulls[i]:
			case groups[i] != nil:
				for _, sm := range m.Value.Members() {
					t += e.cellCost(sm.Value)
				}
			default:
				t += e.cellCost(m.Value)
			}
		}
	}
	if t < c.best {
		c.best, c.form, c.table = t, formTable, &layout{cols, nulls, groups}
	}
}

// flat reports whether v, a container, holds no container.
func flat(v tree.Value) bool {
	if v.Kind() == tree.KindArray {
		for _, it := range v.Items() {
			if it.Kind() >= tree.KindArray {
				return false
			}
		}
		return true
	}
	for _, m := range v.Members() {
		if m.Value.Kind() >= tree.KindArray {
			return false
		}
	}
	return true
}

func (e *autoEncoder) isForced(v tree.Value) bool {
	c := e.choose(v)
	return c != nil && c.forced
}

func (e *autoEncoder) inlineCost(v tree.Value) float64 {
	if e.ref(v) != 0 {
		return 2
	}
	if v.Kind() < tree.KindArray {
		return e.scalarCost(v, false, false)
	}
	return e.choose(v).inline
}

func (e *autoEncoder) cellCost(v tree.Value) float64 {
	if e.ref(v) != 0 {
		return 2
	}
	if v.Kind() < tree.KindArray {
		return e.scalarCost(v, true, true)
	}
	return e.choose(v).inline
}

// memberCost is the cost of the value of a key:value line: the cheaper of
// its inline form and (for containers and long strings) a block form.
func (e *autoEncoder) memberCost(k string, v tree.Value, depth int) float64 {
	if e.ref(v) != 0 {
		return 2
	}
	if v.Kind() < tree.KindArray {
		c := e.scalarCost(v, true, false)
		if e.fenceOK(k, v) {
			if f := e.approx(v.Str()) + 4; f < c || e.fenceKeys[k] {
				return f
			}
		}
		return c
	}
	return e.chooseAt(v, depth).best
}

// fenceOK reports whether v is a string that may be written as a fenced
// block: it has a line break and no carriage returns.
func (e *autoEncoder) fenceOK(k string, v tree.Value) bool {
	if v.Kind() != tree.KindString || v.Escaped() {
		return false
	}
	s := v.Str()
	return strings.IndexByte(s, '\n') >= 0 && strings.IndexByte(s, '\r') < 0 && (e.fenceKeys[k] || len(s) >= 80)
}

// useFence reports whether the member k: v is written as a fenced block.
func (e *autoEncoder) useFence(k string, v tree.Value) bool {
	if !e.fenceOK(k, v) || e.ref(v) != 0 {
		return false
	}
	return e.fenceKeys[k] || e.approx(v.Str())+4 < e.scalarCost(v, true, false)
}

// tableColumns returns the union of the items' keys in an order that
// every item's own key order follows, or false when the items cannot be
// table rows (not all objects, empty, duplicate keys, conflicting orders,
// or legend references).
func (e *autoEncoder) tableColumns(items []tree.Value) ([]string, bool) {
	if len(items) < 2 {
		return nil, false
	}
	var cols []string
	pos := map[string]int{}
	for _, it := range items {
		if it.Kind() != tree.KindObject || it.Len() == 0 || e.ref(it) != 0 {
			return nil, false
		}
		last := -1
		for _, m := range it.Members() {
			p, ok := pos[m.Key]
			if ok {
				if p <= last {
					return nil, false // out of order or duplicate key
				}
				last = p
				continue
			}
			// Insert a new column right after the last one matched.
			at := last + 1
			cols = slices.Insert(cols, at, m.Key)
			for i := at; i < len(cols); i++ {
				pos[cols[i]] = i
			}
			last = at
		}
	}
	return cols, true
}

// nullColumns marks the columns every item has with the value null; they
// are declared once in the header ("key=null") instead of in every row.
// Every row must keep at least one cell, so that no row line is empty.
func nullColumns(items []tree.Value, cols []string) []bool {
	nulls := make([]bool, len(cols))
	for i, k := range cols {
		nulls[i] = true
		for _, it := range items {
			if v, ok := it.Get(k); !ok || v.Kind() != tree.KindNull {
				nulls[i] = false
				break
			}
		}
	}
	pos := map[string]int{}
	for i, k := range cols {
		pos[k] = i
	}
	for _, it := range items {
		kept, last := false, -1
		for _, m := range it.Members() {
			if !nulls[pos[m.Key]] {
				kept = true
				break
			}
			last = pos[m.Key]
		}
		if !kept && last >= 0 {
			nulls[last] = false
		}
	}
	return nulls
}

// columnGroups finds the columns whose value is, in every row, an object
// (not a legend reference) with the same keys in the same order and no
// duplicates: such a column is written key{a,b} with one cell per sub-key,
// so the sub-keys are written once instead of in every row.
func (e *autoEncoder) columnGroups(items []tree.Value, cols []string, nulls []bool) [][]string {
	groups := make([][]string, len(cols))
	for i, k := range cols {
		if nulls[i] {
			continue
		}
		var keys []string
		ok := true
		for _, it := range items {
			v, has := it.Get(k)
			if !has || v.Kind() != tree.KindObject || v.Len() == 0 || e.ref(v) != 0 {
				ok = false
				break
			}
			ms := v.Members()
			if keys == nil {
				seen := map[string]bool{}
				for _, m := range ms {
					if seen[m.Key] {
						ok = false
						break
					}
					seen[m.Key] = true
					keys = append(keys, m.Key)
				}
				if !ok {
					break
				}
				continue
			}
			if len(ms) != len(keys) {
				ok = false
				break
			}
			for j, m := range ms {
				if m.Key != keys[j] {
					ok = false
					break
				}
			}
			if !ok {
				break
			}
		}
		if ok {
			groups[i] = keys
		}
	}
	return groups
}

// ---- the writer ----

func indent(b []byte, depth int) []byte {
	for range depth {
		b = append(b, "  "...)
	}
	return b
}

func (e *autoEncoder) appendRoot(b []byte, v tree.Value) []byte {
	c := e.choose(v)
	if c == nil {
		return e.appendInline(b, v, false)
	}
	switch c.form {
	case formBlock:
		return e.appendBlock(b, v, 0)
	case formTable:
		return e.appendTable(b, v, c.table, 0)
	case formList:
		return e.appendList(b, v, 0)
	}
	return e.appendInline(b, v, false)
}

// appendInline writes v as inline JSON with references and prefixes. top
// writes a legend entry's own content rather than a reference to it.
func (e *autoEncoder) appendInline(b []byte, v tree.Value, top bool) []byte {
	if !top {
		if id := e.ref(v); id != 0 {
			b = append(b, '@')
			return strconv.AppendInt(b, int64(id), 10)
		}
	}
	switch v.Kind() {
	case tree.KindString:
		if v.Escaped() {
			return e.appendEscaped(b, v)
		}
		return tree.AppendString(b, e.content(v.Str()))
	case tree.KindArray:
		b = append(b, '[')
		for i, it := range v.Items() {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.appendInline(b, it, false)
		}
		return append(b, ']')
	case tree.KindObject:
		b = append(b, '{')
		for i, m := range v.Members() {
			if i > 0 {
				b = append(b, ',')
			}
			b = tree.AppendString(b, m.Key)
			b = append(b, ':')
			b = e.appendInline(b, m.Value, false)
		}
		return append(b, '}')
	}
	return tree.AppendJSON(b, v)
}

// appendValue writes v as a cell (cell true) or key:value value: bare
// when it reads back unchanged, else inline.
func (e *autoEncoder) appendValue(b []byte, v tree.Value, cell bool) []byte {
	if v.Kind() == tree.KindString {
		if v.Escaped() {
			return e.appendEscaped(b, v)
		}
		s := e.content(v.Str())
		if isBareString(s, cell) {
			return append(b, s...)
		}
		return tree.AppendString(b, s)
	}
	return e.appendInline(b, v, false)
}

// appendEscaped writes a string holding lone surrogates (v.Escaped()) as
// the JSON literal with the same escapes, always quoted: its text is never
// replaced by a prefix reference, only a leading '~' is doubled.
func (e *autoEncoder) appendEscaped(b []byte, v tree.Value) []byte {
	if len(e.prefixes) > 0 {
		if s := escapeSigil(v.Str()); len(s) != len(v.Str()) {
			if w, ok := tree.EscapedString(s); ok {
				v = w
			}
		}
	}
	return tree.AppendJSON(b, v)
}

func (e *autoEncoder) appendBlock(b []byte, v tree.Value, depth int) []byte {
	for i, m := range v.Members() {
		if i > 0 {
			b = append(b, '\n')
			b = indent(b, depth)
		} else if depth > 0 {
			b = indent(b, depth)
		}
		b = e.appendMember(b, m.Key, m.Value, depth)
	}
	return b
}

// appendMember writes one member line (and the block under it) without
// the leading indentation or trailing newline.
func (e *autoEncoder) appendMember(b []byte, k string, v tree.Value, depth int) []byte {
	b = appendKey(b, k)
	if e.ref(v) == 0 {
		if c := e.chooseAt(v, depth+1); c != nil {
			switch c.form {
			case formBlock:
				b = append(b, ":\n"...)
				return e.appendBlock(b, v, depth+1)
			case formTable:
				return e.appendTable(b, v, c.table, depth+1)
			case formList:
				return e.appendList(b, v, depth+1)
			}
		} else if e.useFence(k, v) {
			return appendFence(b, v.Str())
		}
	}
	b = append(b, ": "...)
	return e.appendValue(b, v, false)
}

// appendTable writes "[N]{cols}:" and one row per item at depth.
func (e *autoEncoder) appendTable(b []byte, v tree.Value, c *layout, depth int) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(v.Len()), 10)
	b = append(b, "]{"...)
	for i, k := range c.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKey(b, k)
		if c.nulls[i] {
			b = append(b, "=null"...)
		}
		if g := c.groups[i]; g != nil {
			b = append(b, '{')
			for j, sk := range g {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendKey(b, sk)
			}
			b = append(b, '}')
		}
	}
	b = append(b, "}:"...)
	for _, it := range v.Items() {
		b = append(b, '\n')
		b = indent(b, depth)
		ms := it.Members()
		j := 0
		first := true
		for i, k := range c.cols {
			if c.nulls[i] {
				j++ // every row has it, in column order
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			if j < len(ms) && ms[j].Key == k {
				if c.groups[i] != nil {
					for si, sm := range ms[j].Value.Members() {
						if si > 0 {
							b = append(b, ',')
						}
						b = e.appendValue(b, sm.Value, true)
					}
				} else {
					b = e.appendValue(b, ms[j].Value, true)
				}
				j++
			}
		}
	}
	return b
}

// appendList writes "[N]:" and one "- " item per element at depth.
func (e *autoEncoder) appendList(b []byte, v tree.Value, depth int) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(v.Len()), 10)
	b = append(b, "]:"...)
	for _, it := range v.Items() {
		b = append(b, '\n')
		b = indent(b, depth)
		b = append(b, "- "...)
		if e.ref(it) != 0 {
			b = e.appendInline(b, it, false)
			continue
		}
		if c := e.chooseAt(it, 0); c != nil && c.form == formBlock {
			for i, m := range it.Members() {
				if i > 0 {
					b = append(b, '\n')
					b = indent(b, depth+1)
				}
				b = e.appendMember(b, m.Key, m.Value, depth+1)
			}
			continue
		}
		b = e.appendInline(b, it, false)
	}
	return b
}

// appendFence writes ": " and s as a fenced block: an opening fence longer
// than any backtick run in s, the text, and the fence on its own line.
func appendFence(b []byte, s string) []byte {
	n, run := 3, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			if run >= n {
				n = run + 1
			}
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", n)
	b = append(b, ": "...)
	b = append(b, fence...)
	if looksLikeDiff(s) {
		b = append(b, "diff"...)
	} else {
		b = append(b, "text"...)
	}
	b = append(b, '\n')
	b = append(b, s...)
	b = append(b, '\n')
	return append(b, fence...)
}
