package tokens

import (
	"os"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/tiktoken-go/tokenizer/codec"
)

// corpusTexts returns every corpus file's text.
func corpusTexts(b *testing.B) (texts []string, size int64) {
	b.Helper()
	for _, f := range corpus.Files(b, "") {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, string(data))
		size += int64(len(data))
	}
	return texts, size
}

// BenchmarkCount counts every corpus file, one Count per file, with terse's
// counters (warm cache: the shared counter after one pass; cold cache: a new
// counter per pass, ranks already loaded) and with tiktoken-go/tokenizer's
// Count in the same run. tokens/op is the total count.
//
//	go test -run '^$' -bench Count -benchtime 3x ./tokens/
func BenchmarkCount(b *testing.B) {
	texts, size := corpusTexts(b)
	run := func(b *testing.B, count func(string) int) {
		b.SetBytes(size)
		b.ReportAllocs()
		total := 0
		for b.Loop() {
			total = 0
			for _, s := range texts {
				total += count(s)
			}
		}
		b.ReportMetric(float64(total), "tokens/op")
	}
	for _, enc := range []struct {
		name string
		new  func() *bpeCounter
		ref  func() *codec.Codec
	}{
		{O200kBaseName, newO200k, codec.NewO200kBase},
		{Cl100kBaseName, newCl100k, codec.NewCl100kBase},
	} {
		b.Run(enc.name+"/terse-warm", func(b *testing.B) {
			c := enc.new()
			for _, s := range texts {
				c.Count(s)
			}
			run(b, c.Count)
		})
		b.Run(enc.name+"/terse-cold", func(b *testing.B) {
			enc.new() // load the ranks outside the timer
			b.SetBytes(size)
			b.ReportAllocs()
			total := 0
			for b.Loop() {
				c := enc.new()
				total = 0
				for _, s := range texts {
					total += c.Count(s)
				}
			}
			b.ReportMetric(float64(total), "tokens/op")
		})
		b.Run(enc.name+"/tiktoken-go", func(b *testing.B) {
			ref := enc.ref()
			run(b, func(s string) int {
				n, err := ref.Count(s)
				if err != nil {
					b.Fatal(err)
				}
				return n
			})
		})
	}
	b.Run("estimate", func(b *testing.B) { run(b, Estimate().Count) })
}

// BenchmarkLoad measures building the o200k_base rank table from
// tiktoken-go/tokenizer's vocabulary (its own map is built once, before).
func BenchmarkLoad(b *testing.B) {
	c := codec.NewO200kBase()
	b.ReportAllocs()
	for b.Loop() {
		mustRanks(c, 199998)
	}
}
