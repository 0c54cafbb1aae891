package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A TOML file is edited the way a JSON one is (jsonedit.go): the values
// setup changes are found where they are written and replaced in place,
// so comments (on the same line too), layout and every other value stay.
// The scanner knows every way TOML lets one write a key: table headers
// ([mcp_servers.x], with bare, "basic" or 'literal' names), dotted keys
// (mcp_servers.x.command = …) and inline tables (x = { command = … }).
// It expects a document the TOML decoder accepted.

// tomlEntry is one key/value pair as written.
type tomlEntry struct {
	path       []string // the full key: table, then the dotted key
	keyStart   int      // where the key is written
	lastKey    int      // where its last part starts
	value      jsonSpan // the value as written
	inline     bool     // inside an inline table
	lineEnd    int      // after the newline ending the value's line (not inline)
	lineIndent string   // the indentation of the key's line
}

// tomlEntries lists the key/value pairs of a TOML document in order,
// those inside inline tables included (after the table itself).
func tomlEntries(data []byte) ([]tomlEntry, error) {
	s := &tomlScanner{data: data}
	var table []string
	for s.i < len(data) {
		s.skipSpace()
		if s.i >= len(data) {
			break
		}
		switch c := data[s.i]; {
		case c == '\n' || c == '\r':
			s.i++
		case c == '#':
			s.skipLine()
		case c == '[':
			array := strings.HasPrefix(string(data[s.i:min(len(data), s.i+2)]), "[[")
			if array {
				s.i += 2
			} else {
				s.i++
			}
			key, _, err := s.key()
			if err != nil {
				return nil, err
			}
			s.skipSpace()
			closing := "]"
			if array {
				closing = "]]"
				key = append(key, "[]") // a table in an array: never a server
			}
			if !strings.HasPrefix(string(data[s.i:min(len(data), s.i+len(closing))]), closing) {
				return nil, fmt.Errorf("offset %d: table header not closed", s.i)
			}
			s.i += len(closing)
			table = key
			s.skipLine()
		default:
			if err := s.keyValue(table, false); err != nil {
				return nil, err
			}
			s.skipLine()
			s.entries[s.last].lineEnd = s.i
		}
	}
	return s.entries, nil
}

type tomlScanner struct {
	data    []byte
	i       int
	entries []tomlEntry
	last    int // the last top-level entry, whose line end is filled in
}

func (s *tomlScanner) skipSpace() {
	for s.i < len(s.data) && (s.data[s.i] == ' ' || s.data[s.i] == '\t') {
		s.i++
	}
}

// skipLine moves past the rest of the line (a comment, the newline).
func (s *tomlScanner) skipLine() {
	for s.i < len(s.data) && s.data[s.i] != '\n' {
		s.i++
	}
	if s.i < len(s.data) {
		s.i++
	}
}

