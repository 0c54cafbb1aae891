package render

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// SyntaxError reports malformed auto-document text.
type SyntaxError struct {
	Line, Column int // 1-based
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg)
}

// Limits of [DecodeOptions] when left zero.
const (
	// DefaultMaxDepth is how deeply values may nest: block indentation,
	// inline JSON and legend references together.
	DefaultMaxDepth = 512
	// DefaultMaxExpansion is how many times its own size a document may
	// grow by expanding legend references and prefixes.
	DefaultMaxExpansion = 64
	// DefaultMaxExpandedBytes is the absolute cap on a document's expanded
	// size, whatever its own size.
	DefaultMaxExpandedBytes = 256 << 20
	// minExpansionAllowance is what any document may expand to, however
	// short: small documents are never refused for their ratio.
	minExpansionAllowance = 1 << 20
)

// DecodeOptions bound what [DecodeOptions.Decode] accepts, for text from
// untrusted sources. The zero value uses the defaults.
type DecodeOptions struct {
	// MaxDepth bounds nesting (blocks, lists, tables, inline JSON and what
	// legend references bring in). Zero means [DefaultMaxDepth].
	MaxDepth int

	// MaxExpansion bounds the expanded size of the document (its text
	// with every @N and ~N reference replaced by what it stands for) as
	// a multiple of its own length, with at least 1 MiB allowed. Zero
	// means [DefaultMaxExpansion].
	MaxExpansion int

	// MaxExpandedBytes is the absolute cap on the expanded size. Zero
	// means [DefaultMaxExpandedBytes].
	MaxExpandedBytes int64
}

// Marker is the first line of an auto-encoded text that valid TOON would
// read differently (or not at all). [Encode] writes it exactly when
// needed, so that text without it always means the same thing to a TOON
// reader, and text with it is never valid TOON (a TOON document cannot
// open with a line that is neither a key-value line, a header nor a
// comment when more lines follow).
const Marker = "(auto)"

// Marked reports whether text opens with the [Marker] line.
func Marked(text string) bool {
	return strings.HasPrefix(text, Marker+"\n")
}

// Decode turns any text [Encode] produces for JSON input back into the
// tree: an auto document, a fenced TOON document (```toon ... ```) or
// plain JSON, each optionally opened by the [Marker] line. Errors are
// [*SyntaxError], [*tree.SyntaxError] or [*toon.SyntaxError] values. One
// trailing newline is ignored. It applies the default limits of
// [DecodeOptions].
func Decode(text string) (tree.Value, error) {
	return (&DecodeOptions{}).Decode(text)
}

// Decode is [Decode] with the limits of o (nil means defaults).
func (o *DecodeOptions) Decode(text string) (tree.Value, error) {
	return o.decode(text, nil)
}

// errDiffers is what a checking decode returns where the text reads as
// something other than the value it is checked against.
var errDiffers = errors.New("the text decodes to a different value")

