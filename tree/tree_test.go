package tree_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
)

func TestParseRoundTrip(t *testing.T) {
	tests := []string{
		`null`, `true`, `false`, `0`, `-0`, `1.50`, `1e400`, `-12.5E-3`,
		`""`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`, `"é😀"`,
		`[]`, `{}`, `[1,[2,[3]],{"a":[]}]`,
		`{"b":1,"a":2,"b":3}`, // order and duplicates kept
		` { "x" : [ 1 , 2 ] } `,
	}
	for _, in := range tests {
		v, err := tree.ParseString(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		out := tree.AppendJSON(nil, v)
		// Our compact output must be what encoding/json compacts to,
		// modulo its escaping of '/' and non-ASCII forms.
		var want bytes.Buffer
		json.Compact(&want, []byte(in))
		w2, _ := tree.Parse(want.Bytes())
		if !tree.Equal(v, w2) {
			t.Errorf("Parse(%q) = %s, differs from Parse(Compact) = %s", in, out, w2)
		}
		again, err := tree.Parse(out)
		if err != nil || !tree.Equal(v, again) {
			t.Errorf("re-parse of %s: %v, equal=%v", out, err, tree.Equal(v, again))
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in        string
		line, col int
		msg       string
	}{
		{``, 1, 1, "unexpected end of input"},
		{`{"a":1,}`, 1, 8, "expected a string key"},
		{"{\n  \"a\" 1}", 2, 7, "expected ':'"},
		{`[1 2]`, 1, 4, "expected ',' or ']'"},
		{`01`, 1, 2, "after top-level value"},
		{`1.`, 1, 3, "invalid number"},
		{`"abc`, 1, 5, "end of input in string"},
		{"\"a\x01\"", 1, 3, "control character"},
		{"\"\xff\"", 1, 2, "invalid UTF-8"},
		{`"\x"`, 1, 2, "invalid escape"},
		{`{"\ud800":1}`, 1, 2, "surrogate"},
		{`tru`, 1, 1, "expected true"},
		{`"é" x`, 1, 5, "after top-level value"},
	}
	for _, tt := range tests {
		_, err := tree.ParseString(tt.in)
		se, ok := errors.AsType[*tree.SyntaxError](err)
		if !ok {
			t.Errorf("Parse(%q) error = %v, want *SyntaxError", tt.in, err)
			continue
		}
		if se.Line != tt.line || se.Column != tt.col || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("Parse(%q) = %d:%d: %s, want %d:%d: …%s…", tt.in, se.Line, se.Column, se.Msg, tt.line, tt.col, tt.msg)
		}
	}
}

func TestParseDepth(t *testing.T) {
	deep := strings.Repeat("[", 513) + strings.Repeat("]", 513)
	if _, err := tree.ParseString(deep); err == nil || !strings.Contains(err.Error(), "nesting deeper than 512") {
		t.Errorf("Parse(513 levels) error = %v, want depth error", err)
	}
	if _, err := tree.ParseString(deep[1 : len(deep)-1]); err != nil {
		t.Errorf("Parse(512 levels): %v", err)
	}
	if _, err := (tree.ParseOptions{MaxDepth: 2}).ParseString(`[[[]]]`); err == nil {
		t.Errorf("MaxDepth 2 accepted 3 levels")
	}
}

// TestCorpusParse checks every corpus JSON file against encoding/json: same
// document, and compact output that encoding/json reads back identically.
func TestCorpusParse(t *testing.T) {
	for _, path := range corpus.Files(t, ".json") {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			t.Errorf("%s: %v", corpus.Name(path), err)
			continue
		}
		var a, b any
		if err := json.Unmarshal(data, &a); err != nil {
			t.Fatalf("%s: encoding/json: %v", corpus.Name(path), err)
		}
		out := tree.AppendJSON(nil, v)
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("%s: compact output invalid: %v", corpus.Name(path), err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s: compact output differs from the source document", corpus.Name(path))
		}
	}
}

func TestLookupWalk(t *testing.T) {
	v, _ := tree.ParseString(`{"a":{"b/c":[10,{"~k":true}]}}`)
	got, err := tree.Lookup(v, "/a/b~1c/1/~0k")
	if err != nil || !got.Bool() {
		t.Fatalf("Lookup = %v, %v", got, err)
	}
	if _, err := tree.Lookup(v, "/a/x"); err == nil {
		t.Errorf("Lookup of missing member succeeded")
	}
	var ptrs []string
	tree.Walk(v, func(p tree.Pointer, _ tree.Value) bool { ptrs = append(ptrs, string(p)); return true })
	want := []string{"", "/a", "/a/b~1c", "/a/b~1c/0", "/a/b~1c/1", "/a/b~1c/1/~0k"}
	if strings.Join(ptrs, " ") != strings.Join(want, " ") {
		t.Errorf("Walk = %q, want %q", ptrs, want)
	}
}

func TestJSONLen(t *testing.T) {
	for _, s := range []string{`null`, `true`, `false`, `[]`, `{}`, `[1,"a",{"k":null}]`, `-1.5e3`,
		`{"a\"b":"x\\y\n\t\r\b\f\u0001 é 😀 \u2028","":[[],{}]}`} {
		v, err := tree.ParseString(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := tree.JSONLen(v), len(tree.AppendJSON(nil, v)); got != want {
			t.Errorf("JSONLen(%s) = %d, want %d", s, got, want)
		}
	}
	bad := tree.String("a\xffb")
	if got, want := tree.JSONLen(bad), len(tree.AppendJSON(nil, bad)); got != want {
		t.Errorf("JSONLen(invalid UTF-8) = %d, want %d", got, want)
	}
}

func TestParseOwned(t *testing.T) {
	data := []byte(`{"a":["x","y\n"],"b":1.50}`)
	v, err := tree.ParseOwned(data)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tree.Parse(data)
	if !tree.Equal(v, w) {
		t.Errorf("ParseOwned = %s, Parse = %s", v, w)
	}
}

// TestStringEscapesLong: strings with escapes, short and past the length
// from which they are unescaped into memory of their own, with runs of
// ASCII, of multi-byte text and of escapes alone, read as encoding/json
// reads them.
func TestStringEscapesLong(t *testing.T) {
	for _, n := range []int{1, 100, 4 << 10, 4<<10 + 1, 20 << 10} {
		for _, piece := range []string{`a`, `é`, `\n`, `\u00e9`, `\ud83d\ude00`, `ab\"cd`, `😀x`} {
			for _, lead := range []string{``, `\t`, strings.Repeat("z", 5000)} {
				src := `"` + lead + `\\` + strings.Repeat(piece, n/len(piece)+1) + `"`
				v, err := tree.ParseString(src)
				if err != nil {
					t.Fatalf("ParseString(%.40q…): %v", src, err)
				}
				var want string
				if err := json.Unmarshal([]byte(src), &want); err != nil {
					t.Fatal(err)
				}
				if v.Str() != want {
					t.Errorf("ParseString(%.40q… of %d bytes) differs from encoding/json", src, len(src))
				}
			}
		}
	}
}
