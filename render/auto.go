package render

import (
	"cmp"
	"hash/maphash"
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
