package telemetry

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func openTest(t testing.TB, o DirOptions, ro Options) (*Recorder, string) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	sink, err := OpenDir(o)
	if err != nil {
		t.Fatal(err)
	}
	return New(sink, ro), o.Dir
}

func sample(i int) Event {
	return Event{
		Time: time.UnixMilli(1_800_000_000_000 + int64(i)), Entry: EntryProxy, Session: "session-secret-uuid",
		Tool: "github__list_issues", Shape: ShapeArrayOfObjects, Inner: InURL | InHash, Depth: 3,
		Tokenizer: "o200k_base", Format: "auto", BytesIn: 5000, BytesOut: 1200, TokensIn: 1500, TokensOut: 400,
		Saved: [NumSources]int{SrcEncoding: 900, SrcFit: 210, SrcDedup: -10}, Hints: [NumHints]uint16{HintMore: 1, HintID: 1},
		Dedup: DedupMiss, Fingerprint: 0xdeadbeef, Latency: 350 * time.Microsecond,
	}
}

func TestRoundTrip(t *testing.T) {
	r, dir := openTest(t, DirOptions{}, Options{})
	e := sample(0)
	r.Record(&e)
	e2 := sample(1)
	e2.Err, e2.Untouched, e2.Class, e2.Format = "open /home/user/secret.txt: denied", UntouchedError, "github_issues", "weird"
	r.Record(&e2)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.Written != 2 || s.Dropped != 0 {
		t.Errorf("stats = %+v", s)
	}
	raw := readAll(t, dir)
	for _, secret := range []string{"session-secret-uuid", "github", "list_issues", "secret.txt", "weird"} {
		if strings.Contains(raw, secret) {
			t.Errorf("telemetry holds %q:\n%s", secret, raw)
		}
	}
	l, err := ReadDir(dir, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Records) != 2 || l.Skipped != 0 || l.Files != 1 {
		t.Fatalf("log = %+v", l)
	}
	a, b := l.Records[0], l.Records[1]
	if a.Class != "mcp_list" || !strings.HasPrefix(a.Tool, "t:") || a.Shape != "array_of_objects" ||
		a.TokensIn != 1500 || a.TokensOut != 400 || a.Saved["encoding"] != 900 || a.Saved["dedup"] != -10 ||
		a.Hints["more"] != 1 || a.Dedup != "miss" || a.LatencyUs != 350 || len(a.Inner) != 2 || a.Tokenizer != "o200k_base" {
		t.Errorf("record = %+v", a)
	}
	if a.Session != b.Session || len(a.Session) != 16 {
		t.Errorf("sessions %q %q", a.Session, b.Session)
	}
	if b.Err != "other" || b.Skip != "error" || b.Class != "other" || b.Format != "other" {
		t.Errorf("vocabulary not enforced: %+v", b)
	}
}

func TestToolNamesOptIn(t *testing.T) {
	r, dir := openTest(t, DirOptions{ToolNames: true}, Options{})
	e := sample(0)
	e.Tool = "a\"b\x01"
	r.Record(&e)
	r.Close()
	l, err := ReadDir(dir, time.Time{})
	if err != nil || len(l.Records) != 1 || l.Records[0].Tool != "a\"b\x01" {
		t.Fatalf("%v %+v", err, l)
	}
}

func TestSaltStable(t *testing.T) {
	dir := t.TempDir()
	for range 2 {
		r, _ := openTest(t, DirOptions{Dir: dir}, Options{})
		e := sample(0)
		r.Record(&e)
		r.Close()
	}
	l, _ := ReadDir(dir, time.Time{})
	if len(l.Records) != 2 || l.Records[0].Tool != l.Records[1].Tool || l.Records[0].Session != l.Records[1].Session {
		t.Errorf("hashes differ across opens: %+v", l.Records)
	}
	// Another install hashes differently.
	r, other := openTest(t, DirOptions{}, Options{})
	e := sample(0)
	r.Record(&e)
	r.Close()
	l2, _ := ReadDir(other, time.Time{})
	if l2.Records[0].Tool == l.Records[0].Tool {
		t.Error("two installs share tool hashes")
	}
}

