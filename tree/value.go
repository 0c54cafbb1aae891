// Package tree is the ordered JSON value model every terse stage shares.
//
// A [Value] is an immutable JSON value. Unlike decoding into
// map[string]any, it keeps what a faithful re-encoding needs:
//
//   - object members stay in source order, duplicates included;
//   - numbers keep their literal text exactly ("1.50" stays "1.50",
//     "1e400" stays "1e400"), so no value is rounded on the way through;
//   - strings are validated UTF-8; a string holding lone UTF-16 surrogate
//     escapes ("\ud83d", which JSON allows and JavaScript writes for a cut
//     emoji) keeps them as escape text (see [Value.Escaped]), so it is
//     re-emitted as the same escapes and never as invalid UTF-8.
//
// [Parse] reads JSON with its own scanner, bounds nesting depth so hostile
// input cannot exhaust the stack, and reports errors as a [*SyntaxError] with
// byte offset, line and column. [AppendJSON] writes compact JSON, [Lookup]
// resolves RFC 6901 JSON Pointers and [Walk] visits every node.
//
// # Ownership
//
// Values share their backing slices: the slices returned by [Value.Items] and
// [Value.Members] must not be modified. Build new values with [Array] and
// [Object] instead. Values are safe for concurrent reads.
package tree

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Kind is the JSON type of a [Value].
type Kind uint8

// The JSON kinds. The zero Value is Null.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

var kindNames = [...]string{"null", "bool", "number", "string", "array", "object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one JSON value. The zero Value is JSON null.
//
// A Value is two words: p and the length in h describe the string text or
// number literal (as unsafe.String), the array items or the object members
// (as unsafe.Slice); h also holds the kind and a flag (true, or a string's
// lone surrogates). Keeping it small matters: trees of real tool output
// hold millions of values and every copy moves them.
type Value struct {
	p unsafe.Pointer
	h uint64 // length | kind << kindShift | flag
}

const (
	kindShift = 56
	flagBit   = 1 << 60
	lenMask   = 1<<kindShift - 1
)

func mkValue(k Kind, p unsafe.Pointer, n int, flag bool) Value {
	h := uint64(n) | uint64(k)<<kindShift
	if flag {
		h |= flagBit
	}
	return Value{p: p, h: h}
}

func strValue(k Kind, s string) Value {
	return mkValue(k, unsafe.Pointer(unsafe.StringData(s)), len(s), false)
}

func arrayValue(items []Value) Value {
	return mkValue(KindArray, unsafe.Pointer(unsafe.SliceData(items)), len(items), false)
}

func objectValue(mems []Member) Value {
	return mkValue(KindObject, unsafe.Pointer(unsafe.SliceData(mems)), len(mems), false)
}

func (v Value) kind() Kind { return Kind(v.h >> kindShift & 0xf) }
func (v Value) size() int  { return int(v.h & lenMask) }
func (v Value) flag() bool { return v.h&flagBit != 0 }

// text returns the string text or number literal.
func (v Value) text() string { return unsafe.String((*byte)(v.p), v.size()) }

// Member is one object member: a key and its value.
type Member struct {
	Key   string
	Value Value
}

// Null returns JSON null (the same as the zero Value).
func Null() Value { return Value{} }

// Bool returns true or false.
func Bool(b bool) Value { return mkValue(KindBool, nil, 0, b) }

// String returns a JSON string. s should be valid UTF-8; invalid bytes
// are written as U+FFFD by [AppendJSON].
func String(s string) Value { return strValue(KindString, s) }

// Number returns a number with the literal text lit, which must match
// the JSON number grammar (RFC 8259 §6); it panics otherwise, as that is a
// programming error. Use [IsNumber] to check text first.
func Number(lit string) Value {
	if !IsNumber(lit) {
		panic("tree: invalid JSON number literal " + strconv.Quote(lit))
	}
	return strValue(KindNumber, lit)
}

// Int returns the number i.
func Int(i int64) Value { return strValue(KindNumber, strconv.FormatInt(i, 10)) }

// Float returns the number f in the shortest form that parses back to
// f. NaN and infinities have no JSON form and become null.
func Float(f float64) Value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}
	}
	return strValue(KindNumber, strconv.FormatFloat(f, 'g', -1, 64))
}

// Array returns an array of items. The slice is kept, not copied.
func Array(items ...Value) Value {
	return arrayValue(items)
}

// Object returns an object with members in the given order. The slice is
// kept, not copied.
func Object(members ...Member) Value {
	return objectValue(members)
}

// Kind reports the value's JSON type.
func (v Value) Kind() Kind { return v.kind() }

// IsNull reports whether v is JSON null.
func (v Value) IsNull() bool { return v.kind() == KindNull }

// Bool returns the value of a boolean, false for other kinds.
func (v Value) Bool() bool { return v.kind() == KindBool && v.flag() }

// Str returns the text of a string, "" for other kinds.
//
// For a string that holds lone UTF-16 surrogates ([Value.Escaped] reports
// true) the text is its escaped form: valid UTF-8 in which a backslash only
// starts "\\" (one backslash) or a "\uXXXX" lone surrogate escape, as the
// source wrote it. That is also what a model reads, so it is what is
// counted.
func (v Value) Str() string {
	if v.kind() == KindString {
		return v.text()
	}
	return ""
}

