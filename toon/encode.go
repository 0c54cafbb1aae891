package toon

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/terse-dev/terse/tree"
)

// The delimiters TOON supports (§11).
const (
	Comma byte = ','
	Tab   byte = '\t'
	Pipe  byte = '|'
)

// DefaultIndent is the number of spaces per indentation level when an
// options struct leaves it zero.
const DefaultIndent = 2

// EncodeOptions configure encoding. The zero value (and a nil pointer)
// gives the spec defaults: comma delimiter, two-space indentation,
// canonical numbers.
type EncodeOptions struct {
	// Delimiter is the document delimiter: [Comma] (also when zero),
	// [Tab] or [Pipe]. Every array header declares it, so it is also the
	// active delimiter everywhere in the output.
	Delimiter byte

	// IndentSize is the number of spaces per level; zero means
	// [DefaultIndent].
	IndentSize int

	// ExactNumbers writes each number's literal text as it is in the tree
	// ("1.50", "1E+3", "-0") instead of the canonical form of §2. Every
	// JSON number literal is a valid TOON number token, and [Unmarshal]
	// keeps the token text, so numbers then survive a round trip
	// byte for byte.
	ExactNumbers bool

	// KeepKeyOrder uses the tabular forms (§9.3, §9.5) only when every row
	// lists its keys in the same order, so that decoding gives back every
	// object's member order. By default, as the spec requires, rows whose
	// keys are the same set in another order are tabulated too, and decode
	// in the header's order.
	KeepKeyOrder bool
}

// Marshal returns the TOON encoding of v with default options.
func Marshal(v tree.Value) []byte {
	var dst []byte
	if !v.IsPrimitive() && v.Len() > 64 || len(v.Str()) > 4<<10 {
		// Size the output once (TOON is rarely longer than compact JSON)
		// rather than doubling through a large document, which holds
		// the old and new buffers at once.
		n := tree.JSONLen(v)
		dst = make([]byte, 0, n+n/8)
	}
	return Append(dst, v, nil)
}

// Append appends the TOON encoding of v to dst and returns the extended
// buffer. A nil opts means defaults. Append allocates nothing beyond the
// growth of dst in the common case, so it is cheap to call per subtree
// (for example to measure what a subtree costs as TOON).
//
// The output has LF line endings and no trailing newline; an empty object
// encodes to nothing.
func Append(dst []byte, v tree.Value, opts *EncodeOptions) []byte {
	e := getEncoder(opts)
	e.dst = dst
	e.encode(v)
	dst = e.dst
	putEncoder(e)
	return dst
}

// An Encoder writes TOON documents to an output stream. Large documents are
// written as they are produced, in chunks, rather than built whole in
// memory first.
type Encoder struct {
	w    io.Writer
	opts EncodeOptions
	n    int // documents written
}

// NewEncoder returns an encoder writing to w. A nil opts means defaults.
func NewEncoder(w io.Writer, opts *EncodeOptions) *Encoder {
	e := &Encoder{w: w}
	if opts != nil {
		e.opts = *opts
	}
	return e
}

// Encode writes the TOON encoding of v. Each document after the first is
// preceded by a newline so that successive documents stay on separate
// lines; nothing follows the last one.
func (enc *Encoder) Encode(v tree.Value) error {
	e := getEncoder(&enc.opts)
	defer putEncoder(e)
	e.w = enc.w
	e.dst = e.buf[:0]
	if enc.n > 0 {
		e.dst = append(e.dst, '\n')
	}
	e.encode(v)
	e.flush()
	e.buf = e.dst[:0]
	enc.n++
	return e.werr
}

// flushSize is how much output an Encoder buffers before writing.
const flushSize = 64 << 10

// encoder is the state of one encoding; it is pooled.
type encoder struct {
	dst     []byte
	start   int // len(dst) when encoding began
	delim   byte
	indent  int
	exact   bool
	ordered bool
	unsafe  *[256]bool

	fields []field // scratch: header field trees

	w    io.Writer // streaming target, or nil
	werr error
	buf  []byte // kept buffer for streaming
}

var encoderPool = sync.Pool{New: func() any { return new(encoder) }}

