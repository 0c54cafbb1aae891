package dedup_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/internal/replay"
)

// linesContexts are the corpus's tool results, in order, by context
// (a transcript's main conversation or sub-agent between compactions):
// the texts one Lines sees.
func linesContexts(b *testing.B) ([][]replay.Result, int) {
	var ctxs [][]replay.Result
	at := make(map[string]int)
	total := 0
	for _, r := range replay.Results(b) {
		if r.IsError {
			continue
		}
		k := r.File + "\x00" + strconv.Itoa(r.Partition) + "\x00" + strconv.FormatBool(r.Sidechain)
		i, ok := at[k]
		if !ok {
			i = len(ctxs)
			at[k] = i
			ctxs = append(ctxs, nil)
		}
		ctxs[i] = append(ctxs[i], r)
		total += len(r.Text)
	}
	return ctxs, total
}

// BenchmarkLines refers every tool result of the corpus against the
// results before it in its context and records it, as the proxy does on
// each request; split-join (each text cut into lines and joined again)
// is the baseline of the same run.
func BenchmarkLines(b *testing.B) {
	ctxs, total := linesContexts(b)
	b.Run("split-join", func(b *testing.B) {
		b.SetBytes(int64(total))
		b.ReportAllocs()
		for b.Loop() {
			for _, c := range ctxs {
				for _, r := range c {
					_ = strings.Join(strings.Split(r.Text, "\n"), "\n")
				}
			}
		}
	})
	b.Run("refer-add", func(b *testing.B) {
		b.SetBytes(int64(total))
		b.ReportAllocs()
		refs, saved := 0, 0
		for b.Loop() {
			refs, saved = 0, 0
			for _, c := range ctxs {
				var x dedup.Lines
				for _, r := range c {
					s, n := x.Refer(r.Text, nil)
					refs += n
					saved += len(r.Text) - len(s)
					x.Add(r.ID, s)
				}
			}
		}
		b.ReportMetric(float64(refs), "refs")
		b.ReportMetric(100*float64(saved)/float64(total), "%saved")
	})
}
