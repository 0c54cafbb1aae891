package hook

import (
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/tree"
)

// hunk is a diff hunk of n lines of about 50 bytes each.
func hunk(tag string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@@ -1,%d +1,%d @@ %s\n", n, n, tag)
	for i := range n {
		fmt.Fprintf(&b, " \tline %d of \"%s\" — with a tab\tand quotes\n", i, tag)
	}
	return b.String()
}

// mcpOut is an MCP tool's content blocks, as toolUseResult.
func mcpOut(texts ...string) string {
	var parts []string
	for _, s := range texts {
		parts = append(parts, `{"type":"text","text":`+string(tree.AppendString(nil, s))+`}`)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// resultBlocks appends a result whose content is a list of blocks.
func (x *tx) resultBlocks(id, output string, sidechain bool) *tx {
	x.result(id, output, "", sidechain)
	x.lines[len(x.lines)-1] = strings.Replace(x.lines[len(x.lines)-1], `"content":""`, `"content":`+output, 1)
	return x
}

func TestShown(t *testing.T) {
	h := hunk("a", 12)
	cur := "(1/1) Stage this hunk? \n" + h + "done\n"
	for _, c := range []struct {
		name string
		x    *tx
		want []string // names
	}{
		{"a result in context",
			new(tx).call("t1", "Bash", `{"command":"git diff"}`, false).result("t1", bashOut(h), h, false),
			[]string{`t1 (Bash "git diff")`}},
		{"the text shown, not the tool's output",
			new(tx).call("t1", "Bash", `{"command":"git diff"}`, false).result("t1", bashOut("other"), "x\n"+h, false),
			[]string{`t1 (Bash "git diff")`}},
		{"any tool, in order",
			new(tx).call("t1", "mcp__gh__pr_diff", `{"pr":1}`, false).resultBlocks("t1", mcpOut(h), false).
				call("t2", "Bash", `{"command":"git diff"}`, false).result("t2", bashOut(h), h, false).
				call("t3", "Bash", `{"command":"ls"}`, false).result("t3", bashOut(long), long, false),
			[]string{"t1 (pr_diff)", `t2 (Bash "git diff")`}},
		{"shown as two blocks",
			new(tx).call("t1", "mcp__gh__pr_diff", `{}`, false).resultBlocks("t1", mcpOut(h, "more"), false),
			nil},
		{"too short a run",
			new(tx).call("t1", "Bash", `{}`, false).result("t1", bashOut(hunk("a", 2)), hunk("a", 2), false),
			nil},
		{"before a compaction boundary",
			new(tx).call("t1", "Bash", `{}`, false).result("t1", bashOut(h), h, false).boundary(),
			nil},
		{"a sub-agent's",
			new(tx).call("t1", "Bash", `{}`, true).result("t1", bashOut(h), h, true),
			nil},
		{"its call not in the transcript",
			new(tx).result("t1", bashOut(h), h, false),
			nil},
		{"crowded by a sub-agent's",
			crowded(new(tx).call("t1", "Bash", `{"command":"git diff"}`, false).result("t1", bashOut(h), h, false), h, maxShown+2),
			[]string{`t1 (Bash "git diff")`}},
		{"a path written since",
			new(tx).call("t1", "Grep", `{"pattern":"x","path":"/w/a.diff"}`, false).result("t1", `{"mode":"content"}`, h, false).
				call("t2", "Write", `{"file_path":"/w/a.diff","content":"x"}`, false).result("t2", `{}`, "File created", false),
			nil},
	} {
		c.x.call("t9", "Bash", `{}`, false)
		var got []string
		for _, s := range ParseTranscript(c.x.text()).Shown("", "t9", []string{cur}) {
			got = append(got, s.Name)
			// The text is the one shown, whole.
			if !strings.Contains(s.Text, h) {
				t.Errorf("%s: %s: text %q", c.name, s.Name, s.Text)
			}
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: Shown = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestLineSlot(t *testing.T) {
	for _, c := range []struct {
		tool, slot string
		want       bool
	}{
		{"Bash", "stdout", true}, {"Bash", "stderr", false}, {"BashOutput", "stdout", true},
		{"Grep", "content", true}, {"Grep", "filenames", false}, {"Glob", "filenames", false},
		{"WebFetch", "result", true}, {"mcp__a__b", "text", true}, {"Read", "content", false},
	} {
		if got := LineSlot(c.tool, Slot{Name: c.slot, Lines: c.slot == "filenames"}); got != c.want {
			t.Errorf("LineSlot(%s, %s) = %v", c.tool, c.slot, got)
		}
	}
}

// FuzzShown: whatever the texts, an earlier result in context from which
// dedup.Lines would refer a run of the current text is among the results
// Shown gives (the search of the transcript's bytes misses none).
func FuzzShown(f *testing.F) {
	h := hunk("a", 8)
	f.Add(h, "x\n"+h+"y")
	f.Add("a\n\"b\"\n\\c\n\td\x01\ne→\n"+h, h+"\\c\n\td\x01\ne→")
	f.Fuzz(func(t *testing.T, earlier, cur string) {
		if !validShown(earlier) || !validShown(cur) {
			return
		}
		x := new(tx).call("t1", "Bash", `{"command":"a"}`, false).result("t1", bashOut(earlier), earlier, false).call("t9", "Bash", `{}`, false)
		shown := ParseTranscript(x.text()).Shown("", "t9", []string{cur})
		var lx dedup.Lines
		lx.Add(RefName("Bash", Ref{ID: "t1", Input: mustParse(t, `{"command":"a"}`)}), earlier)
		if _, n := lx.Refer(cur, nil); n > 0 && (len(shown) != 1 || shown[0].Text != earlier) {
			t.Fatalf("Refer finds %d runs, Shown gives %d results", n, len(shown))
		}
	})
}

// validShown reports whether s is text a transcript holds as it is:
// valid UTF-8 (a JSON string's content).
func validShown(s string) bool {
	return s != "" && strings.ToValidUTF8(s, "\ufffd") == s
}

func TestNextSpecial(t *testing.T) {
	for _, s := range []string{"", "a", `"`, `\`, "abcdefgh", `abcdefg"`, `abcdefgh\`, "\x80\xff\x5b\x5d\x21\x23 \"", "é→x" + strings.Repeat("y", 20) + `\"`} {
		for i := 0; i <= len(s); i++ {
			want := strings.IndexAny(s[i:], `\"`)
			if want < 0 {
				want = len(s)
			} else {
				want += i
			}
			if got := nextSpecial([]byte(s), i); got != want {
				t.Errorf("nextSpecial(%q, %d) = %d, want %d", s, i, got, want)
			}
		}
	}
}

// crowded adds n results of a sub-agent that repeat h after x.
func crowded(x *tx, h string, n int) *tx {
	for i := range n {
		id := fmt.Sprintf("s%d", i)
		x.call(id, "Bash", `{}`, true).result(id, bashOut(h), h, true)
	}
	return x
}
