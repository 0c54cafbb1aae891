package tree_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
)

// corpusDoc joins every corpus JSON file into one array, the shape and mix
// of real tool output.
func corpusDoc(b *testing.B) []byte {
	b.Helper()
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, path := range corpus.Files(b, ".json") {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(bytes.TrimSpace(data))
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// BenchmarkParse compares tree.Parse with encoding/json decoding into any on
// the same bytes (the baseline), and the compact writer with json.Marshal.
func BenchmarkParse(b *testing.B) {
	data := corpusDoc(b)
	b.Run("tree", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tree.Parse(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tree_no_duplicate_keys", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		opts := tree.ParseOptions{NoDuplicateKeys: true}
		for b.Loop() {
			if _, err := opts.Parse(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json_any", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendJSON(b *testing.B) {
	data := corpusDoc(b)
	v, err := tree.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	var x any
	json.Unmarshal(data, &x)
	b.Run("tree", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		buf := make([]byte, 0, len(data))
		for b.Loop() {
			buf = tree.AppendJSON(buf[:0], v)
		}
	})
	b.Run("encoding_json_any", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(x); err != nil {
				b.Fatal(err)
			}
		}
	})
}
