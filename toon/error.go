package toon

import (
	"strconv"
	"strings"

	"github.com/terse-dev/terse/tree"
)

// SyntaxError reports input that is not valid TOON (in the decoder's mode)
// and where it is.
type SyntaxError struct {
	Line   int // 1-based line of the input
	Column int // 1-based column, in characters

	// Pointer is the RFC 6901 JSON Pointer of the value being decoded
	// when the error was found ("" for the root). It is built only when
	// an error is returned, so successful decoding pays nothing for it.
	Pointer tree.Pointer

	// Msg says what is wrong and, where it helps, what was expected.
	Msg string

	lineAt int // 1 + offset of the line's start, until Line is counted
}

// Error returns "LINE:COL: message" on one line.
func (e *SyntaxError) Error() string {
	return strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": " + e.Msg
}

// in prefixes the error's pointer with one reference token, as the error
// unwinds out of the container holding it.
func (e *SyntaxError) in(tok string) *SyntaxError {
	tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
	e.Pointer = tree.Pointer("/"+tok) + e.Pointer
	return e
}

func (e *SyntaxError) at(i int) *SyntaxError { return e.in(strconv.Itoa(i)) }

// UnrepresentableError reports a value that spec TOON cannot carry: an
// object with a repeated key (strict decoding rejects it, lenient decoding
// keeps only the last) or a string holding a lone UTF-16 surrogate (strict
// decoding rejects its escape).
type UnrepresentableError struct {
	Pointer tree.Pointer // where: the object, or the string
	Key     string       // the repeated key; "" for a lone surrogate
	Msg     string
}

func (e *UnrepresentableError) Error() string {
	where := string(e.Pointer)
	if where == "" {
		where = "the root"
	}
	return where + ": " + e.Msg
}

// Representable returns nil if Marshal(v) decodes strictly back to v, or
// an *UnrepresentableError naming the first value (in document order) that
// TOON cannot carry: a repeated object key or a lone surrogate. Callers
// that must not lose data check it before encoding; to point at the
// repeat in JSON source instead, parse with tree.ParseOptions.NoDuplicateKeys.
func Representable(v tree.Value) error {
	if err := unrepresentable(v); err != nil {
		return err
	}
	return nil
}

// unrepresentable is Representable's walk. It builds no pointers: the
// error's pointer is built as it unwinds, so a representable tree costs
// one pass over its values and no allocation (a
// pointer string per value was most of the cost of terse encode).
func unrepresentable(v tree.Value) *UnrepresentableError {
	switch v.Kind() {
	case tree.KindString:
		if v.Escaped() {
			return &UnrepresentableError{Msg: "string holds a lone UTF-16 surrogate escape, which TOON cannot carry"}
		}
	case tree.KindArray:
		for i, x := range v.Items() {
			if x.Kind() < tree.KindString {
				continue // null, bool, number
			}
			if err := unrepresentable(x); err != nil {
				return err.in(tree.Pointer("").Index(i))
			}
		}
	case tree.KindObject:
		mems := v.Members()
		if i, ok := tree.RepeatedKey(mems); ok {
			key := mems[i].Key
			return &UnrepresentableError{Key: key,
				Msg: "duplicate key " + strconv.Quote(key) + ", which TOON cannot carry"}
		}
		for _, m := range mems {
			if m.Value.Kind() < tree.KindString {
				continue
			}
			if err := unrepresentable(m.Value); err != nil {
				return err.in(tree.Pointer("").Key(m.Key))
			}
		}
	}
	return nil
}

// in prefixes the error's pointer with the pointer of one step (an index
// or a key) as the error unwinds out of the container holding the value.
func (e *UnrepresentableError) in(step tree.Pointer) *UnrepresentableError {
	e.Pointer = step + e.Pointer
	return e
}
