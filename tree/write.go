package tree

import (
	"strings"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendJSON appends v to dst as compact JSON: no insignificant whitespace,
// members in order, numbers as their literal text, and only the escapes
// JSON requires ('"', '\\' and control characters; no HTML escaping).
func AppendJSON(dst []byte, v Value) []byte {
	switch v.kind() {
	case KindNull:
		return append(dst, "null"...)
	case KindBool:
		if v.flag() {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case KindNumber:
		return append(dst, v.text()...)
	case KindString:
		if v.flag() {
			return appendEscaped(dst, v.text())
		}
		return AppendString(dst, v.text())
	case KindArray:
		dst = append(dst, '[')
		for i, x := range v.Items() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSON(dst, x)
		}
		return append(dst, ']')
	case KindObject:
		dst = append(dst, '{')
		for i, m := range v.Members() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, m.Key)
			dst = append(dst, ':')
			dst = AppendJSON(dst, m.Value)
		}
		return append(dst, '}')
	}
	return dst
}

// AppendIndent appends v as JSON with one member or item per line, each
// level indented by indent more than the last. The first line carries no
// prefix and there is no trailing newline.
func AppendIndent(dst []byte, v Value, indent string) []byte {
	return appendIndent(dst, v, indent, 0)
}

func appendIndent(dst []byte, v Value, indent string, depth int) []byte {
	newline := func(dst []byte, depth int) []byte {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, indent...)
		}
		return dst
	}
	switch v.kind() {
	case KindArray:
		if v.size() == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		for i, x := range v.Items() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, depth+1)
			dst = appendIndent(dst, x, indent, depth+1)
		}
		dst = newline(dst, depth)
		return append(dst, ']')
	case KindObject:
		if v.size() == 0 {
			return append(dst, "{}"...)
		}
		dst = append(dst, '{')
		for i, m := range v.Members() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, depth+1)
			dst = AppendString(dst, m.Key)
			dst = append(dst, ": "...)
			dst = appendIndent(dst, m.Value, indent, depth+1)
		}
		dst = newline(dst, depth)
		return append(dst, '}')
	}
	return AppendJSON(dst, v)
}

// AppendString appends s as a quoted JSON string. Invalid UTF-8 bytes are
// written as U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendStringBody(dst, s)
	return append(dst, '"')
}

// appendStringBody appends s escaped as AppendString escapes it, without
// the quotes.
func appendStringBody(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// appendEscaped appends the escaped form of a string holding lone
// surrogates (see Value.Str) as a quoted JSON string: its escapes are
// written as they are, everything else as AppendString writes it.
func appendEscaped(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 {
			break
		}
		n := 2 // an escaped backslash
		if i+1 < len(s) && s[i+1] == 'u' {
			n = 6
		}
		n = min(i+n, len(s))
		dst = appendStringBody(dst, s[:i])
		dst = append(dst, s[i:n]...)
		s = s[n:]
	}
	dst = appendStringBody(dst, s)
	return append(dst, '"')
}
