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
// queue (the writer drains it concurrently; a full queue drops).
func BenchmarkRecordOn(b *testing.B) {
	r := New(discard{}, Options{})
	defer r.Close()
	e := sample(0)
	b.ReportAllocs()
	for b.Loop() {
		r.Record(&e)
	}
	b.ReportMetric(float64(r.Stats().Dropped), "dropped")
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
