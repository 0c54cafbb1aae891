package tree

import (
	"strings"
	"unicode/utf8"
)

// JSONLen returns len(AppendJSON(nil, v)), computed without writing it,
// so a caller can size a value without serializing it.
func JSONLen(v Value) int {
	switch v.Kind() {
	case KindNull:
		return 4
	case KindBool:
		if v.Bool() {
			return 4
		}
		return 5
	case KindNumber:
		return len(v.Num())
	case KindString:
		if v.Escaped() {
			// Its escapes are written as they are: a backslash adds nothing.
			return stringLen(v.Str()) - strings.Count(v.Str(), `\`)
		}
		return stringLen(v.Str())
	case KindArray:
		items := v.Items()
		n := 2 + max(len(items)-1, 0)
		for _, x := range items {
			n += JSONLen(x)
		}
		return n
	case KindObject:
		mems := v.Members()
		n := 2 + max(len(mems)-1, 0)
		for _, m := range mems {
			n += stringLen(m.Key) + 1 + JSONLen(m.Value)
		}
		return n
	}
	return 0
}

// escExtra[c] is how many bytes AppendString adds to escape the
// ASCII byte c.
var escExtra = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = 5 // \u00XX
	}
	for _, c := range []byte{'"', '\\', '\n', '\r', '\t', '\b', '\f'} {
		t[c] = 1
	}
	return t
}()

// stringLen is the length of s as written by AppendString.
func stringLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		n += int(escExtra[s[i]])
	}
	if utf8.ValidString(s) {
		return n
	}
	// Each invalid byte becomes U+FFFD (3 bytes).
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += 2
		}
		i += size
	}
	return n
}
