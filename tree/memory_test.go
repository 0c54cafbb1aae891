package tree

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// peakHeap runs f and returns the highest live heap seen while it ran
// (sampled every millisecond through runtime/metrics), above the heap
// before it.
func peakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			if h := read(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	if h := read(); h > peak.Load() {
		peak.Store(h)
	}
	close(done)
	<-stopped
	return peak.Load() - min(base, peak.Load())
}

// hugeArray returns a JSON array of objects of about size bytes, like a
// tool's list result.
func hugeArray(size int) string {
	var b strings.Builder
	b.Grow(size + 256)
	b.WriteByte('[')
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item-%d","state":"open","score":%d.5,"tags":["a","b"],"owner":{"login":"user%d"}}`, i, i, i%100, i%977)
	}
	b.WriteByte(']')
	return b.String()
}

// hugeString returns one JSON string of about size bytes, with an escape
// every so often.
func hugeString(size int) string {
	var b strings.Builder
	b.Grow(size + 16)
	b.WriteByte('"')
	for b.Len() < size {
		b.WriteString(`lorem ipsum dolor sit amet \"quoted\" line\n`)
	}
	b.WriteByte('"')
	return b.String()
}

// BenchmarkParseMemory parses a 100 MB JSON array of objects and a 100 MB
// JSON string and reports the peak live heap as a multiple of the input
// (peak-x), for Parse (which copies its input) and ParseOwned.
//
//	go test -run '^$' -bench ParseMemory -benchtime 1x ./tree/
func BenchmarkParseMemory(b *testing.B) {
	const size = 100 << 20
	for _, c := range []struct {
		name string
		doc  func(int) string
	}{{"array", hugeArray}, {"string", hugeString}} {
		doc := []byte(c.doc(size))
		for _, parse := range []struct {
			name string
			f    func([]byte) (Value, error)
		}{{"Parse", Parse}, {"ParseOwned", ParseOwned}} {
			b.Run(c.name+"/"+parse.name, func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					in := append([]byte(nil), doc...) // ParseOwned keeps it
					peak = max(peak, peakHeap(func() {
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
