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
