package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
)

// TestCompactShapesAsProxy: terse compact --tool NAME gives, for a text
// result, the bytes the MCP proxy's pipeline gives for that tool's result
// under the same configuration (a final newline aside, which compact adds
// only to a text that is not a shaping).
func TestCompactShapesAsProxy(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&sb, "%6d→\tentry := table[%d] // kept\n", i, i)
	}
	sb.WriteString("\n<system-reminder>\nThe file was read.\n</system-reminder>\n")
	in := sb.String()
	file := filepath.Join(dir, "read.txt")
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "terse.toml")
	// Dedup off: a proxy session's first result carries an id line
	// that one compact run (a session of its own, without dedup) has no
	// use for.
	src := fmt.Sprintf("[store]\ndir = %q\n[telemetry]\nenabled = false\n[dedup]\nenabled = false\n", filepath.Join(dir, "chunks"))
	if err := os.WriteFile(cfgFile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	opts, _, err := mcpOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const tool = "fs__read_text_file"
	res, err := opts.Profile("client", tool).Pipeline.ProcessString(context.Background(), in, &terse.Request{Tool: tool})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.ShapeClass != "lossless" {
		t.Fatalf("the proxy's pipeline did not shape the read: %+v", res.Report)
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"compact", "--config", cfgFile, "--tool", tool, file}, nil, &out, &errb); err != nil {
		t.Fatalf("compact: %v (%s)", err, errb.String())
	}
	if out.String() != res.Text {
		t.Errorf("compact and the proxy differ:\n--- compact\n%s\n--- proxy\n%s", out.String(), res.Text)
	}
}

// TestCompactReadFormExpand: with [shape] read_form set, terse compact
// writes a Read result in that form, and terse expand gives the read back
// byte for byte, gutter padding included.
func TestCompactReadFormExpand(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&sb, "%6d→\tentry := table[%d] // kept\n", i, i)
	}
	sb.WriteString("\n<system-reminder>\nThe file was read.\n</system-reminder>\n")
	in := sb.String()
	file := filepath.Join(dir, "read.txt")
	os.WriteFile(file, []byte(in), 0o644)
	for form, head := range map[string]string{"sparse": `> [lossless: lines 1–60 numbered "→" on the first, the last and every 10th only (width 6)]`, "range": `> [lossless: lines 1–60 follow without their "→" numbers (width 6)]`} {
		cfgFile := filepath.Join(dir, form+".toml")
		src := fmt.Sprintf("[store]\ndir = %q\n[telemetry]\nenabled = false\n[shape]\nread_form = %q\n", filepath.Join(dir, "chunks"), form)
		os.WriteFile(cfgFile, []byte(src), 0o644)
		var out, errb bytes.Buffer
		if err := run(context.Background(), []string{"compact", "--config", cfgFile, "--tool", "Read", file}, nil, &out, &errb); err != nil {
			t.Fatalf("compact: %v (%s)", err, errb.String())
		}
		if first, _, _ := strings.Cut(out.String(), "\n"); first != head {
			t.Errorf("%s: compact opens with %q", form, first)
		}
		shaped := filepath.Join(dir, form+".txt")
		os.WriteFile(shaped, out.Bytes(), 0o644)
		var back bytes.Buffer
		if err := run(context.Background(), []string{"expand", shaped}, nil, &back, &errb); err != nil {
			t.Fatalf("expand: %v (%s)", err, errb.String())
		}
		if back.String() != in {
			t.Errorf("%s: expand differs from the read:\n%s", form, back.String())
		}
	}
}
