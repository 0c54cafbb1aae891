package tree

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// DefaultMaxDepth is the nesting depth [Parse] accepts.
const DefaultMaxDepth = 512

// ParseOptions configure a parse. The zero value is ready to use.
type ParseOptions struct {
	// MaxDepth bounds how deeply arrays and objects may nest. Zero or
	// negative means DefaultMaxDepth.
	MaxDepth int

	// NoDuplicateKeys makes a key that repeats an earlier key of the same
	// object an error, at the repeated key, naming it. Members keep
	// duplicates otherwise; TOON, for one, cannot carry them.
	NoDuplicateKeys bool
}

// SyntaxError reports malformed JSON and where it is.
type SyntaxError struct {
	Offset int64  // byte offset of the error, 0-based
	Line   int    // 1-based line
	Column int    // 1-based column, in characters
	Msg    string // what is wrong, e.g. "expected ',' or '}' after object member"
}

func (e *SyntaxError) Error() string {
	return strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": " + e.Msg
}

// Parse parses one JSON value. Whitespace may surround it; anything else
// after it is an error.
func Parse(data []byte) (Value, error) { return ParseOptions{}.Parse(data) }

// ParseString is Parse on a string, without copying it.
func ParseString(s string) (Value, error) { return ParseOptions{}.ParseString(s) }

// ParseOwned is Parse without the copy: strings in the result share data's
// memory, so data must never be modified afterwards. It suits a caller that
// reads a document only to parse it.
func ParseOwned(data []byte) (Value, error) { return ParseOptions{}.ParseOwned(data) }

// ParseOwned is [ParseOwned] with these options.
func (o ParseOptions) ParseOwned(data []byte) (Value, error) {
	return o.ParseString(unsafe.String(unsafe.SliceData(data), len(data)))
}

// Parse parses one JSON value with these options.
func (o ParseOptions) Parse(data []byte) (Value, error) {
	// One copy of the input; every string without escapes is then a
	// substring of it, which saves an allocation per string.
	return o.ParseString(string(data))
}

// ParseString parses one JSON value from s with these options. Strings in
// the result may share memory with s.
func (o ParseOptions) ParseString(s string) (Value, error) {
	p := parser{src: s, maxDepth: o.MaxDepth, noDup: o.NoDuplicateKeys}
	if p.maxDepth <= 0 {
		p.maxDepth = DefaultMaxDepth
	}
	p.skipSpace()
	v := p.value()
	if p.err == nil {
		p.skipSpace()
		if p.pos < len(p.src) {
			p.fail(p.pos, "unexpected "+p.describe(p.pos)+" after top-level value")
		}
	}
	if p.err != nil {
		return Value{}, p.err
	}
	return v, nil
}

type parser struct {
	src      string
	pos      int
	depth    int
	maxDepth int
	err      *SyntaxError
	items    []Value  // scratch stack for array items
	mems     []Member // scratch stack for object members
	buf      []byte   // scratch for unescaping
	escaped  bool     // the last string holds lone surrogates, in escaped form
	noDup    bool     // a repeated key is an error

	// keys holds, while NoDuplicateKeys is on, a set of the keys of each
	// open object with many members, one after another: an object's set
	// is the last one whenever a key is added to it (its children have
	// closed), and is dropped as it closes.
	keys keyTable
}

// fail records the first error; parsing unwinds by checking p.err.
func (p *parser) fail(off int, msg string) {
	if p.err == nil {
		line, col := Position(p.src, off)
		p.err = &SyntaxError{Offset: int64(off), Line: line, Column: col, Msg: msg}
	}
}

// Position returns the 1-based line and character column of byte offset off
// in src.
func Position(src string, off int) (line, col int) {
	if off > len(src) {
		off = len(src)
	}
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, utf8.RuneCountInString(src[start:off]) + 1
}

