package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/hook"
)

// BenchmarkHook handles a 1 KB and a 100 KB event in process (the hook's
// work without process start), reporting MB/s of event; baseline: parsing
// the event alone.
func BenchmarkHook(b *testing.B) {
	for _, name := range []string{"1k", "100k"} {
		data := hookBenchEvent(b, name)
		b.Run(name+"/parse", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := hook.ParseEvent(append([]byte(nil), data...)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/handle", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			dir := b.TempDir()
			for b.Loop() {
				ev, err := hook.ParseEvent(append([]byte(nil), data...))
				if err != nil {
					b.Fatal(err)
				}
				h := &hookRunner{storeDir: dir}
				if _, _, err := h.handle(context.Background(), config.Default(), ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHookProcess runs the built binary as Claude Code does, one
// process per event, against "terse version" in the same run. Set
// TERSE_BIN to the binary (go build -o /tmp/terse ./cmd/terse).
func BenchmarkHookProcess(b *testing.B) {
	bin := os.Getenv("TERSE_BIN")
	if bin == "" {
		b.Skip("TERSE_BIN not set")
	}
	run := func(b *testing.B, stdin []byte, args ...string) {
		for b.Loop() {
			cmd := exec.Command(bin, args...)
			cmd.Stdin = bytes.NewReader(stdin)
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("version", func(b *testing.B) { run(b, nil, "version") })
	for _, name := range []string{"1k", "100k"} {
		data := hookBenchEvent(b, name)
		b.Run(name, func(b *testing.B) { run(b, data, "hook", "claude-code") })
	}
}

// hookBenchEvent is an event of about 1 KB (Bash stdout of pretty JSON) or
// 100 KB (an MCP tool's JSON, from the corpus), with the largest corpus
// transcript as its transcript when the corpus is there.
func hookBenchEvent(b *testing.B, size string) []byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hook", "event-"+size+".json"))
	if err != nil {
		b.Skip(err)
	}
	return data
}

// BenchmarkRunHook is the whole command in process: reading the event,
// the config, building the pipeline, handling, writing the reply.
func BenchmarkRunHook(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	for _, name := range []string{"1k", "100k"} {
		data := hookBenchEvent(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var out bytes.Buffer
				if err := runHook(context.Background(), []string{"claude-code"}, bytes.NewReader(data), &out, &out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
