package tokens

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/terse-dev/terse/internal/corpus"
)

// TestLineCounterCorpus: for every text of the corpus (and every JSON
// document of it in compact JSON), and the same text with its lines
// shuffled into other neighbours, counting it by its parts
// (LineCounter) gives exactly the count of the whole, in both
// encodings: the pre-tokenizers' pieces never cross a line feed where
// LineStart holds nor a point where WordEnd does.
func TestLineCounterCorpus(t *testing.T) {
	dir := corpus.Dir(t, "corpus")
	var texts []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || !utf8.Valid(b) || len(b) > 2<<20 {
			return nil
		}
		texts = append(texts, string(b))
		var c bytes.Buffer
		if strings.HasSuffix(p, ".json") && json.Compact(&c, b) == nil {
			texts = append(texts, c.String()) // items joined by "},{"
		}
		return nil
	})
	if len(texts) < 50 {
		t.Fatalf("only %d corpus texts", len(texts))
	}
	if testing.Short() {
		texts = texts[:50]
	}
	for _, c := range []Counter{O200kBase(), Cl100kBase()} {
		lc := NewLineCounter(c)
		if !lc.lines {
			t.Fatalf("%s: not counted by lines", c.Name())
		}
		bad := 0
		for i, s := range texts {
			// The text, and its lines in reverse order (other neighbours).
			lines := strings.SplitAfter(s, "\n")
			for l, r := 0, len(lines)-1; l < r; l, r = l+1, r-1 {
				lines[l], lines[r] = lines[r], lines[l]
			}
			for _, x := range []string{s, strings.Join(lines, "")} {
				if got, want := lc.Count(x), c.Count(x); got != want {
					bad++
					if bad <= 5 {
						t.Errorf("%s: text %d (%d bytes): by lines %d, whole %d", c.Name(), i, len(x), got, want)
					}
				}
			}
		}
		t.Logf("%s: %d texts, %d differ", c.Name(), 2*len(texts), bad)
	}
}

// TestLineStartNeeded: the joins LineStart refuses do change counts,
// so a counter that summed across them would be wrong.
func TestLineStartNeeded(t *testing.T) {
	c := O200kBase()
	for _, tc := range []struct{ a, b string }{
		{"x}\n", "/"},     // a symbol run takes '/' after its line feed
		{"x;\n", "\nbar"}, // line feeds run together
	} {
		if LineStart(tc.b) {
			t.Errorf("LineStart(%q) = true", tc.b)
		}
		if c.Count(tc.a)+c.Count(tc.b) == c.Count(tc.a+tc.b) {
			t.Errorf("%q + %q: the join was expected to change the count", tc.a, tc.b)
		}
	}
	for _, next := range []string{" x", "\tx", "\r\n"} {
		if LineStart(next) {
			t.Errorf("LineStart(%q) = true", next)
		}
	}
	for _, next := range []string{"x", "[", "}", "1", "é", "\u0301"} {
		if !LineStart(next) {
			t.Errorf("LineStart(%q) = false", next)
		}
	}
	for _, tc := range []struct {
		s    string
		want bool
	}{{`abc"}`, true}, {`123}`, true}, {`abc'}`, false}, {"ab's", false}, {"abé", false}, {"ab\u0301", false}, {"ab c", false}, {`/"}`, false}} {
		i := strings.IndexAny(tc.s, "\"}'\u0301 é")
		if i < 0 {
			i = 2
		}
		if got := WordEnd(tc.s, i); got != tc.want {
			t.Errorf("WordEnd(%q, %d) = %v", tc.s, i, got)
		}
	}
}

// FuzzLineCounter: counting by lines equals counting whole, in both
// encodings, for any text.
func FuzzLineCounter(f *testing.F) {
	for _, s := range []string{"a\nb\n", "x}\n/path\n", `{"a":1,"b":"x"},{"a":22,"b":"y'"},{"a":3é},{"a":"ok\u0301"}`, "  indented\n\tline\nnext\n", strings.Repeat("line ok\n", 60) + "x\n /y\n"} {
		f.Add(s)
	}
	o, cl := NewLineCounter(O200kBase()), NewLineCounter(Cl100kBase())
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.Repeat(s+"\n", 1+lineCounterMin/(len(s)+1)) // long enough to be cut
		for _, lc := range []*LineCounter{o, cl} {
			if got, want := lc.Count(s), lc.c.Count(s); got != want {
				t.Fatalf("%s: %q: by lines %d, whole %d", lc.c.Name(), s, got, want)
			}
		}
	})
}
