package hook

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
)

// BenchmarkTranscript reads the largest corpus transcript and looks for
// an earlier copy of a result in it, as a hook call does, then for
// earlier results sharing runs of lines with it (line references, its
// last 4 MB); its baseline is reading the file alone.
func BenchmarkTranscript(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(corpus.Dir(b, "corpus/agent-sessions/claude-long"), "*.jsonl"))
	var path string
	var size int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			path, size = f, st.Size()
		}
	}
	if path == "" {
		b.Skip("no transcripts")
	}
	text := `{"id": 1, "state": "open", "title": "a result the transcript does not hold"}`
	// The current call is the transcript's last (Find and Shown look
	// for nothing without one).
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	last := lastCall(data)
	if last == "" {
		b.Skip("no call in the transcript")
	}
	b.Run("read", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := os.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read+find", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			tr, err := ReadTranscript(path, 64<<20)
			if err != nil {
				b.Fatal(err)
			}
			tr.Find("Bash", "", last, []string{text})
			tr.Close()
		}
	})
	// A 30 KB result of 600 lines the transcript does not hold: the
	// search every call makes.
	var sb strings.Builder
	for i := range 600 {
		fmt.Fprintf(&sb, "\tx%d := load(ctx, \"store\", %d) // a line of a result\n", i, i)
	}
	lines := []string{sb.String()}
	b.Run("read+find+shown", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			tr, err := ReadTranscript(path, 64<<20)
			if err != nil {
				b.Fatal(err)
			}
			tr.Find("Bash", "", last, []string{text})
			tr.Shown("", last, lines)
			tr.Close()
		}
	})
	// The search alone, in memory, over the whole window (the file as
	// if it had no compaction boundary: its last 4 MB).
	tr := &Transcript{data: data}
	b.Run("shown", func(b *testing.B) {
		b.SetBytes(int64(min(len(tr.data), shownWindow)))
		b.ReportAllocs()
		for b.Loop() {
			tr.Shown("", last, lines)
		}
	})
}

// lastCall is the id of the last tool call in a transcript.
func lastCall(data []byte) string {
	i := bytes.LastIndex(data, []byte(`"type":"tool_use","id":"`))
	if i < 0 {
		return ""
	}
	id, _, _ := strings.Cut(string(data[i+len(`"type":"tool_use","id":"`):]), `"`)
	return id
}
