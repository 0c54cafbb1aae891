package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/terse-dev/terse/hook"
	"github.com/terse-dev/terse/tree"
)

func init() {
	// hookvalid EVENT checks the last command's stdout as the hook's
	// reply to the event in file EVENT: nothing, or a PostToolUse reply
	// whose updatedToolOutput has the shape of the event's tool_response
	// (the same kind; an object with the same keys in the same order,
	// only text fields changed; a list of as many blocks).
	scriptCmds["hookvalid"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: hookvalid EVENT")
		}
		out := ts.ReadFile("stdout")
		if out == "" {
			return
		}
		ev, err := hook.ParseEvent([]byte(ts.ReadFile(args[0])))
		ts.Check(err)
		r, err := tree.ParseString(out)
		ts.Check(err)
		hso, _ := r.Get("hookSpecificOutput")
		if name, _ := hso.Get("hookEventName"); name.Str() != "PostToolUse" || len(r.Members()) != 1 {
			ts.Fatalf("not a PostToolUse reply: %.200s", out)
		}
		upd, ok := hso.Get("updatedToolOutput")
		if !ok {
			ts.Fatalf("no updatedToolOutput: %.200s", out)
		}
		orig := ev.ToolResponse
		if upd.Kind() != orig.Kind() {
			ts.Fatalf("updatedToolOutput is %v, tool_response %v", upd.Kind(), orig.Kind())
		}
		switch orig.Kind() {
		case tree.KindObject:
			um, om := upd.Members(), orig.Members()
			if len(um) != len(om) {
				ts.Fatalf("updatedToolOutput has %d members, tool_response %d", len(um), len(om))
			}
			for i := range om {
				if um[i].Key != om[i].Key {
					ts.Fatalf("member %d is %q, want %q", i, um[i].Key, om[i].Key)
				}
				if um[i].Value.Kind() != om[i].Value.Kind() {
					ts.Fatalf("member %q changed kind", om[i].Key)
				}
				if k := om[i].Value.Kind(); k != tree.KindString && k != tree.KindArray && !tree.Equal(um[i].Value, om[i].Value) {
					ts.Fatalf("member %q changed", om[i].Key)
				}
			}
		case tree.KindArray:
			if upd.Len() != orig.Len() {
				ts.Fatalf("updatedToolOutput has %d blocks, tool_response %d", upd.Len(), orig.Len())
			}
		}
		if hook.IsMCP(ev.ToolName) {
			if m, _ := hso.Get("updatedMCPToolOutput"); !tree.Equal(m, upd) {
				ts.Fatalf("updatedMCPToolOutput differs from updatedToolOutput")
			}
		}
	}
	// bigevent FILE TOOL MB writes a PostToolUse event of TOOL (Bash, or
	// an MCP tool) whose output is MB megabytes of log lines.
	scriptCmds["bigevent"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 3 {
			ts.Fatalf("usage: bigevent FILE TOOL MB")
		}
		mb, err := strconv.Atoi(args[2])
		ts.Check(err)
		var b strings.Builder
		for i := 0; b.Len() < mb<<20; i++ {
			b.WriteString("2026-01-01T00:00:00Z INFO worker ")
			b.WriteString(strconv.Itoa(i % 7))
			b.WriteString(" processed item ")
			b.WriteString(strconv.Itoa(i))
			b.WriteString(" ok\n")
		}
		text := string(tree.AppendString(nil, b.String()))
		resp := `{"stdout":` + text + `,"stderr":"","interrupted":false,"isImage":false}`
		if hook.IsMCP(args[1]) {
			resp = `[{"type":"text","text":` + text + `}]`
		}
		ev := `{"session_id":"s-big","transcript_path":"/nonexistent.jsonl","hook_event_name":"PostToolUse","tool_name":"` + args[1] + `",` +
			`"tool_input":{"lines":1000000},"tool_use_id":"toolu_big","tool_response":` + resp + `}`
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(ev), 0o644))
	}
}
