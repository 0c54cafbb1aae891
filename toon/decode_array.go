package toon

import (
	"strconv"
	"strings"

	"github.com/terse-dev/terse/tree"
)

// Arrays (§6–§9): headers, inline arrays, list items, tabular and keyed rows.

// header is a parsed array or keyed header (§6).
type header struct {
	n         int
	keyed     bool
	delim     byte
	fields    []fieldNode // nil without a fields segment
	leaves    int
	dups      bool   // a brace group repeats a name (non-strict only)
	rest      string // after the colon
	restOff   int
	hasFields bool
	lenOff    int // offset of the declared length, for count errors
}

type fieldNode struct {
	name string
	kids []fieldNode
}

// header parses s, which starts with '[' at offset off. keyed headers and
// field lists are allowed everywhere; the caller checks positions.
func (d *decoder) header(ln *line, s string, off int) (header, *SyntaxError) {
	h := header{delim: Comma, lenOff: off + 1}
	p := 1
	digits := p
	for p < len(s) && s[p] >= '0' && s[p] <= '9' {
		p++
	}
	switch {
	case p == digits:
		return h, d.fail(ln, off+p, "expected an array length in '[N]'")
	case s[digits] == '0' && p-digits > 1:
		return h, d.fail(ln, off+digits, "array length has a leading zero")
	case p-digits > 9:
		return h, d.fail(ln, off+digits, "array length too large")
	}
	h.n, _ = strconv.Atoi(s[digits:p])
	if p < len(s) && s[p] == ':' {
		h.keyed = true
		p++
	}
	if p < len(s) && (s[p] == '\t' || s[p] == '|') {
		h.delim = s[p]
		p++
	}
	if p >= len(s) || s[p] != ']' {
		return h, d.fail(ln, off+p, "expected ']' after array length (delimiter may be tab or '|'; keyed marker ':' comes first)")
	}
	p++
	if p < len(s) && s[p] == '{' {
		h.hasFields = true
		var err *SyntaxError
		h.fields, p, err = d.fieldList(ln, s, off, p, h.delim, &h)
		if err != nil {
			return h, err
		}
		h.leaves = countLeaves(h.fields)
	}
	if p >= len(s) || s[p] != ':' {
		if p < len(s) {
			return h, d.fail(ln, off+p, "unexpected "+describe(s[p:])+" after array header, expected ':'")
		}
		return h, d.fail(ln, off+p, "missing ':' after array header")
	}
	p++
	if h.keyed && !h.hasFields {
		return h, d.fail(ln, off+p-1, "keyed header needs a fields segment '{...}'")
	}
	h.rest, h.restOff = s[p:], off+p
	if h.hasFields && trimSpaces(h.rest) != "" {
		return h, d.fail(ln, off+p+leadingSpaces(h.rest), "unexpected content after a header with fields; rows go on the following lines")
	}
	return h, nil
}

// fieldList parses a fields segment starting at s[p] == '{'.
func (d *decoder) fieldList(ln *line, s string, off, p int, delim byte, h *header) ([]fieldNode, int, *SyntaxError) {
	open := p
	p++
	var out []fieldNode
	var seen map[string]struct{} // names, once the group is large
	for {
		p += leadingSpaces(s[p:])
		if p >= len(s) {
			return nil, p, d.fail(ln, off+open, "unmatched '{' in fields segment")
		}
		if s[p] == '}' {
			return nil, p, d.fail(ln, off+p, "empty fields segment; expected at least one field name")
		}
		var name string
		if s[p] == '"' {
			k, n, err := d.quoted(ln, s[p:], off+p)
			if err != nil {
				return nil, p, err
			}
			name = k
			p += n
		} else {
			q := p
			for p < len(s) && s[p] != delim && s[p] != '{' && s[p] != '}' {
				p++
			}
			name = trimSpaces(s[q:p])
			if name == "" {
				return nil, p, d.fail(ln, off+p, "expected a field name")
			}
			if d.strict {
				for i := q; i < p; i++ {
					switch c := s[i]; c {
					case ',', '|', '\t':
						return nil, p, d.fail(ln, off+i, "delimiter "+strconv.QuoteRune(rune(c))+" in fields segment does not match the header's delimiter "+strconv.QuoteRune(rune(delim)))
					case ':', '[', ']', '"':
						return nil, p, d.fail(ln, off+i, "unexpected "+strconv.QuoteRune(rune(c))+" in field name")
					}
				}
			}
		}
		p += leadingSpaces(s[p:])
		node := fieldNode{name: name}
		if p < len(s) && s[p] == '{' {
			kids, np, err := d.fieldList(ln, s, off, p, delim, h)
			if err != nil {
				return nil, np, err
			}
			node.kids, p = kids, np
			p += leadingSpaces(s[p:])
		}
		dup := false
		if seen != nil {
			_, dup = seen[name]
			seen[name] = struct{}{}
		} else {
			for _, f := range out {
				dup = dup || f.name == name
			}
			if len(out) >= 32 {
				seen = make(map[string]struct{}, 2*len(out))
				for _, f := range out {
					seen[f.name] = struct{}{}
				}
				seen[name] = struct{}{}
			}
		}
		if dup {
			if d.strict {
				return nil, p, d.fail(ln, off+p, "duplicate field name "+strconv.Quote(name))
			}
			h.dups = true
		}
		out = append(out, node)
		if p >= len(s) {
			return nil, p, d.fail(ln, off+open, "unmatched '{' in fields segment")
		}
		switch s[p] {
		case delim:
			p++
		case '}':
			return out, p + 1, nil
		default:
			return nil, p, d.fail(ln, off+p, "expected "+strconv.QuoteRune(rune(delim))+" or '}' in fields segment")
		}
	}
}

