package render

import (
	"strings"

	"github.com/terse-dev/terse/tree"
)

// This file holds the lexical rules shared by the writer and the reader of
// the auto document: bare keys, bare scalars, and the "~" prefix sigil.

// isBareKey reports whether k can be written without quotes: it starts with
// a letter or '_' and holds only letters, digits, '_', '-', '.' and '$'.
func isBareKey(k string) bool {
	if k == "" || k == "true" || k == "false" || k == "null" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.' || c == '$'):
		default:
			return false
		}
	}
	return true
}

func appendKey(dst []byte, k string) []byte {
	if isBareKey(k) {
		return append(dst, k...)
	}
	return tree.AppendString(dst, k)
}

// isBareString reports whether a string's (already sigil-escaped) text can
// be written without quotes as a table cell (cell true) or as the rest of a
// key:value line (cell false). The reader types bare text as null, a
// boolean, a number, a reference or an inline JSON value first, so anything
// that could read as one of those is quoted.
func isBareString(s string, cell bool) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	switch s[0] {
	case '"', '{', '[', '`':
		return false
	}
	if s == "true" || s == "false" || s == "null" || tree.IsNumber(s) || isRef(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c == '"' || c == '\\' || (cell && c == ',') {
			return false
		}
	}
	return true
}

// isRef reports whether s is a legend reference: '@' and decimal digits.
func isRef(s string) bool {
	if len(s) < 2 || s[0] != '@' || s[1] == '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// escapeSigil escapes a string literal that starts with '~' by doubling
// the '~'. It is applied only in documents that declare prefixes.
func escapeSigil(s string) string {
	if strings.HasPrefix(s, "~") {
		return "~" + s
	}
	return s
}
