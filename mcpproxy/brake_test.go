package mcpproxy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/telemetry"
	"golang.org/x/tools/txtar"
)

// TestBrakeRefetchStorm: a scripted client that keeps fetching chunks of
// one tool's results gets, past the threshold, that tool's results whole
// for the rest of the session: the reply that crosses it says so once,
// in one line; later results carry no handle and no notice; the brake is
// counted in the stats. Through the proxy and the gateway.
func TestBrakeRefetchStorm(t *testing.T) {
	for _, f := range fronts(t, func() *Options { o := chunkOptions(&store.Mem{}); o.BrakeFetches = 3; return o }) {
		t.Run(f.name, func(t *testing.T) {
			res := f.call(t, "items", map[string]any{"n": 30, "_budget": 300})
			h := handleOf(t, textOf(t, res))
			for i := 1; i <= 4; i++ {
				res = f.call(t, "items", map[string]any{"_chunk": h + ".1", "_budget": 300})
				text := textOf(t, res)
				if got := strings.Count(text, BrakeNotice); got != b2i(i == 4) {
					t.Errorf("fetch %d: %d notices, want %d:\n%.300s", i, got, b2i(i == 4), text)
				}
				if i == 4 && !strings.HasPrefix(text, BrakeNotice+"\n") {
					t.Errorf("fetch %d: notice not on the first line:\n%.300s", i, text)
				}
			}
			// Braked: the same call now comes back whole, without a notice.
			res = f.call(t, "items", map[string]any{"n": 30, "_budget": 300})
			text := textOf(t, res)
			if strings.Contains(text, BrakeNotice) || handleRE.MatchString(text) || !sameJSON(t, text, itemsText(30, 0)) {
				t.Errorf("braked result is not the whole original:\n%.400s", text)
			}
			if got := completenessOf(t, res); got != nil && got["complete"] != true {
				t.Errorf("braked result: %s = %v", MetaCompleteness, got)
			}
			if n := f.stats.Totals().Brakes; n != 1 {
				t.Errorf("stats: %d brakes, want 1", n)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBrakeLargerBudget: the same call again with a larger budget after a
// result that left items out brakes the tool at once; the result is
// whole and led by the notice (golden: testdata/brake.txtar). Another
// tool is not braked.
func TestBrakeLargerBudget(t *testing.T) {
	f := fronts(t, func() *Options { o := chunkOptions(&store.Mem{}); o.BrakeFetches = 0; return o })[0]
	f.call(t, "items", map[string]any{"n": 12, "_budget": 200})
	res := f.call(t, "items", map[string]any{"n": 12, "_budget": 400})
	got := textOf(t, res)
	file := filepath.Join("testdata", "brake.txtar")
	if *update {
		ar := &txtar.Archive{Comment: []byte("What a braked tool's next result reads: the same call again with a larger\nbudget after a result that left items out. Generated: go test -run TestBrakeLargerBudget -update.\n"),
			Files: []txtar.File{{Name: "larger-budget.txt", Data: []byte(got + "\n")}}}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(string(ar.Files[0].Data), "\n"); got != want {
		t.Errorf("braked result differs from %s (go test -run TestBrakeLargerBudget -update):\ngot:\n%s\nwant:\n%s", file, got, want)
	}
	// The same call with a smaller budget: still whole, no second notice.
	text := textOf(t, f.call(t, "items", map[string]any{"n": 12, "_budget": 100}))
	if strings.Contains(text, BrakeNotice) || !sameJSON(t, text, itemsText(12, 0)) {
		t.Errorf("braked tool, smaller budget:\n%s", text)
	}
	// Another tool still elides.
	text = textOf(t, f.call(t, "rows", map[string]any{"n": 40, "_budget": 150}))
	if !handleRE.MatchString(text) {
		t.Errorf("rows was braked too:\n%s", text)
	}
	if n := f.stats.Totals().Brakes; n != 1 {
		t.Errorf("stats: %d brakes, want 1", n)
	}
}

// TestBrakeTelemetry: the fetch that brakes a tool is recorded with the
// telemetry field "brake", once.
func TestBrakeTelemetry(t *testing.T) {
	dir := t.TempDir()
	rec, err := telemetry.Open(telemetry.Settings{Enabled: true, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	f := fronts(t, func() *Options {
		o := chunkOptions(&store.Mem{})
		o.BrakeFetches, o.Telemetry = 2, rec
		return o
	})[0]
	h := handleOf(t, textOf(t, f.call(t, "items", map[string]any{"n": 30, "_budget": 300})))
	for range 4 {
		f.call(t, "items", map[string]any{"_chunk": h + ".1", "_budget": 300})
	}
	// The chunk events are recorded before the answers; Close writes them.
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := telemetry.ReadDir(dir, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	brakes := 0
	for _, r := range l.Records {
		if r.Brake {
			brakes++
			if !r.Chunk {
				t.Errorf("the brake was recorded on a non-chunk event: %+v", r)
			}
		}
	}
	if brakes != 1 {
		t.Errorf("%d events with brake, want 1", brakes)
	}
}

// TestBrakeRereads: a scripted client that reads again what terse left
// out of a result (the same call at the same budget) has each re-read
// counted toward the brake as a chunk fetch is: past the threshold the
// tool is braked, the reply that crosses it is whole and says so once,
// and the brake is counted in the stats. Through the proxy and the
// gateway.
func TestBrakeRereads(t *testing.T) {
	for _, f := range fronts(t, func() *Options { o := chunkOptions(&store.Mem{}); o.BrakeFetches = 3; return o }) {
		t.Run(f.name, func(t *testing.T) {
			args := map[string]any{"n": 30, "_budget": 300}
			handleOf(t, textOf(t, f.call(t, "items", args)))
			for i := 1; i <= 4; i++ {
				res := f.call(t, "items", args)
				text := textOf(t, res)
				braked := i == 4
				if got := strings.Count(text, BrakeNotice); got != b2i(braked) {
					t.Errorf("re-read %d: %d notices, want %d:\n%.300s", i, got, b2i(braked), text)
				}
				if braked {
					if !strings.HasPrefix(text, BrakeNotice+"\n") || !sameJSON(t, strings.TrimPrefix(text, BrakeNotice+"\n"), itemsText(30, 0)) {
						t.Errorf("re-read %d: not the whole original after the notice:\n%.400s", i, text)
					}
				} else if !handleRE.MatchString(text) {
					t.Errorf("re-read %d: braked before the threshold:\n%.300s", i, text)
				}
			}
			// Another call of the tool: whole, no second notice. (Its
			// reply also follows the record of the call before.)
			text := textOf(t, f.call(t, "items", map[string]any{"n": 25, "_budget": 300}))
			if strings.Contains(text, BrakeNotice) || handleRE.MatchString(text) {
				t.Errorf("braked tool, another call:\n%.300s", text)
			}
			if n := f.stats.Totals().Brakes; n != 1 {
				t.Errorf("stats: %d brakes, want 1", n)
			}
		})
	}
}

// TestBrakeResourceRereads: reads of a file terse left part of out count
// toward the brake whatever their other arguments; a write of the file
// ends that (the next read is not a re-read), and a call that names
// another file is not one.
func TestBrakeResourceRereads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "2024-05-01T10:%02d:%02d worker %d handled request %d in %d ms\n", i/60%60, i%60, i%7, i, i%13)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.log")
	if err := os.WriteFile(other, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f := fronts(t, func() *Options { o := chunkOptions(&store.Mem{}); o.BrakeFetches = 2; return o })[0]
	read := func(p string, offset int) string {
		return textOf(t, f.call(t, "read", map[string]any{"path": p, "offset": offset, "_budget": 300}))
	}
	if text := read(path, 0); !handleRE.MatchString(text) {
		t.Fatalf("the first read was not elided:\n%.300s", text)
	}
	read(path, 1)  // re-read 1
	read(other, 0) // another file: not a re-read
	read(path, 2)  // re-read 2
	f.call(t, "write_note", map[string]any{"path": path})
	if text := read(path, 3); strings.Contains(text, BrakeNotice) || !handleRE.MatchString(text) {
		t.Errorf("the read after a write was taken for a re-read:\n%.300s", text)
	}
	if text := read(path, 4); !strings.HasPrefix(text, BrakeNotice+"\n") {
		t.Errorf("re-read 3, past the threshold of 2: not braked:\n%.300s", text)
	}
	read(other, 1) // its reply follows the record of the call before
	if n := f.stats.Totals().Brakes; n != 1 {
		t.Errorf("stats: %d brakes, want 1", n)
	}
}

// TestBrakeRereadTelemetry: the re-read that brakes a tool is recorded
// with the telemetry field "brake", once, on the call itself.
func TestBrakeRereadTelemetry(t *testing.T) {
	dir := t.TempDir()
	rec, err := telemetry.Open(telemetry.Settings{Enabled: true, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	f := fronts(t, func() *Options {
		o := chunkOptions(&store.Mem{})
		o.BrakeFetches, o.Telemetry = 1, rec
		return o
	})[0]
	args := map[string]any{"n": 30, "_budget": 300}
	for range 4 {
		f.call(t, "items", args)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := telemetry.ReadDir(dir, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	brakes := 0
	for _, r := range l.Records {
		if r.Brake {
			brakes++
			if r.Chunk {
				t.Errorf("the re-read's brake was recorded on a chunk event: %+v", r)
			}
		}
	}
	if brakes != 1 {
		t.Errorf("%d events with brake, want 1", brakes)
	}
}
