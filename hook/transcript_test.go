package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse/tree"
)

// tx builds transcript lines in Claude Code's format.
type tx struct{ lines []string }

func (x *tx) call(id, tool, input string, sidechain bool) *tx {
	side := "false"
	if sidechain {
		side = "true"
	}
	x.lines = append(x.lines, `{"type":"assistant","isSidechain":`+side+`,"message":{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"`+tool+`","input":`+input+`}]}}`)
	return x
}

// result appends a tool result: output is the toolUseResult, visible the
// text the model was shown.
func (x *tx) result(id, output, visible string, sidechain bool) *tx {
	side := "false"
	if sidechain {
		side = "true"
	}
	x.lines = append(x.lines, `{"type":"user","isSidechain":`+side+`,"message":{"role":"user","content":[{"tool_use_id":"`+id+`","type":"tool_result","content":`+
		string(tree.AppendString(nil, visible))+`,"is_error":false}]},"toolUseResult":`+output+`}`)
	return x
}

func (x *tx) boundary() *tx {
	x.lines = append(x.lines, `{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"auto"}}`,
		`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued… compact_boundary"}}`)
	return x
}

func (x *tx) text() []byte { return []byte(strings.Join(x.lines, "\n") + "\n") }

var long = strings.Repeat("On branch main, nothing to commit; working tree clean. ", 8)

func bashOut(s string) string {
	return `{"stdout":` + string(tree.AppendString(nil, s)) + `,"stderr":"","interrupted":false,"isImage":false}`
}

func TestFind(t *testing.T) {
	texts := []string{long}
	grep := `{"mode":"content","content":` + string(tree.AppendString(nil, long)) + `,"filenames":[],"numFiles":0}`
	for _, c := range []struct {
		name   string
		x      *tx
		tool   string
		agent  string
		wantID string
	}{
		{"identical result in context",
			new(tx).call("t1", "Bash", `{"command":"git status"}`, false).result("t1", bashOut(long), long, false),
			"Bash", "", "t1"},
		{"the latest of two",
			new(tx).call("t1", "Bash", `{}`, false).result("t1", bashOut(long), long, false).
				call("t2", "Bash", `{}`, false).result("t2", bashOut(long), long, false),
			"Bash", "", "t2"},
		{"before a compaction boundary",
			new(tx).call("t1", "Bash", `{}`, false).result("t1", bashOut(long), long, false).boundary(),
			"Bash", "", ""},
		{"after a compaction boundary",
			new(tx).boundary().call("t1", "Bash", `{}`, false).result("t1", bashOut(long), long, false),
			"Bash", "", "t1"},
		{"shown replaced by a reference",
			new(tx).call("t1", "Bash", `{}`, false).result("t1", bashOut(long), "> [ref: t0, byte-identical]", false),
			"Bash", "", ""},
		{"shown cleared",
			new(tx).call("t1", "Bash", `{}`, false).result("t1", bashOut(long), "[Old tool result content cleared]", false),
			"Bash", "", ""},
		{"another tool",
			new(tx).call("t1", "BashOutput", `{}`, false).result("t1", bashOut(long), long, false),
			"Bash", "", ""},
		{"different text",
			new(tx).call("t1", "Bash", `{}`, false).result("t1", bashOut(long+"!"), long+"!", false),
			"Bash", "", ""},
		{"a sub-agent's result, from the main conversation",
			new(tx).call("t1", "Bash", `{}`, true).result("t1", bashOut(long), long, true),
			"Bash", "", ""},
		{"a search of a directory written since",
			new(tx).call("t1", "Grep", `{"pattern":"x","path":"/w/src"}`, false).result("t1", grep, long, false).
				call("t2", "Edit", `{"file_path":"/w/src/a.go","old_string":"a","new_string":"b"}`, false).
				result("t2", `{"filePath":"/w/src/a.go"}`, "The file /w/src/a.go has been updated.", false),
			"Grep", "", ""},
		{"a search of a directory, another one written since",
			new(tx).call("t1", "Grep", `{"pattern":"x","path":"/w/src"}`, false).result("t1", grep, long, false).
				call("t2", "Write", `{"file_path":"/w/srcx/a.go","content":"b"}`, false).
				result("t2", `{"filePath":"/w/srcx/a.go"}`, "File created", false),
			"Grep", "", "t1"},
	} {
		// The current call, t9, is the transcript's last line.
		c.x.call("t9", c.tool, `{}`, false)
		tr := ParseTranscript(c.x.text())
		ref, ok := tr.Find(c.tool, c.agent, "t9", texts)
		if id := ref.ID; id != c.wantID || ok != (c.wantID != "") {
			t.Errorf("%s: Find = %q, %v, want %q", c.name, id, ok, c.wantID)
		}
	}
}

