package tokens

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBinary(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"", false},
		{`{"a":"é😀"}`, false},
		{"line\r\n\ttab\x1b[31mred\x1b[0m\f", false},
		{"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", true},
		{"text\x00", true},
		{"caf\xe9", true},
		{"\xed\xa0\xbd", true}, // a surrogate in UTF-8 form (WTF-8)
		{strings.Repeat("a", 31) + "\x01", false},
		{strings.Repeat("a", 30) + "\x01\x02", true},
	} {
		if got := Binary([]byte(c.in)); got != c.want {
			t.Errorf("Binary(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestControls checks the word-at-a-time count against a byte loop on
// every byte value at every position of a word.
func TestControls(t *testing.T) {
	slow := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b || c == 0x7f {
				n++
			}
		}
		return n
	}
	buf := []byte(strings.Repeat("abcdefgh", 3))
	for c := range 256 {
		for i := range buf {
			b := append([]byte(nil), buf...)
			b[i] = byte(c)
			if i > 0 {
				b[i-1] = byte(255 - c)
			}
			got, nul := controls(b)
			if want := slow(b); got != want || nul != (bytes.IndexByte(b, 0) >= 0) {
				t.Fatalf("controls(%q) = %d, %v, want %d", b, got, nul, want)
			}
		}
	}
}

// TestBinaryBlocks: Binary checks its input in blocks; a character or an
// invalid sequence across a block boundary is judged as in one piece.
func TestBinaryBlocks(t *testing.T) {
	for _, r := range []string{"é", "€", "😀", "\xe2\x82", "\xf0\x9f\x98", "\x80"} {
		for shift := range 6 {
			b := []byte(strings.Repeat("a", binaryBlock-3+shift) + r + strings.Repeat("b", 10))
			if got, want := Binary(b), !utf8.Valid(b); got != want {
				t.Errorf("Binary(%q at %d) = %v, want %v", r, binaryBlock-3+shift, got, want)
			}
		}
	}
	// Control characters are counted over the whole input.
	b := []byte(strings.Repeat("\x01"+strings.Repeat("a", 31), 3*binaryBlock/32))
	if !Binary(append(b, 1)) || Binary(append(b, 'a')) {
		t.Errorf("Binary: control characters over several blocks are not counted as a whole")
	}
}

// binaryByBytes is Binary written the plain way: the reference.
func binaryByBytes(b []byte) bool {
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

// FuzzBinary checks Binary against the byte-at-a-time reference.
func FuzzBinary(f *testing.F) {
	f.Add([]byte("line\r\n\ttab\x1b[31mred\x1b[0m\f"))
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	f.Add([]byte(strings.Repeat("a", 30) + "\x01\x02\x7f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Binary(b), binaryByBytes(b); got != want {
			t.Fatalf("Binary(%q) = %v, want %v", b, got, want)
		}
	})
}
