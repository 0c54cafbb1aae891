package render

import (
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/terse-dev/terse/internal/memtest"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// BenchmarkEncodeMemory parses a 100 MB JSON array of objects and a
// 100 MB JSON string and auto-encodes them (o200k_base, verified), and
// reports the peak live heap as a multiple of the input (peak-x), the
// input itself not counted: "given" passes the input as Options.Compact
// (what terse encode does with compact input), "own" lets Encode write
// its own compact JSON. The collector is paced as terse's commands pace
// it for a large input (GOGC=25, a soft limit of 3.5× the input), since
// the figure counts garbage not yet collected.
//
//	go test -run '^$' -bench EncodeMemory -benchtime 1x ./render/
func BenchmarkEncodeMemory(b *testing.B) {
	const size = 100 << 20
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(size * 7 / 2))
	for _, c := range []struct {
		name string
		doc  func(int) []byte
	}{{"array", memtest.Array}, {"string", memtest.String}} {
		doc := c.doc(size)
		for _, given := range []bool{true, false} {
			name := c.name + "/own"
			if given {
				name = c.name + "/given"
			}
			b.Run(name, func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					in := append([]byte(nil), doc...) // ParseOwned keeps it
					peak = max(peak, memtest.PeakHeap(func() {
						v, err := tree.ParseOwned(in)
						if err != nil {
							b.Fatal(err)
						}
						o := &Options{Counter: tokens.O200kBase()}
						if given {
							o.Compact = unsafe.String(unsafe.SliceData(in), len(in))
						}
						text, _, err := Encode(v, o)
						if err != nil {
							b.Fatal(err)
						}
						runtime.KeepAlive(text)
					}))
				}
				b.SetBytes(int64(len(doc)))
				b.ReportMetric(float64(peak)/float64(len(doc)), "peak-x")
			})
		}
	}
}
