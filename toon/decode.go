package toon

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/terse-dev/terse/tree"
)

// DecodeOptions configure decoding. The zero value (and a nil pointer) is
// the spec default: strict mode, two-space indentation.
type DecodeOptions struct {
	// IndentSize is the number of spaces per indentation level; zero means
	// [DefaultIndent].
	IndentSize int

	// Lenient selects the spec's non-strict mode (strict=false): counts
	// and row widths are not checked (missing cells decode as null, extra
	// cells are dropped), indentation depth is floor(spaces/IndentSize)
	// and a tab in indentation counts as IndentSize spaces, blank lines
	// inside arrays are skipped, duplicate keys resolve last-write-wins
	// (the value replaces the earlier one in its original position),
	// malformed headers fall back to key-value lines with the literal key,
	// lines belonging to no scope are skipped, content after a complete
	// root array is ignored, and ill-formed UTF-8 becomes U+FFFD.
	Lenient bool

	// MaxDepth bounds how deeply objects and arrays may nest; deeper input
	// is an error at the line that goes too deep. Zero or negative means
	// tree.DefaultMaxDepth (512), the limit JSON parsing has.
	MaxDepth int
}

// Unmarshal decodes one TOON document into a tree. A nil opts means
// defaults (strict). Errors are [*SyntaxError].
//
// Numbers keep their token text: every TOON number token (§4) is also a
// JSON number literal, so "1.5000" decodes to tree.Number("1.5000") and
// "-1E+03" to tree.Number("-1E+03"); nothing is converted to float64.
// Strings share memory with one copy of data.
func Unmarshal(data []byte, opts *DecodeOptions) (tree.Value, error) {
	return UnmarshalString(string(data), opts)
}

// UnmarshalOwned is [Unmarshal] without the copy: strings in the result
// share data's memory, so data must never be modified afterwards. It suits
// a caller that reads a document only to decode it.
func UnmarshalOwned(data []byte, opts *DecodeOptions) (tree.Value, error) {
	return UnmarshalString(unsafe.String(unsafe.SliceData(data), len(data)), opts)
}

// UnmarshalString is [Unmarshal] on a string, without copying it.
func UnmarshalString(src string, opts *DecodeOptions) (tree.Value, error) {
	d := decoder{strict: true, indent: DefaultIndent, maxDepth: tree.DefaultMaxDepth}
	if opts != nil {
		d.strict = !opts.Lenient
		if opts.IndentSize > 0 {
			d.indent = opts.IndentSize
		}
		if opts.MaxDepth > 0 {
			d.maxDepth = opts.MaxDepth
		}
	}
	v, err := d.decode(src)
	if err != nil {
		return tree.Value{}, err
	}
	return v, nil
}

// A Decoder reads a TOON document from an input stream. TOON's structure
// is carried by indentation and declared lengths, so the decoder reads the
// stream to its end before decoding; one stream holds one document.
type Decoder struct {
	r    io.Reader
	opts DecodeOptions
	done bool
}

// NewDecoder returns a decoder reading from r. A nil opts means defaults.
func NewDecoder(r io.Reader, opts *DecodeOptions) *Decoder {
	d := &Decoder{r: r}
	if opts != nil {
		d.opts = *opts
	}
	return d
}

// Decode reads the whole stream and decodes it. A second call returns
// io.EOF.
func (dec *Decoder) Decode() (tree.Value, error) {
	if dec.done {
		return tree.Value{}, io.EOF
	}
	dec.done = true
	data, err := io.ReadAll(dec.r)
	if err != nil {
		return tree.Value{}, err
	}
	return Unmarshal(data, &dec.opts)
}

// line is one non-comment line of the input.
// line is one line of the input: 16 bytes, as a document of short lines
// holds many. A line is blank when start == end; its number is counted
// only for an error.
type line struct {
	begin int32 // offset of the line's first byte
	start int32 // offset of the content, after indentation
	end   int32 // offset just past the content (a final CR excluded)
	depth int32
}

func (ln *line) blank() bool { return ln.start == ln.end }

