package hook

import (
	"strings"
	"testing"

	"github.com/terse-dev/terse/tree"
)

func mustParse(t testing.TB, s string) tree.Value {
	t.Helper()
	v, err := tree.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Tool outputs as Claude Code gives them to the hook (toolUseResult in
// its transcripts).
var shapes = []struct {
	tool, resp string
	slots      []string // slot names
	want       string   // the output with every slot text upper-cased
}{
	{"Bash", `{"stdout":"ok\nfine","stderr":"warn","interrupted":false,"isImage":false,"noOutputExpected":false}`,
		[]string{"stdout", "stderr"},
		`{"stdout":"OK\nFINE","stderr":"WARN","interrupted":false,"isImage":false,"noOutputExpected":false}`},
	{"Bash", `{"stdout":"","stderr":"","interrupted":false,"isImage":false}`, nil,
		`{"stdout":"","stderr":"","interrupted":false,"isImage":false}`},
	{"Bash", `{"stdout":"iVBOR","stderr":"","isImage":true}`, nil, `{"stdout":"iVBOR","stderr":"","isImage":true}`},
	{"Grep", `{"mode":"content","numFiles":0,"filenames":[],"content":"a.go:1:x","numLines":1}`,
		[]string{"content"}, `{"mode":"content","numFiles":0,"filenames":[],"content":"A.GO:1:X","numLines":1}`},
	{"Grep", `{"mode":"files_with_matches","filenames":["a.go","b.go"],"numFiles":2}`,
		[]string{"filenames"}, `{"mode":"files_with_matches","filenames":["A.GO","B.GO"],"numFiles":2}`},
	{"Glob", `{"filenames":["/x/a.go","/x/b.go"],"durationMs":3,"numFiles":2,"truncated":false}`,
		[]string{"filenames"}, `{"filenames":["/X/A.GO","/X/B.GO"],"durationMs":3,"numFiles":2,"truncated":false}`},
	{"WebFetch", `{"bytes":10,"code":200,"codeText":"OK","result":"# Page","durationMs":5,"url":"https://x"}`,
		[]string{"result"}, `{"bytes":10,"code":200,"codeText":"OK","result":"# PAGE","durationMs":5,"url":"https://x"}`},
	{"Read", `{"type":"text","file":{"filePath":"/a","content":"x","numLines":1,"startLine":1,"totalLines":1}}`, nil,
		`{"type":"text","file":{"filePath":"/a","content":"x","numLines":1,"startLine":1,"totalLines":1}}`},
	{"Edit", `{"filePath":"/a","oldString":"x","newString":"y"}`, nil, `{"filePath":"/a","oldString":"x","newString":"y"}`},
	{"mcp__gh__list", `[{"type":"text","text":"[1,2]"},{"type":"image","data":"AA=="},{"type":"text","text":"more"}]`,
		[]string{"text", "text"}, `[{"type":"text","text":"[1,2]"},{"type":"image","data":"AA=="},{"type":"text","text":"MORE"}]`},
	{"mcp__gh__get", `{"content":[{"type":"text","text":"body"}],"isError":false}`,
		[]string{"text"}, `{"content":[{"type":"text","text":"BODY"}],"isError":false}`},
	// A string with a lone surrogate cannot be written back as it was.
	{"Bash", `{"stdout":"a\ud800b","stderr":""}`, nil, `{"stdout":"a\ud800b","stderr":""}`},
	// A list item holding a newline could not be split back.
	{"Glob", `{"filenames":["a\nb"]}`, nil, `{"filenames":["a\nb"]}`},
}

func TestSlotsReplace(t *testing.T) {
	for _, c := range shapes {
		resp := mustParse(t, c.resp)
		slots := Slots(c.tool, resp)
		var names, same, upper []string
		for _, s := range slots {
			names = append(names, s.Name)
			same = append(same, s.Text)
			upper = append(upper, strings.ToUpper(s.Text))
		}
		if strings.Join(names, ",") != strings.Join(c.slots, ",") {
			t.Errorf("Slots(%s, %s) = %v, want %v", c.tool, c.resp, names, c.slots)
			continue
		}
		// Unchanged texts give back the output as it was, byte for byte.
		if got := Replace(c.tool, resp, slots, same).String(); got != resp.String() {
			t.Errorf("Replace(%s, same) = %s, want %s", c.tool, got, resp.String())
		}
		if got := Replace(c.tool, resp, slots, upper).String(); got != c.want {
			t.Errorf("Replace(%s, upper) = %s, want %s", c.tool, got, c.want)
		}
	}
}

func TestMCPDigitsBlock(t *testing.T) {
	// "[1,2]" upper-cased is itself: the first block is kept as it was.
	resp := mustParse(t, `[{"type":"text","text":"[1,2]"}]`)
	slots := Slots("mcp__x__y", resp)
	if len(slots) != 1 || slots[0].Text != "[1,2]" {
		t.Fatalf("Slots = %+v", slots)
	}
}

func TestParseEvent(t *testing.T) {
	ev, err := ParseEvent([]byte(`{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","permission_mode":"default",
		"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1",
		"tool_response":{"stdout":"a","stderr":""},"duration_ms":12,"future_field":{"x":[1]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev.SessionID != "s" || ev.TranscriptPath != "/t.jsonl" || ev.ToolName != "Bash" || ev.ToolUseID != "toolu_1" ||
		ev.ToolInputJSON != `{"command":"ls"}` || ev.ToolResponse.String() != `{"stdout":"a","stderr":""}` {
		t.Errorf("ParseEvent = %+v", ev)
	}
	for _, bad := range []string{``, ` `, `[]`, `{`, `{"tool_name":"Bash"}`, `{"tool_response":{}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_response":{}}`} {
		if _, err := ParseEvent([]byte(bad)); err == nil {
			t.Errorf("ParseEvent(%q) = nil error", bad)
		}
	}
}

func TestReply(t *testing.T) {
	got := string(Reply("Bash", mustParse(t, `{"stdout":"x"}`)))
	want := `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"x"}}}` + "\n"
	if got != want {
		t.Errorf("Reply(Bash) = %s, want %s", got, want)
	}
	got = string(Reply("mcp__a__b", mustParse(t, `[]`)))
	want = `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":[],"updatedMCPToolOutput":[]}}` + "\n"
	if got != want {
		t.Errorf("Reply(mcp) = %s, want %s", got, want)
	}
}

func TestNeedle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"ab\"c\\d\n\t\x1b→x", `ab\"c\\d\n\t\u001b→x`},
		{strings.Repeat("x", 100), strings.Repeat("x", 32)},
		// Cut at a character boundary.
		{strings.Repeat("x", 31) + "→", strings.Repeat("x", 31)},
	} {
		if got := string(needle(c.in)); got != c.want {
			t.Errorf("needle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRefHint(t *testing.T) {
	for _, c := range []struct{ tool, input, want string }{
		{"Bash", `{"command":"git status"}`, `> [ref: toolu_1 (Bash "git status"), byte-identical]`},
		{"Grep", `{"pattern":"func [A-Z]\\w+, x","path":"/w"}`, `> [ref: toolu_1 (Grep "func (A-Z)\w+; x"), byte-identical]`},
		{"mcp__github__list_issues", `{"repo":"o/r"}`, `> [ref: toolu_1 (list_issues), byte-identical]`},
		{"Bash", `{"command":"` + strings.Repeat("é", 50) + `"}`, `> [ref: toolu_1 (Bash "` + strings.Repeat("é", 39) + `…"), byte-identical]`},
		{"Bash", `{"command":"a\nb\"c\""}`, `> [ref: toolu_1 (Bash "a b'c'"), byte-identical]`},
	} {
		if got := RefHint(c.tool, Ref{ID: "toolu_1", Input: mustParse(t, c.input)}); got != c.want {
			t.Errorf("RefHint(%s, %s) = %s, want %s", c.tool, c.input, got, c.want)
		}
	}
}

func TestLastIndex(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	for _, c := range []struct{ s, sep string }{
		{"", "ab"}, {"ab", "ab"}, {"abab", "ab"},
		{"ab" + big, "ab"}, {big + "ab" + big, "ab"}, {big + "ab", "ab"},
		{big[:64<<10] + "ab" + big[:64<<10-1], "ab"}, // across the tail's edge
		{big[:64<<10] + "ab" + big[:64<<10-2], "ab"},
		{big, "ab"},
	} {
		if got, want := lastIndex([]byte(c.s), []byte(c.sep)), strings.LastIndex(c.s, c.sep); got != want {
			t.Errorf("lastIndex(%d bytes, %q) = %d, want %d", len(c.s), c.sep, got, want)
		}
	}
}
