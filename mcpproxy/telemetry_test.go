package mcpproxy

import (
	"context"
	"iter"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tokens"
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
			if c := readChunkFetch(text); c.byN {
				f.call(t, "read", map[string]any{"_chunk": c.handle + ".1", "_budget": 2000})
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

// evSink keeps the events a recorder writes.
type evSink struct {
	mu sync.Mutex
	ev []telemetry.Event
}

func (s *evSink) Write(b []telemetry.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ev = append(s.ev, b...)
	return nil
}
func (s *evSink) Close() error { return nil }

// TestPassedEventCountsAsSent: a pretty JSON result passed as it was (its
// id line would cost more than compacting saves) is counted as sent in
// its event, as in the call's stats: the model read its 16 tokens, not
// the 9 of its compact JSON.
func TestPassedEventCountsAsSent(t *testing.T) {
	text := "{\n    \"a\": 1,\n    \"b\": 2\n}"
	d := dedup.New(dedup.Options{MinBytes: 1})
	p, err := terse.New(&terse.Options{Format: "auto", Dedup: d})
	if err != nil {
		t.Fatal(err)
	}
	sink := &evSink{}
	rec := telemetry.New(sink, telemetry.Options{})
	e := newEngine(&Options{Pipeline: p, Dedup: d, Telemetry: rec, MinSizeBytes: -1})
	raw := tree.AppendJSON(nil, tree.Object(tree.Member{Key: "content", Value: tree.Array(textBlock(text, ""))}))
	var cr CallRecord
	out, err := e.finish(context.Background(), &call{tool: "x", sessionID: "s", start: time.Now()}, Policy{}, raw, &cr)
	if err != nil || out != nil {
		t.Fatalf("finish = %s, %v; want the result passed as it was", out, err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if len(sink.ev) != 1 {
		t.Fatalf("%d events, want 1", len(sink.ev))
	}
	ev := sink.ev[0]
	n := tokens.O200kBase().Count(text)
	if ev.TokensIn != n || ev.TokensOut != n || ev.BytesIn != len(text) || ev.BytesOut != len(text) || cr.TokensBefore != n || cr.TokensAfter != n {
		t.Errorf("event tokens %d → %d, bytes %d → %d; call %d → %d; want all as sent: %d tokens, %d bytes",
			ev.TokensIn, ev.TokensOut, ev.BytesIn, ev.BytesOut, cr.TokensBefore, cr.TokensAfter, n, len(text))
	}
}
