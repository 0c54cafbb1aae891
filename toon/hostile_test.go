package toon

import (
	"errors"
	"strings"
	"testing"

	"github.com/terse-dev/terse/tree"
)

// Nesting deeper than the limit is a positioned error, not a deep
// recursion: objects by indentation, arrays of arrays, and the 2,000,000
// brackets of the JSON audit case.
func TestDepthLimit(t *testing.T) {
	deepObjects := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(strings.Repeat("  ", i) + "a:\n")
		}
		b.WriteString(strings.Repeat("  ", n) + "a: 1\n")
		return b.String()
	}
	deepLists := func(n int) string {
		var b strings.Builder
		b.WriteString("[1]:\n")
		for i := range n {
			b.WriteString(strings.Repeat("  ", i+1) + "- [1]:\n")
		}
		b.WriteString(strings.Repeat("  ", n+1) + "- 1\n")
		return b.String()
	}
	for _, c := range []struct {
		name string
		doc  string
		line int
	}{
		{"objects", deepObjects(3000), 513},
		{"lists", deepLists(3000), 513},
	} {
		_, err := UnmarshalString(c.doc, nil)
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, "nesting deeper than 512 levels") || se.Line != c.line {
			t.Errorf("%s: error = %v, want nesting error on line %d", c.name, err, c.line)
		}
	}
	if _, err := UnmarshalString(deepObjects(511), nil); err != nil {
		t.Errorf("512 levels: %v", err)
	}
	if _, err := UnmarshalString(deepObjects(600), &DecodeOptions{MaxDepth: 601}); err != nil {
		t.Errorf("MaxDepth 601: %v", err)
	}
	for _, doc := range []string{strings.Repeat("[", 2_000_000), "[1]: " + strings.Repeat("- [1]: ", 200_000) + "1", strings.Repeat("- ", 1_000_000) + "1"} {
		// Not nested TOON: decodes shallowly or fails, without a deep recursion.
		UnmarshalString(doc, nil)
	}
}

// A lone surrogate escape in a JSON string is written as the same escape;
// lenient decoding reads it back (strict decoding follows the spec and
// rejects it), and Representable says TOON cannot carry it.
func TestLoneSurrogate(t *testing.T) {
	v, err := tree.ParseString(`{"s":"cut \ud83d","t":["a\\b\uDE00\n"],"u":"\ud83d\ude00"}`)
	if err != nil {
		t.Fatal(err)
	}
	out := Marshal(v)
	want := "s: \"cut \\ud83d\"\nt[1]: \"a\\\\b\\uDE00\\n\"\nu: 😀"
	if string(out) != want {
		t.Errorf("Marshal = %q, want %q", out, want)
	}
	back, err := Unmarshal(out, &DecodeOptions{Lenient: true})
	if err != nil || !tree.Equal(back, v) {
		t.Errorf("lenient Unmarshal(%q) = %s, %v; want %s", out, back, err, v)
	}
	if _, err := Unmarshal(out, nil); err == nil || !strings.Contains(err.Error(), "surrogate") {
		t.Errorf("strict Unmarshal(%q) error = %v", out, err)
	}
	var ue *UnrepresentableError
	if err := Representable(v); !errors.As(err, &ue) || ue.Pointer != "/s" {
		t.Errorf("Representable = %v, want the lone surrogate at /s", err)
	}
	// Keys never hold one, even leniently.
	if _, err := UnmarshalString(`"\ud83d": 1`, &DecodeOptions{Lenient: true}); err == nil {
		t.Error("a key with a lone surrogate decoded")
	}
}

// JSON with a repeated key is refused before it becomes TOON that strict
// decoding rejects and lenient decoding reduces: by the JSON parser, at
// the repeated key, or by Representable, at the object.
func TestDuplicateKeys(t *testing.T) {
	src := `{"a":{"x":1,"y":2,"x":3}}`
	_, err := (tree.ParseOptions{NoDuplicateKeys: true}).ParseString(src)
	var se *tree.SyntaxError
	if !errors.As(err, &se) || se.Offset != 18 || !strings.Contains(se.Msg, `duplicate key "x"`) {
		t.Errorf("NoDuplicateKeys parse error = %v, want 1:19 duplicate key \"x\"", err)
	}
	v, err := tree.ParseString(src)
	if err != nil {
		t.Fatal(err)
	}
	var ue *UnrepresentableError
	if err := Representable(v); !errors.As(err, &ue) || ue.Pointer != "/a" || ue.Key != "x" {
		t.Errorf("Representable = %v, want duplicate x at /a", err)
	}
	// Many members: the repeat is still found.
	var b strings.Builder
	b.WriteString("{")
	for i := range 1000 {
		b.WriteString(`"k` + strings.Repeat("z", i%7) + string(rune('a'+i%26)) + `":1,`)
	}
	b.WriteString(`"last":1,"kza":2}`)
	if _, err := (tree.ParseOptions{NoDuplicateKeys: true}).ParseString(b.String()); err == nil {
		t.Error("repeat among 1000 members not found")
	}
	ok, err := tree.ParseString(`{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := Representable(ok); err != nil {
		t.Errorf("Representable(no repeats) = %v", err)
	}
}
