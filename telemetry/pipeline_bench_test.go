package telemetry

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/internal/corpus"
)

// BenchmarkPipeline processes a corpus result through the root pipeline
// with telemetry off (a nil Recorder: what every entry point does by
// default) and on (Detect, Fingerprint, SetReport, Record into a real
// directory), in the same run, so that the two can be compared.
func BenchmarkPipeline(b *testing.B) {
	dir := corpus.Dir(b, filepath.Join("corpus", "github"))
	data, err := os.ReadFile(filepath.Join(dir, "pygithub__issues.json"))
	if err != nil {
		b.Skip(err)
	}
	ctx := context.Background()
	on, _ := openTest(b, DirOptions{}, Options{Queue: 1 << 16})
	defer on.Close()
	for _, c := range []struct {
		name string
		r    *Recorder
	}{{"off", nil}, {"on", on}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				// A new Pipeline each time: it remembers the encodings of
				// the last results it saw.
				p, err := terse.New(&terse.Options{Format: "auto"})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				res, err := p.Process(ctx, data, &terse.Request{Tool: "github__list_issues"})
				if err != nil {
					b.Fatal(err)
				}
				if c.r != nil {
					ev := Event{Entry: EntryProxy, Session: "s", Tool: "github__list_issues", Latency: time.Since(start)}
					f := Detect(data)
					ev.Shape, ev.Inner, ev.Depth, ev.Cols = f.Shape, f.Inner, f.Depth, f.Cols
					ev.Fingerprint = c.r.Fingerprint(data)
					ev.SetReport(&res.Report)
					c.r.Record(&ev)
				}
			}
		})
	}
}

// BenchmarkDetect classifies corpus results (the part of an event that
// reads the payload).
func BenchmarkDetect(b *testing.B) {
	files := corpus.Files(b, ".json", ".md", ".log", ".txt")
	var all [][]byte
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			all = append(all, data)
			n += min(len(data), detectLimit)
		}
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range all {
			Detect(d)
		}
	}
}
