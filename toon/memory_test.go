package toon

import (
	"runtime"
	"testing"

	"github.com/terse-dev/terse/internal/memtest"
	"github.com/terse-dev/terse/tree"
)

// BenchmarkMemory reports the peak heap, as a multiple of the JSON input
// (peak-x), of JSON → TOON (tree.ParseOwned then Marshal) and of decoding
// that TOON back (UnmarshalOwned), for a 100 MB array of objects and a
// 100 MB string; the inputs themselves are not counted.
//
//	go test -run '^$' -bench Memory -benchtime 1x ./toon/
func BenchmarkMemory(b *testing.B) {
	const size = 100 << 20
	for _, kind := range []string{"array", "string"} {
		doc := memtest.Array(size)
		if kind == "string" {
			doc = memtest.String(size)
		}
		var out []byte
		b.Run(kind+"/encode", func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				in := append([]byte(nil), doc...)
				peak = max(peak, memtest.PeakHeap(func() {
					v, err := tree.ParseOwned(in)
					if err != nil {
						b.Fatal(err)
					}
					out = Marshal(v)
				}))
			}
			b.ReportMetric(float64(peak)/float64(len(doc)), "peak-x")
			b.ReportMetric(float64(len(out))/float64(len(doc)), "out-x")
		})
		b.Run(kind+"/decode", func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				in := append([]byte(nil), out...) // UnmarshalOwned keeps it
				peak = max(peak, memtest.PeakHeap(func() {
					v, err := UnmarshalOwned(in, nil)
					if err != nil {
						b.Fatal(err)
					}
					runtime.KeepAlive(v)
				}))
			}
			b.ReportMetric(float64(peak)/float64(len(doc)), "peak-x")
		})
	}
}
