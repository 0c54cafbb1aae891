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
