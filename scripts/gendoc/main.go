// Command gendoc writes one large JSON document built from the shared
// corpus: a JSON array holding every corpus .json file, repeated until the
// document reaches the requested size. It is the input of
// scripts/bench-toon-ts.sh and matches the ~20 MB document that the toon
// package's BenchmarkLarge builds in memory.
//
// Usage:
//
//	go run ./scripts/gendoc [-corpus DIR] [-mb 20] -o FILE
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	dir := flag.String("corpus", "../shared/corpus", "corpus folder to read *.json files from")
	mb := flag.Int("mb", 20, "minimum document size in MiB")
	out := flag.String("o", "", "output file (required)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gendoc: -o FILE is required")
		os.Exit(2)
	}
	if err := run(*dir, *mb<<20, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}

func run(dir string, minSize int, out string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("no .json files under %s", dir)
	}
	slices.Sort(paths)
	var files [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
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
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
