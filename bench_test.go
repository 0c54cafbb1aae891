package terse

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tree"
)

// BenchmarkPipeline runs the whole pipeline on a GitHub list from the
// corpus (pull requests, 424 KB) beside the baseline of parsing it and
// writing it back as compact JSON, in the same run:
//
//	go test -run '^$' -bench Pipeline -benchtime 300ms .
func BenchmarkPipeline(b *testing.B) {
	data := readCorpus(b, "github/pygithub__repo-pulls.json")
	rule, err := filter.Compile(filter.Spec{Exclude: []string{"*_url", "node_id"}, DropNulls: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("baseline=parse+json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			v, err := tree.Parse(data)
			if err != nil {
				b.Fatal(err)
			}
			buf = tree.AppendJSON(buf[:0], v)
		}
	})
	cases := []struct {
		name string
		o    Options
	}{
		{"json/fits", Options{Budget: 1 << 30}},
		{"auto/fits", Options{Format: "auto", Budget: 1 << 30}},
		{"json/8000", Options{Budget: 8000}},
		{"auto/8000", Options{Format: "auto", Budget: 8000}},
		{"auto/8000/filter+dedup", Options{Format: "auto", Budget: 8000, Filter: rule, Dedup: dedup.New(dedup.Options{})}},
		{"auto/fits/filter+dedup", Options{Format: "auto", Budget: 1 << 30, Filter: rule, Dedup: dedup.New(dedup.Options{})}},
	}
	ctx := context.Background()
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			o := tc.o
			o.Store = &store.Mem{}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			// One long-lived pipeline, as a proxy keeps per tool rule.
			p, err := New(&o)
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				// A new partition each time: the dedup stage misses,
				// and a shown result is recorded.
				i++
				res, err := p.Process(ctx, data, &Request{Session: dedup.Key{Session: "bench", Partition: strconv.Itoa(i)}})
				if err != nil {
					b.Fatal(err)
				}
				if res.Report.Dedup {
					b.Fatal("unexpected dedup hit")
				}
			}
		})
	}
}

// BenchmarkFit20k fits the 424 KB GitHub list of pull requests to 20,000
// tokens (Claude Code's budget) with one long-lived pipeline, in each
// output format, and reports each run's time as a ratio to terse's own
// parse + compact-JSON re-emit of the same bytes, measured in the same
// loop (x-baseline). Targets: ≤ 15 ms and ≤ 4× the baseline.
//
//	go test -run '^$' -bench Fit20k -benchtime 20x .
func BenchmarkFit20k(b *testing.B) {
	data := readCorpus(b, "github/pygithub__repo-pulls.json")
	ctx := context.Background()
	for _, format := range []string{"json", "auto"} {
		b.Run(format, func(b *testing.B) {
			p, err := New(&Options{Format: format, Store: &store.Mem{}})
			if err != nil {
				b.Fatal(err)
			}
			req := &Request{Tool: "list_pull_requests", Budget: 20000}
			var base, fit time.Duration
			var buf []byte
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				v, err := tree.Parse(data)
				if err != nil {
					b.Fatal(err)
				}
				buf = tree.AppendJSON(buf[:0], v)
				t1 := time.Now()
				res, err := p.Process(ctx, data, req)
				if err != nil {
					b.Fatal(err)
				}
				fit += time.Since(t1)
				base += t1.Sub(t0)
				if res.Report.OutputTokens > 20000 {
					b.Fatalf("%d tokens, budget 20000", res.Report.OutputTokens)
				}
			}
			b.ReportMetric(float64(fit.Microseconds())/float64(b.N)/1000, "fit-ms")
			b.ReportMetric(float64(base.Microseconds())/float64(b.N)/1000, "baseline-ms")
			b.ReportMetric(float64(fit)/float64(base), "x-baseline")
		})
	}
}

// BenchmarkResultCopies runs one 99 KB JSON result from the corpus (a
// Slack history page) through a long-lived Pipeline as the proxy does
// (auto encoding, a store and a dedup cache, a new partition each call),
// whole and under a budget, and reports the bytes allocated per result
// as copies of the input ("copies/op": B/op ÷ input size), the figure
// the hot path keeps small:
//
//	go test -run '^$' -bench ResultCopies -benchtime 20x .
func BenchmarkResultCopies(b *testing.B) {
	data := readCorpus(b, "slack/slackdump__conversations-history-page1.json")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"json/whole", Options{Budget: 1 << 30}},
		{"auto/whole", Options{Format: "auto", Budget: 1 << 30}},
		{"auto/whole/dedup", Options{Format: "auto", Budget: 1 << 30, Dedup: dedup.New(dedup.Options{})}},
		{"auto/4000/dedup", Options{Format: "auto", Budget: 4000, Dedup: dedup.New(dedup.Options{})}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			o := tc.o
			o.Store = &store.Mem{}
			p, err := New(&o)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before, i := ms.TotalAlloc, 0
			for b.Loop() {
				i++
				if _, err := p.Process(ctx, data, &Request{Session: dedup.Key{Session: "bench", Partition: strconv.Itoa(i)}}); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.TotalAlloc-before)/float64(b.N)/float64(len(data)), "copies/op")
		})
	}
}
