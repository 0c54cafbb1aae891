package terse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tree"
)

// A text result that is nothing but JSON documents (two or more objects
// or arrays, one after the other or one per line, as a shell command
// running several "gh api" or "curl" calls prints them) is written, under
// the auto format, as each document's auto encoding after a line naming
// it:
//
//	> [JSON document 1 of 3]
//	…
//	> [JSON document 2 of 3]
//	…
//
// Each document decodes (render.Decode) to the value it was encoded from;
// the whitespace between and inside the documents is not kept, as for any
// JSON result. [DecodeJSONDocuments] reads such a text back.

// maxJSONDocs bounds the documents of one text.
const maxJSONDocs = 1000

// docLine is the line before document k of n.
func docLine(k, n int) string {
	return inband.JSONDoc{K: k, N: n}.String()
}

// splitJSONDocs returns the documents of text when it holds only two or
// more JSON objects or arrays, separated by nothing but whitespace.
func splitJSONDocs(text string) ([]tree.Value, bool) {
	t := strings.TrimLeft(text, " \t\r\n")
	if t == "" || t[0] != '{' && t[0] != '[' {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(text))
	var docs []tree.Value
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		if err != nil || len(docs) == maxJSONDocs {
			return nil, false
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' && raw[0] != '[' {
			return nil, false
		}
		v, err := tree.Parse(raw)
		if err != nil {
			return nil, false
		}
		docs = append(docs, v)
	}
	return docs, len(docs) >= 2
}

// encodeJSONDocs writes docs with enc (the auto format) after their
// lines, and checks that the text decodes back to them.
func encodeJSONDocs(docs []tree.Value, enc func([]byte, tree.Value) []byte) (string, bool) {
	var b []byte
	for i, v := range docs {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, docLine(i+1, len(docs))...)
		b = append(b, '\n')
		b = bytes.TrimSuffix(enc(b, v), []byte("\n"))
	}
	out := string(b)
	back, err := DecodeJSONDocuments(out)
	if err != nil || len(back) != len(docs) {
		return "", false
	}
	for i := range docs {
		if !tree.Equal(back[i], docs[i]) {
			return "", false
		}
	}
	return out, true
}

// DecodeJSONDocuments reads back the documents of a text the pipeline
// wrote for a text result made of JSON documents: each after its line
// "> [JSON document K of N]", in order.
func DecodeJSONDocuments(text string) ([]tree.Value, error) {
	first, _, _ := strings.Cut(text, "\n")
	head, err := inband.Parse(first)
	d, ok := head.(inband.JSONDoc)
	n := d.N
	if err != nil || !ok || d.K != 1 || n < 1 || n > maxJSONDocs {
		return nil, errors.New("not JSON documents: the first line is not \"> [JSON document 1 of N]\"")
	}
	lines := strings.Split(text, "\n")
	var docs []tree.Value
	start := 1
	for k := 2; k <= n+1; k++ {
		end := len(lines)
		if k <= n {
			want := docLine(k, n)
			end = -1
			for i := start; i < len(lines); i++ {
				if lines[i] == want {
					end = i
					break
				}
			}
			if end < 0 {
				return nil, fmt.Errorf("JSON document %d of %d: no line %q", k, n, want)
			}
		}
		v, err := render.Decode(strings.Join(lines[start:end], "\n"))
		if err != nil {
			return nil, fmt.Errorf("JSON document %d of %d: %w", k-1, n, err)
		}
		docs = append(docs, v)
		start = end + 1
	}
	return docs, nil
}
