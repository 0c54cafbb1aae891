package toon_test

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// corpusDoc joins every corpus JSON file into one array, repeated until it
// is at least minSize bytes: the shape and mix of real tool output.
func corpusDoc(b *testing.B, minSize int) []byte {
	b.Helper()
	var files [][]byte
	for _, path := range corpus.Files(b, ".json") {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, bytes.TrimSpace(data))
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for first := true; first || buf.Len() < minSize; {
		for _, f := range files {
			if !first {
				buf.WriteByte(',')
			}
			first = false
			buf.Write(f)
		}
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// BenchmarkJSONToTOON is tree.Parse plus Append on the corpus.
func BenchmarkJSONToTOON(b *testing.B) {
	data := corpusDoc(b, 0)
	var dst []byte
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		v, err := tree.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		dst = toon.Append(dst[:0], v, nil)
	}
}

// BenchmarkEncode is Append alone on a parsed corpus tree.
func BenchmarkEncode(b *testing.B) {
	data := corpusDoc(b, 0)
	v, err := tree.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	for _, opts := range []struct {
		name string
		opts *toon.EncodeOptions
	}{{"canonical", nil}, {"exact", &toon.EncodeOptions{ExactNumbers: true, KeepKeyOrder: true}}} {
		b.Run(opts.name, func(b *testing.B) {
			var dst []byte
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				dst = toon.Append(dst[:0], v, opts.opts)
			}
		})
	}
}

// BenchmarkTOONToJSON is Unmarshal plus tree.AppendJSON on the corpus as
// TOON; bytes are TOON bytes.
func BenchmarkTOONToJSON(b *testing.B) {
	v, err := tree.Parse(corpusDoc(b, 0))
	if err != nil {
		b.Fatal(err)
	}
	text := toon.Marshal(v)
	var dst []byte
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		w, err := toon.Unmarshal(text, nil)
		if err != nil {
			b.Fatal(err)
		}
		dst = tree.AppendJSON(dst[:0], w)
	}
}

// BenchmarkLarge compares, on a ~20 MB document built from the corpus,
// JSON→TOON (parse + Append) with the baseline of parsing and re-emitting
// compact JSON (parse + AppendJSON). Target: toon ≤ 1.5× json.
func BenchmarkLarge(b *testing.B) {
	data := corpusDoc(b, 20<<20)
	var dst []byte
	b.Run("json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			v, err := tree.Parse(data)
			if err != nil {
				b.Fatal(err)
			}
			dst = tree.AppendJSON(dst[:0], v)
		}
	})
	b.Run("toon", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			v, err := tree.Parse(data)
			if err != nil {
				b.Fatal(err)
			}
			dst = toon.Append(dst[:0], v, nil)
		}
	})
}

// BenchmarkEncodeDocument is the work of terse encode --to toon on a
// ~20 MB document built from the corpus, in its steps: the parse that
// refuses repeated keys, the check that TOON can carry every value, and
// the streaming encoder; "command" is the three in a row. Compare a
// change with the code before it in the same run:
//
//	go test -run '^$' -bench EncodeDocument -benchtime 20x -count 5 ./toon/
func BenchmarkEncodeDocument(b *testing.B) {
	data := corpusDoc(b, 20<<20)
	parse := tree.ParseOptions{NoDuplicateKeys: true}
	v, err := parse.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	run := func(name string, f func() error) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	enc := toon.NewEncoder(io.Discard, nil)
	// ParseOwned, as the command parses: data is never changed, so the
	// trees may share it from run to run.
	run("parse", func() error { _, err := parse.ParseOwned(data); return err })
	run("representable", func() error { return toon.Representable(v) })
	run("encode", func() error { return enc.Encode(v) })
	run("command", func() error {
		v, err := parse.ParseOwned(data)
		if err == nil {
			err = toon.Representable(v)
		}
		if err == nil {
			err = enc.Encode(v)
		}
		return err
	})
}