func TestSampling(t *testing.T) {
	r, dir := openTest(t, DirOptions{SampleRate: 0.5}, Options{SampleRate: 0.5})
	for i := range 10 {
		e := sample(i)
		r.Record(&e)
	}
	r.Close()
	l, _ := ReadDir(dir, time.Time{})
	if len(l.Records) != 5 || l.Records[0].Weight() != 2 {
		t.Errorf("kept %d, weight %g", len(l.Records), l.Records[0].Weight())
	}
	if s := r.Stats(); s.SampledOut != 5 {
		t.Errorf("stats %+v", s)
	}
}

// blockSink blocks writes until released.
type blockSink struct {
	release chan struct{}
	mu      sync.Mutex
	n       int
}

func (b *blockSink) Write(batch []Event) error {
	<-b.release
	b.mu.Lock()
	b.n += len(batch)
	b.mu.Unlock()
	return nil
}
func (b *blockSink) Close() error { return nil }

func TestQueueFullDrops(t *testing.T) {
	s := &blockSink{release: make(chan struct{})}
	r := New(s, Options{Queue: 4})
	e := sample(0)
	for range 100 {
		r.Record(&e) // never blocks
	}
	close(s.release)
	r.Close()
	st := r.Stats()
	if st.Dropped == 0 || st.Dropped+st.Written != 100 || uint64(s.n) != st.Written {
		t.Errorf("stats %+v, sink got %d", st, s.n)
	}
	r.Record(&e)
	if r.Stats().Dropped != st.Dropped+1 {
		t.Error("a record after Close was not counted as dropped")
	}
}

func TestNilRecorder(t *testing.T) {
	var r *Recorder
	e := sample(0)
	r.Record(&e)
	r.Flush()
	if r.Fingerprint([]byte("x")) != 0 || r.Close() != nil || r.Stats() != (Stats{}) {
		t.Error("nil recorder did something")
	}
}

// TestRotationBound: 10,000 calls over 20 sessions never leave more on
// disk than max_total_bytes, and the newest events survive.
func TestRotationBound(t *testing.T) {
	const maxFile, maxTotal = 8 << 10, 48 << 10
	r, dir := openTest(t, DirOptions{MaxFileBytes: maxFile, MaxTotalBytes: maxTotal}, Options{Queue: 4096})
	sessions := []string{}
	for i := range 20 {
		sessions = append(sessions, "s"+string(rune('a'+i)))
	}
	peak := int64(0)
	for i := range 10000 {
		e := sample(i)
		e.Session = sessions[i%len(sessions)]
		r.Record(&e)
		if i%500 == 499 {
			r.Flush()
			peak = max(peak, dirSize(t, dir))
		}
	}
	r.Close()
	peak = max(peak, dirSize(t, dir))
	if peak > maxTotal {
		t.Errorf("directory reached %d bytes, bound %d", peak, maxTotal)
	}
	l, err := ReadDir(dir, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	last := l.Records[len(l.Records)-1]
	if last.Ms < 1_800_000_000_000+9500 || r.Stats().Dropped != 0 {
		t.Errorf("newest events lost: last ms %d, stats %+v", last.Ms, r.Stats())
	}
	t.Logf("written %d, dropped %d, kept %d events in %d files, peak %d bytes", r.Stats().Written, r.Stats().Dropped, len(l.Records), l.Files, peak)
}

func dirSize(t *testing.T, dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			info, _ := e.Info()
			n += info.Size()
		}
	}
	return n
}

func readAll(t *testing.T, dir string) string {
	var b strings.Builder
	names, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

func TestBadLines(t *testing.T) {
	dir := t.TempDir()
	good := `{"v":1,"ms":1800000000000,"sid":"0123456789abcdef","t_in":10,"t_out":5}`
	data := strings.Join([]string{
		good,
		`{"v":1,"ms":18000`, // truncated
		`{"type":"user","message":{}}`,
		`not json at all`,
		`{"v":99,"ms":1,"sid":"x"}`,
		"",
		good,
	}, "\n") + "\n" + strings.Repeat("x", maxLine+10) + "\n" + good[:20]
	os.WriteFile(filepath.Join(dir, "a-0.jsonl"), []byte(data), 0o600)
	l, err := ReadDir(dir, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Records) != 2 || l.Skipped != 6 {
		t.Errorf("records %d skipped %d", len(l.Records), l.Skipped)
	}
	l, _ = ReadDir(dir, time.UnixMilli(1_900_000_000_000))
	if len(l.Records) != 0 || l.Old != 2 {
		t.Errorf("since: %+v", l)
	}
	_, err = ReadDir(filepath.Join(dir, "missing"), time.Time{})
	if !errors.Is(err, ErrNoDir) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing dir: %v", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"v":1,"ms":1800000000000,"sid":"0123456789abcdef","saved":{"fit":3},"inner":["url"]}` + "\n{\"v\":1,"))
	f.Add([]byte("\n\n{}\n[1,2]\n\"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var l Log
		if err := l.Read(bytes.NewReader(data), time.Time{}); err != nil {
			t.Fatal(err)
		}
		if len(l.Records)+l.Skipped > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d records + %d skipped from %d lines", len(l.Records), l.Skipped, bytes.Count(data, []byte("\n"))+1)
		}
	})
}

