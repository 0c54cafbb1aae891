package tree

import (
	"strings"
	"unicode/utf8"
)

// IsCompact reports whether s is exactly AppendJSON(nil, v), without
// writing v out: it compares as it walks, in memory bounded by a few
// kilobytes whatever the size of v. A document that was read as compact
// JSON need not be encoded a second time.
func IsCompact(s string, v Value) bool {
	c := compactMatch{src: s}
	return c.value(v) && c.pos == len(s)
}

type compactMatch struct {
	src string
	pos int
	buf []byte
}

func (c *compactMatch) lit(t string) bool {
	if !strings.HasPrefix(c.src[c.pos:], t) {
		return false
	}
	c.pos += len(t)
	return true
}

func (c *compactMatch) bytes(b []byte) bool {
	if len(c.src)-c.pos < len(b) || c.src[c.pos:c.pos+len(b)] != string(b) {
		return false
	}
	c.pos += len(b)
	return true
}

func (c *compactMatch) char(b byte) bool {
	if c.pos >= len(c.src) || c.src[c.pos] != b {
		return false
	}
	c.pos++
	return true
}

func (c *compactMatch) value(v Value) bool {
	switch v.kind() {
	case KindNull:
		return c.lit("null")
	case KindBool:
		if v.flag() {
			return c.lit("true")
		}
		return c.lit("false")
	case KindNumber:
		return c.lit(v.text())
	case KindString:
		if v.flag() {
			c.buf = appendEscaped(c.buf[:0], v.text())
			return c.bytes(c.buf)
		}
		return c.str(v.text())
	case KindArray:
		if !c.char('[') {
			return false
		}
		for i, x := range v.Items() {
			if i > 0 && !c.char(',') || !c.value(x) {
				return false
			}
		}
		return c.char(']')
	case KindObject:
		if !c.char('{') {
			return false
		}
		for i, m := range v.Members() {
			if i > 0 && !c.char(',') || !c.str(m.Key) || !c.char(':') || !c.value(m.Value) {
				return false
			}
		}
		return c.char('}')
	}
	return false
}

// str matches s as AppendString writes it, escaping it a piece at a time
// (pieces end on a rune boundary, so they escape as the whole does).
func (c *compactMatch) str(s string) bool {
	if !c.char('"') {
		return false
	}
	const piece = 4 << 10
	for len(s) > 0 {
		j := min(len(s), piece)
		for k := 0; k < utf8.UTFMax && j < len(s) && !utf8.RuneStart(s[j]); k++ {
			j--
		}
		c.buf = appendStringBody(c.buf[:0], s[:j])
		if !c.bytes(c.buf) {
			return false
		}
		s = s[j:]
	}
	return c.char('"')
}
