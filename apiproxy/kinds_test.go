package apiproxy

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
	"golang.org/x/tools/txtar"
)

// recoveryCalls are calls of every kind, as agents send them.
var recoveryCalls = []struct {
	name, args string
	readOnly   bool
}{
	{"Read", `{"file_path":"/src/a.go"}`, true},
	{"Grep", `{"pattern":"TODO"}`, true},
	{"WebFetch", `{"url":"https://example.com"}`, true},
	{"mcp__github__list_issues", `{"repo":"x/y"}`, true},
	{"Bash", `{"command":"git status && git diff HEAD~1 | head -50"}`, true},
	{"Bash", `{"command":"cat a.go 2>&1 | grep -n func"}`, true},
	{"Bash", `{"command":"curl -sSL https://example.com/api"}`, true},
	{"shell", `{"command":["bash","-lc","ls -la src"]}`, true},
	{"Bash", `{"command":"git push --force origin main"}`, false},
	{"Bash", `{"command":"npm publish"}`, false},
	{"Bash", `{"command":"curl -X POST https://example.com/api -d '{}'"}`, false},
	{"Bash", `{"command":"curl -s https://example.com -o page.html"}`, false},
	{"Bash", `{"command":"sed -i 's/a/b/' a.go"}`, false},
	{"Bash", `{"command":"find . -name '*.tmp' -delete"}`, false},
	{"Bash", `{"command":"echo done > status.txt"}`, false},
	{"Bash", `{"command":"cat $(ls) "}`, false},
	{"Bash", `{"command":"go test ./..."}`, false},
	{"exec_command", `{"cmd":"rm -rf build"}`, false},
	{"Write", `{"file_path":"/src/a.go","content":"package a"}`, false},
	{"Edit", `{"file_path":"/src/a.go","old_string":"a","new_string":"b"}`, false},
	{"apply_patch", `{"input":"*** Begin Patch"}`, false},
	{"mcp__github__create_issue", `{"title":"x"}`, false},
	{"Task", `{"description":"explore"}`, false},
	{"frobnicate", `{}`, false},
}

// TestN5RecoveryByKind: a trimmed result says "call it again" only when
// its call only reads; a side-effecting call (a write, an edit, a push,
// a publish, a POST), or one not known to only read, is never suggested
// again and its result is declared not recoverable. The declaration of
// dropped calls says the same. The wording is pinned in
// testdata/recovery.txtar.
func TestN5RecoveryByKind(t *testing.T) {
	var b strings.Builder
	for i, rc := range recoveryCalls {
		c := call{id: fmt.Sprintf("toolu_%02d", i+1), name: rc.name, args: rc.args}
		if got := readOnly(c); got != rc.readOnly {
			t.Errorf("%s %s: read-only %v, want %v", rc.name, rc.args, got, rc.readOnly)
		}
		text := trimmedText(c, c.id)
		if again := strings.Contains(text, "call it again"); again != rc.readOnly {
			t.Errorf("%s %s: %s", rc.name, rc.args, text)
		}
		fmt.Fprintf(&b, "%s\n", text)
	}
	drop := func(calls ...int) string {
		var msgs []history.Message
		for _, i := range calls {
			rc := recoveryCalls[i]
			id := fmt.Sprintf("toolu_%02d", i+1)
			msgs = append(msgs, history.Message{Role: history.RoleAssistant, Parts: []history.Part{{Kind: history.ToolCall, ID: id, Name: rc.name, Args: rc.args}}},
				history.Message{Role: history.RoleTool, Parts: []history.Part{{Kind: history.ToolResult, ID: id}}})
		}
		return droppedText(msgs) + "\n"
	}
	reads, mixed := drop(0, 1, 4), drop(0, 8, 18)
	if !strings.Contains(reads, "call a tool again") || strings.Contains(mixed, "call a tool again") {
		t.Errorf("dropped notes:\n%s%s", reads, mixed)
	}
	golden(t, "testdata/recovery.txtar", &txtar.Archive{
		Comment: []byte("How a left-out result can be had again, by its call's kind (go test -run TestN5RecoveryByKind -update rewrites this).\n"),
		Files: []txtar.File{
			{Name: "trimmed", Data: []byte(b.String())},
			{Name: "dropped-reads", Data: []byte(reads)},
			{Name: "dropped-mixed", Data: []byte(mixed)},
		},
	})
}