type decoder struct {
	src      string
	lines    []line
	i        int // next line
	strict   bool
	indent   int
	nonBlank int

	spans []int32 // item depths of the array spans open around the cursor

	vals []tree.Value  // scratch stack of array items
	mems []tree.Member // scratch stack of object members
	toks []span        // scratch: delimited tokens of one line
	buf  []byte        // scratch: unescaping
	lone bool          // the last quoted value holds surrogate escapes

	nest, maxDepth int           // containers open, and how many may be
	vpool          []tree.Value  // chunk that final item slices are carved from
	mpool          []tree.Member // chunk that final member slices are carved from
}

type span struct{ start, end int }

func (d *decoder) decode(src string) (tree.Value, *SyntaxError) {
	if len(src) > 1<<31-1 {
		return tree.Value{}, &SyntaxError{Line: 1, Column: 1, Msg: "input larger than 2 GiB"}
	}
	if !utf8.ValidString(src) {
		if d.strict {
			off := 0
			for off < len(src) {
				r, n := utf8.DecodeRuneInString(src[off:])
				if r == utf8.RuneError && n == 1 {
					break
				}
				off += n
			}
			line, col := tree.Position(src, off)
			return tree.Value{}, &SyntaxError{Line: line, Column: col, Msg: "invalid UTF-8"}
		}
		src = strings.ToValidUTF8(src, "\uFFFD")
	}
	d.src = src
	if err := d.split(); err != nil {
		return tree.Value{}, err
	}
	v, err := d.root()
	if err != nil && err.Line == 0 && err.lineAt > 0 {
		err.Line = 1 + strings.Count(src[:err.lineAt-1], "\n")
	}
	return v, err
}

// split is the lexical pre-pass: it finds lines, drops comment lines
// (§5.1), strips a final CR and computes depths (§12).
func (d *decoder) split() *SyntaxError {
	src := d.src
	if d.lines == nil {
		d.lines = make([]line, 0, strings.Count(src, "\n")+1)
	}
	num := int32(0)
	for pos := 0; pos < len(src); {
		num++
		end := strings.IndexByte(src[pos:], '\n')
		next := len(src)
		if end < 0 {
			end = len(src)
		} else {
			end += pos
			next = end + 1
		}
		if end > pos && src[end-1] == '\r' {
			end--
		}
		i := pos
		for i < end && src[i] == ' ' {
			i++
		}
		if i < end && src[i] == '#' {
			pos = next
			continue // comment line
		}
		spaces := i - pos
		if i < end && src[i] == '\t' {
			if d.strict {
				return &SyntaxError{Line: int(num), Column: i - pos + 1, Msg: "tab in indentation; indent with spaces"}
			}
			for i < end && (src[i] == ' ' || src[i] == '\t') {
				if src[i] == '\t' {
					spaces += d.indent
				} else {
					spaces++
				}
				i++
			}
		}
		ln := line{begin: int32(pos), start: int32(i), end: int32(end)}
		if !ln.blank() {
			if d.strict && spaces%d.indent != 0 {
				return &SyntaxError{Line: int(num), Column: spaces + 1,
					Msg: "indentation of " + strconv.Itoa(spaces) + " spaces is not a multiple of " + strconv.Itoa(d.indent)}
			}
			ln.depth = int32(spaces / d.indent)
			d.nonBlank++
		}
		d.lines = append(d.lines, ln)
		pos = next
	}
	return nil
}

// fail returns an error at byte offset off of line ln.
func (d *decoder) fail(ln *line, off int, msg string) *SyntaxError {
	begin, end := int(ln.begin), int(ln.end)
	off = max(begin, min(off, end))
	return &SyntaxError{lineAt: begin + 1, Column: utf8.RuneCountInString(d.src[begin:off]) + 1, Msg: msg}
}

// failLine returns an error at the start of a line's content.
func (d *decoder) failLine(ln *line, msg string) *SyntaxError {
	return d.fail(ln, int(ln.start), msg)
}

func (d *decoder) content(ln *line) string { return d.src[ln.start:ln.end] }

