package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// githubList joins the items of the corpus's GitHub list payloads (pull
// requests, issues, workflow runs, ...) into one array of about 1 MB.
func githubList(b *testing.B) tree.Value {
	b.Helper()
	var items []tree.Value
	size := 0
	for _, p := range corpus.Files(b, ".json") {
		if filepath.Base(filepath.Dir(p)) != "github" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		v, err := tree.Parse(bytes.TrimSpace(data))
		if err != nil || v.Kind() != tree.KindArray {
			continue
		}
		for _, it := range v.Items() {
			if it.Kind() == tree.KindObject && size < 1<<20 {
				items = append(items, it)
				size += len(tree.AppendJSON(nil, it))
			}
		}
	}
	if size < 1<<19 {
		b.Skip("not enough GitHub list data in the corpus")
	}
	return tree.Array(items...)
}

// BenchmarkAuto encodes a ~1 MB GitHub list. "compact-json" is the
// baseline (tree.AppendJSON) measured in the same run; "auto" is Encode
// with the estimate counter and verification; "auto-noverify" skips the
// decode check; "auto-o200k" measures the candidates with the real BPE.
func BenchmarkAuto(b *testing.B) {
	v := githubList(b)
	n := int64(len(tree.AppendJSON(nil, v)))
	b.Run("compact-json", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			tree.AppendJSON(nil, v)
		}
	})
	for _, bc := range []struct {
		name string
		opts render.Options
	}{
		{"auto", render.Options{}},
		{"auto-noverify", render.Options{SkipVerify: true}},
		{"auto-noverify-unmarked", render.Options{SkipVerify: true, Unmarked: true}},
		{"auto-o200k", render.Options{Counter: tokens.O200kBase(), SkipVerify: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := render.Encode(v, &bc.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	text, _, _ := render.Encode(v, &render.Options{SkipVerify: true})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := render.Decode(text); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkItems encodes the items of the GitHub list one at a time, as
// the fitter does when it prices each item in the auto format (no
// verification, o200k_base). "compact-json" is the baseline measured in
// the same run.
func BenchmarkItems(b *testing.B) {
	items := githubList(b).Items()
	var n int64
	for _, it := range items {
		n += int64(len(tree.AppendJSON(nil, it)))
	}
	b.Run("compact-json", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			for _, it := range items {
				tree.AppendJSON(nil, it)
			}
		}
	})
	for _, bc := range []struct {
		name string
		opts render.Options
	}{
		{"auto-o200k", render.Options{Counter: tokens.O200kBase(), SkipVerify: true}},
		{"auto-estimate", render.Options{SkipVerify: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				for _, it := range items {
					if _, _, err := render.Encode(it, &bc.opts); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