func (p *parser) describe(off int) string {
	if off >= len(p.src) {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(p.src[off:])
	return strconv.QuoteRune(r)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() Value {
	if p.pos >= len(p.src) {
		p.fail(p.pos, "unexpected end of input, expected a value")
		return Value{}
	}
	switch c := p.src[p.pos]; c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		s := p.string()
		v := mkValue(KindString, unsafe.Pointer(unsafe.StringData(s)), len(s), p.escaped)
		p.escaped = false
		return v
	case 't':
		return p.literal("true", Bool(true))
	case 'f':
		return p.literal("false", Bool(false))
	case 'n':
		return p.literal("null", Value{})
	default:
		if c == '-' || isDigit(c) {
			start := p.pos
			end, ok := scanNumber(p.src, p.pos)
			if !ok {
				p.fail(end, "invalid number: unexpected "+p.describe(end))
				return Value{}
			}
			p.pos = end
			return strValue(KindNumber, p.src[start:end])
		}
		p.fail(p.pos, "unexpected "+p.describe(p.pos)+", expected a value")
		return Value{}
	}
}

func (p *parser) literal(word string, v Value) Value {
	if len(p.src)-p.pos >= len(word) && p.src[p.pos:p.pos+len(word)] == word {
		p.pos += len(word)
		return v
	}
	p.fail(p.pos, "invalid literal, expected "+word)
	return Value{}
}

func (p *parser) enter() bool {
	p.depth++
	if p.depth > p.maxDepth {
		p.fail(p.pos, fmt.Sprintf("nesting deeper than %d levels", p.maxDepth))
		return false
	}
	return true
}

func (p *parser) array() Value {
	if !p.enter() {
		return Value{}
	}
	p.pos++ // '['
	base := len(p.items)
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		p.depth--
		return arrayValue(nil)
	}
	for {
		p.skipSpace()
		v := p.value()
		if p.err != nil {
			return Value{}
		}
		p.items = append(p.items, v)
		p.skipSpace()
		if p.pos >= len(p.src) {
			p.fail(p.pos, "unexpected end of input, expected ',' or ']' in array")
			return Value{}
		}
		c := p.src[p.pos]
		p.pos++
		if c == ']' {
			break
		}
		if c != ',' {
			p.fail(p.pos-1, "unexpected "+p.describe(p.pos-1)+", expected ',' or ']' in array")
			return Value{}
		}
	}
	items := make([]Value, len(p.items)-base)
	copy(items, p.items[base:])
	p.items = p.items[:base]
	p.depth--
	return arrayValue(items)
}

func (p *parser) object() Value {
	if !p.enter() {
		return Value{}
	}
	p.pos++ // '{'
	base := len(p.mems)
	keys := -1 // where this object's set starts in p.keys, once it has one
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		p.depth--
		return objectValue(nil)
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			p.fail(p.pos, "unexpected "+p.describe(p.pos)+", expected a string key")
			return Value{}
		}
		keyAt := p.pos
		key := p.string()
		if p.escaped {
			p.escaped = false
			p.fail(keyAt, `lone UTF-16 surrogate \u escape in an object key (supported in string values only)`)
		}
		if p.noDup && p.err == nil && p.repeats(key, base, &keys) {
			p.fail(keyAt, "duplicate key "+strconv.Quote(key)+" in object")
		}
		if p.err != nil {
			return Value{}
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			p.fail(p.pos, "unexpected "+p.describe(p.pos)+", expected ':' after object key")
			return Value{}
		}
		p.pos++
		p.skipSpace()
		v := p.value()
		if p.err != nil {
			return Value{}
		}
		p.mems = append(p.mems, Member{Key: key, Value: v})
		p.skipSpace()
		if p.pos >= len(p.src) {
			p.fail(p.pos, "unexpected end of input, expected ',' or '}' in object")
			return Value{}
		}
		c := p.src[p.pos]
		p.pos++
		if c == '}' {
			break
		}
		if c != ',' {
			p.fail(p.pos-1, "unexpected "+p.describe(p.pos-1)+", expected ',' or '}' in object")
			return Value{}
		}
	}
	mems := make([]Member, len(p.mems)-base)
	copy(mems, p.mems[base:])
	p.mems = p.mems[:base]
	if keys >= 0 {
		p.keys.slots = p.keys.slots[:keys]
	}
	p.depth--
	return objectValue(mems)
}