// skipBlank moves past spaces, newlines and comments (inside arrays).
func (s *tomlScanner) skipBlank() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		case '#':
			for s.i < len(s.data) && s.data[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

// key reads a dotted key; lastStart is where its last part begins.
func (s *tomlScanner) key() (parts []string, lastStart int, err error) {
	for {
		s.skipSpace()
		if s.i >= len(s.data) {
			return nil, 0, errors.New("TOML ends inside a key")
		}
		lastStart = s.i
		switch s.data[s.i] {
		case '"':
			end, err := s.basicStringEnd(s.i)
			if err != nil {
				return nil, 0, err
			}
			part, err := strconv.Unquote(string(s.data[s.i:end]))
			if err != nil {
				part = string(s.data[s.i+1 : end-1])
			}
			parts = append(parts, part)
			s.i = end
		case '\'':
			end := strings.IndexByte(string(s.data[s.i+1:]), '\'')
			if end < 0 {
				return nil, 0, errors.New("TOML ends inside a key")
			}
			parts = append(parts, string(s.data[s.i+1:s.i+1+end]))
			s.i += end + 2
		default:
			start := s.i
			for s.i < len(s.data) && isBareKeyByte(s.data[s.i]) {
				s.i++
			}
			if s.i == start {
				return nil, 0, fmt.Errorf("offset %d: no key", start)
			}
			parts = append(parts, string(s.data[start:s.i]))
		}
		s.skipSpace()
		if s.i < len(s.data) && s.data[s.i] == '.' {
			s.i++
			continue
		}
		return parts, lastStart, nil
	}
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// keyValue reads "key = value" within table (prefix of the full key).
func (s *tomlScanner) keyValue(table []string, inline bool) error {
	keyStart := s.i
	indent := lineIndent(s.data, keyStart)
	key, lastStart, err := s.key()
	if err != nil {
		return err
	}
	if s.i >= len(s.data) || s.data[s.i] != '=' {
		return fmt.Errorf("offset %d: no '=' after key", s.i)
	}
	s.i++
	s.skipSpace()
	path := append(append([]string(nil), table...), key...)
	n := len(s.entries)
	s.entries = append(s.entries, tomlEntry{path: path, keyStart: keyStart, lastKey: lastStart, inline: inline, lineIndent: indent})
	if !inline {
		s.last = n
	}
	start := s.i
	if err := s.value(path); err != nil {
		return err
	}
	s.entries[n].value = jsonSpan{start, s.i}
	return nil
}

// value moves past one value; inline tables add their entries under path.
func (s *tomlScanner) value(path []string) error {
	if s.i >= len(s.data) {
		return errors.New("TOML ends where a value should start")
	}
	d := s.data
	switch {
	case strings.HasPrefix(string(d[s.i:min(len(d), s.i+3)]), `"""`):
		return s.multiline(`"""`, true)
	case strings.HasPrefix(string(d[s.i:min(len(d), s.i+3)]), `'''`):
		return s.multiline(`'''`, false)
	case d[s.i] == '"':
		end, err := s.basicStringEnd(s.i)
		s.i = end
		return err
	case d[s.i] == '\'':
		end := strings.IndexByte(string(d[s.i+1:]), '\'')
		if end < 0 {
			return errors.New("TOML ends inside a string")
		}
		s.i += end + 2
		return nil
	case d[s.i] == '[':
		s.i++
		for {
			s.skipBlank()
			if s.i >= len(d) {
				return errors.New("TOML ends inside an array")
			}
			if d[s.i] == ']' {
				s.i++
				return nil
			}
			if err := s.value(nil); err != nil {
				return err
			}
			s.skipBlank()
			if s.i < len(d) && d[s.i] == ',' {
				s.i++
			}
		}
	case d[s.i] == '{':
		s.i++
		for {
			s.skipBlank()
			if s.i >= len(d) {
				return errors.New("TOML ends inside an inline table")
			}
			if d[s.i] == '}' {
				s.i++
				return nil
			}
			if err := s.keyValue(path, true); err != nil {
				return err
			}
			s.skipBlank()
			if s.i < len(d) && d[s.i] == ',' {
				s.i++
			}
		}
	}
	start := s.i
	for s.i < len(d) && !strings.ContainsRune(",]}#\r\n", rune(d[s.i])) {
		s.i++
	}
	for s.i > start && (d[s.i-1] == ' ' || d[s.i-1] == '\t') {
		s.i--
	}
	if s.i == start {
		return fmt.Errorf("offset %d: no value", start)
	}
	return nil
}

// basicStringEnd returns the end of the "…" string starting at i.
func (s *tomlScanner) basicStringEnd(i int) (int, error) {
	for j := i + 1; j < len(s.data); j++ {
		switch s.data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		case '\n':
			return 0, errors.New("newline in a string")
		}
	}
	return 0, errors.New("TOML ends inside a string")
}

// multiline moves past a """…""" or ”'…”' string (up to two more
// quotes may end it).
func (s *tomlScanner) multiline(delim string, escapes bool) error {
	for j := s.i + 3; j < len(s.data); j++ {
		if escapes && s.data[j] == '\\' {
			j++
			continue
		}
		if strings.HasPrefix(string(s.data[j:min(len(s.data), j+3)]), delim) {
			end := j + 3
			for k := 0; k < 2 && end < len(s.data) && s.data[end] == delim[0]; k++ {
				end++
			}
			s.i = end
			return nil
		}
	}
	return errors.New("TOML ends inside a string")
}

// tomlFind returns the entry whose full key is path.
func tomlFind(entries []tomlEntry, path ...string) (tomlEntry, bool) {
	for _, e := range entries {
		if slicesEqual(e.path, path) {
			return e, true
		}
	}
	return tomlEntry{}, false
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
