package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Configuration files belong to their users: an edit changes the bytes of
// the values it sets and nothing else (indentation, escapes such as
// \u2028, number spellings, member order and every other value stay as
// written). The functions here find values in a JSON text by their
// position and splice new text in; they expect valid JSON (parse it
// first) and say so with an error when they meet something else.

// jsonSpan is where a value is written in a JSON text: data[start:end].
type jsonSpan struct{ start, end int }

// jsonMember is one object member as written.
type jsonMember struct {
	key      string
	keyStart int // the opening quote of the key
	value    jsonSpan
}

// jsonRoot is the span of the whole document's value.
func jsonRoot(data []byte) (jsonSpan, error) {
	i := skipJSONSpace(data, 0)
	end, err := jsonValueEnd(data, i)
	return jsonSpan{i, end}, err
}

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// jsonValueEnd returns the end of the value that starts at data[i].
func jsonValueEnd(data []byte, i int) (int, error) {
	if i >= len(data) {
		return 0, errors.New("JSON ends where a value should start")
	}
	switch data[i] {
	case '"':
		return jsonStringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, err := jsonStringEnd(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("JSON ends inside a value")
	}
	j := i
	for j < len(data) && !strings.ContainsRune(",]} \t\r\n", rune(data[j])) {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("no JSON value at offset %d", i)
	}
	return j, nil
}

func jsonStringEnd(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("JSON ends inside a string")
}

// jsonMembers lists the members of the object written at s (none when s
// is not an object).
func jsonMembers(data []byte, s jsonSpan) ([]jsonMember, error) {
	if s.end-s.start < 2 || data[s.start] != '{' {
		return nil, nil
	}
	var ms []jsonMember
	i := skipJSONSpace(data, s.start+1)
	for i < s.end-1 {
		if data[i] != '"' {
			return nil, fmt.Errorf("unexpected %q at offset %d", data[i], i)
		}
		kend, err := jsonStringEnd(data, i)
		if err != nil {
			return nil, err
		}
		var key string
		if bytes.IndexByte(data[i:kend], '\\') < 0 {
			key = string(data[i+1 : kend-1])
		} else if err := json.Unmarshal(data[i:kend], &key); err != nil {
			return nil, err
		}
		j := skipJSONSpace(data, kend)
		if j >= len(data) || data[j] != ':' {
			return nil, fmt.Errorf("no ':' after key at offset %d", i)
		}
		j = skipJSONSpace(data, j+1)
		vend, err := jsonValueEnd(data, j)
		if err != nil {
			return nil, err
		}
		ms = append(ms, jsonMember{key: key, keyStart: i, value: jsonSpan{j, vend}})
		i = skipJSONSpace(data, vend)
		if i < len(data) && data[i] == ',' {
			i = skipJSONSpace(data, i+1)
		}
	}
	return ms, nil
}

// jsonGet returns the first member named key of the object at s.
func jsonGet(data []byte, s jsonSpan, key string) (jsonMember, bool, error) {
	ms, err := jsonMembers(data, s)
	for _, m := range ms {
		if m.key == key {
			return m, true, err
		}
	}
	return jsonMember{}, false, err
}

// jsonEdit is one splice: data[start:end] becomes text.
type jsonEdit struct {
	start, end int
	text       string
}

// applyEdits makes the splices, which must not overlap.
func applyEdits(data []byte, edits []jsonEdit) []byte {
	out := make([]byte, 0, len(data)+256)
	last := 0
	for _, e := range sortedEdits(edits) {
		out = append(out, data[last:e.start]...)
		out = append(out, e.text...)
		last = e.end
	}
	return append(out, data[last:]...)
}

func sortedEdits(edits []jsonEdit) []jsonEdit {
	s := append([]jsonEdit(nil), edits...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].start < s[j-1].start; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// lineIndent is the run of spaces and tabs that starts the line holding
// data[i].
func lineIndent(data []byte, i int) string {
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// jsonQuote writes s as a JSON string, leaving <, > and & as they are.
func jsonQuote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// writeList writes a list of already quoted items in the layout of old,
// the list it replaces: one item a line at old's item indentation when
// old spans lines and has items, else on one line, with ", " between
// items unless old (or, for a list of one, compact) says ",".
func writeList(items []string, old []byte, compact bool) string {
	if len(items) == 0 {
		return "[]"
	}
	nl := bytes.IndexByte(old, '\n')
	if nl >= 0 {
		first := skipJSONSpace(old, 1)
		if first < len(old)-1 && first > nl {
			indent := lineIndent(old, first)
			closing := lineIndent(old, len(old)-1)
			trailing := "" // TOML allows a comma after the last item; keep one
			if bytes.HasSuffix(bytes.TrimRight(old[:len(old)-1], " \t\r\n"), []byte(",")) {
				trailing = ","
			}
			return "[\n" + indent + strings.Join(items, ",\n"+indent) + trailing + "\n" + closing + "]"
		}
	}
	sep := ", "
	if bytes.Contains(old, []byte(",")) && !bytes.Contains(old, []byte(", ")) || compact && !bytes.Contains(old, []byte(", ")) {
		sep = ","
	}
	return "[" + strings.Join(items, sep) + "]"
}

// jsonSet sets the member at path (object keys from the root) to the
// JSON text value, keeping every other byte of data. Missing objects on
// the way are added. A value spanning lines is indented to where it goes.
// It is the edit behind setup, and for any tool that changes one setting
// of a user's JSON file.
func jsonSet(data []byte, path []string, value string) ([]byte, error) {
	if len(path) == 0 {
		return nil, errors.New("jsonSet: empty path")
	}
	s, err := jsonRoot(data)
	if err != nil {
		return nil, err
	}
	for i, key := range path {
		if data[s.start] != '{' {
			return nil, fmt.Errorf("%s is not an object", strings.Join(path[:i], "."))
		}
		m, ok, err := jsonGet(data, s, key)
		if err != nil {
			return nil, err
		}
		if ok {
			s = m.value
			continue
		}
		// Build what is missing from here on, innermost first.
		v := value
		for j := len(path) - 1; j > i; j-- {
			v = "{\n  " + jsonQuote(path[j]) + ": " + indentLines(v, "  ") + "\n}"
		}
		return jsonInsert(data, s, key, v)
	}
	indent := lineIndent(data, s.start)
	return applyEdits(data, []jsonEdit{{s.start, s.end, indentLines(value, indent)}}), nil
}

// indentLines prefixes every line of v but the first with indent.
func indentLines(v, indent string) string {
	return strings.ReplaceAll(v, "\n", "\n"+indent)
}

// jsonInsert adds the member key: value at the end of the object at s.
func jsonInsert(data []byte, s jsonSpan, key, value string) ([]byte, error) {
	ms, err := jsonMembers(data, s)
	if err != nil {
		return nil, err
	}
	multiline := bytes.IndexByte(data[s.start:s.end], '\n') >= 0
	if len(ms) == 0 {
		outer := lineIndent(data, s.start)
		inner := outer + "  "
		text := "{\n" + inner + jsonQuote(key) + ": " + indentLines(value, inner) + "\n" + outer + "}"
		return applyEdits(data, []jsonEdit{{s.start, s.end, text}}), nil
	}
	last := ms[len(ms)-1]
	var text string
	if multiline {
		indent := lineIndent(data, last.keyStart)
		text = ",\n" + indent + jsonQuote(key) + ": " + indentLines(value, indent)
	} else {
		text = ", " + jsonQuote(key) + ": " + value
	}
	return applyEdits(data, []jsonEdit{{last.value.end, last.value.end, text}}), nil
}
