package hook

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
)

// BenchmarkTranscript reads the largest corpus transcript and looks for
// an earlier copy of a result in it, as a hook call does; its baseline is
// reading the file alone.
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
			tr.Find("Bash", "", "", []string{text})
			tr.Close()
		}
	})
}