func getEncoder(opts *EncodeOptions) *encoder {
	e := encoderPool.Get().(*encoder)
	e.delim, e.indent, e.exact, e.ordered = Comma, DefaultIndent, false, false
	if opts != nil {
		if opts.Delimiter == Tab || opts.Delimiter == Pipe {
			e.delim = opts.Delimiter
		}
		if opts.IndentSize > 0 {
			e.indent = opts.IndentSize
		}
		e.exact, e.ordered = opts.ExactNumbers, opts.KeepKeyOrder
	}
	switch e.delim {
	case Tab:
		e.unsafe = &unsafeTab
	case Pipe:
		e.unsafe = &unsafePipe
	default:
		e.unsafe = &unsafeComma
	}
	return e
}

func putEncoder(e *encoder) {
	e.dst = nil
	e.w = nil
	e.werr = nil
	e.fields = e.fields[:0]
	if cap(e.buf) > 4*flushSize {
		e.buf = nil
	}
	encoderPool.Put(e)
}

func (e *encoder) flush() {
	if e.w != nil && e.werr == nil && len(e.dst) > 0 {
		_, e.werr = e.w.Write(e.dst)
	}
	e.dst = e.dst[:0]
	e.start = 0
}

// streamQuoted appends s quoted, as appendQuoted does, writing it out a
// piece at a time as it is escaped: a streaming encoder never holds a
// long string's escaped copy whole. Pieces end on a rune boundary, so
// they escape as the whole does.
func (e *encoder) streamQuoted(s string) {
	e.dst = append(e.dst, '"')
	for len(s) > 0 {
		j := min(len(s), flushSize)
		for k := 0; k < utf8.UTFMax && j < len(s) && !utf8.RuneStart(s[j]); k++ {
			j--
		}
		e.dst = appendQuotedBody(e.dst, s[:j])
		s = s[j:]
		if len(e.dst) >= flushSize {
			e.flush()
		}
	}
	// The closing quote stays buffered: the line goes on.
	e.dst = append(e.dst, '"')
}

// line starts a new line at depth (LF before every line but the first).
func (e *encoder) line(depth int) {
	if e.w != nil && len(e.dst) >= flushSize {
		e.flush()
		e.dst = append(e.dst, '\n')
	} else if len(e.dst) > e.start {
		e.dst = append(e.dst, '\n')
	}
	for n := depth * e.indent; n > 0; n-- {
		e.dst = append(e.dst, ' ')
	}
}

// item starts a list-item line "- " at depth.
func (e *encoder) item(depth int) {
	e.line(depth)
	e.dst = append(e.dst, '-', ' ')
}

func (e *encoder) encode(v tree.Value) {
	e.start = len(e.dst)
	if e.w != nil {
		// An Encoder's buffer may start with the document separator.
		e.start = 0
		if len(e.dst) == 1 {
			e.start = 1
		}
	}
	switch v.Kind() {
	case tree.KindArray:
		e.array(v, "", false, 0, false)
	case tree.KindObject:
		mems := v.Members()
		if len(mems) == 0 {
			return
		}
		if hdr, ok := e.keyedHeader(mems); ok {
			e.line(0)
			e.keyed(mems, hdr, "", false, 0)
			return
		}
		e.object(mems, 0)
	default:
		e.primitive(v)
	}
}

func (e *encoder) object(mems []tree.Member, depth int) {
	for _, m := range mems {
		e.line(depth)
		e.field(m.Key, m.Value, depth)
	}
}

// field writes one object field whose line has been started; depth is the
// field's depth (nested content goes one deeper).
func (e *encoder) field(key string, v tree.Value, depth int) {
	switch v.Kind() {
	case tree.KindArray:
		e.array(v, key, true, depth, true)
	case tree.KindObject:
		mems := v.Members()
		if len(mems) > 0 {
			if hdr, ok := e.keyedHeader(mems); ok {
				e.keyed(mems, hdr, key, true, depth)
				return
			}
		}
		e.key(key)
		e.dst = append(e.dst, ':')
		e.object(mems, depth+1)
	default:
		e.key(key)
		e.dst = append(e.dst, ':', ' ')
		e.primitive(v)
	}
}