// peek skips blank lines and returns the next line, or nil at the end. In
// strict mode a blank line inside an array span is an error (§12).
func (d *decoder) peek() (*line, *SyntaxError) {
	j := d.i
	for j < len(d.lines) && d.lines[j].blank() {
		j++
	}
	if j > d.i && d.strict && len(d.spans) > 0 && j < len(d.lines) && d.lines[j].depth >= d.spans[0] {
		return nil, d.failLine(&d.lines[d.i], "blank line inside an array")
	}
	d.i = j
	if j == len(d.lines) {
		return nil, nil
	}
	return &d.lines[j], nil
}

// root decodes the document per the root-form rules of §5.
func (d *decoder) root() (tree.Value, *SyntaxError) {
	ln, err := d.peek()
	if err != nil {
		return tree.Value{}, err
	}
	if ln == nil {
		return tree.Object(), nil
	}
	s := d.content(ln)
	if ln.depth == 0 && s[0] == '[' {
		if trimSpaces(s) == "[]" {
			d.i++
			return tree.Array(), d.rootEnd()
		}
		h, herr := d.header(ln, s, int(ln.start))
		if herr == nil {
			d.i++
			var v tree.Value
			if h.keyed {
				v, err = d.keyedRows(ln, &h, 1)
			} else {
				v, err = d.arrayBody(ln, &h, 0)
			}
			if err != nil {
				return tree.Value{}, err
			}
			return v, d.rootEnd()
		}
		if c, _ := firstUnquoted(s, ':', ':'); d.strict && (c >= 0 || d.nonBlank > 1) {
			return tree.Value{}, herr
		}
	}
	if d.nonBlank == 1 {
		if c, _ := firstUnquoted(s, ':', ':'); c < 0 {
			d.i++
			return d.primitive(ln, trimSpaces(s), int(ln.start)+leadingSpaces(s))
		}
	}
	var ob objBuilder
	ob.start = len(d.mems)
	if err := d.objectBody(&ob, 0); err != nil {
		return tree.Value{}, err
	}
	return d.finishObject(&ob), nil
}

// rootEnd checks that nothing follows a complete root array or keyed root.
func (d *decoder) rootEnd() *SyntaxError {
	ln, err := d.peek()
	if err != nil || ln == nil || !d.strict {
		return err
	}
	return d.failLine(ln, "unexpected content after the complete root value")
}

// objBuilder collects one object's members on the scratch stack.
type objBuilder struct {
	start int
	seen  map[string]int // key → index, once the object is large
}

// add appends a member, enforcing §14.3 for duplicate keys.
func (d *decoder) add(ob *objBuilder, key string, v tree.Value, ln *line) *SyntaxError {
	n := len(d.mems) - ob.start
	idx := -1
	if ob.seen != nil {
		if j, ok := ob.seen[key]; ok {
			idx = j
		}
	} else {
		for j, m := range d.mems[ob.start:] {
			if m.Key == key {
				idx = j
				break
			}
		}
	}
	if idx >= 0 {
		if d.strict {
			return d.failLine(ln, "duplicate key "+strconv.Quote(key))
		}
		d.mems[ob.start+idx].Value = v
		return nil
	}
	d.mems = append(d.mems, tree.Member{Key: key, Value: v})
	if ob.seen != nil {
		ob.seen[key] = n
	} else if n+1 > 32 {
		ob.seen = make(map[string]int, 64)
		for j, m := range d.mems[ob.start:] {
			ob.seen[m.Key] = j
		}
	}
	return nil
}

func (d *decoder) finishObject(ob *objBuilder) tree.Value {
	n := len(d.mems) - ob.start
	if n == 0 {
		return tree.Object()
	}
	if len(d.mpool) < n {
		d.mpool = make([]tree.Member, max(n, 256))
	}
	out := d.mpool[:n:n]
	d.mpool = d.mpool[n:]
	copy(out, d.mems[ob.start:])
	clear(d.mems[ob.start:])
	d.mems = d.mems[:ob.start]
	return tree.Object(out...)
}