// Escaped reports whether v is a string holding lone UTF-16 surrogates,
// whose [Value.Str] is in escaped form.
func (v Value) Escaped() bool { return v.kind() == KindString && v.flag() }

// EscapedString returns a string holding lone UTF-16 surrogates, given in
// the escaped form [Value.Str] describes. If s holds no lone surrogate
// escape it is unescaped and returned as a plain [String]. It returns false
// if s is not in that form.
func EscapedString(s string) (Value, bool) {
	plain, lone, ok := unescapeLone(s)
	if !ok {
		return Value{}, false
	}
	if !lone {
		return String(plain), true
	}
	return mkValue(KindString, unsafe.Pointer(unsafe.StringData(s)), len(s), true), true
}

// unescapeLone checks the escaped form s and returns it unescaped when it
// holds no lone surrogate escape (lone false).
func unescapeLone(s string) (plain string, lone, ok bool) {
	if !utf8.ValidString(s) {
		return "", false, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			i++
			continue
		}
		if r, ok := hex4(s, i+2); ok && s[i+1] == 'u' && utf16.IsSurrogate(r) {
			if r2, ok := hex4(s, i+8); ok && r < 0xDC00 && s[i+6] == '\\' && s[i+7] == 'u' && r2 >= 0xDC00 && r2 <= 0xDFFF {
				return "", false, false // a pair, which is written as UTF-8
			}
			lone = true
			i += 5
			continue
		}
		return "", false, false
	}
	if lone {
		return "", true, true
	}
	return strings.ReplaceAll(s, `\\`, `\`), false, true
}

// Num returns the literal text of a number, "" for other kinds.
func (v Value) Num() string {
	if v.kind() == KindNumber {
		return v.text()
	}
	return ""
}

// Float returns a number as float64 (rounded to nearest, ±Inf when out of
// range, with an error).
func (v Value) Float() (float64, error) {
	return strconv.ParseFloat(v.Num(), 64)
}

// Int returns a number as int64, with an error when it is not an integer
// literal that fits.
func (v Value) Int() (int64, error) {
	return strconv.ParseInt(v.Num(), 10, 64)
}

// Len returns the number of items of an array or members of an object, 0
// otherwise.
func (v Value) Len() int {
	if v.kind() >= KindArray {
		return v.size()
	}
	return 0
}

// Items returns the items of an array (nil for other kinds). The slice must
// not be modified.
func (v Value) Items() []Value {
	if v.kind() != KindArray {
		return nil
	}
	return unsafe.Slice((*Value)(v.p), v.size())
}

// Members returns the members of an object in order (nil for other kinds).
// The slice must not be modified.
func (v Value) Members() []Member {
	if v.kind() != KindObject {
		return nil
	}
	return unsafe.Slice((*Member)(v.p), v.size())
}

// Index returns item i of an array, or null when out of range.
func (v Value) Index(i int) Value {
	if v.kind() != KindArray || i < 0 || i >= v.size() {
		return Value{}
	}
	return v.Items()[i]
}

// Get returns the value of the first member named key.
func (v Value) Get(key string) (Value, bool) {
	mems := v.Members()
	for i := range mems {
		if mems[i].Key == key {
			return mems[i].Value, true
		}
	}
	return Value{}, false
}

// Has reports whether an object has a member named key.
func (v Value) Has(key string) bool {
	_, ok := v.Get(key)
	return ok
}

// IsPrimitive reports whether v is null, a boolean, a number or a string.
func (v Value) IsPrimitive() bool { return v.kind() < KindArray }

// String returns v as compact JSON, for debugging and %v.
func (v Value) String() string { return string(AppendJSON(nil, v)) }

// MarshalJSON implements json.Marshaler: compact JSON, order and number text
// kept.
func (v Value) MarshalJSON() ([]byte, error) { return AppendJSON(nil, v), nil }

// UnmarshalJSON implements json.Unmarshaler with [Parse].
func (v *Value) UnmarshalJSON(data []byte) error {
	x, err := Parse(data)
	if err != nil {
		return err
	}
	*v = x
	return nil
}

// Equal reports whether a and b are the same ordered tree: same kinds, same
// member keys in the same order, same string text and the same number
// literal text.
func Equal(a, b Value) bool {
	if a.kind() != b.kind() {
		return false
	}
	switch a.kind() {
	case KindNull:
		return true
	case KindBool:
		return a.flag() == b.flag()
	case KindNumber, KindString:
		return a.text() == b.text() && a.flag() == b.flag()
	case KindArray:
		ai, bi := a.Items(), b.Items()
		if len(ai) != len(bi) {
			return false
		}
		for i := range ai {
			if !Equal(ai[i], bi[i]) {
				return false
			}
		}
		return true
	case KindObject:
		am, bm := a.Members(), b.Members()
		if len(am) != len(bm) {
			return false
		}
		for i := range am {
			if am[i].Key != bm[i].Key || !Equal(am[i].Value, bm[i].Value) {
				return false
			}
		}
		return true
	}
	return false
}

// IsNumber reports whether s matches the JSON number grammar.
func IsNumber(s string) bool {
	n, ok := scanNumber(s, 0)
	return ok && n == len(s)
}

// scanNumber scans a JSON number starting at s[i] and returns the index just
// past it.
func scanNumber(s string, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return i, false
	}
	switch c := s[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return i, false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return i, false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