// TestTrimNoteChangesNoKeptResult: the note declaring the calls dropped
// whole sits in a result trimming already replaced (which names its own
// call), never at the head of a result shown in full without naming it;
// on real sessions with tight windows, and on a request whose results
// are all shown in full (the note is then followed by a line naming the
// result's call).
func TestTrimNoteChangesNoKeptResult(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t, "corpus"), "agent-sessions", "claude")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var c convo
	c.user("Fix the bug in a.go.")
	for i := 0; i < 30; i++ {
		c.call("Grep", fmt.Sprintf(`{"pattern":"p%d"}`, i), fileText(fmt.Sprintf("g%d_", i), 40))
	}
	sessions := [][][]byte{{c.request()}}
	for _, f := range files {
		sessions = append(sessions, claudeRequests(t, f))
	}
	notes, hosted := 0, 0
	for _, window := range []int{12_000, 20_000, 40_000} {
		for _, reqs := range sessions {
			rw := NewRewriter(Options{Window: window})
			for i, r := range reqs {
				res := rw.Rewrite(r, history.Anthropic)
				if res.Report.Dropped == 0 || res.Body == nil {
					continue
				}
				for id, content := range results(mustParse(t, res.Body)) {
					text := content.Str()
					if content.Kind() == tree.KindArray {
						text = get(content.Index(0), "text").Str()
					}
					rest := withoutDropNote(text)
					if rest == text {
						continue
					}
					notes++
					first, _, _ := strings.Cut(rest, "\n")
					trimmed, isTrimmed := parseLine[inband.Trimmed](first)
					switch {
					case isTrimmed && trimmed.Call.ID == id:
						hosted++
					case first == followsText(callOf(t, r, id), id):
					default:
						t.Errorf("window %d, request %d: the note leads result %s, shown in full without naming it:\n%.200s", window, i, id, text)
					}
				}
			}
		}
	}
	if notes == 0 || hosted == 0 {
		t.Fatalf("%d notes, %d in trimmed results: the test shows nothing", notes, hosted)
	}
	t.Logf("%d notes, %d in trimmed results", notes, hosted)

	// Every result shown in full: the note names the one it leads.
	msgs := []history.Message{
		{Role: history.RoleAssistant, Parts: []history.Part{{Kind: history.ToolCall, ID: "a", Name: "Read", Args: `{"file_path":"/a"}`}}},
		{Role: history.RoleTool, Parts: []history.Part{{Kind: history.ToolResult, ID: "a", Content: []history.Part{{Kind: history.Text, Text: "x"}}}}},
	}
	kept := []history.Message{
		{Role: history.RoleAssistant, Parts: []history.Part{{Kind: history.ToolCall, ID: "b", Name: "Read", Args: `{"file_path":"/b"}`}}},
		{Role: history.RoleTool, Parts: []history.Part{{Kind: history.ToolResult, ID: "b", Content: []history.Part{{Kind: history.Text, Text: "contents of b"}}}}},
	}
	out := declareDropped(kept, msgs, indexCalls(kept))
	got, _ := resultText(&out[1].Parts[0])
	want := droppedText(msgs) + "\n> [the result of Read call b (file_path=/b) follows, as sent]\ncontents of b"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// callOf finds a call in an Anthropic request.
func callOf(t *testing.T, body []byte, id string) call {
	req, err := history.Decode(body, history.Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	return indexCalls(req.Messages)[id]
}
