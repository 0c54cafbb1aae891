package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/hook"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tree"
)

// TestHookShapes: the hook shapes the text fields of a tool's output as
// the proxies do (under the default config): a Grep search result under
// the working directory becomes a lossless shaping, written back into the
// tool's own "content" field, that expands to the original byte for byte.
// Its telemetry event names the shape and class. A Read is never changed (Claude Code numbers its lines after the hook).
func TestHookShapes(t *testing.T) {
	var sb strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&sb, "/home/me/project/internal/store/store.go:%d:\tif err := s.put(ctx, key%d); err != nil {\n", 10*i, i)
	}
	content := strings.TrimSuffix(sb.String(), "\n")
	event := func(tool string, input, resp any) *hook.Event {
		data, err := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "session_id": "s1",
			"cwd": "/home/me/project", "tool_name": tool, "tool_use_id": "toolu_1", "tool_input": input, "tool_response": resp})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := hook.ParseEvent(data)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	cfg := config.Default()
	cfg.Telemetry.Enabled = false
	h := &hookRunner{storeDir: t.TempDir()}
	ev := event("Grep", map[string]any{"pattern": "s.put", "output_mode": "content", "-n": true},
		map[string]any{"mode": "content", "numFiles": 1, "filenames": []string{}, "content": content, "numLines": 60})
	out, tev, err := h.handle(context.Background(), cfg, ev)
	if err != nil || out == nil {
		t.Fatalf("no reply (err %v, untouched %v)", err, tev.Untouched)
	}
	if tev.TextShape != "grep" || tev.ShapeClass != "lossless" {
		t.Errorf("telemetry: text shape %q, class %q; want grep, lossless", tev.TextShape, tev.ShapeClass)
	}
	r, err := tree.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	hso, _ := r.Get("hookSpecificOutput")
	upd, _ := hso.Get("updatedToolOutput")
	got, _ := upd.Get("content")
	back, class, err := shape.ExpandClass(got.Str())
	if err != nil || class != shape.Lossless || back != content {
		t.Fatalf("content is not a lossless shaping of the original (class %v, err %v):\n%.400s", class, err, got.Str())
	}
	if n, _ := upd.Get("numLines"); n.String() != "60" {
		t.Errorf("the tool's other fields changed: numLines = %s", n.String())
	}

	var rb strings.Builder
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&rb, "%6d→\tentry := table[%d]\n", i, i)
	}
	ev = event("Read", map[string]any{"file_path": "/home/me/project/a.go"},
		map[string]any{"type": "text", "file": map[string]any{"filePath": "/home/me/project/a.go", "content": rb.String()}})
	if out, _, err := h.handle(context.Background(), cfg, ev); err != nil || out != nil {
		t.Errorf("a Read was changed (err %v): %.200s", err, out)
	}
}
