package tokens

import (
	"strings"
	"testing"
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
