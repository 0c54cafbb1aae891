// Package memtest measures peak heap use and builds large JSON inputs for
// the memory benchmarks of tree and toon.
package memtest

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"time"
)

// PeakHeap runs f and returns the highest live heap seen while it ran
// (sampled every millisecond through runtime/metrics), above the heap
// before it.
func PeakHeap(f func()) uint64 {
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

// Array returns a JSON array of objects of about size bytes, like a
// tool's list result.
func Array(size int) []byte {
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
	return []byte(b.String())
}

// String returns one JSON string of about size bytes, with an escape
// every so often.
func String(size int) []byte {
	var b strings.Builder
	b.Grow(size + 64)
	b.WriteByte('"')
	for b.Len() < size {
		b.WriteString(`lorem ipsum dolor sit amet \"quoted\" line\n`)
	}
	b.WriteByte('"')
	return []byte(b.String())
}
