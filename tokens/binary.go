package tokens

import (
	"bytes"
	"unicode/utf8"
)

// Binary reports whether b is binary data rather than text: it is not
// valid UTF-8, or it holds a NUL byte, or more than one byte in 32 of it is
// a control character other than tab, line feed, carriage return, form feed
// or escape. Text a model reads is none of these; terse passes binary
// input through untouched (and says so) rather than rewriting it as text,
// since counting or re-encoding it would turn invalid bytes into U+FFFD.
func Binary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return true
	}
	ctl := 0
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b || c == 0x7f {
			ctl++
		}
	}
	return ctl*32 > len(b)
}
