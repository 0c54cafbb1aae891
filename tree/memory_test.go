package tree

import (
	"runtime"
	"testing"

	"github.com/terse-dev/terse/internal/memtest"
)

// BenchmarkParseMemory parses a 100 MB JSON array of objects and a 100 MB
// JSON string and reports the peak live heap as a multiple of the input
// (peak-x), for Parse (which copies its input) and ParseOwned.
//
//	go test -run '^$' -bench ParseMemory -benchtime 1x ./tree/
func BenchmarkParseMemory(b *testing.B) {
	const size = 100 << 20
	for _, c := range []struct {
		name string
		doc  func(int) []byte
	}{{"array", memtest.Array}, {"string", memtest.String}} {
		doc := c.doc(size)
		for _, parse := range []struct {
			name string
			f    func([]byte) (Value, error)
		}{{"Parse", Parse}, {"ParseOwned", ParseOwned}} {
			b.Run(c.name+"/"+parse.name, func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					in := append([]byte(nil), doc...) // ParseOwned keeps it
					peak = max(peak, memtest.PeakHeap(func() {
						v, err := parse.f(in)
						if err != nil {
							b.Fatal(err)
						}
						runtime.KeepAlive(v)
					}))
				}
				b.SetBytes(int64(len(doc)))
				b.ReportMetric(float64(peak)/float64(len(doc)), "peak-x")
			})
		}
	}
}