// decode is Decode; with want non-nil it is a check that text decodes to
// *want, which returns no value: the parts of an auto document (members,
// rows, list items) are compared as they are read and let go, so that
// checking a large document does not hold a second tree of it. A
// mismatch is errDiffers.
func (o *DecodeOptions) decode(text string, want *tree.Value) (tree.Value, error) {
	maxDepth, ratio, abs := DefaultMaxDepth, int64(DefaultMaxExpansion), int64(DefaultMaxExpandedBytes)
	if o != nil {
		if o.MaxDepth > 0 {
			maxDepth = o.MaxDepth
		}
		if o.MaxExpansion > 0 {
			ratio = int64(o.MaxExpansion)
		}
		if o.MaxExpandedBytes > 0 {
			abs = o.MaxExpandedBytes
		}
	}
	text = strings.TrimSuffix(text, "\n")
	first := 0
	if Marked(text) {
		text = text[len(Marker)+1:]
		first = 1
	}
	if isFencedTOON(text) {
		v, err := toon.UnmarshalString(text[len("```toon\n"):len(text)-len("\n```")], nil)
		if se, ok := err.(*toon.SyntaxError); ok {
			e := *se
			e.Line += first + 1 // the fence's first line
			return tree.Value{}, &e
		}
		if err == nil {
			return same(v, want)
		}
		return v, err
	}
	if len(text) > 0 && (text[0] == '{' || text[0] == '[') {
		if v, err := (tree.ParseOptions{MaxDepth: maxDepth}).ParseString(text); err == nil {
			return same(v, want)
		}
	}
	if !utf8.ValidString(text) {
		i := 0
		for i < len(text) {
			r, n := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		line := strings.Count(text[:i], "\n")
		return tree.Value{}, &SyntaxError{Line: first + line + 1, Column: i - strings.LastIndexByte(text[:i], '\n'), Msg: "invalid UTF-8"}
	}
	limit := max(ratio*int64(len(text)), minExpansionAllowance)
	if limit > abs || limit/ratio < int64(len(text)) { // overflow
		limit = abs
	}
	d := &decoder{lines: strings.Split(text, "\n"), first: first, maxDepth: maxDepth, limit: limit, expanded: int64(len(text))}
	return d.document(want)
}

// same returns v, or checks it against *want when want is not nil and
// returns no value.
func same(v tree.Value, want *tree.Value) (tree.Value, error) {
	if want == nil {
		return v, nil
	}
	if !tree.Equal(v, *want) {
		return tree.Value{}, errDiffers
	}
	return tree.Value{}, nil
}

// wantItem returns item i of *want (an array of n items) to check against,
// or nil when not checking.
func wantItem(want *tree.Value, i int) *tree.Value {
	if want == nil {
		return nil
	}
	return &want.Items()[i]
}

// wantArray checks that *want, when given, is an array of n items.
func wantArray(want *tree.Value, n int) error {
	if want != nil && (want.Kind() != tree.KindArray || want.Len() != n) {
		return errDiffers
	}
	return nil
}

// wantMember returns the value of member i of *want to check against, or
// nil when not checking; it fails when *want is not an object with such a
// member.
func wantMember(want *tree.Value, i int) (*tree.Member, error) {
	if want == nil {
		return nil, nil
	}
	if want.Kind() != tree.KindObject || i >= want.Len() {
		return nil, errDiffers
	}
	return &want.Members()[i], nil
}

// memberWant is what the value of member m is checked against: nil when
// not checking.
func memberWant(m *tree.Member) *tree.Value {
	if m == nil {
		return nil
	}
	return &m.Value
}

// sameKey checks a member's key against the member it should be.
func sameKey(k string, m *tree.Member) error {
	if m != nil && m.Key != k {
		return errDiffers
	}
	return nil
}

type decoder struct {
	lines    []string
	i        int
	first    int // lines before lines[0] (the marker)
	prefixes []string
	legend   []tree.Value

	// Bounds: nesting, and the expanded size of the document.
	maxDepth    int
	legendDepth []int   // nesting depth of each legend entry's value
	legendSize  []int64 // expanded size of each legend entry's text
	expanded    int64   // expanded size of the document so far
	limit       int64
	hit         bool // a limit was reached: no other reading is tried
}

func (d *decoder) errf(line, col int, format string, args ...any) error {
	return &SyntaxError{Line: d.first + line + 1, Column: col + 1, Msg: fmt.Sprintf(format, args...)}
}

// grow adds n bytes to the document's expanded size and reports whether it
// is still within the limit.
func (d *decoder) grow(n int64) error {
	d.expanded += n
	if d.expanded > d.limit || d.expanded < 0 {
		d.hit = true
		return fmt.Errorf("document expands beyond %d bytes: its references repeat too much (limits: DecodeOptions, terse decode --max-expansion)", d.limit)
	}
	return nil
}

// deep reports an error when depth exceeds the limit.
func (d *decoder) deep(depth int) error {
	if depth > d.maxDepth {
		d.hit = true
		return fmt.Errorf("nesting deeper than %d levels", d.maxDepth)
	}
	return nil
}

// declaration parses "~N = text" or "@N = value" lines.
func (d *decoder) declaration() (bool, error) {
	if d.i >= len(d.lines) {
		return false, nil
	}
	l := d.lines[d.i]
	if len(l) < 2 || (l[0] != '~' && l[0] != '@') {
		return false, nil
	}
	j := 1
	for j < len(l) && l[j] >= '0' && l[j] <= '9' {
		j++
	}
	if j == 1 || !strings.HasPrefix(l[j:], " = ") {
		return false, nil
	}
	id, _ := strconv.Atoi(l[1:j])
	rest := l[j+3:]
	if l[0] == '~' {
		if id != len(d.prefixes)+1 {
			return false, d.errf(d.i, 1, "prefix ~%d declared out of order", id)
		}
		d.prefixes = append(d.prefixes, rest)
	} else {
		if id != len(d.legend)+1 {
			return false, d.errf(d.i, 1, "legend entry @%d declared out of order", id)
		}
		// An entry may use earlier entries only (the next id is not
		// declared yet), so expansion is a sum over a finite order.
		p := &inlineParser{d: d, s: rest}
		v, err := p.all()
		if err != nil {
			return false, d.errf(d.i, j+3+p.i, "%v", err)
		}
		d.legend = append(d.legend, v)
		d.legendDepth = append(d.legendDepth, p.deepest)
		d.legendSize = append(d.legendSize, int64(len(rest))+p.grown)
	}
	d.i++
	return true, nil
}

func (d *decoder) document(want *tree.Value) (tree.Value, error) {
	for {
		ok, err := d.declaration()
		if err != nil {
			return tree.Value{}, err
		}
		if !ok {
			break
		}
	}
	if d.i >= len(d.lines) {
		return tree.Value{}, d.errf(d.i, 0, "no value after the declarations")
	}
	l := d.lines[d.i]
	var v tree.Value
	var err error
	switch {
	case strings.HasPrefix(l, "["):
		n, cols, isTable, rest, perr := parseHeader(l, 0)
		if perr == nil && rest == "" {
			d.i++
			if isTable {
				v, err = d.table(n, cols, 0, want)
			} else {
				v, err = d.list(n, 0, want)
			}
			break
		}
		fallthrough
	default:
		if d.i == len(d.lines)-1 {
			iv, ierr := d.inlineAll(l, d.i, 0, 0)
			if ierr == nil {
				d.i++
				return same(iv, want)
			}
			if d.hit {
				return tree.Value{}, ierr
			}
		}
		v, err = d.block(0, want)
	}
	if err != nil {
		return tree.Value{}, err
	}
	if d.i < len(d.lines) {
		return tree.Value{}, d.errf(d.i, 0, "unexpected line")
	}
	return v, nil
}

// indentOf returns the depth of a line (two spaces per level) and whether
// its indentation is a whole number of levels.
func indentOf(l string) (int, bool) {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n / 2, n%2 == 0
}

// block parses member lines at depth into an object (checked against
// *want when want is not nil).
func (d *decoder) block(depth int, want *tree.Value) (tree.Value, error) {
	if err := d.deep(depth + 1); err != nil {
		return tree.Value{}, d.errf(d.i, 0, "%v", err)
	}
	var ms []tree.Member
	n := 0 // members read
	for d.i < len(d.lines) {
		l := d.lines[d.i]
		dep, ok := indentOf(l)
		if dep < depth {
			break
		}
		if dep > depth || !ok {
			return tree.Value{}, d.errf(d.i, 0, "unexpected indentation")
		}
		wm, err := wantMember(want, n)
		if err != nil {
			return tree.Value{}, err
		}
		m, err := d.member(l[2*depth:], 2*depth, depth, wm)
		if err != nil {
			return tree.Value{}, err
		}
		n++
		if want == nil {
			ms = append(ms, m)
		}
	}
	if n == 0 {
		return tree.Value{}, d.errf(d.i, 0, "expected key: value lines")
	}
	if want != nil {
		if n != want.Len() {
			return tree.Value{}, errDiffers
		}
		return tree.Value{}, nil
	}
	return tree.Object(ms...), nil
}

// member parses one member line whose text (after indentation at column
// col) is s; nested lines are at depth+1. It advances past what it used.
// With want not nil it checks the member against *want and returns it
// without its value.
func (d *decoder) member(s string, col, depth int, want *tree.Member) (tree.Member, error) {
	line := d.i
	k, rest, err := parseKey(s)
	if err != nil {
		return tree.Member{}, d.errf(line, col, "%v", err)
	}
	if err := sameKey(k, want); err != nil {
		return tree.Member{}, err
	}
	wv := memberWant(want)
	d.i++
	switch {
	case rest == ":":
		v, err := d.block(depth+1, wv)
		return tree.Member{Key: k, Value: v}, err
	case strings.HasPrefix(rest, "["):
		n, cols, isTable, tail, err := parseHeader(rest, 0)
		if err != nil || tail != "" {
			return tree.Member{}, d.errf(line, col+len(s)-len(rest), "malformed array header")
		}
		var v tree.Value
		if isTable {
			v, err = d.table(n, cols, depth+1, wv)
		} else {
			v, err = d.list(n, depth+1, wv)
		}
		return tree.Member{Key: k, Value: v}, err
	case strings.HasPrefix(rest, ": "):
		vs := rest[2:]
		vcol := col + len(s) - len(vs)
		if strings.HasPrefix(vs, "```") {
			v, err := d.fence(vs, line, vcol)
			if err == nil {
				v, err = same(v, wv)
			}
			return tree.Member{Key: k, Value: v}, err
		}
		v, missing, err := d.value(vs, false, line, vcol, depth+1)
		if err == nil && missing {
			err = d.errf(line, vcol, "missing value")
		}
		if err == nil {
			v, err = same(v, wv)
		}
		return tree.Member{Key: k, Value: v}, err
	}
	return tree.Member{}, d.errf(line, col+len(s)-len(rest), "expected ':' after key")
}

// fence reads a fenced block opened by open (e.g. "```diff") up to its
// closing fence line.
func (d *decoder) fence(open string, line, col int) (tree.Value, error) {
	n := 0
	for n < len(open) && open[n] == '`' {
		n++
	}
	fence := open[:n]
	start := d.i
	for d.i < len(d.lines) {
		if d.lines[d.i] == fence {
			s := strings.Join(d.lines[start:d.i], "\n")
			d.i++
			return tree.String(s), nil
		}
		d.i++
	}
	return tree.Value{}, d.errf(line, col, "unclosed fenced block")
}

// column is one table column: a key, null in every row (no cells), or a
// group of sub-keys whose object is spread over one cell per sub-key.
type column struct {
	key  string
	null bool
	sub  []string
}

// table reads n rows of cells for cols at depth (checked against *want
// when want is not nil).
func (d *decoder) table(n int, cols []column, depth int, want *tree.Value) (tree.Value, error) {
	if err := d.deep(depth + 2); err != nil {
		return tree.Value{}, d.errf(d.i, 0, "%v", err)
	}
	if err := wantArray(want, n); err != nil {
		return tree.Value{}, err
	}
	slots, rowGrowth := tableShape(cols)
	var items []tree.Value
	if want == nil {
		items = make([]tree.Value, 0, min(n, len(d.lines)-d.i))
	}
	cells := make([]string, slots)
	at := make([]int, slots)
	for r := range n {
		if d.i >= len(d.lines) {
			return tree.Value{}, d.errf(d.i, 0, "table ends after %d of %d rows", r, n)
		}
		if err := d.grow(rowGrowth); err != nil {
			return tree.Value{}, d.errf(d.i, 0, "%v", err)
		}
		if err := d.rowCells(depth, cells, at); err != nil {
			return tree.Value{}, err
		}
		ms, err := d.rowMembers(cols, cells, at, depth)
		if err != nil {
			return tree.Value{}, err
		}
		if want != nil {
			if _, err := same(tree.Object(ms...), wantItem(want, r)); err != nil {
				return tree.Value{}, err
			}
		} else {
			items = append(items, tree.Object(ms...))
		}
		d.i++
	}
	if want != nil {
		return tree.Value{}, nil
	}
	return tree.Array(items...), nil
}

// tableShape returns the cells of a row of a table over cols, and how
// much a row grows the tree: each row repeats the header's keys, so a
// long header over many short rows expands like references do.
func tableShape(cols []column) (slots int, rowGrowth int64) {
	for _, c := range cols {
		switch {
		case c.null:
		case c.sub != nil:
			slots += len(c.sub)
		default:
			slots++
		}
		rowGrowth += int64(len(c.key)) + 4
		for _, sk := range c.sub {
			rowGrowth += int64(len(sk)) + 4
		}
	}
	return slots, rowGrowth
}

// rowCells cuts the row at line d.i, at depth, into len(cells) cells,
// with the column of each in at.
func (d *decoder) rowCells(depth int, cells []string, at []int) error {
	slots := len(cells)
	l := d.lines[d.i]
	if dep, ok := indentOf(l); dep != depth || !ok {
		return d.errf(d.i, 0, "table row expected at depth %d", depth)
	}
	row := l[2*depth:]
	col0 := 2 * depth
	p := 0
	for k := range slots {
		q, err := cellEnd(row, p)
		if err != nil {
			return d.errf(d.i, col0+p, "%v", err)
		}
		cells[k], at[k] = row[p:q], col0+p
		if k < slots-1 {
			if q >= len(row) || row[q] != ',' {
				return d.errf(d.i, col0+q, "row ends after %d of %d cells", k+1, slots)
			}
			q++
		} else if q != len(row) {
			return d.errf(d.i, col0+q, "row has more than %d cells", slots)
		}
		p = q
	}
	return nil
}

// rowMembers reads a row's cells as the members of its object: a null
// column's null, a column group's object, and each other cell's value
// (an empty cell is a missing member).
func (d *decoder) rowMembers(cols []column, cells []string, at []int, depth int) ([]tree.Member, error) {
	ms := make([]tree.Member, 0, len(cols))
	k := 0
	for _, c := range cols {
		switch {
		case c.null:
			ms = append(ms, tree.Member{Key: c.key, Value: tree.Null()})
		case c.sub != nil:
			sub := make([]tree.Member, len(c.sub))
			for i, sk := range c.sub {
				v, missing, err := d.value(cells[k], true, d.i, at[k], depth+3)
				if err != nil {
					return nil, err
				}
				if missing {
					return nil, d.errf(d.i, at[k], "empty cell in column group %s", c.key)
				}
				sub[i] = tree.Member{Key: sk, Value: v}
				k++
			}
			ms = append(ms, tree.Member{Key: c.key, Value: tree.Object(sub...)})
		default:
			v, missing, err := d.value(cells[k], true, d.i, at[k], depth+2)
			if err != nil {
				return nil, err
			}
			if !missing {
				ms = append(ms, tree.Member{Key: c.key, Value: v})
			}
			k++
		}
	}
	if len(ms) == 0 {
		return nil, d.errf(d.i, 0, "empty row")
	}
	return ms, nil
}

// list reads n "- " items at depth (checked against *want when want is
// not nil).
func (d *decoder) list(n, depth int, want *tree.Value) (tree.Value, error) {
	if err := d.deep(depth + 1); err != nil {
		return tree.Value{}, d.errf(d.i, 0, "%v", err)
	}
	if err := wantArray(want, n); err != nil {
		return tree.Value{}, err
	}
	var items []tree.Value
	if want == nil {
		items = make([]tree.Value, 0, min(n, len(d.lines)-d.i))
	}
	for r := range n {
		if d.i >= len(d.lines) {
			return tree.Value{}, d.errf(d.i, 0, "list ends after %d of %d items", r, n)
		}
		wi := wantItem(want, r)
		l := d.lines[d.i]
		dep, ok := indentOf(l)
		if dep != depth || !ok || !strings.HasPrefix(l[2*depth:], "- ") {
			return tree.Value{}, d.errf(d.i, 2*depth, "list item \"- \" expected")
		}
		s := l[2*depth+2:]
		if v, err := d.inlineAll(s, d.i, 2*depth+2, depth+1); err == nil {
			d.i++
			if wi != nil {
				if _, err := same(v, wi); err != nil {
					return tree.Value{}, err
				}
				continue
			}
			items = append(items, v)
			continue
		} else if d.hit {
			return tree.Value{}, err
		}
		// An object whose first member shares the "- " line.
		wm, err := wantMember(wi, 0)
		if err != nil {
			return tree.Value{}, err
		}
		m, err := d.member(s, 2*depth+2, depth+1, wm)
		if err != nil {
			return tree.Value{}, err
		}
		var ms []tree.Member
		if wi == nil {
			ms = []tree.Member{m}
		}
		nm := 1
		for d.i < len(d.lines) {
			l := d.lines[d.i]
			dep, ok := indentOf(l)
			if dep != depth+1 || !ok {
				if dep > depth+1 {
					return tree.Value{}, d.errf(d.i, 0, "unexpected indentation")
				}
				break
			}
			wm, err := wantMember(wi, nm)
			if err != nil {
				return tree.Value{}, err
			}
			m, err := d.member(l[2*depth+2:], 2*depth+2, depth+1, wm)
			if err != nil {
				return tree.Value{}, err
			}
			nm++
			if wi == nil {
				ms = append(ms, m)
			}
		}
		if wi != nil {
			if nm != wi.Len() {
				return tree.Value{}, errDiffers
			}
			continue
		}
		items = append(items, tree.Object(ms...))
	}
	if want != nil {
		return tree.Value{}, nil
	}
	return tree.Array(items...), nil
}

// value parses a cell (cell true) or key:value value at nesting depth. An
// empty cell is missing.
func (d *decoder) value(s string, cell bool, line, col, depth int) (v tree.Value, missing bool, err error) {
	switch {
	case s == "":
		return tree.Value{}, true, nil
	case s == "null":
		return tree.Null(), false, nil
	case s == "true":
		return tree.Bool(true), false, nil
	case s == "false":
		return tree.Bool(false), false, nil
	case tree.IsNumber(s):
		return tree.Number(s), false, nil
	case s[0] == '"' || s[0] == '{' || s[0] == '[' || isRef(s):
		v, err := d.inlineAll(s, line, col, depth)
		return v, false, err
	}
	str, grown, err := d.unsigil(s)
	if err == nil {
		err = d.grow(grown)
	}
	if err != nil {
		return tree.Value{}, false, d.errf(line, col, "%v", err)
	}
	return tree.String(str), false, nil
}

// unsigil expands a prefix reference or un-doubles an escaped '~', in
// documents that declare prefixes. grown is how many bytes the expansion
// added.
func (d *decoder) unsigil(s string) (_ string, grown int64, _ error) {
	if len(d.prefixes) == 0 || len(s) == 0 || s[0] != '~' {
		return s, 0, nil
	}
	if len(s) > 1 && s[1] == '~' {
		return s[1:], 0, nil
	}
	j := 1
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	id, err := strconv.Atoi(s[1:j])
	if err != nil || id < 1 || id > len(d.prefixes) {
		return "", 0, fmt.Errorf("unknown prefix in %q", s)
	}
	pre := d.prefixes[id-1]
	return pre + s[j:], int64(len(pre) - j), nil
}

// cellEnd returns the end of the cell starting at p: a quoted string or
// bracketed value is skipped whole, anything else runs to the next comma.
func cellEnd(row string, p int) (int, error) {
	if p >= len(row) {
		return p, nil
	}
	switch row[p] {
	case '"', '{', '[':
		depth, inStr := 0, false
		for j := p; j < len(row); j++ {
			c := row[j]
			if inStr {
				if c == '\\' {
					j++
				} else if c == '"' {
					inStr = false
					if depth == 0 {
						return j + 1, nil
					}
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unterminated cell")
	}
	j := strings.IndexByte(row[p:], ',')
	if j < 0 {
		return len(row), nil
	}
	return p + j, nil
}

// parseKey reads a bare or quoted key from the start of s.
func parseKey(s string) (key, rest string, err error) {
	if strings.HasPrefix(s, "\"") {
		p := &inlineParser{s: s}
		k, err := p.str()
		if err != nil {
			return "", "", err
		}
		return k, s[p.i:], nil
	}
	j := 0
	for j < len(s) {
		c := s[j]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || j > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.' || c == '$') {
			j++
			continue
		}
		break
	}
	if j == 0 {
		return "", "", fmt.Errorf("expected a key")
	}
	return s[:j], s[j:], nil
}

// parseHeader parses "[N]{cols}:" (table) or "[N]:" (list) at s[p:]. A
// column is key, key=null, or key{sub,sub,...}.
func parseHeader(s string, p int) (n int, cols []column, isTable bool, rest string, err error) {
	s = s[p:]
	j := strings.IndexByte(s, ']')
	if j < 2 || s[0] != '[' {
		return 0, nil, false, "", fmt.Errorf("malformed header")
	}
	n, err = strconv.Atoi(s[1:j])
	if err != nil || n < 1 || s[1] < '1' || s[1] > '9' {
		return 0, nil, false, "", fmt.Errorf("malformed count")
	}
	s = s[j+1:]
	if strings.HasPrefix(s, ":") {
		return n, nil, false, s[1:], nil
	}
	if !strings.HasPrefix(s, "{") {
		return 0, nil, false, "", fmt.Errorf("malformed header")
	}
	s = s[1:]
	cells := 0
	for {
		k, r, kerr := parseKey(s)
		if kerr != nil {
			return 0, nil, false, "", kerr
		}
		c := column{key: k}
		switch {
		case strings.HasPrefix(r, "=null"):
			r = r[len("=null"):]
			c.null = true
		case strings.HasPrefix(r, "{"):
			r = r[1:]
			for {
				sk, sr, serr := parseKey(r)
				if serr != nil {
					return 0, nil, false, "", serr
				}
				c.sub = append(c.sub, sk)
				cells++
				if strings.HasPrefix(sr, ",") {
					r = sr[1:]
					continue
				}
				if !strings.HasPrefix(sr, "}") {
					return 0, nil, false, "", fmt.Errorf("malformed column group")
				}
				r = sr[1:]
				break
			}
		default:
			cells++
		}
		cols = append(cols, c)
		if strings.HasPrefix(r, ",") {
			s = r[1:]
			continue
		}
		if strings.HasPrefix(r, "}:") {
			if cells == 0 {
				return 0, nil, false, "", fmt.Errorf("every column is null")
			}
			return n, cols, true, r[2:], nil
		}
		return 0, nil, false, "", fmt.Errorf("malformed column list")
	}
}

// isFencedTOON reports whether text is a fenced TOON document.
func isFencedTOON(text string) bool {
	return len(text) >= len("```toon\n\n```") && strings.HasPrefix(text, "```toon\n") && strings.HasSuffix(text, "\n```")
}
