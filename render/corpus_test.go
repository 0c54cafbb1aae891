package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// counter is the tokenizer the corpus claims are measured with.
func counter(t testing.TB) tokens.Counter {
	c, err := tokens.Get("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCorpusAuto checks, for every JSON file of the corpus, that auto
// decodes to the identical tree and never costs more than compact JSON, and
// that over all files it saves at least 15 % (o200k_base), per shape.
func TestCorpusAuto(t *testing.T) {
	files := corpus.Files(t, ".json")
	c := counter(t)
	type tot struct{ json, auto int }
	byShape := map[render.Shape]*tot{}
	var all tot
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(bytes.TrimSpace(data))
		if err != nil {
			continue // not JSON despite the name
		}
		text, formats, err := render.Encode(v, &render.Options{Counter: c, SkipVerify: os.Getenv("RENDER_DUMP") != ""})
		if err != nil {
			t.Fatalf("%s: Encode: %v", corpus.Name(path), err)
		}
		if err := render.Verify(text, v); err != nil {
			t.Errorf("%s: %v (formats %v)", corpus.Name(path), err, formats)
			if os.Getenv("RENDER_DUMP") != "" {
				os.WriteFile(filepath.Join(os.Getenv("RENDER_DUMP"), filepath.Base(path)+".auto"), []byte(text), 0o644)
			}
			continue
		}
		nj := c.Count(string(tree.AppendJSON(nil, v)))
		na := c.Count(text)
		if na > nj {
			t.Errorf("%s: auto %d tokens > compact JSON %d", corpus.Name(path), na, nj)
		}
		s := render.ShapeOf(v)
		if byShape[s] == nil {
			byShape[s] = &tot{}
		}
		byShape[s].json += nj
		byShape[s].auto += na
		all.json += nj
		all.auto += na
		if testing.Verbose() {
			t.Logf("%-60s %7d %7d %5.1f%% %v", corpus.Name(path), nj, na, 100*(1-float64(na)/float64(nj)), formats)
		}
	}
	var shapes []string
	for s := range byShape {
		shapes = append(shapes, string(s))
	}
	sort.Strings(shapes)
	for _, s := range shapes {
		x := byShape[render.Shape(s)]
		t.Logf("%-18s json %8d auto %8d saving %5.1f%%", s, x.json, x.auto, 100*(1-float64(x.auto)/float64(x.json)))
	}
	saving := 1 - float64(all.auto)/float64(all.json)
	t.Logf("%-18s json %8d auto %8d saving %5.1f%% (%s)", "total", all.json, all.auto, 100*saving, c.Name())
	if saving < 0.15 {
		t.Errorf("total saving %.1f%%, want at least 15%%", 100*saving)
	}
}

// TestCorpusTemplates: each JSON template, on every corpus file it applies
// to, decodes to the identical tree and never costs more than compact JSON.
func TestCorpusTemplates(t *testing.T) {
	c := counter(t)
	applied := map[render.Format]int{}
	for _, path := range corpus.Files(t, ".json") {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(bytes.TrimSpace(data))
		if err != nil {
			continue
		}
		nj := c.Count(string(tree.AppendJSON(nil, v)))
		for _, tmpl := range render.Templates {
			if !tmpl.Applies(v) {
				continue
			}
			applied[tmpl.Name]++
			text, _, err := render.Encode(v, &render.Options{Counter: c, Template: tmpl.Name, SkipVerify: true})
			if err != nil {
				t.Fatalf("%s: %s: %v", corpus.Name(path), tmpl.Name, err)
			}
			if err := render.Verify(text, v); err != nil {
				t.Errorf("%s: %s: %v", corpus.Name(path), tmpl.Name, err)
			}
			if n := c.Count(text); n > nj {
				t.Errorf("%s: %s: %d tokens > compact JSON %d", corpus.Name(path), tmpl.Name, n, nj)
			}
		}
	}
	t.Logf("templates applied: %v", applied)
}
