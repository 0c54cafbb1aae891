package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/hook"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tree"
)

// hookTx builds a transcript as Claude Code writes it (JSONL).
type hookTx struct{ lines []string }

func (x *hookTx) call(id, tool, input string) *hookTx {
	x.lines = append(x.lines, `{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"tool_use","id":"`+id+`","name":"`+tool+`","input":`+input+`}]}}`)
	return x
}

// result appends the result of call id: output is its toolUseResult,
// shown the text the model was shown.
func (x *hookTx) result(id, output, shown string) *hookTx {
	x.lines = append(x.lines, `{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"tool_use_id":"`+id+`","type":"tool_result","content":`+
		jsonString(shown)+`,"is_error":false}]},"toolUseResult":`+output+`}`)
	return x
}

func (x *hookTx) boundary() *hookTx {
	x.lines = append(x.lines, `{"type":"system","subtype":"compact_boundary","content":"Conversation compacted"}`,
		`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued."}}`)
	return x
}

func (x *hookTx) write(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "transcript.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(x.lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func bashResponse(stdout string) string {
	return `{"stdout":` + jsonString(stdout) + `,"stderr":"","interrupted":false,"isImage":false}`
}

// gitHunk is one hunk of a diff of file name, n lines of context and
// changes.
func gitHunk(name string, at, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@ func %s%d() {\n", at, n, at, n+1, strings.ToUpper(name[:1]), at)
	for i := range n {
		switch i {
		case n / 2:
			fmt.Fprintf(&b, "-\treturn compute(%s, %d, \"old value\")\n+\tv, err := compute(%s, %d, \"new value\")\n+\treturn v, err\n", name, at+i, name, at+i)
		default:
			fmt.Fprintf(&b, " \tx%d := load(ctx, %q, %d) // line %d of %s.go\n", i, name, at+i, at+i, name)
		}
	}
	return b.String()
}

// diffAndAddP are the outputs of "git diff" and of a later "git add -p"
// that prints its hunks again, each followed by its prompt (which ends
// without a line break, so the next hunk's header follows on its line).
func diffAndAddP() (diff, addP string) {
	files := []string{"store", "server"}
	var d, a strings.Builder
	hunks, k := 2*len(files), 0
	for _, f := range files {
		head := fmt.Sprintf("diff --git a/internal/%s.go b/internal/%s.go\nindex 3f1c2a9..8e0d4b7 100644\n--- a/internal/%s.go\n+++ b/internal/%s.go\n", f, f, f, f)
		d.WriteString(head)
		a.WriteString(head)
		for _, at := range []int{12, 80} {
			h := gitHunk(f, at, 12)
			d.WriteString(h)
			a.WriteString(h)
			k++
			fmt.Fprintf(&a, "(%d/%d) Stage this hunk [y,n,q,a,d,j,J,g,/,e,p,?]? ", k, hunks)
		}
	}
	a.WriteString("\n")
	return d.String(), a.String()
}

// hookEvent is a PostToolUse event of tool with input and response.
func hookEvent(transcript, tool, id, input, response string) string {
	return `{"session_id":"s1","transcript_path":` + jsonString(transcript) + `,"cwd":"/work/app","hook_event_name":"PostToolUse",` +
		`"tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"` + id + `","tool_response":` + response + `}`
}

// runHookEvent runs "terse hook claude-code" on event and returns its
// reply's updatedToolOutput (Kind Null for no reply).
func runHookEvent(t *testing.T, event string, args ...string) tree.Value {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := runHook(context.Background(), append([]string{"claude-code"}, args...), strings.NewReader(event), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if errOut.Len() > 0 {
		t.Fatalf("stderr: %s", errOut.String())
	}
	if out.Len() == 0 {
		return tree.Value{}
	}
	r, err := tree.Parse(out.Bytes())
	if err != nil {
		t.Fatalf("reply: %v: %s", err, out.String())
	}
	hso, _ := r.Get("hookSpecificOutput")
	upd, _ := hso.Get("updatedToolOutput")
	return upd
}

// shownByName is the text a transcript shows for each call's result,
// and the sub-agent whose it is, by the name a line reference gives the
// call (read apart from package hook's reader).
func shownByName(transcript string) map[string]shownResult {
	calls := map[string]hook.Ref{}
	tools := map[string]string{}
	out := map[string]shownResult{}
	for line := range strings.SplitSeq(transcript, "\n") {
		v, err := tree.ParseString(line)
		if err != nil {
			continue
		}
		agent, _ := v.Get("agentId")
		msg, _ := v.Get("message")
		content, _ := msg.Get("content")
		for _, b := range content.Items() {
			typ, _ := b.Get("type")
			switch typ.Str() {
			case "tool_use":
				id, _ := b.Get("id")
				name, _ := b.Get("name")
				in, _ := b.Get("input")
				calls[id.Str()] = hook.Ref{ID: id.Str(), Input: in}
				tools[id.Str()] = name.Str()
			case "tool_result":
				id, _ := b.Get("tool_use_id")
				c, _ := b.Get("content")
				text := c.Str()
				if c.Kind() == tree.KindArray && c.Len() == 1 {
					t, _ := c.Items()[0].Get("text")
					text = t.Str()
				}
				if _, ok := calls[id.Str()]; ok {
					out[hook.RefName(tools[id.Str()], calls[id.Str()])] = shownResult{text, agent.Str()}
				}
			}
		}
	}
	return out
}

type shownResult struct{ text, agent string }

var lineRefRE = regexp.MustCompile(`(?m)^> \[ref: .*, lines \d+–\d+ of its result, byte-identical\]$`)

// TestHookLineRefs: a Bash "git add -p" whose output prints again hunks
// of an earlier "git diff" still in context gets line references to
// that result in place of them; resolved with the text the transcript
// shows for it, they give back the text the hook would have sent
// without them, byte for byte. The saving is dedup's, as a whole
// reference's is.
func TestHookLineRefs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("TERSE_HOOK_LOG", filepath.Join(dir, "hook.log"))
	tel := filepath.Join(dir, "telemetry")
	cfg := filepath.Join(dir, "terse.toml")
	if err := os.WriteFile(cfg, []byte("[telemetry]\nenabled = true\ndir = "+strconv.Quote(tel)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	diff, addP := diffAndAddP()
	addEvent := func(transcript string) string {
		return hookEvent(transcript, "Bash", "toolu_09", `{"command":"printf 'y\\nn\\ny\\nn\\n' | git add -p"}`, bashResponse(addP))
	}
	x := new(hookTx).
		call("toolu_01", "Bash", `{"command":"git diff"}`).result("toolu_01", bashResponse(diff), diff).
		call("toolu_02", "Bash", `{"command":"go test ./..."}`).result("toolu_02", bashResponse("ok  \texample.com/app\t0.4s\n"), "ok  \texample.com/app\t0.4s\n").
		call("toolu_09", "Bash", `{"command":"printf 'y\\nn\\ny\\nn\\n' | git add -p"}`)
	path := x.write(t)

	// Without the earlier result: the text the hook sends (shaped, or
	// the original when shaping saves nothing).
	want := addP
	if upd := runHookEvent(t, addEvent("/nonexistent/t.jsonl")); upd.Kind() == tree.KindObject {
		s, _ := upd.Get("stdout")
		want = s.Str()
	}
	upd := runHookEvent(t, addEvent(path), "--config", cfg)
	if upd.Kind() != tree.KindObject {
		t.Fatal("no reply for a result repeating hunks of one in context")
	}
	sv, _ := upd.Get("stdout")
	got := sv.Str()
	refs := lineRefRE.FindAllString(got, -1)
	if len(refs) != 4 { // one before each hunk's prompt
		t.Fatalf("%d line references, want 4:\n%s", len(refs), got)
	}
	for _, r := range refs {
		v, err := inband.Parse(r)
		if rl, ok := v.(inband.RefLines); err != nil || !ok || rl.ID != `toolu_01 (Bash "git diff")` {
			t.Errorf("reference %q: want one to toolu_01 (Bash \"git diff\")", r)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	shown := shownByName(string(data))
	back, err := dedup.ResolveLines(got, func(name string) (string, bool) { s, ok := shown[name]; return s.text, ok })
	if err != nil {
		t.Fatal(err)
	}
	if back != want {
		t.Errorf("resolved:\n%s\nwant:\n%s", back, want)
	}
	if len(got) >= len(want) {
		t.Errorf("%d bytes with line references, %d without", len(got), len(want))
	}
	// Telemetry: dedup hit, the references counted, the saving dedup's.
	files, _ := filepath.Glob(filepath.Join(tel, "*"))
	var all []byte
	for _, f := range files {
		b, _ := os.ReadFile(f)
		all = append(all, b...)
	}
	for _, re := range []string{`"dedup":"hit"`, `"hints":\{[^}]*"ref":` + strconv.Itoa(len(refs)), `"saved":\{[^}]*"dedup":[1-9]`} {
		if !regexp.MustCompile(re).Match(all) {
			t.Errorf("telemetry has no %s: %s", re, all)
		}
	}

	// Twice the same: the same bytes.
	if again := runHookEvent(t, addEvent(path)); again.String() != upd.String() {
		t.Error("a second run gave other bytes")
	}

	// The earlier result before a compaction boundary: none.
	compacted := new(hookTx).
		call("toolu_01", "Bash", `{"command":"git diff"}`).result("toolu_01", bashResponse(diff), diff).
		boundary().
		call("toolu_09", "Bash", `{"command":"printf 'y\\nn\\ny\\nn\\n' | git add -p"}`).write(t)
	if upd := runHookEvent(t, addEvent(compacted)); upd.Kind() == tree.KindObject {
		if s, _ := upd.Get("stdout"); lineRefRE.MatchString(s.Str()) || s.Str() != want {
			t.Errorf("line references to a result before the compaction boundary:\n%s", s.Str())
		}
	}

	// Shown cleared (what the model has is not the text): none.
	cleared := new(hookTx).
		call("toolu_01", "Bash", `{"command":"git diff"}`).result("toolu_01", bashResponse(diff), "[Old tool result content cleared]").
		call("toolu_09", "Bash", `{"command":"printf 'y\\nn\\ny\\nn\\n' | git add -p"}`).write(t)
	if upd := runHookEvent(t, addEvent(cleared)); upd.Kind() == tree.KindObject {
		if s, _ := upd.Get("stdout"); lineRefRE.MatchString(s.Str()) {
			t.Errorf("line references to a cleared result:\n%s", s.Str())
		}
	}
}

// TestHookLineRefsNeverRead: a Read result is never changed, even when
// its lines repeat lines of a result in context.
func TestHookLineRefsNeverRead(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("TERSE_HOOK_LOG", filepath.Join(dir, "hook.log"))
	diff, _ := diffAndAddP()
	path := new(hookTx).
		call("toolu_01", "Bash", `{"command":"git diff"}`).result("toolu_01", bashResponse(diff), diff).
		call("toolu_09", "Read", `{"file_path":"/work/app/p.diff"}`).write(t)
	read := `{"type":"text","file":{"filePath":"/work/app/p.diff","content":` + jsonString(diff) + `,"numLines":60,"startLine":1,"totalLines":60}}`
	if upd := runHookEvent(t, hookEvent(path, "Read", "toolu_09", `{"file_path":"/work/app/p.diff"}`, read)); upd.Kind() == tree.KindObject {
		t.Errorf("a Read result was replaced: %.300s", upd.String())
	}
}

// TestHookRefsOff: with the "ref" hint family off ([hints.ref] enabled =
// false), neither a whole reference nor line references are written:
// the results are shown as they are (shaped), as the config documents.
func TestHookRefsOff(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("TERSE_HOOK_LOG", filepath.Join(dir, "hook.log"))
	cfg := filepath.Join(dir, "terse.toml")
	if err := os.WriteFile(cfg, []byte("[hints.ref]\nenabled = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	diff, addP := diffAndAddP()
	path := new(hookTx).
		call("toolu_01", "Bash", `{"command":"git diff"}`).result("toolu_01", bashResponse(diff), diff).
		call("toolu_02", "Bash", `{"command":"git add -p"}`).write(t)
	for _, c := range []struct{ name, stdout string }{{"line references", addP}, {"a whole reference", diff}} {
		upd := runHookEvent(t, hookEvent(path, "Bash", "toolu_02", `{"command":"git add -p"}`, bashResponse(c.stdout)), "--config", cfg)
		if s, _ := upd.Get("stdout"); strings.Contains(s.Str(), "> [ref: ") {
			t.Errorf("%s with ref off:\n%s", c.name, s.Str())
		}
		// On, the same event gets them.
		upd = runHookEvent(t, hookEvent(path, "Bash", "toolu_02", `{"command":"git add -p"}`, bashResponse(c.stdout)))
		if s, _ := upd.Get("stdout"); !strings.Contains(s.Str(), "> [ref: toolu_01") {
			t.Errorf("%s with ref on: none in\n%s", c.name, s.Str())
		}
	}
}

// TestHookLineRefsNotInShaped: a text shaped losslessly (here search
// results as a path tree, whose declaration names the line the tree
// starts at) gets no line references, even when its lines repeat those
// of an earlier result shown the same way: the shaping's rule reads the
// text as it is.
func TestHookLineRefsNotInShaped(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("TERSE_HOOK_LOG", filepath.Join(dir, "hook.log"))
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "/work/app/src/internal/store/file_%02d.go:%d:\tfunc Handler%d(ctx context.Context) error {\n", i, i+10, i)
	}
	grep1 := b.String()
	grep2 := grep1 + "/work/app/src/internal/store/zz.go:3:\tfunc Last(ctx context.Context) error {\n"
	resp := func(s string) string {
		return `{"mode":"content","numFiles":41,"filenames":[],"content":` + jsonString(s) + `,"numLines":41}`
	}
	input := `{"pattern":"func .*ctx","output_mode":"content"}`
	shaped := func(transcript, content string) string {
		upd := runHookEvent(t, hookEvent(transcript, "Grep", "toolu_09", input, resp(content)))
		if upd.Kind() != tree.KindObject {
			t.Fatal("search results not shaped")
		}
		s, _ := upd.Get("content")
		return s.Str()
	}
	// The earlier result as the hook showed it.
	first := shaped("/nonexistent/t.jsonl", grep1)
	if !strings.HasPrefix(first, "> [lossless: ") {
		t.Fatalf("not shaped losslessly:\n%s", first)
	}
	want := shaped("/nonexistent/t.jsonl", grep2)
	path := new(hookTx).call("toolu_01", "Grep", input).result("toolu_01", resp(first), first).call("toolu_09", "Grep", input).write(t)
	if got := shaped(path, grep2); got != want {
		t.Errorf("a lossless shaping changed by line references:\n%s\nwant:\n%s", got, want)
	}
}