func countLeaves(fs []fieldNode) int {
	n := 0
	for _, f := range fs {
		if f.kids == nil {
			n++
		} else {
			n += countLeaves(f.kids)
		}
	}
	return n
}

// headerValue decodes the value a keyed header line opens; the line is at
// field depth, its rows or items at depth+1.
func (d *decoder) headerValue(ln *line, h *header, depth int32) (tree.Value, *SyntaxError) {
	if h.keyed {
		return d.keyedRows(ln, h, depth+1)
	}
	return d.arrayBody(ln, h, depth)
}

// arrayBody decodes a non-keyed array whose header line is at depth.
func (d *decoder) arrayBody(ln *line, h *header, depth int32) (tree.Value, *SyntaxError) {
	if err := d.enter(ln); err != nil {
		return tree.Value{}, err
	}
	defer d.leave()
	if h.hasFields {
		return d.tabularRows(ln, h, depth+1)
	}
	if v := trimSpaces(h.rest); v != "" {
		return d.inline(ln, h, v, h.restOff+leadingSpaces(h.rest))
	}
	return d.listItems(ln, h, depth+1)
}

// inline decodes an inline primitive array (§9.1).
func (d *decoder) inline(ln *line, h *header, s string, off int) (tree.Value, *SyntaxError) {
	toks := d.splitTokens(s, h.delim)
	if d.strict && len(toks) != h.n {
		return tree.Value{}, d.fail(ln, off, "array declares "+plural(h.n, "value")+", found "+strconv.Itoa(len(toks)))
	}
	start := len(d.vals)
	for i, t := range toks {
		v, err := d.primitive(ln, trimSpaces(s[t.start:t.end]), off+t.start+leadingSpaces(s[t.start:t.end]))
		if err != nil {
			d.vals = d.vals[:start]
			return tree.Value{}, err.at(i)
		}
		d.vals = append(d.vals, v)
	}
	return d.finishArray(start), nil
}

// split splits s on unquoted occurrences of delim (§11.2, Appendix B.3).
// The result is valid until the next call.
func (d *decoder) splitTokens(s string, delim byte) []span {
	toks := d.toks[:0]
	start := 0
	inQ := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQ:
			if c == '\\' {
				i++
			} else if c == '"' {
				inQ = false
			}
		case c == '"':
			inQ = true
		case c == delim:
			toks = append(toks, span{start, i})
			start = i + 1
		}
	}
	toks = append(toks, span{start, len(s)})
	d.toks = toks
	return toks
}

// firstUnquoted returns the positions of the first unquoted a and b in s,
// or -1.
func firstUnquoted(s string, a, b byte) (int, int) {
	pa, pb := -1, -1
	inQ := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inQ {
			if c == '\\' {
				i++
			} else if c == '"' {
				inQ = false
			}
			continue
		}
		if c == '"' {
			inQ = true
			continue
		}
		if c == a && pa < 0 {
			pa = i
			if pb >= 0 || a == b {
				break
			}
		}
		if c == b && pb < 0 {
			pb = i
			if pa >= 0 {
				break
			}
		}
	}
	return pa, pb
}