func (d *decoder) finishArray(start int) tree.Value {
	n := len(d.vals) - start
	if n == 0 {
		return tree.Array()
	}
	if len(d.vpool) < n {
		d.vpool = make([]tree.Value, max(n, 256))
	}
	out := d.vpool[:n:n]
	d.vpool = d.vpool[n:]
	copy(out, d.vals[start:])
	clear(d.vals[start:])
	d.vals = d.vals[:start]
	return tree.Array(out...)
}

// enter opens a container at line ln, or fails past the depth limit; leave
// closes it.
func (d *decoder) enter(ln *line) *SyntaxError {
	d.nest++
	if d.nest > d.maxDepth {
		return d.failLine(ln, "nesting deeper than "+strconv.Itoa(d.maxDepth)+" levels")
	}
	return nil
}

func (d *decoder) leave() { d.nest-- }

// objectBody reads the fields of an object at depth.
func (d *decoder) objectBody(ob *objBuilder, depth int32) *SyntaxError {
	if ln, _ := d.peek(); ln != nil {
		if err := d.enter(ln); err != nil {
			return err
		}
		defer d.leave()
	}
	for {
		ln, err := d.peek()
		if err != nil {
			return err
		}
		if ln == nil || ln.depth < depth {
			return nil
		}
		if ln.depth > depth {
			if d.strict {
				return d.failLine(ln, "unexpected indentation: expected a line at depth "+strconv.Itoa(int(depth))+" or less")
			}
			d.i++
			continue
		}
		d.i++
		key, v, err := d.field(ln, d.content(ln), int(ln.start), depth)
		if err != nil {
			return err
		}
		if err := d.add(ob, key, v, ln); err != nil {
			return err
		}
	}
}

// field decodes one key-value or header line s (at offset off) of an object
// whose fields are at depth; nested content is at depth+1.
func (d *decoder) field(ln *line, s string, off int, depth int32) (string, tree.Value, *SyntaxError) {
	var key string
	var rest string // after the key
	restOff := 0
	if s[0] == '"' {
		k, n, err := d.quoted(ln, s, off)
		if err != nil {
			return "", tree.Value{}, err
		}
		key, rest, restOff = k, s[n:], off+n
		if len(rest) > 0 && rest[0] == '[' {
			h, herr := d.header(ln, rest, restOff)
			if herr == nil {
				v, err := d.headerValue(ln, &h, depth)
				if err != nil {
					return "", tree.Value{}, err.in(key)
				}
				return key, v, nil
			}
			if d.strict {
				return "", tree.Value{}, herr
			}
			return d.literalField(ln, s, off, depth)
		}
		sp := leadingSpaces(rest)
		if sp == len(rest) || rest[sp] != ':' {
			return "", tree.Value{}, d.fail(ln, restOff+sp, "missing ':' after key "+strconv.Quote(key))
		}
		rest, restOff = rest[sp+1:], restOff+sp+1
	} else {
		colon, br := firstUnquoted(s, ':', '[')
		if br >= 0 && (colon < 0 || br < colon) && (br == 0 || isIdentKey(s[:br])) {
			h, herr := d.header(ln, s[br:], off+br)
			if herr == nil {
				if br == 0 {
					if d.strict {
						return "", tree.Value{}, d.fail(ln, off, "array header without a key in an object field position")
					}
					return d.literalField(ln, s, off, depth)
				}
				key = s[:br]
				v, err := d.headerValue(ln, &h, depth)
				if err != nil {
					return "", tree.Value{}, err.in(key)
				}
				return key, v, nil
			}
			if d.strict {
				return "", tree.Value{}, herr
			}
			return d.literalField(ln, s, off, depth)
		}
		if colon < 0 {
			return "", tree.Value{}, d.fail(ln, off+len(s), "missing ':' after key (expected 'key: value')")
		}
		key = trimSpaces(s[:colon])
		rest, restOff = s[colon+1:], off+colon+1
	}
	v, err := d.fieldValue(ln, rest, restOff, depth)
	if err != nil {
		return "", tree.Value{}, err.in(key)
	}
	return key, v, nil
}

