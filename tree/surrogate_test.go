package tree

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/terse-dev/terse/tokens"
)

// Lone surrogate escapes, which JSON's grammar allows (JavaScript writes
// them for a cut emoji), parse and are written back as the same escapes,
// never as invalid UTF-8.
func TestLoneSurrogates(t *testing.T) {
	for _, c := range []struct{ in, str string }{
		{`"\ud83d"`, `\ud83d`},
		{`"cut \uD83D"`, `cut \uD83D`},
		{`"\ude00 low"`, `\ude00 low`},
		{`"a\\b\ud83d\n\"q\"\u00e9\ud83d\ude00/\/"`, "a\\\\b\\ud83d\n\"q\"é😀//"},
		{`"\ud83d\ud83d"`, `\ud83d\ud83d`},
		{`"\udc00\ud800"`, `\udc00\ud800`},
		{`"x\\u0041\ud800"`, `x\\u0041\ud800`},
	} {
		v, err := ParseString(c.in)
		if err != nil {
			t.Fatalf("Parse(%s): %v", c.in, err)
		}
		if !v.Escaped() || v.Str() != c.str {
			t.Errorf("Parse(%s) = %q escaped %v, want %q escaped", c.in, v.Str(), v.Escaped(), c.str)
		}
		out := AppendJSON(nil, v)
		if !utf8.Valid(out) {
			t.Errorf("AppendJSON(Parse(%s)) = %q: invalid UTF-8", c.in, out)
		}
		if JSONLen(v) != len(out) {
			t.Errorf("JSONLen(Parse(%s)) = %d, want %d", c.in, JSONLen(v), len(out))
		}
		back, err := Parse(out)
		if err != nil || !Equal(back, v) {
			t.Errorf("Parse(AppendJSON(Parse(%s))) = %s, %v; want %s", c.in, back, err, out)
		}
		// The lone escapes are written as the source wrote them.
		for _, e := range []string{`\ud83d`, `\uD83D`, `\ude00`, `\udc00`, `\ud800`} {
			if strings.Count(c.str, e) != strings.Count(string(out), e) {
				t.Errorf("AppendJSON(Parse(%s)) = %s: %s not kept", c.in, out, e)
			}
		}
		w, ok := EscapedString(v.Str())
		if !ok || !Equal(w, v) {
			t.Errorf("EscapedString(%q) = %s, %v", v.Str(), w, ok)
		}
		// Inside containers too.
		doc := `{"k":[` + c.in + `,1]}`
		dv, err := ParseString(doc)
		if err != nil || string(AppendJSON(nil, dv)) != `{"k":[`+string(out)+`,1]}` {
			t.Errorf("Parse(%s) = %s, %v", doc, AppendJSON(nil, dv), err)
		}
	}
	// A valid pair is a character, not escapes.
	if v, err := ParseString(`"\ud83d\ude00"`); err != nil || v.Escaped() || v.Str() != "😀" {
		t.Errorf(`Parse("\ud83d\ude00") = %q, %v`, v.Str(), err)
	}
	// Object keys do not carry lone surrogates: a positioned error, not a loss.
	if _, err := ParseString(`{"a":1,"\ud83d":2}`); err == nil || !strings.Contains(err.Error(), "1:8: lone UTF-16 surrogate") {
		t.Errorf(`Parse({"a":1,"\ud83d":2}) error = %v`, err)
	}
	for _, bad := range []string{`"\ud83d`, `"\ud83d\x"`, `"\ud83d` + "\x01" + `"`, `"\ud83d\u12"`} {
		if _, err := ParseString(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
	for _, bad := range []string{`\`, `\x`, `\ud83d\ude00`, "\xff", `\u12`} {
		if _, ok := EscapedString(bad); ok {
			t.Errorf("EscapedString(%q) succeeded", bad)
		}
	}
	if v, ok := EscapedString(`a\\b`); !ok || v.Escaped() || v.Str() != `a\b` {
		t.Errorf(`EscapedString("a\\b") = %q, %v`, v.Str(), ok)
	}
	if Equal(String(`\ud83d`), mustParse(t, `"\ud83d"`)) {
		t.Error("a string of escape text equals a lone surrogate")
	}
	if mustParse(t, `"\ud83d"`).Bool() {
		t.Error("Bool of an escaped string is true")
	}
	// What is counted is the escape text, as the model reads it.
	c := tokens.O200kBase()
	if got, want := c.Count(mustParse(t, `"cut \ud83d"`).Str()), c.Count(`cut \ud83d`); got != want || got < 3 {
		t.Errorf("count of a lone surrogate string = %d, want %d (its escape text)", got, want)
	}
}

func mustParse(t *testing.T, s string) Value {
	t.Helper()
	v, err := ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// 2,000,000 nested brackets stop at the depth limit with a positioned
// error (the parser recurses at most DefaultMaxDepth deep).
func TestDeepNesting(t *testing.T) {
	for _, open := range []string{"[", `{"a":`, `[{"a":`} {
		doc := strings.Repeat(open, 2_000_000)
		_, err := ParseString(doc)
		se, ok := err.(*SyntaxError)
		if !ok || !strings.Contains(se.Msg, "nesting deeper than 512 levels") {
			t.Fatalf("Parse(%q × 2e6) error = %v", open, err)
		}
		if se.Line != 1 || se.Offset <= 0 || se.Offset > int64(len(open))*513 {
			t.Errorf("Parse(%q × 2e6) error at %d (%d:%d)", open, se.Offset, se.Line, se.Column)
		}
	}
	doc := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	if _, err := (ParseOptions{MaxDepth: 600}).ParseString(doc); err != nil {
		t.Errorf("MaxDepth 600: %v", err)
	}
	if _, err := (ParseOptions{MaxDepth: 599}).ParseString(doc); err == nil {
		t.Error("MaxDepth 599 accepted 600 levels")
	}
}
