package render_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// Tricky texts: sigils, look-alikes of other types, separators, fences,
// URLs that share prefixes.
var (
	trickyStrings = []string{"", " ", "a", "a b", " lead", "trail ", "~", "~1", "~~x", "~1/x", "@1", "@0", "@octo",
		"true", "null", "false", "1", "-1", "1.5", "0x10", "a,b", "a:b", "a: b", `q"uote`, `back\slash`, "```", "```diff",
		"- item", "[1]", "{}", "x\ny", "line1\nline2\n", "diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n", "tab\there",
		"https://api.example.com/repos/a/b", "https://api.example.com/repos/a/b/issues/1", "https://api.example.com/repos/a/b/issues/12",
		"https://api.example.com/users/u1", "http://x.io/", "ünïcode", "a=null", "k[2]:", "é,è"}
	trickyKeys = []string{"id", "name", "url", "a b", "", "~1", "@1", "1", "true", "x.y", "-k", "k[2]", "k:v", "_", "é", "body", "diff"}
	trickyNums = []string{"0", "-0", "1", "1.50", "1E+3", "-2.5e-7", "123456789012345678901234567890"}
)

func genValue(t *rapid.T, depth int, pool *[]tree.Value) tree.Value {
	if len(*pool) > 0 && rapid.IntRange(0, 5).Draw(t, "reuse") == 0 {
		return (*pool)[rapid.IntRange(0, len(*pool)-1).Draw(t, "pick")]
	}
	kind := rapid.IntRange(0, 7).Draw(t, "kind")
	if depth <= 0 && kind >= 5 {
		kind = rapid.IntRange(0, 4).Draw(t, "leaf")
	}
	var v tree.Value
	switch kind {
	case 0:
		v = tree.Null()
	case 1:
		v = tree.Bool(rapid.Bool().Draw(t, "b"))
	case 2:
		v = tree.Number(rapid.SampledFrom(trickyNums).Draw(t, "n"))
	case 3, 4:
		if rapid.Bool().Draw(t, "anystr") {
			v = tree.String(rapid.String().Draw(t, "s"))
		} else {
			v = tree.String(rapid.SampledFrom(trickyStrings).Draw(t, "s"))
		}
	case 5:
		n := rapid.IntRange(0, 5).Draw(t, "len")
		items := make([]tree.Value, n)
		for i := range items {
			items[i] = genValue(t, depth-1, pool)
		}
		v = tree.Array(items...)
	case 6:
		// An array of similar objects, the table case.
		n := rapid.IntRange(1, 5).Draw(t, "rows")
		keys := rapid.SliceOfNDistinct(rapid.SampledFrom(trickyKeys), 1, 4, rapid.ID[string]).Draw(t, "cols")
		items := make([]tree.Value, n)
		for i := range items {
			var ms []tree.Member
			for _, k := range keys {
				if rapid.IntRange(0, 4).Draw(t, "skip") > 0 {
					ms = append(ms, tree.Member{Key: k, Value: genValue(t, depth-1, pool)})
				}
			}
			items[i] = tree.Object(ms...)
		}
		v = tree.Array(items...)
	default:
		n := rapid.IntRange(0, 5).Draw(t, "members")
		ms := make([]tree.Member, n)
		for i := range ms {
			ms[i] = tree.Member{Key: rapid.SampledFrom(trickyKeys).Draw(t, "key"), Value: genValue(t, depth-1, pool)}
		}
		v = tree.Object(ms...)
	}
	if v.Kind() >= tree.KindArray {
		*pool = append(*pool, v)
	}
	return v
}

// TestAutoRoundTripProperty: on random trees, the auto document (built
// without verification and without the TOON candidate) decodes to the
// identical tree, and Encode's result never costs more than compact JSON.
func TestAutoRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var pool []tree.Value
		v := genValue(t, 4, &pool)
		for _, o := range []render.Options{
			{SkipVerify: true, NoTOON: true},
			{SkipVerify: true, NoTOON: true, FenceKeys: []string{"diff", "body"}},
		} {
			text, formats, err := render.AutoDocument(v, &o)
			if err != nil {
				t.Fatalf("AutoDocument: %v", err)
			}
			got, err := render.Decode(text)
			if err != nil {
				t.Fatalf("Decode(%q): %v (formats %v)", text, err, formats)
			}
			if !tree.Equal(got, v) {
				t.Fatalf("Decode(AutoDocument(%s)) = %s\ntext:\n%s", v, got, text)
			}
		}
		text, _, err := render.Encode(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := render.Verify(text, v); err != nil {
			t.Fatalf("Verify(Encode(%s)): %v", v, err)
		}
		est := tokens.Estimate()
		if n, nj := est.Count(text), est.Count(string(tree.AppendJSON(nil, v))); n > nj {
			t.Fatalf("Encode(%s): %d tokens, compact JSON %d", v, n, nj)
		}
	})
}
