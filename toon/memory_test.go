package toon

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/terse-dev/terse/tree"
)

// peakHeap runs f and returns the highest heap seen while it ran (sampled
// every millisecond through runtime/metrics), above the heap before it.
func peakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
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

func hugeJSON(kind string, size int) []byte {
	var b strings.Builder
	b.Grow(size + 256)
	if kind == "string" {
		b.WriteByte('"')
		for b.Len() < size {
			b.WriteString(`lorem ipsum dolor sit amet \"quoted\" line\n`)
		}
		b.WriteByte('"')
		return []byte(b.String())
	}
	b.WriteByte('[')
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item-%d","state":"open","score":%d.5,"tags":["a","b"],"owner":{"login":"user%d"}}`, i, i, i%100, i%977)
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// BenchmarkMemory reports the peak heap, as a multiple of the JSON input
// (peak-x), of JSON → TOON (tree.ParseOwned then Marshal) and of decoding
// that TOON back (UnmarshalOwned), for a 100 MB array of objects and a
// 100 MB string; the inputs themselves are not counted.
//
//	go test -run '^$' -bench Memory -benchtime 1x ./toon/
func BenchmarkMemory(b *testing.B) {
	const size = 100 << 20
	for _, kind := range []string{"array", "string"} {
		doc := hugeJSON(kind, size)
		var out []byte
		b.Run(kind+"/encode", func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				in := append([]byte(nil), doc...)
				peak = max(peak, peakHeap(func() {
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
				peak = max(peak, peakHeap(func() {
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
