package telemetry

import (
	"testing"
)

type discard struct{}

func (discard) Write([]Event) error { return nil }
func (discard) Close() error        { return nil }

// BenchmarkRecordOff is the call path with telemetry off: a nil Recorder.
func BenchmarkRecordOff(b *testing.B) {
	var r *Recorder
	e := sample(0)
	b.ReportAllocs()
	for b.Loop() {
		r.Record(&e)
	}
}

// BenchmarkRecordOn is the call path with telemetry on: the copy into the
// queue (the writer drains it concurrently; the queue is flushed, untimed,
// before it can fill, so that no event takes the drop path).
func BenchmarkRecordOn(b *testing.B) {
	const queue = 1 << 12
	r := New(discard{}, Options{Queue: queue})
	defer r.Close()
	e := sample(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%queue == queue-1 {
			b.StopTimer()
			r.Flush()
			b.StartTimer()
		}
		r.Record(&e)
	}
	b.StopTimer()
	b.ReportMetric(float64(r.Stats().Dropped), "dropped")
}

// BenchmarkRecordFull is the call path when the queue is full: the event
// is dropped and counted.
func BenchmarkRecordFull(b *testing.B) {
	s := &blockSink{release: make(chan struct{})}
	r := New(s, Options{Queue: 1})
	defer func() { close(s.release); r.Close() }()
	e := sample(0)
	b.ReportAllocs()
	for b.Loop() {
		r.Record(&e)
	}
}

// BenchmarkRecordOnDir records into a real directory sink.
func BenchmarkRecordOnDir(b *testing.B) {
	r, _ := openTest(b, DirOptions{}, Options{Queue: 1 << 16})
	defer r.Close()
	e := sample(0)
	b.ReportAllocs()
	for b.Loop() {
		r.Record(&e)
	}
}

func TestRecordAllocs(t *testing.T) {
	r := New(discard{}, Options{})
	defer r.Close()
	e := sample(0)
	if n := testing.AllocsPerRun(1000, func() { r.Record(&e) }); n != 0 {
		t.Errorf("Record allocates %g times", n)
	}
	var off *Recorder
	if n := testing.AllocsPerRun(1000, func() { off.Record(&e) }); n != 0 {
		t.Errorf("nil Record allocates %g times", n)
	}
	data := []byte(`{"a":[{"b":"https://x.test"}]}`)
	if n := testing.AllocsPerRun(100, func() { Detect(data) }); n != 0 {
		t.Errorf("Detect allocates %g times", n)
	}
}