// repeats reports whether key is one of the keys of the object being read
// (its members start at p.mems[base]); it then remembers key. A small
// object's keys are scanned; once there are many, they go in a set in
// p.keys starting at *keys.
func (p *parser) repeats(key string, base int, keys *int) bool {
	mems := p.mems[base:]
	if *keys < 0 {
		for _, m := range mems {
			if m.Key == key {
				return true
			}
		}
		if len(mems) < 8 {
			return false
		}
		*keys = len(p.keys.slots)
		p.keys.reset(*keys, 2*len(mems))
		for i, m := range mems {
			p.keys.add(*keys, mems, m.Key, i)
		}
	}
	return p.keys.add(*keys, mems, key, len(mems))
}

// strClass classifies bytes inside a string: 0 plain ASCII, 1 needs a look
// ('"', '\\', control), 2 starts a multi-byte UTF-8 sequence.
var strClass = func() (t [256]uint8) {
	for i := 0; i < 0x20; i++ {
		t[i] = 1
	}
	t['"'], t['\\'] = 1, 1
	for i := 0x80; i < 0x100; i++ {
		t[i] = 2
	}
	return t
}()

// string scans a string starting at the opening quote and returns its text.
func (p *parser) string() string {
	start := p.pos + 1
	i := start
	s := p.src
	for i < len(s) {
		c := s[i]
		switch strClass[c] {
		case 0:
			i++
			continue
		case 2:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				p.fail(i, "invalid UTF-8 in string")
				return ""
			}
			i += size
			continue
		}
		if c == '"' {
			p.pos = i + 1
			return s[start:i]
		}
		if c == '\\' {
			return p.stringEscaped(start, i)
		}
		p.fail(i, "invalid control character "+strconv.QuoteRune(rune(c))+" in string")
		return ""
	}
	p.fail(len(s), "unexpected end of input in string")
	return ""
}

// ownString is the length from which a string with escapes is unescaped
// into memory of its own.
const ownString = 4 << 10

// quoteEnd returns the offset of the quote that ends the string whose
// body contains s[i], or len(s).
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

// stringEscaped finishes a string that holds escapes; s[start:i] is already
// scanned and s[i] is the first backslash.
func (p *parser) stringEscaped(start, i int) string {
	s := p.src
	// A short string is unescaped into p.buf and copied out. A long one
	// is unescaped once into memory of its own, which the result then
	// shares: no growing, no second copy. It is found long, and its end
	// looked for, only once its text passes ownString bytes, so a short
	// string is scanned once.
	b := p.buf[:0]
	own := false
	for run := s[start:i]; ; {
		if !own && len(b)+len(run) > ownString {
			end := quoteEnd(s, i)
			nb := make([]byte, len(b), len(b)+len(run)+end-i)
			copy(nb, b)
			b, own = nb, true
		}
		b, run = append(b, run...), ""
		if i >= len(s) {
			break
		}
		c := s[i]
		if strClass[c] != 1 {
			// A run of characters that need no unescaping, appended at
			// once.
			j := p.plainRun(s, i)
			if j < 0 {
				return ""
			}
			run, i = s[i:j], j
			continue
		}
		switch c {
		case '"':
			p.pos = i + 1
			if own {
				return unsafe.String(unsafe.SliceData(b), len(b))
			}
			p.buf = b
			return string(b)
		case '\\':
			var st escapeStatus
			if b, i, st = p.appendEscape(b, s, i); st == escapeLone {
				return p.stringLone(start)
			} else if st == escapeBad {
				return ""
			}
		default:
			p.fail(i, "invalid control character "+strconv.QuoteRune(rune(c))+" in string")
			return ""
		}
	}
	p.fail(len(s), "unexpected end of input in string")
	return ""
}