// array writes an array with its header. The line is already started when
// started is true (object field or list item); the root starts its own.
func (e *encoder) array(v tree.Value, key string, hasKey bool, depth int, started bool) {
	items := v.Items()
	if !started {
		e.line(depth)
	}
	if len(items) == 0 {
		if hasKey {
			e.key(key)
			e.dst = append(e.dst, ':', ' ', '[', ']')
		} else if depth == 0 && !started {
			e.dst = append(e.dst, '[', ']')
		} else {
			e.dst = append(e.dst, '[', '0')
			e.delimSuffix()
			e.dst = append(e.dst, ']', ':')
		}
		return
	}
	allPrim := true
	for _, it := range items {
		if !it.IsPrimitive() {
			allPrim = false
			break
		}
	}
	if allPrim {
		e.header(key, hasKey, len(items), false, -1)
		e.dst = append(e.dst, ':', ' ')
		for i, it := range items {
			if i > 0 {
				e.dst = append(e.dst, e.delim)
			}
			e.primitive(it)
		}
		return
	}
	// Tabular form: keyed field, or the root. A keyless header with fields
	// is valid only at the root (§6).
	if hasKey || (depth == 0 && !started) {
		if hdr, ok := e.tabularHeader(items); ok {
			e.header(key, hasKey, len(items), false, hdr)
			e.dst = append(e.dst, ':')
			for _, it := range items {
				e.line(depth + 1)
				e.row(it.Members(), hdr)
			}
			e.fields = e.fields[:hdr]
			return
		}
	}
	e.header(key, hasKey, len(items), false, -1)
	e.dst = append(e.dst, ':')
	for _, it := range items {
		e.listItem(it, depth+1)
	}
}

// listItem writes one element of an expanded list at depth.
func (e *encoder) listItem(v tree.Value, depth int) {
	switch v.Kind() {
	case tree.KindArray:
		e.item(depth)
		e.array(v, "", false, depth, true)
	case tree.KindObject:
		mems := v.Members()
		if len(mems) == 0 {
			e.line(depth)
			e.dst = append(e.dst, '-')
			return
		}
		e.item(depth)
		e.field(mems[0].Key, mems[0].Value, depth+1)
		e.object(mems[1:], depth+1)
	default:
		e.item(depth)
		e.primitive(v)
	}
}

func (e *encoder) delimSuffix() {
	if e.delim != Comma {
		e.dst = append(e.dst, e.delim)
	}
}

// header writes key[N]{fields} (without the colon). hdr < 0 means no fields.
func (e *encoder) header(key string, hasKey bool, n int, keyed bool, hdr int) {
	if hasKey {
		e.key(key)
	}
	e.dst = append(e.dst, '[')
	e.dst = appendInt(e.dst, int64(n))
	if keyed {
		e.dst = append(e.dst, ':')
	}
	e.delimSuffix()
	e.dst = append(e.dst, ']')
	if hdr >= 0 {
		e.fieldList(hdr)
	}
}

func (e *encoder) fieldList(g int) {
	e.dst = append(e.dst, '{')
	f := e.fields[g]
	for i := range int(f.n) {
		if i > 0 {
			e.dst = append(e.dst, e.delim)
		}
		c := e.fields[int(f.kids)+i]
		e.key(c.key)
		if c.kids >= 0 {
			e.fieldList(int(f.kids) + i)
		}
	}
	e.dst = append(e.dst, '}')
}

// keyed writes an object in keyed tabular form (§9.5); the line is started.
func (e *encoder) keyed(mems []tree.Member, hdr int, key string, hasKey bool, depth int) {
	e.header(key, hasKey, len(mems), true, hdr)
	e.dst = append(e.dst, ':')
	for _, m := range mems {
		e.line(depth + 1)
		e.key(m.Key)
		e.dst = append(e.dst, ':', ' ')
		e.row(m.Value.Members(), hdr)
	}
	e.fields = e.fields[:hdr]
}

// row writes the leaf cells of one tabular row in header order.
func (e *encoder) row(mems []tree.Member, g int) {
	e.cells(mems, g, true)
}

