package toon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// fixture is one case of the conformance suite (fixtures.schema.json).
type fixture struct {
	file, name  string
	input       tree.Value
	expected    tree.Value
	shouldError bool
	delimiter   byte
	indentSize  int
	strict      bool
}

// loadFixtures reads every case of one category ("encode" or "decode").
func loadFixtures(tb testing.TB, category string) []fixture {
	tb.Helper()
	dir := filepath.Join(corpus.Dir(tb, "toon-spec/fixtures"), category)
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(paths) == 0 {
		tb.Skipf("no fixtures in %s", dir)
	}
	var out []fixture
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		doc, err := tree.Parse(data)
		if err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		tests, _ := doc.Get("tests")
		for _, t := range tests.Items() {
			f := fixture{file: filepath.Base(p), strict: true, delimiter: toon.Comma}
			name, _ := t.Get("name")
			f.name = name.Str()
			f.input, _ = t.Get("input")
			f.expected, _ = t.Get("expected")
			if v, ok := t.Get("shouldError"); ok {
				f.shouldError = v.Bool()
			}
			if o, ok := t.Get("options"); ok {
				if v, ok := o.Get("delimiter"); ok {
					f.delimiter = v.Str()[0]
				}
				if v, ok := o.Get("indentSize"); ok {
					n, _ := v.Int()
					f.indentSize = int(n)
				}
				if v, ok := o.Get("strict"); ok {
					f.strict = v.Bool()
				}
			}
			out = append(out, f)
		}
	}
	return out
}

func subtestName(f fixture) string {
	return strings.TrimSuffix(f.file, ".json") + "/" + f.name
}

// TestFixtures runs the whole TOON v4.0 conformance suite: every encode
// and decode case with its options.
func TestFixtures(t *testing.T) {
	enc, dec := loadFixtures(t, "encode"), loadFixtures(t, "decode")
	passed := 0
	t.Run("encode", func(t *testing.T) {
		for _, f := range enc {
			t.Run(subtestName(f), func(t *testing.T) {
				opts := &toon.EncodeOptions{Delimiter: f.delimiter, IndentSize: f.indentSize}
				got := string(toon.Append(nil, f.input, opts))
				if want := f.expected.Str(); got != want {
					t.Fatalf("Append(%s) =\n%s\nwant\n%s", f.input, got, want)
				}
				passed++
			})
		}
	})
	t.Run("decode", func(t *testing.T) {
		for _, f := range dec {
			t.Run(subtestName(f), func(t *testing.T) {
				opts := &toon.DecodeOptions{IndentSize: f.indentSize, Lenient: !f.strict}
				got, err := toon.UnmarshalString(f.input.Str(), opts)
				if f.shouldError {
					if err == nil {
						t.Fatalf("Unmarshal(%q) = %s, want an error", f.input.Str(), got)
					}
					passed++
					return
				}
				if err != nil {
					t.Fatalf("Unmarshal(%q): %v", f.input.Str(), err)
				}
				if !modelEqual(got, f.expected) {
					t.Fatalf("Unmarshal(%q) = %s, want %s", f.input.Str(), got, f.expected)
				}
				passed++
			})
		}
	})
	total := len(enc) + len(dec)
	t.Logf("conformance: %d/%d fixtures pass (%d encode, %d decode)", passed, total, len(enc), len(dec))
	if total != 516 {
		t.Errorf("found %d fixtures, want 516", total)
	}
}
