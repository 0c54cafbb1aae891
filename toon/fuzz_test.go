package toon_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// seedFixtures adds the inputs of one fixture category to f's corpus.
func seedFixtures(f *testing.F, category string, add func(string)) {
	if corpus.Shared() == "" {
		return
	}
	for _, fx := range loadFixtures(f, category) {
		if category == "decode" {
			add(fx.input.Str())
		} else {
			add(fx.input.String())
		}
	}
}

// FuzzDecode: decoding never panics; an error is a *SyntaxError positioned
// inside the input; a decoded tree re-encodes (exactly) to TOON that
// decodes back to the same tree.
func FuzzDecode(f *testing.F) {
	f.Add("a: 1\nb[2]: x,y", false)
	f.Add("items[2]{id,name}:\n  1,Ada\n  2,Bob", true)
	// Audit cases: lone surrogates, nesting past the depth limit, repeats.
	f.Add(`s: "cut \ud83d"`+"\nt[2]: \"\\uDE00\",\"a\\\\b\\ud800\"", true)
	f.Add(`s: "cut \ud83d"`, false)
	f.Add(`"\ud83d": 1`, true)
	f.Add(strings.Repeat("a:\n ", 600)+"a: 1", true)
	f.Add("a: 1\na: 2", true)
	f.Add(strings.Repeat("[", 10000), false)
	seedFixtures(f, "decode", func(s string) { f.Add(s, false); f.Add(s, true) })
	f.Fuzz(func(t *testing.T, src string, lenient bool) {
		v, err := toon.UnmarshalString(src, &toon.DecodeOptions{Lenient: lenient})
		if err != nil {
			checkPosition(t, src, err)
			return
		}
		text := toon.Append(nil, v, &toon.EncodeOptions{ExactNumbers: true, KeepKeyOrder: true})
		w, err := toon.Unmarshal(text, &toon.DecodeOptions{Lenient: lenient})
		if err != nil {
			t.Fatalf("re-decoding: %v\nfirst decode: %s\nTOON:\n%s", err, v, text)
		}
		if !tree.Equal(v, w) && !hasDuplicateKeys(v) {
			t.Fatalf("decode(encode(v)) = %s, want %s\nTOON:\n%s", w, v, text)
		}
	})
}

// checkPosition fails t unless err is a *SyntaxError whose line and column
// lie within src (a column may point just past a line's end).
func checkPosition(t *testing.T, src string, err error) {
	t.Helper()
	var se *toon.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is %T, want *toon.SyntaxError", err, err)
	}
	if se.Msg == "" || strings.Contains(se.Error(), "\n") {
		t.Fatalf("error %q: want a one-line message", se.Error())
	}
	lines := strings.Split(src, "\n")
	if se.Line < 1 || se.Line > len(lines) {
		t.Fatalf("error %v: line %d outside 1..%d", err, se.Line, len(lines))
	}
	ln := lines[se.Line-1]
	if se.Column < 1 || se.Column > utf8.RuneCountInString(ln)+1 {
		t.Fatalf("error %v: column %d outside line %q", err, se.Column, ln)
	}
}

func escaped(v tree.Value) bool {
	found := false
	tree.Walk(v, func(_ tree.Pointer, x tree.Value) bool {
		found = found || x.Escaped()
		return !found
	})
	return found
}

func hasDuplicateKeys(v tree.Value) bool {
	dup := false
	tree.Walk(v, func(_ tree.Pointer, x tree.Value) bool {
		seen := map[string]bool{}
		for _, m := range x.Members() {
			if seen[m.Key] {
				dup = true
			}
			seen[m.Key] = true
		}
		return !dup
	})
	return dup
}

// FuzzJSONRoundTrip: for any JSON document, JSON → TOON → JSON is the
// identity on the ordered tree with ExactNumbers and KeepKeyOrder, for each
// delimiter; canonical numbers keep every value.
func FuzzJSONRoundTrip(f *testing.F) {
	f.Add(`{"a":[1,2],"b":{"c":"x,y"}}`)
	f.Add(`[{"id":1,"n":"Ada"},{"id":2,"n":"Bob"}]`)
	// Audit cases: lone surrogates, a repeated key, nesting at the limit.
	f.Add(`{"s":"cut \ud83d","t":["\\\uDE00\n", "\ud83d\ude00"]}`)
	f.Add(`{"a":{"x":1,"x":2}}`)
	f.Add(strings.Repeat(`{"a":`, 511) + "1" + strings.Repeat("}", 511))
	seedFixtures(f, "encode", func(s string) { f.Add(s) })
	if corpus.Shared() != "" {
		for _, p := range corpus.Files(f, ".json") {
			if st, err := os.Stat(p); err == nil && st.Size() < 4<<10 {
				if data, err := os.ReadFile(p); err == nil {
					f.Add(string(data))
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		x, err := tree.ParseString(src)
		if err != nil {
			return
		}
		if (toon.Representable(x) == nil) == hasDuplicateKeys(x) && !escaped(x) {
			t.Fatalf("Representable(%s) = %v", x, toon.Representable(x))
		}
		if hasDuplicateKeys(x) {
			return
		}
		// Lone surrogates are carried as escapes, which only lenient
		// decoding reads back.
		dec := &toon.DecodeOptions{Lenient: escaped(x)}
		for _, d := range delimiters {
			for _, exact := range []bool{true, false} {
				opts := &toon.EncodeOptions{Delimiter: d.delim, ExactNumbers: exact, KeepKeyOrder: true}
				text := toon.Append(nil, x, opts)
				got, err := toon.Unmarshal(text, dec)
				if err != nil {
					t.Fatalf("%s, exact=%v: Unmarshal: %v\nJSON %s\nTOON:\n%s", d.name, exact, err, x, text)
				}
				if exact && !tree.Equal(got, x) || !exact && !modelEqual(got, x) {
					t.Fatalf("%s, exact=%v: got %s, want %s\nTOON:\n%s", d.name, exact, got, x, text)
				}
			}
		}
	})
}
