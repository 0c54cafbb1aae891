package tokens

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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

// BenchmarkLoad measures reading the o200k_base rank image in place.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		mustRanks(O200kBaseName, o200kImage)
	}
}

// BenchmarkCountVsTiktokenGo interleaves terse's warm counter and
// tiktoken-go/tokenizer file by file, so both see the same machine load, and
// reports each one's throughput and the speedup (tiktoken-go time / terse
// time). files-differ counts the files whose counts differ: the ones where
// tiktoken-go mis-splits (see TestReferenceSplitDiffers); the golden file
// holds tiktoken's counts.
//
//	go test -run '^$' -bench VsTiktokenGo -benchtime 3x ./tokens/
func BenchmarkCountVsTiktokenGo(b *testing.B) {
	texts, size := corpusTexts(b)
	for _, enc := range []struct {
		name string
		new  func() *bpeCounter
		ref  func() *codec.Codec
	}{
		{O200kBaseName, newO200k, codec.NewO200kBase},
		{Cl100kBaseName, newCl100k, codec.NewCl100kBase},
	} {
		b.Run(enc.name, func(b *testing.B) {
			c, ref := enc.new(), enc.ref()
			for _, s := range texts {
				c.Count(s)
			}
			b.SetBytes(size)
			var mine, theirs time.Duration
			differ := 0
			for b.Loop() {
				differ = 0
				for _, s := range texts {
					t0 := time.Now()
					n := c.Count(s)
					t1 := time.Now()
					m, err := ref.Count(s)
					t2 := time.Now()
					if err != nil {
						b.Fatal(err)
					}
					mine += t1.Sub(t0)
					theirs += t2.Sub(t1)
					if n != m {
						differ++
					}
				}
			}
			mb := float64(size) * float64(b.N) / 1e6
			b.ReportMetric(mb/mine.Seconds(), "terse-MB/s")
			b.ReportMetric(mb/theirs.Seconds(), "tiktoken-go-MB/s")
			b.ReportMetric(theirs.Seconds()/mine.Seconds(), "speedup")
			b.ReportMetric(float64(differ), "files-differ")
		})
	}
}

// BenchmarkCountPathological counts 10 MB runs of one character (each one
// piece, merged by bpeCountLong) and 10 MB of random lower-case letters (one
// piece that does not repeat), and 10 MB of corpus text, alternately in
// the same run, and reports each one's throughput and the ratio of the
// run's time to the corpus text's (slowdown).
//
//	go test -run '^$' -bench Pathological -benchtime 5x ./tokens/
func BenchmarkCountPathological(b *testing.B) {
	texts, _ := corpusTexts(b)
	const size = 10 << 20
	var ordinary strings.Builder
	for ordinary.Len() < size {
		for _, s := range texts {
			ordinary.WriteString(s)
		}
	}
	text := ordinary.String()[:size]
	text = strings.ToValidUTF8(text[:size-utf8.UTFMax], "") // cut at a rune
	rng := rand.New(rand.NewPCG(1, 1))
	letters := make([]byte, size)
	for i := range letters {
		letters[i] = "abcdefghijklmnopqrstuvwxyz"[rng.IntN(26)]
	}
	for _, ch := range []string{"a", " ", "!", "\n", "日", "random-letters"} {
		run := strings.Repeat(ch, size/len(ch))
		if ch == "random-letters" { // one piece that does not repeat
			run = string(letters)
		}
		b.Run(fmt.Sprintf("%q", ch), func(b *testing.B) {
			c := newO200k()
			c.Count(text)
			var tRun, tText time.Duration
			for b.Loop() {
				t0 := time.Now()
				c.Count(run)
				t1 := time.Now()
				c.Count(text)
				tRun += t1.Sub(t0)
				tText += time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(len(run))*n/1e6/tRun.Seconds(), "run-MB/s")
			b.ReportMetric(float64(len(text))*n/1e6/tText.Seconds(), "text-MB/s")
			b.ReportMetric(tRun.Seconds()/tText.Seconds(), "slowdown")
		})
	}
}

// BenchmarkBinary runs Binary over the whole corpus joined into one text.
func BenchmarkBinary(b *testing.B) {
	texts, size := corpusTexts(b)
	data := []byte(strings.Join(texts, ""))
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if Binary(data) {
			b.Fatal("corpus reads as binary")
		}
	}
}

// BenchmarkRuns counts a JSON array (about 1 MB) of strings that are runs
// of one character, 300, 1,000 or 10,000 characters long, the characters
// taking turns ("a", " ", "-", "=", "é"), against an array of words of the
// same size as the baseline.
//
//	go test -run '^$' -bench Runs -benchtime 20x ./tokens/
func BenchmarkRuns(b *testing.B) {
	array := func(item func(i int) string) string {
		var sb strings.Builder
		sb.WriteByte('[')
		for i := 0; sb.Len() < 1<<20; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`"` + item(i) + `"`)
		}
		sb.WriteByte(']')
		return sb.String()
	}
	words := strings.Fields("the quick brown fox jumps over a lazy dog while terse counts tokens of every result exactly")
	r := rand.New(rand.NewPCG(1, 2))
	texts := []struct{ name, text string }{{"words", array(func(int) string {
		return words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
	})}}
	chars := []string{"a", "-", " ", "=", "é"}
	for _, n := range []int{300, 1000, 10000} {
		texts = append(texts, struct{ name, text string }{fmt.Sprintf("run%d", n), array(func(i int) string {
			return strings.Repeat(chars[i%len(chars)], n)
		})})
	}
	c := O200kBase()
	for _, tt := range texts {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.text)))
			b.ReportAllocs()
			for b.Loop() {
				c.Count(tt.text)
			}
		})
	}
}