// listItems decodes the items of an expanded list at depth (§9.4, §10).
func (d *decoder) listItems(hl *line, h *header, depth int32) (tree.Value, *SyntaxError) {
	start := len(d.vals)
	open := false
	count := 0
	var err *SyntaxError
	for {
		var ln *line
		ln, err = d.peek()
		if err != nil || ln == nil || ln.depth < depth {
			break
		}
		if ln.depth > depth {
			if d.strict {
				err = d.failLine(ln, "unexpected indentation: expected a list item '- ' at depth "+strconv.Itoa(int(depth)))
				break
			}
			d.i++
			continue
		}
		s := d.content(ln)
		if s != "-" && !strings.HasPrefix(s, "- ") {
			break
		}
		d.i++
		if !open {
			d.spans = append(d.spans, depth)
			open = true
		}
		var v tree.Value
		v, err = d.listItem(ln, s, depth)
		if err != nil {
			err = err.at(count)
			break
		}
		d.vals = append(d.vals, v)
		count++
	}
	if open {
		d.spans = d.spans[:len(d.spans)-1]
	}
	if err == nil && d.strict && count != h.n {
		err = d.fail(hl, h.lenOff, "array declares "+plural(h.n, "list item")+", found "+strconv.Itoa(count))
	}
	if err != nil {
		clear(d.vals[start:])
		d.vals = d.vals[:start]
		return tree.Value{}, err
	}
	return d.finishArray(start), nil
}

// listItem decodes one list item whose hyphen line is at depth.
func (d *decoder) listItem(ln *line, s string, depth int32) (tree.Value, *SyntaxError) {
	off := int(ln.start) + 1
	r := s[1:]
	sp := leadingSpaces(r)
	r, off = r[sp:], off+sp
	rt := trimSpaces(r)
	switch rt {
	case "":
		return tree.Object(), nil
	case "[]":
		return tree.Array(), nil
	}
	colon, br := firstUnquoted(r, ':', '[')
	if br == 0 {
		h, herr := d.header(ln, r, off)
		if herr == nil && !h.keyed && !h.hasFields {
			return d.arrayBody(ln, &h, depth)
		}
		if herr == nil && d.strict {
			return tree.Value{}, d.fail(ln, off, "an array header with fields or a keyed header needs a key in a list item")
		}
		if herr != nil && colon < 0 {
			return d.primitive(ln, rt, off)
		}
		if herr != nil && d.strict {
			return tree.Value{}, herr
		}
	}
	if colon < 0 {
		return d.primitive(ln, rt, off)
	}
	// An object whose first field is on the hyphen line, at depth+1.
	ob := objBuilder{start: len(d.mems)}
	key, v, err := d.field(ln, r, off, depth+1)
	if err != nil {
		return tree.Value{}, err
	}
	if err := d.add(&ob, key, v, ln); err != nil {
		return tree.Value{}, err
	}
	if err := d.objectBody(&ob, depth+1); err != nil {
		return tree.Value{}, err
	}
	return d.finishObject(&ob), nil
}

// tabularRows decodes the rows of a tabular array at depth (§9.3).
func (d *decoder) tabularRows(hl *line, h *header, depth int32) (tree.Value, *SyntaxError) {
	start := len(d.vals)
	open := false
	count := 0
	var err *SyntaxError
	for {
		var ln *line
		ln, err = d.peek()
		if err != nil || ln == nil || ln.depth < depth {
			break
		}
		if ln.depth > depth {
			if d.strict {
				err = d.failLine(ln, "unexpected indentation: expected a row at depth "+strconv.Itoa(int(depth)))
				break
			}
			d.i++
			continue
		}
		s := d.content(ln)
		delimAt, colonAt := firstUnquoted(s, h.delim, ':')
		if colonAt >= 0 && (delimAt < 0 || colonAt < delimAt) {
			break // a key-value line ends the rows
		}
		d.i++
		if !open {
			d.spans = append(d.spans, depth)
			open = true
		}
		var v tree.Value
		v, err = d.row(ln, h, s, int(ln.start))
		if err != nil {
			err = err.at(count)
			break
		}
		d.vals = append(d.vals, v)
		count++
	}
	if open {
		d.spans = d.spans[:len(d.spans)-1]
	}
	if err == nil && d.strict && count != h.n {
		err = d.fail(hl, h.lenOff, "array declares "+plural(h.n, "row")+", found "+strconv.Itoa(count))
	}
	if err != nil {
		clear(d.vals[start:])
		d.vals = d.vals[:start]
		return tree.Value{}, err
	}
	return d.finishArray(start), nil
}

