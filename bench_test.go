package terse

import (
	"context"
	"strconv"
	"testing"

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
