package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestHookEventLatency: the hook's telemetry event carries the time the
// call took (it was lost: set on a copy after the event was returned).
func TestHookEventLatency(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	cfg := filepath.Join(dir, "terse.toml")
	tel := filepath.Join(dir, "telemetry")
	if err := os.WriteFile(cfg, []byte("[telemetry]\nenabled = true\ndir = "+strconv.Quote(tel)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := `{"session_id":"s1","transcript_path":"/nonexistent/t.jsonl","cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash",` +
		`"tool_input":{"command":"gh api x"},"tool_use_id":"toolu_01","tool_response":{"stdout":` + jsonString(itemsJSON(40)) + `,"stderr":"","interrupted":false}}`
	var out bytes.Buffer
	if err := runHook(context.Background(), []string{"claude-code", "--config", cfg}, bytes.NewReader([]byte(ev)), &out, &out); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(tel, "*"))
	var all []byte
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all = append(all, b...)
	}
	if len(all) == 0 {
		t.Fatal("no telemetry event written")
	}
	if !regexp.MustCompile(`"lat_us":[1-9]`).Match(all) {
		t.Errorf("the hook's event has no latency: %s", all)
	}
}

// itemsJSON is pretty JSON of n issue-like items, as gh api prints it.
func itemsJSON(n int) string {
	var b strings.Builder
	b.WriteString("[\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  {\n    \"id\": %d,\n    \"state\": \"open\",\n    \"title\": \"issue number %d\"\n  }", i, i)
	}
	b.WriteString("\n]\n")
	return b.String()
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