// keyedRows decodes the entry rows of a keyed tabular object at depth
// (§9.5).
func (d *decoder) keyedRows(hl *line, h *header, depth int32) (tree.Value, *SyntaxError) {
	if err := d.enter(hl); err != nil {
		return tree.Value{}, err
	}
	defer d.leave()
	ob := objBuilder{start: len(d.mems)}
	open := false
	count := 0
	var err *SyntaxError
	for {
		var ln *line
		ln, err = d.peek()
		if err != nil || ln == nil || ln.depth < depth {
			break
		}
		if ln.depth > depth {
			if d.strict {
				err = d.failLine(ln, "unexpected indentation: expected an entry row at depth "+strconv.Itoa(int(depth)))
				break
			}
			d.i++
			continue
		}
		s := d.content(ln)
		off := int(ln.start)
		d.i++
		var key, rest string
		restOff := 0
		if s[0] == '"' {
			k, n, qerr := d.quoted(ln, s, off)
			if qerr != nil {
				err = qerr
				break
			}
			sp := leadingSpaces(s[n:])
			if n+sp >= len(s) || s[n+sp] != ':' {
				err = d.fail(ln, off+n+sp, "missing ':' after entry key "+strconv.Quote(k))
				break
			}
			key, rest, restOff = k, s[n+sp+1:], off+n+sp+1
		} else {
			colon, _ := firstUnquoted(s, ':', ':')
			if colon < 0 {
				if d.strict {
					err = d.failLine(ln, "expected an entry row 'key: cells' in keyed object")
					break
				}
				continue
			}
			key, rest, restOff = trimSpaces(s[:colon]), s[colon+1:], off+colon+1
		}
		if !open {
			d.spans = append(d.spans, depth)
			open = true
		}
		var v tree.Value
		if v, err = d.row(ln, h, rest, restOff); err != nil {
			err = err.in(key)
			break
		}
		if err = d.add(&ob, key, v, ln); err != nil {
			break
		}
		count++
	}
	if open {
		d.spans = d.spans[:len(d.spans)-1]
	}
	if err == nil && d.strict && count != h.n {
		err = d.fail(hl, h.lenOff, "keyed header declares "+plural(h.n, "entry row")+", found "+strconv.Itoa(count))
	}
	if err != nil {
		clear(d.mems[ob.start:])
		d.mems = d.mems[:ob.start]
		return tree.Value{}, err
	}
	return d.finishObject(&ob), nil
}

// row decodes the cells s (at offset off) of one tabular row or entry row
// into an object shaped by the header's fields.
func (d *decoder) row(ln *line, h *header, s string, off int) (tree.Value, *SyntaxError) {
	var toks []span
	if trimSpaces(s) != "" {
		toks = d.splitTokens(s, h.delim)
	}
	if d.strict && len(toks) != h.leaves {
		return tree.Value{}, d.fail(ln, off, "row has "+plural(len(toks), "value")+", header declares "+plural(h.leaves, "field"))
	}
	// Decode the cells first: they are primitives on the scratch stack.
	start := len(d.vals)
	for i := range h.leaves {
		if i >= len(toks) {
			d.vals = append(d.vals, tree.Value{})
			continue
		}
		t := toks[i]
		cell := s[t.start:t.end]
		v, err := d.primitive(ln, trimSpaces(cell), off+t.start+leadingSpaces(cell))
		if err != nil {
			d.vals = d.vals[:start]
			return tree.Value{}, err
		}
		d.vals = append(d.vals, v)
	}
	cells := d.vals[start:]
	v, _ := d.group(h, h.fields, cells)
	clear(d.vals[start:])
	d.vals = d.vals[:start]
	return v, nil
}

// group materializes one brace group from the leaf cells, returning the
// object and the cells left over.
func (d *decoder) group(h *header, fs []fieldNode, cells []tree.Value) (tree.Value, []tree.Value) {
	if len(d.mpool) < len(fs) {
		d.mpool = make([]tree.Member, max(len(fs), 1024))
	}
	mems := d.mpool[:len(fs):len(fs)]
	d.mpool = d.mpool[len(fs):]
	for i, f := range fs {
		var v tree.Value
		if f.kids == nil {
			v, cells = cells[0], cells[1:]
		} else {
			v, cells = d.group(h, f.kids, cells)
		}
		mems[i] = tree.Member{Key: f.name, Value: v}
	}
	if h.dups {
		// Non-strict last-write-wins: the last value of a repeated name
		// replaces the first, in the first one's position.
		out := mems[:0]
		at := make(map[string]int, len(mems))
		for _, m := range mems {
			if j, ok := at[m.Key]; ok {
				out[j].Value = m.Value
				continue
			}
			at[m.Key] = len(out)
			out = append(out, m)
		}
		mems = out
	}
	return tree.Object(mems...), cells
}
