package mcpproxy

import (
	"context"
	"iter"
	"os"
	"testing"
	"time"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tree"
)

// TestTelemetryPrivacy runs every corpus file through the stdio proxy and
// the gateway with telemetry on (fitted to a budget, and one chunk
// fetched), and checks that no string of 12 or more bytes of any corpus
// file appears in any telemetry file.
func TestTelemetryPrivacy(t *testing.T) {
	files := corpus.Files(t, "")
	if testing.Short() {
		t.Skip("runs every corpus file through proxy and gateway")
	}
	dir := t.TempDir()
	rec, err := telemetry.Open(telemetry.Settings{Enabled: true, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mk := func() *Options {
		o := chunkOptions(&store.Mem{})
		o.Telemetry = rec
		o.MaxSizeBytes = 4 << 20
		return o
	}
	fs := fronts(t, mk)
	for _, f := range fs {
		for _, file := range files {
			res := f.call(t, "read", map[string]any{"path": file, "_budget": 2000})
			text := textOf(t, res)
			if m := chunkRefRE.FindStringSubmatch(text); m != nil {
				f.call(t, "read", map[string]any{"_chunk": m[1] + ".1", "_budget": 2000})
			}
		}
	}
	// Events are recorded after the answer: wait for the last ones.
	for range 100 {
		if s := rec.Stats(); s.Seen >= uint64(2*len(files)) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	evs, err := telemetry.ReadDir(dir, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]int{}
	chunks := 0
	for _, e := range evs.Records {
		entries[e.Entry]++
		if e.Chunk {
			chunks++
		}
	}
	if entries[telemetry.EntryProxy] < len(files) || entries[telemetry.EntryGateway] < len(files) || chunks == 0 {
		t.Errorf("events by entry point %v (%d chunk fetches), want at least %d of proxy and gateway each and chunk fetches", entries, chunks, len(files))
	}

	leaks, nfiles, err := telemetry.Audit(dir, corpusSources(t, files))
	if err != nil {
		t.Fatal(err)
	}
	for i, lk := range leaks {
		if i == 20 {
			break
		}
		t.Errorf("%q from %s is in telemetry file %s", lk.Text, lk.Source, lk.File)
	}
	t.Logf("%d events from %d corpus files, %d telemetry files", len(evs.Records), len(files), nfiles)
}

// corpusSources yields the corpus files by name and content.
func corpusSources(t *testing.T, files []string) iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !yield(corpus.Name(f), data) {
				return
			}
		}
	}
}

// BenchmarkTransformTelemetry measures the engine's transform of one
// 64 KiB pretty-JSON result with telemetry off (a nil recorder) and on
// (shape detection, fingerprint, one queued event), in the same run.
//
//	go test -run '^$' -bench TransformTelemetry -benchtime 50x ./mcpproxy
func BenchmarkTransformTelemetry(b *testing.B) {
	text := rowsText(rows64K())
	raw := tree.AppendJSON(nil, tree.Object(tree.Member{Key: "content", Value: tree.Array(textBlock(text, ""))}))
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			o := &Options{}
			if on {
				rec, err := telemetry.Open(telemetry.Settings{Enabled: true, Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				defer rec.Close()
				o.Telemetry = rec
			}
			e := newEngine(o)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				var rec CallRecord
				if _, err := e.finish(context.Background(), &call{tool: "rows", sessionID: "s", start: time.Now()}, Policy{}, raw, &rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
