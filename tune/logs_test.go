package tune

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse/config"
)

const claudeLines = `{"type":"assistant","sessionId":"s1","message":{"model":"claude-opus-4-6","content":[{"type":"tool_use","id":"tu1","name":"Read","input":{"file_path":"/a.go"}}]}}
{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"tu1","content":"     1→package a\n     2→\n     3→func A() {}\n"}]}}
{"type":"assistant","sessionId":"s1","message":{"model":"claude-opus-4-6","content":[{"type":"tool_use","id":"tu2","name":"Edit","input":{"file_path":"/a.go"}}]}}
{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"tu2","content":[{"type":"text","text":"edited"}]}]}}
{"type":"system","subtype":"compact_boundary","sessionId":"s1"}
{"type":"assistant","sessionId":"s1","message":{"model":"claude-opus-4-6","content":[{"type":"tool_use","id":"tu3","name":"mcp__github__list_issues","input":{}}]}}
{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"tu3","content":"[{\"id\":1},{\"id\":2}]"}]}}
{"type":"user","sessionId":"s1","isSidechain":true,"agentId":"x1","message":{"content":[{"type":"tool_result","tool_use_id":"nope","content":"orphan","is_error":true}]}}
`

func TestReadLogsBadLines(t *testing.T) {
	data := claudeLines +
		`{"type":"assistant","sessionId":"s1","message":{"model":"claude-op` + "\n" + // truncated
		"not json\n" +
		`{"some":"other","format":1}` + "\n" +
		`[1,2,3]` + "\n" +
		`{"type":"weird","sessionId":"s1"}` + "\n"
	var l Logs
	if err := l.Read(strings.NewReader(data), "t.jsonl"); err != nil {
		t.Fatal(err)
	}
	if l.Skipped != 3 || l.Unknown != 2 || l.Unmatched != 1 {
		t.Errorf("skipped %d unknown %d unmatched %d", l.Skipped, l.Unknown, l.Unmatched)
	}
	if len(l.Sessions) != 2 {
		t.Fatalf("%d sessions", len(l.Sessions))
	}
	s := l.Sessions[0]
	if s.Compactions != 1 || len(s.Results) != 3 || s.Models["claude-opus-4-6"] != 3 {
		t.Fatalf("session %+v", s)
	}
	if r := s.Results[0]; r.Tool != "Read" || r.Path != "/a.go" || r.Partition != 0 || !strings.Contains(r.Text, "func A") {
		t.Errorf("result 0 %+v", r)
	}
	if r := s.Results[2]; r.Tool != "mcp__github__list_issues" || r.Partition != 1 {
		t.Errorf("result 2 %+v", r)
	}
	if side := l.Sessions[1]; !side.Sidechain || !side.Results[0].IsError {
		t.Errorf("sidechain %+v", side)
	}

	l.Files = 1
	rep, plan, err := FromLogs(context.Background(), &l, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.StaleReads != 1 || rep.Dominant != "claude-opus-4-6" || rep.Share != 1 {
		t.Errorf("report %+v", rep)
	}
	text := plan.Render()
	if _, err := config.Parse([]byte(text), "plan"); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for _, want := range []string{`llm = "pinned_claude_opus_4_6"`, `match = ["claude-opus-4-6"]`, `match = "list_issues"`, "# P1 (models): claude-opus-4-6 sent 100.0% of 3"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan lacks %q:\n%s", want, text)
		}
	}
}

func TestReadCodex(t *testing.T) {
	data := `{"timestamp":"t","type":"session_meta","payload":{"id":"c1"}}
{"timestamp":"t","type":"turn_context","payload":{"model":"gpt-5.2-codex"}}
{"timestamp":"t","type":"response_item","payload":{"type":"function_call","call_id":"k1","name":"shell","arguments":"{\"command\":[\"ls\"]}"}}
{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"k1","output":"a.txt\n"}}
{"timestamp":"t","type":"compacted","payload":{"message":"x"}}
{"timestamp":"t","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"k2","invocation":{"server":"gh","tool":"get_pr"},"result":{"Ok":{"content":[{"type":"text","text":"{\"n\":1}"}]}}}}
`
	var l Logs
	l.Read(strings.NewReader(data), "r.jsonl")
	if len(l.Sessions) != 1 {
		t.Fatalf("%+v", l)
	}
	s := l.Sessions[0]
	if s.ID != "c1" || s.Agent != "codex" || s.Compactions != 1 || s.Models["gpt-5.2-codex"] != 1 || len(s.Results) != 2 {
		t.Fatalf("%+v", s)
	}
	if s.Results[0].Text != "a.txt\n" || s.Results[1].Tool != "mcp__gh__get_pr" || s.Results[1].Text != `{"n":1}` || s.Results[1].Partition != 1 {
		t.Errorf("%+v", s.Results)
	}
}

func TestLogFilesMissing(t *testing.T) {
	_, err := LogFiles(filepath.Join(t.TempDir(), "nope"))
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("err = %v", err)
	}
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, nil, 0o600)
	if _, err := LogFiles(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("err = %v", err)
	}
}

func FuzzReadLogs(f *testing.F) {
	for _, l := range strings.Split(claudeLines, "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"k","output":[{"text":"x"}]}}`))
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"mcp_tool_call_end","invocation":{},"result":{"Err":"x"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var l Logs
		if err := l.Read(strings.NewReader(claudeLines+string(data)+"\n"), "f"); err != nil {
			t.Fatal(err)
		}
		if l.Skipped+l.Unknown > l.Lines {
			t.Fatalf("%d skipped, %d unknown of %d lines", l.Skipped, l.Unknown, l.Lines)
		}
	})
}