// plainRun returns the end of the run of characters from s[i] that need
// no unescaping, or -1 (having failed) at invalid UTF-8.
func (p *parser) plainRun(s string, i int) int {
	j := i
	for j < len(s) {
		switch strClass[s[j]] {
		case 0:
			j++
			continue
		case 2:
			r, size := utf8.DecodeRuneInString(s[j:])
			if r == utf8.RuneError && size == 1 {
				p.fail(j, "invalid UTF-8 in string")
				return -1
			}
			j += size
			continue
		}
		break
	}
	return j
}

// escapeStatus is how an escape sequence read: appended, a lone UTF-16
// surrogate, or invalid (failed).
type escapeStatus uint8

const (
	escapeOK escapeStatus = iota
	escapeLone
	escapeBad
)

// appendEscape appends to b what the escape sequence at s[i] (a
// backslash) stands for, and returns the offset after it.
func (p *parser) appendEscape(b []byte, s string, i int) ([]byte, int, escapeStatus) {
	if i+1 >= len(s) {
		p.fail(len(s), "unexpected end of input in string escape")
		return b, i, escapeBad
	}
	e := s[i+1]
	switch e {
	case '"', '\\', '/':
		b = append(b, e)
	case 'b':
		b = append(b, '\b')
	case 'f':
		b = append(b, '\f')
	case 'n':
		b = append(b, '\n')
	case 'r':
		b = append(b, '\r')
	case 't':
		b = append(b, '\t')
	case 'u':
		r, ok := hex4(s, i+2)
		if !ok {
			p.fail(i, `invalid \u escape, expected four hex digits`)
			return b, i, escapeBad
		}
		i += 6
		if utf16.IsSurrogate(r) {
			r2, ok2 := rune(0), false
			if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
				r2, ok2 = hex4(s, i+2)
			}
			dec := utf16.DecodeRune(r, r2)
			if !ok2 || dec == utf8.RuneError {
				return b, i, escapeLone
			}
			r = dec
			i += 6
		}
		return utf8.AppendRune(b, r), i, escapeOK
	default:
		p.fail(i, "invalid escape "+strconv.Quote(s[i:i+2])+" in string")
		return b, i, escapeBad
	}
	return b, i + 2, escapeOK
}

// stringLone scans again, from start, a string that holds a lone UTF-16
// surrogate escape, and returns it in the escaped form Value.Str describes:
// lone surrogate escapes and backslashes kept as escapes, everything else
// unescaped. The string is already known to be well formed up to the lone
// surrogate; the rest is checked here.
func (p *parser) stringLone(start int) string {
	s := p.src
	var b []byte
	for i := start; i < len(s); {
		c := s[i]
		switch strClass[c] {
		case 0:
			b = append(b, c)
			i++
			continue
		case 2:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				p.fail(i, "invalid UTF-8 in string")
				return ""
			}
			b = append(b, s[i:i+size]...)
			i += size
			continue
		}
		switch c {
		case '"':
			p.pos = i + 1
			p.escaped = true
			return string(b)
		case '\\':
			if i+1 >= len(s) {
				p.fail(len(s), "unexpected end of input in string escape")
				return ""
			}
			e := s[i+1]
			switch e {
			case '\\':
				b = append(b, '\\', '\\')
			case '"', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					p.fail(i, `invalid \u escape, expected four hex digits`)
					return ""
				}
				if utf16.IsSurrogate(r) {
					if r2, ok2 := hex4(s, i+8); ok2 && i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							i += 12
							continue
						}
					}
					b = append(b, s[i:i+6]...) // lone: kept as written
				} else {
					b = utf8.AppendRune(b, r)
				}
				i += 6
				continue
			default:
				p.fail(i, "invalid escape "+strconv.Quote(s[i:i+2])+" in string")
				return ""
			}
			i += 2
		default:
			p.fail(i, "invalid control character "+strconv.QuoteRune(rune(c))+" in string")
			return ""
		}
	}
	p.fail(len(s), "unexpected end of input in string")
	return ""
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
