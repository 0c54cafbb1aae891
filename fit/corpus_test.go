package fit

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

var corpusBudgets = []int{300, 1000, 4000, 16000}

// toonFormat is TOON with exact numbers, as the root package's TOON.
var toonFormat = Format{Name: "toon", Append: func(dst []byte, v tree.Value) []byte {
	return toon.Append(dst, v, &toon.EncodeOptions{ExactNumbers: true})
}}

// autoFormat is the root package's auto: render's adaptive encoding,
// verified by decoding, drafted unverified.
var autoFormat = func() Format {
	enc := func(skip bool) func([]byte, tree.Value) []byte {
		ro := render.Options{Counter: tokens.O200kBase(), SkipVerify: skip}
		return func(dst []byte, v tree.Value) []byte {
			s, _, err := render.Encode(v, &ro)
			if err != nil {
				return tree.AppendJSON(dst, v)
			}
			return append(dst, s...)
		}
	}
	return Format{Name: "auto", Append: enc(false), Draft: enc(true)}
}()

// corpusInputs returns every JSON and text file of the corpus.
func corpusInputs(t testing.TB) []string {
	return corpus.Files(t, ".json", ".txt", ".log", ".diff", ".md", ".yaml")
}

// fitFile fits one corpus file the way the pipeline does: JSON when it
// parses, text otherwise.
func fitFile(t testing.TB, data []byte, o *Options) (Result, bool) {
	t.Helper()
	if v, err := tree.Parse(data); err == nil {
		r, err := FitJSON(context.Background(), v, o)
		if err != nil {
			t.Fatal(err)
		}
		return r, true
	}
	r, err := FitText(context.Background(), string(data), o)
	if err != nil {
		t.Fatal(err)
	}
	return r, false
}

// TestCorpusBudgets is the budget guarantee: every corpus file at every
// budget fits by the real o200k_base count, and a trimmed result either
// keeps at least one item or, when no item fits the budget at any level,
// declares every item with the handle that gets it.
func TestCorpusBudgets(t *testing.T) {
	files := corpusInputs(t)
	c := tokens.O200kBase()
	st := &store.Mem{}
	cases, trimmed, empty := 0, 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []Format{JSON, toonFormat, autoFormat} {
			for _, b := range corpusBudgets {
				o := &Options{Budget: b, Counter: c, Store: st, Format: format}
				r, isJSON := fitFile(t, data, o)
				if !isJSON && format.Name != "json" {
					continue // text has one rendering
				}
				cases++
				n := c.Count(r.Text)
				if n > b {
					t.Errorf("%s as %s at %d: output is %d tokens", corpus.Name(f), format.Name, b, n)
				}
				if r.Stats.Counted && r.Stats.Tokens != n {
					t.Errorf("%s as %s at %d: Stats.Tokens %d, counted %d", corpus.Name(f), format.Name, b, r.Stats.Tokens, n)
				}
				if r.Stats.Truncated {
					trimmed++
					if r.Stats.Full+r.Stats.Standard+r.Stats.Minimal == 0 {
						empty++
						if r.Stats.Handle == "" || !strings.Contains(r.Text, r.Stats.Handle) {
							t.Errorf("%s as %s at %d: no item kept (%d total), and not all declared with their handle:\n%s", corpus.Name(f), format.Name, b, r.Stats.Total, r.Text)
						}
					}
				}
				if strings.TrimSpace(r.Text) == "" {
					t.Errorf("%s as %s at %d: empty output", corpus.Name(f), format.Name, b)
				}
			}
		}
	}
	t.Logf("%d cases (%d files × %d budgets, JSON files also as TOON and auto), %d trimmed, %d with no item kept (all declared with their handle)", cases, len(files), len(corpusBudgets), trimmed, empty)
}