func (e *encoder) cells(mems []tree.Member, g int, first bool) bool {
	f := e.fields[g]
	for i := range int(f.n) {
		c := e.fields[int(f.kids)+i]
		v := lookup(mems, c.key, i)
		if c.kids >= 0 {
			first = e.cells(v.Members(), int(f.kids)+i, first)
			continue
		}
		if !first {
			e.dst = append(e.dst, e.delim)
		}
		first = false
		e.primitive(v)
	}
	return first
}

// lookup finds key in mems, trying position hint first.
func lookup(mems []tree.Member, key string, hint int) tree.Value {
	if hint < len(mems) && mems[hint].Key == key {
		return mems[hint].Value
	}
	for _, m := range mems {
		if m.Key == key {
			return m.Value
		}
	}
	return tree.Value{}
}

func (e *encoder) primitive(v tree.Value) {
	switch v.Kind() {
	case tree.KindNull:
		e.dst = append(e.dst, "null"...)
	case tree.KindBool:
		if v.Bool() {
			e.dst = append(e.dst, "true"...)
		} else {
			e.dst = append(e.dst, "false"...)
		}
	case tree.KindNumber:
		if e.exact {
			e.dst = append(e.dst, v.Num()...)
		} else {
			e.dst = appendCanonicalNumber(e.dst, v.Num())
		}
	case tree.KindString:
		s := v.Str()
		if v.Escaped() {
			e.dst = appendQuotedEscaped(e.dst, s)
		} else if e.needsQuote(s) {
			if e.w != nil && len(s) > flushSize {
				e.streamQuoted(s)
			} else {
				e.dst = appendQuoted(e.dst, s)
			}
		} else {
			e.dst = append(e.dst, s...)
		}
	}
}

// key writes an object key, field name or entry key (§7.3).
func (e *encoder) key(k string) {
	if isIdentKey(k) {
		e.dst = append(e.dst, k...)
	} else {
		e.dst = appendQuoted(e.dst, k)
	}
}

// isIdentKey reports whether k matches ^[A-Za-z_][A-Za-z0-9_.]*$.
func isIdentKey(k string) bool {
	if k == "" {
		return false
	}
	if c := k[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
		return false
	}
	for i := 1; i < len(k); i++ {
		if !identChar[k[i]] {
			return false
		}
	}
	return true
}

var identChar = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t['_'], t['.'] = true, true
	return t
}()

// Bytes that force quoting anywhere in a string value (§7.2), per
// delimiter.
var unsafeComma, unsafeTab, unsafePipe = unsafeTable(Comma), unsafeTable(Tab), unsafeTable(Pipe)

func unsafeTable(delim byte) (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for _, c := range []byte(`:"\[]{}`) {
		t[c] = true
	}
	t[delim] = true
	return t
}

