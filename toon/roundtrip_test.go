package toon_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

var delimiters = []struct {
	name  string
	delim byte
}{{"comma", toon.Comma}, {"tab", toon.Tab}, {"pipe", toon.Pipe}}

// TestRoundTripCorpus checks decode(encode(x)) for every corpus JSON file,
// with each delimiter:
//
//   - exact: ExactNumbers and KeepKeyOrder give back x as an ordered tree
//     with the same number text (tree.Equal);
//   - canonical (the default options): equal under the spec's JSON-model
//     equality (§2), numbers by value, and object keys compared as sets,
//     since tabular rows decode in their header's order;
//   - canonical with KeepKeyOrder: JSON-model equality with ordered keys.
func TestRoundTripCorpus(t *testing.T) {
	files := corpus.Files(t, ".json")
	if len(files) == 0 {
		t.Skip("no corpus JSON files")
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		x, err := tree.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, d := range delimiters {
			t.Run(corpus.Name(path)+"/"+d.name, func(t *testing.T) {
				exact := &toon.EncodeOptions{Delimiter: d.delim, ExactNumbers: true, KeepKeyOrder: true}
				got := roundTrip(t, x, exact)
				if !tree.Equal(got, x) {
					t.Errorf("exact: decode(encode(x)) differs from x\n%s", firstDiff(got, x))
				}
				got = roundTrip(t, x, &toon.EncodeOptions{Delimiter: d.delim})
				if !modelEqualUnordered(got, x) {
					t.Errorf("canonical: decode(encode(x)) differs from x under JSON-model equality\n%s", firstDiff(got, x))
				}
				got = roundTrip(t, x, &toon.EncodeOptions{Delimiter: d.delim, KeepKeyOrder: true})
				if !modelEqual(got, x) {
					t.Errorf("canonical, KeepKeyOrder: decode(encode(x)) differs from x\n%s", firstDiff(got, x))
				}
			})
		}
	}
}

func roundTrip(t testing.TB, x tree.Value, opts *toon.EncodeOptions) tree.Value {
	t.Helper()
	text := toon.Append(nil, x, opts)
	got, err := toon.Unmarshal(text, &toon.DecodeOptions{IndentSize: opts.IndentSize})
	if err != nil {
		t.Fatalf("Unmarshal(Append(x, %+v)): %v\n%s", *opts, err, excerpt(text, err))
	}
	return got
}

// excerpt returns the lines of text around an error's line.
func excerpt(text []byte, err error) string {
	se, ok := err.(*toon.SyntaxError)
	if !ok {
		return ""
	}
	lines := strings.Split(string(text), "\n")
	lo, hi := max(0, se.Line-4), min(len(lines), se.Line+2)
	return strings.Join(lines[lo:hi], "\n")
}

// firstDiff describes where two trees first differ.
func firstDiff(got, want tree.Value) string {
	var out string
	tree.Walk(want, func(p tree.Pointer, w tree.Value) bool {
		if out != "" {
			return false
		}
		g, err := tree.Lookup(got, p)
		if err != nil {
			out = "missing at " + string(p)
			return false
		}
		if w.IsPrimitive() && !tree.Equal(g, w) {
			out = "at " + string(p) + ": got " + g.String() + ", want " + w.String()
			return false
		}
		return true
	})
	return out
}

// modelEqualUnordered is modelEqual with object members compared as sets.
func modelEqualUnordered(a, b tree.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case tree.KindArray:
		ai, bi := a.Items(), b.Items()
		if len(ai) != len(bi) {
			return false
		}
		for i := range ai {
			if !modelEqualUnordered(ai[i], bi[i]) {
				return false
			}
		}
		return true
	case tree.KindObject:
		am, bm := a.Members(), b.Members()
		if len(am) != len(bm) {
			return false
		}
		for _, m := range am {
			i := slices.IndexFunc(bm, func(n tree.Member) bool { return n.Key == m.Key })
			if i < 0 || !modelEqualUnordered(m.Value, bm[i].Value) {
				return false
			}
		}
		return true
	}
	return modelEqual(a, b)
}
