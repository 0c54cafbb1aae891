package render_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tree"
)

// limitErr decodes text with opts and returns the error, failing the test
// unless it is a positioned *render.SyntaxError mentioning want.
func limitErr(t *testing.T, text string, opts *render.DecodeOptions, want string) *render.SyntaxError {
	t.Helper()
	v, err := opts.Decode(text)
	if err == nil {
		t.Fatalf("Decode accepted the document (%d bytes of JSON)", tree.JSONLen(v))
	}
	se, ok := errors.AsType[*render.SyntaxError](err)
	if !ok {
		t.Fatalf("Decode error %T %v, want *render.SyntaxError", err, err)
	}
	if !strings.Contains(se.Msg, want) {
		t.Fatalf("Decode error %v, want it to mention %q", err, want)
	}
	return se
}

// TestDeepNesting: 2,000,000 nested '[' (the audit's input) end in a
// positioned error at the 513th level, not a stack overflow; so does the
// same nesting inside a member value and inside a legend entry.
func TestDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 2_000_000)
	se := limitErr(t, deep, nil, "nesting deeper than 512")
	if se.Line != 1 || se.Column < 512 || se.Column > 520 {
		t.Errorf("error at %d:%d, want 1:~513", se.Line, se.Column)
	}
	limitErr(t, "a: 1\nb: "+deep, nil, "nesting deeper than 512")
	limitErr(t, "@1 = "+deep+"\nv: @1", nil, "nesting deeper than 512")
	limitErr(t, "[2]:\n- "+deep+"\n- 1", nil, "nesting deeper than 512")

	// 512 levels decode; the limit is configurable.
	ok := strings.Repeat("[", 512) + strings.Repeat("]", 512)
	if _, err := render.Decode(ok); err != nil {
		t.Fatalf("512 levels: %v", err)
	}
	limitErr(t, "a: [[[[1]]]]", &render.DecodeOptions{MaxDepth: 3}, "nesting deeper than 3")
	if _, err := (&render.DecodeOptions{MaxDepth: 2000}).Decode(strings.Repeat("[", 1000) + strings.Repeat("]", 1000)); err != nil {
		t.Fatalf("1000 levels with MaxDepth 2000: %v", err)
	}
}

// TestLegendDepth: references carry their entry's depth, so entries of
// 300 levels each cannot build a tree 600 deep.
func TestLegendDepth(t *testing.T) {
	d300 := strings.Repeat("[", 300) + "%s" + strings.Repeat("]", 300)
	doc := "@1 = " + fmt.Sprintf(d300, "1") + "\n@2 = " + fmt.Sprintf(d300, "@1") + "\nv: @2"
	limitErr(t, doc, nil, "nesting deeper than 512")
}

// bomb is the audit's expansion bomb: each legend entry lists the previous
// one ten times, so the document expands tenfold per level.
func bomb(levels int) string {
	var b strings.Builder
	b.WriteString(`@1 = "` + strings.Repeat("x", 64) + `"` + "\n")
	for i := 2; i <= levels; i++ {
		ref := fmt.Sprintf("@%d", i-1)
		fmt.Fprintf(&b, "@%d = [%s]\n", i, strings.Repeat(ref+",", 9)+ref)
	}
	fmt.Fprintf(&b, "v: @%d", levels)
	return b.String()
}

// TestExpansionBomb: a document of a few hundred bytes that would expand
// to gigabytes is refused with a clear error, quickly and without
// building the expansion.
func TestExpansionBomb(t *testing.T) {
	doc := bomb(9) // 64 × 10^8 bytes
	if len(doc) > 600 {
		t.Fatalf("bomb is %d bytes", len(doc))
	}
	limitErr(t, doc, nil, "expands beyond")

	// A small bomb within the 1 MiB allowance decodes; a ratio and cap
	// make it fail.
	small := bomb(3) // about 6.4 KB expanded
	if _, err := render.Decode(small); err != nil {
		t.Fatalf("small: %v", err)
	}
	limitErr(t, small, &render.DecodeOptions{MaxExpandedBytes: 4096}, "expands beyond 4096")

	// Prefixes expand too: a long prefix used many times.
	var b strings.Builder
	b.WriteString("~1 = https://example.com/" + strings.Repeat("p", 1<<16) + "\n[200000]:\n")
	for range 200000 {
		b.WriteString("- \"~1\"\n")
	}
	limitErr(t, strings.TrimSuffix(b.String(), "\n"), nil, "expands beyond")

	// So do table headers repeated by many short rows.
	b.Reset()
	b.WriteString("[300000]{" + strings.Repeat("k", 1<<12) + "}:\n")
	for range 300000 {
		b.WriteString("1\n")
	}
	limitErr(t, strings.TrimSuffix(b.String(), "\n"), nil, "expands beyond")
}

// TestLegendOrder: an entry may not use itself or a later entry.
func TestLegendOrder(t *testing.T) {
	limitErr(t, "@1 = [@1]\nv: @1", nil, "earlier entries only")
	limitErr(t, "@1 = [@2]\n@2 = 1\nv: @1", nil, "earlier entries only")
	if _, err := render.Decode("@1 = {\"a\":1,\"b\":2,\"c\":3}\n@2 = [@1,@1]\nv: @2"); err != nil {
		t.Fatal(err)
	}
}

// TestMarker: auto text that TOON would read differently opens with the
// marker line; text without it reads the same as TOON. Both decode.
func TestMarker(t *testing.T) {
	for _, tc := range []struct {
		json   string
		marked bool
	}{
		{`{"a":1,"b":"x"}`, false},
		{`{"u":["https://api.example.com/a/1","https://api.example.com/a/2","https://api.example.com/a/3"],"v":{"k":[1,2]}}`, true},
	} {
		v, err := tree.ParseString(tc.json)
		if err != nil {
			t.Fatal(err)
		}
		text, _, err := render.Encode(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		if render.Marked(text) != tc.marked && text != tc.json {
			t.Errorf("%s: Encode =\n%s\nmarked %v, want %v", tc.json, text, render.Marked(text), tc.marked)
		}
		back, err := render.Decode(text)
		if err != nil || !tree.Equal(back, v) {
			t.Errorf("%s: Decode = %v, %v", tc.json, back, err)
		}
	}
}
