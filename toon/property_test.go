package toon_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// Pieces that stress quoting, delimiters and structure in keys and strings.
var trickyStrings = []string{
	"", " ", "a b", " lead", "trail ", "-", "- x", "-x", "#", "#x", "a#b",
	"true", "false", "null", "True", "42", "-3.14", "05", "+1", "1e-6", "1E5",
	".5", "1.", "a,b", "a|b", "a\tb", "a:b", "a: b", "[1]", "[]", "{x}",
	`say "hi"`, `back\slash`, "line\nbreak", "cr\rx", "\x00\x1f", "é", "你好",
	"🚀", "\u00a0nbsp", "key[2]", "x-items", "a.b", "_id", "__proto__",
}

func genString(t *rapid.T, label string) string {
	if rapid.Bool().Draw(t, label+"Tricky") {
		return rapid.SampledFrom(trickyStrings).Draw(t, label)
	}
	return rapid.StringMatching(`[a-z0-9 :,|#\-"\[\]{}.]{0,8}`).Draw(t, label)
}

var numberLiterals = []string{
	"0", "-0", "1", "-7", "42", "3.14", "1.5000", "-0.0", "1e6", "1E+6",
	"-1E+03", "2.5e2", "1e-7", "0.000001", "1e21", "123456789012345678901234567890",
	"0.1", "1e400", "-1.25e-10", "9007199254740993",
}

func genNumber(t *rapid.T) tree.Value {
	if rapid.Bool().Draw(t, "numTable") {
		return tree.Number(rapid.SampledFrom(numberLiterals).Draw(t, "num"))
	}
	lit := rapid.StringMatching(`-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,6})?([eE][+-]?[0-9]{1,3})?`).Draw(t, "numLit")
	return tree.Number(lit)
}

func genPrimitive(t *rapid.T) tree.Value {
	switch rapid.IntRange(0, 4).Draw(t, "prim") {
	case 0:
		return tree.Null()
	case 1:
		return tree.Bool(rapid.Bool().Draw(t, "bool"))
	case 2:
		return genNumber(t)
	default:
		return tree.String(genString(t, "str"))
	}
}

// genValue draws a random tree. Uniform arrays of objects and objects of
// objects are drawn often, so the tabular and keyed forms get exercised.
func genValue(t *rapid.T, depth int) tree.Value {
	if depth <= 0 {
		return genPrimitive(t)
	}
	switch rapid.IntRange(0, 5).Draw(t, "kind") {
	case 0, 1:
		return genPrimitive(t)
	case 2:
		n := rapid.IntRange(0, 4).Draw(t, "n")
		items := make([]tree.Value, n)
		for i := range items {
			items[i] = genValue(t, depth-1)
		}
		return tree.Array(items...)
	case 3:
		return genObject(t, depth)
	case 4:
		// Rows of one shape: tabular candidates.
		keys := genKeys(t, rapid.IntRange(1, 3).Draw(t, "cols"))
		rows := make([]tree.Value, rapid.IntRange(1, 4).Draw(t, "rows"))
		for i := range rows {
			mems := make([]tree.Member, len(keys))
			for j, k := range keys {
				v := genPrimitive(t)
				if rapid.IntRange(0, 5).Draw(t, "nest") == 0 {
					v = tree.Object(tree.Member{Key: "n", Value: genPrimitive(t)})
				}
				mems[j] = tree.Member{Key: k, Value: v}
			}
			rows[i] = tree.Object(mems...)
		}
		return tree.Array(rows...)
	default:
		// An object of same-shaped objects: keyed candidates.
		names := genKeys(t, rapid.IntRange(1, 4).Draw(t, "entries"))
		keys := genKeys(t, rapid.IntRange(1, 3).Draw(t, "cols"))
		mems := make([]tree.Member, len(names))
		for i, name := range names {
			fields := make([]tree.Member, len(keys))
			for j, k := range keys {
				fields[j] = tree.Member{Key: k, Value: genPrimitive(t)}
			}
			mems[i] = tree.Member{Key: name, Value: tree.Object(fields...)}
		}
		return tree.Object(mems...)
	}
}

func genKeys(t *rapid.T, n int) []string {
	keys := make([]string, 0, n)
	seen := map[string]bool{}
	for len(keys) < n {
		k := genString(t, "key")
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

func genObject(t *rapid.T, depth int) tree.Value {
	keys := genKeys(t, rapid.IntRange(0, 4).Draw(t, "members"))
	mems := make([]tree.Member, len(keys))
	for i, k := range keys {
		mems[i] = tree.Member{Key: k, Value: genValue(t, depth-1)}
	}
	return tree.Object(mems...)
}

// TestRoundTripProperty: for random trees, options and delimiters,
// decode(encode(x)) is x exactly (ExactNumbers with KeepKeyOrder) or under
// JSON-model equality (canonical numbers; keys as sets without
// KeepKeyOrder).
func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := genValue(t, 4)
		delim := rapid.SampledFrom([]byte{toon.Comma, toon.Tab, toon.Pipe}).Draw(t, "delim")
		indent := rapid.IntRange(1, 4).Draw(t, "indent")
		exact := rapid.Bool().Draw(t, "exact")
		keep := rapid.Bool().Draw(t, "keepKeyOrder")
		opts := &toon.EncodeOptions{Delimiter: delim, IndentSize: indent, ExactNumbers: exact, KeepKeyOrder: keep}
		text := toon.Append(nil, x, opts)
		got, err := toon.Unmarshal(text, &toon.DecodeOptions{IndentSize: indent})
		if err != nil {
			t.Fatalf("Unmarshal: %v\ninput %s\nTOON:\n%s", err, x, text)
		}
		var ok bool
		switch {
		case !keep:
			ok = modelEqualUnordered(got, x)
		case exact:
			ok = tree.Equal(got, x)
		default:
			ok = modelEqual(got, x)
		}
		if !ok {
			t.Fatalf("decode(encode(x)) = %s, want %s\nTOON:\n%s", got, x, text)
		}
		if strings.HasSuffix(string(text), "\n") || strings.Contains(string(text), " \n") {
			t.Fatalf("output has a trailing newline or trailing space:\n%q", text)
		}
		// Deterministic: same input, same bytes.
		if again := toon.Append(nil, x, opts); string(again) != string(text) {
			t.Fatalf("second encoding differs")
		}
	})
}
