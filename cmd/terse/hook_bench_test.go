package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/hook"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
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

// BenchmarkHookTranscript is the whole command in process with a real
// transcript, the largest of the corpus: "miss" is its last Bash call
// with an output of 1 KB or more (the transcript up to its result: the
// search for an earlier copy and for runs of its lines finds none),
// "hit" a git add -p whose hunks a git diff appended to that transcript
// showed (line references). Baseline: "read", reading the transcript.
func BenchmarkHookTranscript(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	files, _ := filepath.Glob(filepath.Join(corpus.Dir(b, "corpus/agent-sessions/claude-long"), "*.jsonl"))
	var data []byte
	for _, f := range files {
		if d, err := os.ReadFile(f); err == nil && len(d) > len(data) {
			data = d
		}
	}
	if data == nil {
		b.Skip("no transcripts")
	}
	at, event := lastBashEvent(data)
	if event == "" {
		b.Skip("no Bash call in the transcript")
	}
	dir := b.TempDir()
	miss := filepath.Join(dir, "miss.jsonl")
	diff, addP := diffAndAddP()
	hit := filepath.Join(dir, "hit.jsonl")
	x := new(hookTx).call("toolu_bdiff", "Bash", `{"command":"git diff"}`).result("toolu_bdiff", bashResponse(diff), diff).
		call("toolu_baddp", "Bash", `{"command":"git add -p"}`)
	if os.WriteFile(miss, data[:at], 0o600) != nil || os.WriteFile(hit, append(data[:at:at], strings.Join(x.lines, "\n")+"\n"...), 0o600) != nil {
		b.Fatal("cannot write the transcripts")
	}
	events := []struct{ name, event string }{
		{"miss", strings.Replace(event, `"transcript_path":""`, `"transcript_path":`+jsonString(miss), 1)},
		{"hit", hookEvent(hit, "Bash", "toolu_baddp", `{"command":"git add -p"}`, bashResponse(addP))},
	}
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(at))
		for b.Loop() {
			if _, err := os.ReadFile(miss); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, e := range events {
		b.Run(e.name, func(b *testing.B) {
			b.SetBytes(int64(at))
			b.ReportAllocs()
			for b.Loop() {
				var out bytes.Buffer
				if err := runHook(context.Background(), []string{"claude-code"}, strings.NewReader(e.event), &out, &out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// lastBashEvent finds the last Bash call of a transcript whose stdout is
// 1 KB and 20 lines or more: where its result's line starts, and its event (with an
// empty transcript_path).
func lastBashEvent(data []byte) (int, string) {
	calls := map[string]string{} // id → input, of Bash calls
	at, event := 0, ""
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data) - off
		}
		v, err := tree.Parse(data[off : off+end])
		start := off
		off += end + 1
		if err != nil {
			continue
		}
		msg, _ := v.Get("message")
		content, _ := msg.Get("content")
		out, hasOut := v.Get("toolUseResult")
		for _, blk := range content.Items() {
			typ, _ := blk.Get("type")
			switch typ.Str() {
			case "tool_use":
				if n, _ := blk.Get("name"); n.Str() == "Bash" {
					id, _ := blk.Get("id")
					in, _ := blk.Get("input")
					calls[id.Str()] = in.String()
				}
			case "tool_result":
				id, _ := blk.Get("tool_use_id")
				in, ok := calls[id.Str()]
				stdout, _ := out.Get("stdout")
				if ok && hasOut && len(stdout.Str()) >= 1<<10 && strings.Count(stdout.Str(), "\n") >= 20 {
					at, event = start, hookEvent("", "Bash", id.Str(), in, out.String())
				}
			}
		}
	}
	return at, event
}