func TestFindSubAgent(t *testing.T) {
	x := new(tx).call("t1", "Bash", `{}`, true).result("t1", bashOut(long), long, true).call("t9", "Bash", `{}`, true).
		call("t2", "Bash", `{}`, false).result("t2", bashOut(long), long, false)
	for i := range x.lines[:3] {
		x.lines[i] = strings.Replace(x.lines[i], `"isSidechain":true`, `"isSidechain":true,"agentId":"a1"`, 1)
	}
	tr := ParseTranscript(x.text())
	// The current call t9 is a1's: only a1's results count, whether the
	// event names the sub-agent or not.
	for _, agent := range []string{"a1", ""} {
		if ref, _ := tr.Find("Bash", agent, "t9", []string{long}); ref.ID != "t1" {
			t.Errorf("Find(agent %q) in its own sub-agent = %q, want t1", agent, ref.ID)
		}
	}
	if ref, _ := tr.Find("Bash", "a2", "t9", []string{long}); ref.ID != "" {
		t.Errorf("Find for another sub-agent = %q, want none", ref.ID)
	}
	// A current call the transcript does not show: no reference.
	if ref, _ := tr.Find("Bash", "", "t404", []string{long}); ref.ID != "" {
		t.Errorf("Find for a call not in the transcript = %q, want none", ref.ID)
	}
}

func TestReadTranscript(t *testing.T) {
	if _, err := ReadTranscript(filepath.Join(t.TempDir(), "missing.jsonl"), 1<<20); err == nil {
		t.Error("ReadTranscript(missing) = nil error")
	}
	x := new(tx).call("t1", "Bash", `{}`, false).result("t1", bashOut(long), long, false).call("t9", "Bash", `{}`, false)
	p := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, x.text(), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadTranscript(p, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if ref, _ := tr.Find("Bash", "", "t9", []string{long}); ref.ID != "t1" {
		t.Errorf("Find = %q, want t1", ref.ID)
	}
	// Read from the end only: the call line is cut off, so the result
	// cannot be told to be a Bash call's.
	tr, err = ReadTranscript(p, int64(len(x.lines[1])+len(x.lines[2])+2))
	if err != nil {
		t.Fatal(err)
	}
	if ref, _ := tr.Find("Bash", "", "t9", []string{long}); ref.ID != "" {
		t.Errorf("Find past the read window = %q, want none", ref.ID)
	}
}

func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"tool_name":"Bash","tool_response":{"stdout":"a","stderr":"b"}}`))
	f.Add([]byte(`{"tool_name":"mcp__a__b","tool_response":[{"type":"text","text":"x"}]}`))
	f.Add([]byte(`{"tool_name":"Glob","tool_response":{"filenames":["a","b"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := ParseEvent(data)
		if err != nil {
			return
		}
		slots := Slots(ev.ToolName, ev.ToolResponse)
		texts := make([]string, len(slots))
		for i, s := range slots {
			texts[i] = s.Text
		}
		// The same texts give back the same output.
		if got, want := Replace(ev.ToolName, ev.ToolResponse, slots, texts).String(), ev.ToolResponse.String(); got != want {
			t.Fatalf("Replace with the same texts = %s, want %s", got, want)
		}
		_ = Reply(ev.ToolName, ev.ToolResponse)
	})
}

func FuzzTranscript(f *testing.F) {
	f.Add(new(tx).call("t1", "Bash", `{}`, false).result("t1", bashOut(long), long, false).text(), long)
	f.Add(new(tx).boundary().text(), "compact_boundary")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tr := ParseTranscript(data)
		tr.Find("Bash", "", "", []string{text})
		tr.Shown("", "t1", []string{text})
	})
}

// TestFindCommonStart: earlier results that start like this one (the
// same command's outputs) but differ later are passed over, and a list
// of names (Glob's filenames, its items JSON strings) is still found.
func TestFindCommonStart(t *testing.T) {
	var names []string
	for i := range 30 {
		names = append(names, fmt.Sprintf("/w/src/internal/package_%02d/file_%02d.go", i%4, i))
	}
	list := strings.Join(names, "\n")
	glob := `{"filenames":["` + strings.Join(names, `","`) + `"],"numFiles":30}`
	other := strings.Replace(glob, "file_29", "file_99", 1)
	x := new(tx).call("t1", "Glob", `{"pattern":"**/*.go"}`, false).result("t1", glob, list, false)
	for i := 2; i < 6; i++ {
		id := fmt.Sprintf("t%d", i)
		x.call(id, "Glob", `{"pattern":"**/*.go"}`, false).result(id, other, strings.Replace(list, "file_29", "file_99", 1), false)
	}
	x.call("t9", "Glob", `{}`, false)
	if ref, _ := ParseTranscript(x.text()).Find("Glob", "", "t9", []string{list}); ref.ID != "t1" {
		t.Errorf("Find = %q, want t1", ref.ID)
	}
}