func TestClassOf(t *testing.T) {
	for tool, want := range map[string]string{
		"Read": "file_read", "Grep": "file_search", "Edit": "file_mutate", "Bash": "shell",
		"github__list_issues": "mcp_list", "mcp__gitlab__get_pipeline": "mcp_get", "jira__search_issues": "mcp_search",
		"slack__post_message": "mcp_create", "x__frobnicate": "mcp_other", "frobnicate": "other",
	} {
		if got := ClassOf(tool); got != want {
			t.Errorf("ClassOf(%q) = %q, want %q", tool, got, want)
		}
	}
}

func TestConcurrentRecordClose(t *testing.T) {
	r, dir := openTest(t, DirOptions{}, Options{Queue: 64})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				e := sample(i)
				e.Session = string(rune('a' + g))
				r.Record(&e)
				if i == 250 && g == 0 {
					r.Flush()
				}
			}
		}()
	}
	time.Sleep(time.Millisecond)
	r.Close() // concurrent with Record: later events are dropped, never a panic
	wg.Wait()
	st := r.Stats()
	if st.Seen != 2000 || st.Written+st.Dropped != 2000 {
		t.Errorf("stats %+v", st)
	}
	l, err := ReadDir(dir, time.Time{})
	if err != nil || uint64(len(l.Records)) != st.Written {
		t.Errorf("%v: read %d, written %d", err, len(l.Records), st.Written)
	}
}

// TestTextShapes: an event's text shape and shaping class are written
// from their fixed vocabularies and summed apart by class, so that what
// declared elisions left out is not counted with what lossless shapings
// saved.
func TestTextShapes(t *testing.T) {
	r, dir := openTest(t, DirOptions{}, Options{})
	evs := []Event{
		{TextShape: "grep", ShapeClass: "lossless", TokensIn: 1000, TokensOut: 700},
		{TextShape: "test", ShapeClass: "elide", TokensIn: 2000, TokensOut: 500},
		{TextShape: "log", TokensIn: 300, TokensOut: 300},
		{TextShape: "secret-shape", ShapeClass: "secret-class", TokensIn: 10, TokensOut: 5},
	}
	for i := range evs {
		evs[i].Time, evs[i].Entry, evs[i].Session, evs[i].Tool = time.UnixMilli(1_800_000_000_000+int64(i)), EntryHook, "s", "Bash"
		r.Record(&evs[i])
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if raw := readAll(t, dir); strings.Contains(raw, "secret") {
		t.Errorf("telemetry holds a name outside its vocabulary:\n%s", raw)
	}
	l, err := ReadDir(dir, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Records[0]; got.TextShape != "grep" || got.TClass != "lossless" {
		t.Errorf("record = %+v", got)
	}
	s := Summarize(l)
	want := map[string]float64{"grep lossless": 300, "test elide": 1500, "log unshaped": 0, "other other": 5}
	if len(s.ByTextShape) != len(want) {
		t.Errorf("by text shape = %+v", s.ByTextShape)
	}
	for _, row := range s.ByTextShape {
		if v, ok := want[row.Key]; !ok || v != row.Saved {
			t.Errorf("%s: saved %v, want %v", row.Key, row.Saved, v)
		}
	}
	for _, row := range s.ByShapeClass {
		if row.Key == "elide" && (row.Saved != 1500 || row.Calls != 1) {
			t.Errorf("elide = %+v", row)
		}
		if row.Key == "lossless" && row.Saved != 300 {
			t.Errorf("lossless = %+v", row)
		}
	}
}