// needsQuote applies §7.2 with the document delimiter (which is also the
// active delimiter everywhere this encoder writes).
func (e *encoder) needsQuote(s string) bool {
	if s == "" {
		return true
	}
	switch s[0] {
	case ' ', '-', '#':
		return true
	case 't':
		if s == "true" {
			return true
		}
	case 'f':
		if s == "false" {
			return true
		}
	case 'n':
		if s == "null" {
			return true
		}
	case '+', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if isNumericLike(s) {
			return true
		}
	}
	if s[len(s)-1] == ' ' {
		return true
	}
	t := e.unsafe
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if t[c] {
			return true
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	// Invalid UTF-8 is written quoted, with U+FFFD for each bad byte.
	return !ascii && !utf8.ValidString(s)
}

// isNumericLike matches /^[+-]?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?$/i.
func isNumericLike(s string) bool {
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	j := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == j {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		j = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(s)
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a quoted TOON string with the escapes of §7.1.
// Invalid UTF-8 bytes become U+FFFD.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendQuotedEscaped appends a string holding lone UTF-16 surrogates, in
// the escaped form of tree.Value.Str, as a quoted TOON string: its escapes
// ("\\\\" and "\\uXXXX", which TOON shares with JSON) are written as they
// are, everything else as appendQuoted writes it.
func appendQuotedEscaped(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 {
			break
		}
		n := 2 // an escaped backslash
		if i+1 < len(s) && s[i+1] == 'u' {
			n = 6
		}
		n = min(i+n, len(s))
		dst = appendQuotedBody(dst, s[:i])
		dst = append(dst, s[i:n]...)
		s = s[n:]
	}
	dst = appendQuotedBody(dst, s)
	return append(dst, '"')
}

// appendQuotedBody appends s as appendQuoted does, without the quotes.
func appendQuotedBody(dst []byte, s string) []byte {
	n := len(dst)
	dst = appendQuoted(dst, s)
	copy(dst[n:], dst[n+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// field is one node of a tabular header's field tree, stored flat in
// encoder.fields: a group's children are contiguous, starting at kids.
type field struct {
	key  string
	kids int32 // index of the first child; -1 for a leaf field
	n    int32 // number of children
}

// tabularHeader reports whether items can be written in tabular form (§9.3)
// and, if so, returns the index of the header's field tree in e.fields.
func (e *encoder) tabularHeader(items []tree.Value) (int, bool) {
	for _, it := range items {
		if it.Kind() != tree.KindObject || it.Len() == 0 {
			return 0, false
		}
	}
	mark := len(e.fields)
	g, ok := e.group(items[0].Members())
	if ok {
		for _, it := range items[1:] {
			if !e.match(it.Members(), g) {
				ok = false
				break
			}
		}
	}
	if !ok {
		e.fields = e.fields[:mark]
	}
	return g, ok
}

// keyedHeader reports whether an object can be written in keyed tabular
// form (§9.5) and returns its header's field tree.
func (e *encoder) keyedHeader(mems []tree.Member) (int, bool) {
	if len(mems) < 2 {
		return 0, false
	}
	for _, m := range mems {
		if m.Value.Kind() != tree.KindObject || m.Value.Len() == 0 {
			return 0, false
		}
	}
	mark := len(e.fields)
	g, ok := e.group(mems[0].Value.Members())
	if ok {
		for _, m := range mems[1:] {
			if !e.match(m.Value.Members(), g) {
				ok = false
				break
			}
		}
	}
	if !ok {
		e.fields = e.fields[:mark]
	}
	return g, ok
}

// group builds the field tree of one row object: primitive members become
// leaf fields, non-empty objects nested field groups. Arrays, empty objects
// and duplicate keys make the shape ineligible.
func (e *encoder) group(mems []tree.Member) (int, bool) {
	if _, dup := tree.RepeatedKey(mems); dup {
		return 0, false
	}
	g := len(e.fields)
	e.fields = append(e.fields, field{kids: int32(g + 1), n: int32(len(mems))})
	for _, m := range mems {
		e.fields = append(e.fields, field{key: m.Key, kids: -1})
	}
	for i, m := range mems {
		switch m.Value.Kind() {
		case tree.KindArray:
			return g, false
		case tree.KindObject:
			sub := m.Value.Members()
			if len(sub) == 0 {
				return g, false
			}
			c, ok := e.group(sub)
			if !ok {
				return g, false
			}
			e.fields[g+1+i].kids = e.fields[c].kids
			e.fields[g+1+i].n = e.fields[c].n
		}
	}
	return g, true
}

// match reports whether an object has exactly the shape of group g.
func (e *encoder) match(mems []tree.Member, g int) bool {
	f := e.fields[g]
	if len(mems) != int(f.n) {
		return false
	}
	for i := range int(f.n) {
		c := e.fields[int(f.kids)+i]
		var v tree.Value
		if mems[i].Key == c.key {
			v = mems[i].Value
		} else {
			if e.ordered {
				return false
			}
			found := false
			for _, m := range mems {
				if m.Key == c.key {
					v, found = m.Value, true
					break
				}
			}
			if !found {
				return false
			}
		}
		if c.kids < 0 {
			if !v.IsPrimitive() {
				return false
			}
			continue
		}
		if v.Kind() != tree.KindObject || !e.match(v.Members(), int(f.kids)+i) {
			return false
		}
	}
	return true
}