// literalField is the non-strict fall-back for a malformed header: a
// key-value line whose key is the literal text before the first colon.
func (d *decoder) literalField(ln *line, s string, off int, depth int32) (string, tree.Value, *SyntaxError) {
	colon, _ := firstUnquoted(s, ':', ':')
	if colon < 0 {
		return "", tree.Value{}, d.fail(ln, off+len(s), "missing ':' after key (expected 'key: value')")
	}
	key := trimSpaces(s[:colon])
	v, err := d.fieldValue(ln, s[colon+1:], off+colon+1, depth)
	if err != nil {
		return "", tree.Value{}, err.in(key)
	}
	return key, v, nil
}

// fieldValue decodes what follows "key:": a primitive, "[]", or nothing
// (a nested object at depth+1).
func (d *decoder) fieldValue(ln *line, rest string, off int, depth int32) (tree.Value, *SyntaxError) {
	sp := leadingSpaces(rest)
	v := trimSpaces(rest)
	switch v {
	case "":
		next, err := d.peek()
		if err != nil {
			return tree.Value{}, err
		}
		if next == nil || next.depth <= depth {
			return tree.Object(), nil
		}
		ob := objBuilder{start: len(d.mems)}
		if err := d.objectBody(&ob, depth+1); err != nil {
			return tree.Value{}, err
		}
		return d.finishObject(&ob), nil
	case "[]":
		return tree.Array(), nil
	}
	return d.primitive(ln, v, off+sp)
}

// primitive decodes one trimmed value token at offset off (§4).
func (d *decoder) primitive(ln *line, tok string, off int) (tree.Value, *SyntaxError) {
	if tok == "" {
		return tree.String(""), nil
	}
	switch c := tok[0]; {
	case c == '"':
		v, n, err := d.quotedValue(ln, tok, off)
		if err != nil {
			return tree.Value{}, err
		}
		if n != len(tok) {
			return tree.Value{}, d.fail(ln, off+n, "unexpected "+describe(tok[n:])+" after closing quote")
		}
		return v, nil
	case c == 't':
		if tok == "true" {
			return tree.Bool(true), nil
		}
	case c == 'f':
		if tok == "false" {
			return tree.Bool(false), nil
		}
	case c == 'n':
		if tok == "null" {
			return tree.Null(), nil
		}
	case c == '-' || c >= '0' && c <= '9':
		if tree.IsNumber(tok) {
			return tree.Number(tok), nil
		}
	}
	return tree.String(tok), nil
}

// quoted decodes the quoted key at the start of s (at offset off) and
// returns it with the index just past the closing quote (§7.1).
func (d *decoder) quoted(ln *line, s string, off int) (string, int, *SyntaxError) {
	return d.quotedOpt(ln, s, off, false)
}

// quotedValue decodes the quoted string value at the start of s (at offset
// off) and returns it with the index just past the closing quote (§7.1).
// Decoding leniently, it may hold UTF-16 surrogate escapes, as JSON strings
// may (strict decoding follows the spec, which rejects them): a pair is one
// character, and a lone surrogate is kept as its escape
// (tree.Value.Escaped), so TOON written from such JSON reads back the same.
func (d *decoder) quotedValue(ln *line, s string, off int) (tree.Value, int, *SyntaxError) {
	d.lone = false
	str, n, err := d.quotedOpt(ln, s, off, true)
	if err != nil || !d.lone {
		return tree.String(str), n, err
	}
	v, ok := tree.EscapedString(str)
	if !ok {
		return tree.Value{}, 0, d.fail(ln, off, "malformed surrogate escapes")
	}
	return v, n, nil
}

