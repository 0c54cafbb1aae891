package render_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tree"
)

// TestCorpusStable pins Encode's output, byte for byte, on every JSON file
// of the corpus and on every item of each top-level array (the fitter's
// per-item drafts), under a few option sets: a checksum per file and option
// set is kept in testdata/corpus.sum, and -update rewrites it. Speed work
// must not change a byte; a deliberate change of output refreshes the sums.
func TestCorpusStable(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const path = "testdata/corpus.sum"
	files := corpus.Files(t, ".json")
	sets := []struct {
		name string
		opts render.Options
	}{
		{"default", render.Options{}},
		{"o200k-skip", render.Options{Counter: counter(t), SkipVerify: true}},
		{"nofactor", render.Options{NoFactor: true, SkipVerify: true}},
		{"notoon-fence", render.Options{NoTOON: true, FenceKeys: []string{"diff", "body"}, SkipVerify: true}},
		{"toon", render.Options{Format: render.TOON, SkipVerify: true}},
		{"mr-diff-fence", render.Options{Template: render.MRDiffFence, SkipVerify: true}},
		{"ci-pipeline", render.Options{Template: render.CIPipeline, SkipVerify: true}},
	}
	want := map[string]string{}
	if data, err := os.ReadFile(path); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), " "); ok {
				want[v] = k
			}
		}
	} else if !*update {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(bytes.TrimSpace(data))
		if err != nil {
			continue
		}
		values := []tree.Value{v}
		if v.Kind() == tree.KindArray {
			values = append(values, v.Items()...)
		}
		for _, s := range sets {
			h := sha256.New()
			for _, x := range values {
				text, formats, err := render.Encode(x, &s.opts)
				if err != nil {
					fmt.Fprintf(h, "error %v\n", err)
					continue
				}
				fmt.Fprintf(h, "%d %s\n%s\n", len(text), formatList(formats), text)
			}
			key := corpus.Name(p) + " " + s.name
			sum := hex.EncodeToString(h.Sum(nil))[:24]
			got[key] = sum
			if *update {
				continue
			}
			if w, ok := want[key]; !ok {
				t.Logf("%s: no recorded checksum", key)
			} else if w != sum {
				t.Errorf("%s: output changed (checksum %s, want %s)", key, sum, w)
			}
		}
	}
	if *update {
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(got[k] + " " + k + "\n")
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEncodeConcurrent encodes corpus items from several goroutines at
// once (Encode reuses working memory between calls) and checks each result
// against the same encoding done alone.
func TestEncodeConcurrent(t *testing.T) {
	var items []tree.Value
	for _, p := range corpus.Files(t, ".json") {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(bytes.TrimSpace(data))
		if err != nil || v.Kind() != tree.KindArray {
			continue
		}
		for _, it := range v.Items() {
			if len(items) < 400 {
				items = append(items, it)
			}
		}
	}
	opts := &render.Options{SkipVerify: true, FenceKeys: []string{"body"}}
	want := make([]string, len(items))
	for i, it := range items {
		want[i], _, _ = render.Encode(it, opts)
	}
	const workers = 4
	errs := make(chan string, workers)
	for w := range workers {
		go func() {
			var bad string
			for i := range items {
				i = (i + w*len(items)/workers) % len(items)
				if got, _, _ := render.Encode(items[i], opts); got != want[i] && bad == "" {
					bad = fmt.Sprintf("item %d: concurrent Encode = %q, want %q", i, got, want[i])
				}
			}
			errs <- bad
		}()
	}
	for range workers {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}
