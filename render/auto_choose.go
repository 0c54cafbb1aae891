package render

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/terse-dev/terse/tree"
)

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