// quotedLone decodes again a quoted string value that holds a surrogate
// escape, into the escaped form of tree.Value.Str: backslashes and lone
// surrogate escapes stay escapes, surrogate pairs become the character,
// the rest is unescaped.
func (d *decoder) quotedLone(ln *line, s string, off int) (string, int, *SyntaxError) {
	d.lone = true
	var buf []byte
	for i := 1; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			return string(buf), i + 1, nil
		case c == '\\':
			if i+1 >= len(s) {
				return "", 0, d.fail(ln, off+i, "unterminated string")
			}
			switch e := s[i+1]; e {
			case '\\':
				buf = append(buf, '\\', '\\')
			case '"':
				buf = append(buf, '"')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					return "", 0, d.fail(ln, off+i, `invalid \u escape: expected four hex digits`)
				}
				if r < 0xD800 || r > 0xDFFF {
					buf = utf8.AppendRune(buf, r)
				} else if r2, ok := hex4(s, i+8); ok && r < 0xDC00 && s[i+6] == '\\' && s[i+7] == 'u' && r2 >= 0xDC00 && r2 <= 0xDFFF {
					buf = utf8.AppendRune(buf, utf16.DecodeRune(r, r2))
					i += 6
				} else {
					buf = append(buf, s[i:i+6]...) // lone: kept as written
				}
				i += 4
			default:
				return "", 0, d.fail(ln, off+i, "invalid escape "+strconv.Quote(s[i:i+2])+`; valid escapes are \\ \" \n \r \t \uXXXX`)
			}
			i += 2
		case c < 0x20 && c != '\t' && d.strict:
			return "", 0, d.fail(ln, off+i, "control character in quoted string; escape it")
		default:
			buf = append(buf, c)
			i++
		}
	}
	return "", 0, d.fail(ln, off, "unterminated string")
}

func (d *decoder) quotedOpt(ln *line, s string, off int, lone bool) (string, int, *SyntaxError) {
	i := 1
	for i < len(s) {
		c := s[i]
		if c == '"' {
			return s[1:i], i + 1, nil
		}
		if c == '\\' || c < 0x20 && c != '\t' {
			break
		}
		i++
	}
	// A long string is unescaped once into memory of its own, which the
	// result then shares.
	end := quoteEnd(s, i)
	own := end > 4<<10
	var buf []byte
	if own {
		buf = append(make([]byte, 0, end), s[1:i]...)
	} else {
		buf = append(d.buf[:0], s[1:i]...)
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			if own {
				return unsafe.String(unsafe.SliceData(buf), len(buf)), i + 1, nil
			}
			d.buf = buf
			return string(buf), i + 1, nil
		case c == '\\':
			if i+1 >= len(s) {
				return "", 0, d.fail(ln, off+i, "unterminated string")
			}
			switch e := s[i+1]; e {
			case '\\', '"':
				buf = append(buf, e)
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					return "", 0, d.fail(ln, off+i, `invalid \u escape: expected four hex digits`)
				}
				if r >= 0xD800 && r <= 0xDFFF {
					if lone && !d.strict {
						return d.quotedLone(ln, s, off)
					}
					return "", 0, d.fail(ln, off+i, `surrogate \u escape; write the character as UTF-8 (lenient decoding keeps a lone surrogate in a value as its escape)`)
				}
				buf = utf8.AppendRune(buf, r)
				i += 4
			default:
				return "", 0, d.fail(ln, off+i, "invalid escape "+strconv.Quote(s[i:i+2])+`; valid escapes are \\ \" \n \r \t \uXXXX`)
			}
			i += 2
		case c < 0x20 && c != '\t' && d.strict:
			return "", 0, d.fail(ln, off+i, "control character in quoted string; escape it")
		default:
			buf = append(buf, c)
			i++
		}
	}
	return "", 0, d.fail(ln, off, "unterminated string")
}

// quoteEnd returns the offset of the quote that ends the quoted string
// whose body contains s[i], or len(s).
func quoteEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case '"':
			return i
		case '\\':
			i += 2
		default:
			i++
		}
	}
	return len(s)
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// trimSpaces trims U+0020 only (§12).
func trimSpaces(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] == ' ' {
		i++
	}
	for j > i && s[j-1] == ' ' {
		j--
	}
	return s[i:j]
}

func leadingSpaces(s string) int {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// plural returns "1 row", "2 rows".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func describe(s string) string {
	if s == "" {
		return "end of line"
	}
	r, _ := utf8.DecodeRuneInString(s)
	return strconv.QuoteRune(r)
}
