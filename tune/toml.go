package tune

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tomlWriter builds a config file.
type tomlWriter struct{ b strings.Builder }

func (w *tomlWriter) comment(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	for _, line := range strings.Split(s, "\n") {
		w.b.WriteString(strings.TrimRight("# "+line, " "))
		w.b.WriteByte('\n')
	}
}

func (w *tomlWriter) line(format string, args ...any) {
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

func (w *tomlWriter) blank() { w.b.WriteByte('\n') }

// quote returns s as a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// safeComment keeps a comment on one line.
func safeComment(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
