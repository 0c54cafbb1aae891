package tune

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tokens"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n--- got\n%s", name, got)
	}
}

func sessionsDir(t *testing.T) string {
	return corpus.Dir(t, filepath.Join("corpus", "agent-sessions"))
}

func readCorpusLogs(t *testing.T) *Logs {
	files, err := LogFiles(sessionsDir(t))
	if err != nil {
		t.Fatal(err)
	}
	l, err := ReadLogs(files)
	if err != nil {
		t.Fatal(err)
	}
	// Golden output must not depend on where the corpus lives.
	for _, s := range l.Sessions {
		s.File = filepath.Base(s.File)
	}
	return l
}

// TestFromLogsGolden runs P1-P3 and the cost report on the real
// transcripts; the proposed config loads with the strict decoder.
func TestFromLogsGolden(t *testing.T) {
	l := readCorpusLogs(t)
	rep, plan, err := FromLogs(context.Background(), l, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text := plan.Render()
	if _, err := config.Parse([]byte(text), "from-claude-logs"); err != nil {
		t.Fatalf("proposed config does not load: %v\n%s", err, text)
	}
	golden(t, "from-claude-logs.toml", text)
	if rep.Sidechains == 0 || rep.Results == 0 || len(rep.MCPTools) == 0 {
		t.Errorf("report: %+v", rep)
	}
	// Deterministic.
	_, plan2, _ := FromLogs(context.Background(), readCorpusLogs(t), ReplayOptions{})
	if plan2.Render() != text {
		t.Error("two runs differ")
	}
}

var (
	corpusTelOnce sync.Once
	corpusTelDir  string
	corpusTelErr  error
)

// corpusTelemetry records telemetry, with a fixed salt and clock, of the
// compact path (the root pipeline as `terse compact` runs it, per corpus
// folder as one session, every other file read a second time as agents
// re-read) and of the transcripts replayed through the pipeline.
func corpusTelemetry(t *testing.T) string {
	files := corpus.Files(t, "")
	logs := readCorpusLogs(t)
	corpusTelOnce.Do(func() {
		dir, err := os.MkdirTemp("", "terse-telemetry")
		if err != nil {
			corpusTelErr = err
			return
		}
		corpusTelDir = dir
		sink, err := telemetry.OpenDir(telemetry.DirOptions{Dir: dir, Salt: []byte("0123456789abcdef-fixed-test-salt")})
		if err != nil {
			corpusTelErr = err
			return
		}
		clock := time.UnixMilli(1_800_000_000_000)
		now := func() time.Time { clock = clock.Add(time.Second); return clock }
		rec := telemetry.New(sink, telemetry.Options{Queue: 1 << 16, Now: now})
		ctx := context.Background()
		counter := tokens.O200kBase()
		caches := map[string]*dedup.Cache{}
		for pass := range 2 {
			for i, f := range files {
				rel := corpus.Name(f)
				if pass == 1 && i%2 == 1 || strings.HasPrefix(rel, "agent-sessions") || !strings.Contains(rel, string(filepath.Separator)) {
					continue
				}
				data, err := os.ReadFile(f)
				if err != nil || len(data) > 512<<10 {
					continue
				}
				folder := strings.SplitN(rel, string(filepath.Separator), 2)[0]
				if caches[folder] == nil {
					caches[folder] = dedup.New(dedup.Options{})
				}
				tool := folder + "__get_resource"
				p, err := terse.New(&terse.Options{Format: "auto", Tokenizer: counter, Dedup: caches[folder]})
				if err != nil {
					corpusTelErr = err
					return
				}
				ev := telemetry.Event{Entry: telemetry.EntryCompact, Session: folder, Tool: tool, Time: now()}
				ft := telemetry.Detect(data)
				ev.Shape, ev.Inner, ev.Depth, ev.Cols = ft.Shape, ft.Inner, ft.Depth, ft.Cols
				ev.Fingerprint = rec.Fingerprint(data)
				res, err := p.Process(ctx, data, &terse.Request{Tool: tool, Session: dedup.Key{Session: folder, Partition: "0"}})
				if err != nil {
					ev.Err, ev.Untouched = "parse", telemetry.UntouchedError
					ev.BytesIn, ev.BytesOut = len(data), len(data)
				} else {
					ev.SetReport(&res.Report)
				}
				rec.Record(&ev)
			}
		}
		if _, _, err := FromLogs(ctx, logs, ReplayOptions{Recorder: rec, Now: now}); err != nil {
			corpusTelErr = err
			return
		}
		corpusTelErr = rec.Close()
		if st := rec.Stats(); st.Dropped != 0 {
			corpusTelErr = os.ErrDeadlineExceeded
		}
	})
	if corpusTelErr != nil {
		t.Fatal(corpusTelErr)
	}
	return corpusTelDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if corpusTelDir != "" {
		os.RemoveAll(corpusTelDir)
	}
	os.Exit(code)
}

// TestAnalyzeGolden runs R1-R6 on telemetry of the compact path and the
// transcript replay over the corpus.
func TestAnalyzeGolden(t *testing.T) {
	dir := corpusTelemetry(t)
	l, err := telemetry.ReadDir(dir, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	salt, _ := telemetry.ReadSalt(dir)
	if salt != nil {
		t.Fatal("a fixed salt was given; no salt file expected")
	}
	names := map[string]string{}
	for _, f := range []string{"github", "gitlab", "jira", "slack", "k8s", "logs", "markdown", "registry", "notion", "mcp"} {
		n := f + "__get_resource"
		names[telemetry.ToolHash([]byte("0123456789abcdef-fixed-test-salt"), n)] = n
	}
	text := Analyze(l, names).Render()
	if _, err := config.Parse([]byte(text), "analyze"); err != nil {
		t.Fatalf("proposed config does not load: %v\n%s", err, text)
	}
	golden(t, "analyze.toml", text)
	if Analyze(l, names).Render() != text {
		t.Error("not deterministic")
	}
	sum := telemetry.Summarize(l)
	if sum.Events != len(l.Records) || sum.Total.TokensIn == 0 || len(sum.Tokenizers) != 1 {
		t.Errorf("summary %+v", sum)
	}
}

// TestPrivacy: no string of 12 or more bytes from any corpus file appears
// in any telemetry file written while the corpus went through the compact
// path and the transcript replay.
func TestPrivacy(t *testing.T) {
	dir := corpusTelemetry(t)
	leaks, nfiles, err := telemetry.Audit(dir, func(yield func(string, []byte) bool) {
		for _, f := range corpus.Files(t, "") {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !yield(corpus.Name(f), data) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if nfiles == 0 {
		t.Fatal("no telemetry written")
	}
	for _, lk := range leaks {
		t.Errorf("%q from %s → %s", lk.Text, lk.Source, lk.File)
	}
	t.Logf("%d telemetry files checked against the corpus", nfiles)
}
