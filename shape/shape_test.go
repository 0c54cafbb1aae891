package shape

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func read(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "%6d→\tvalue := lookup(table, %d)\n", i, i)
	}
	return sb.String()
}

// TestPolicy: per-tool rules switch shaping off, lower the ceiling and
// raise the margin; the first matching rule applies.
func TestPolicy(t *testing.T) {
	text := read(100)
	cases := []struct {
		name  string
		o     Options
		tool  string
		class Class
		why   string
	}{
		{"default", Options{}, "Read", Lossless, ""},
		{"off by rule", Options{Tools: []ToolRule{{Match: "Re*", Off: true}}}, "Read", None, "off"},
		{"other tool's rule", Options{Tools: []ToolRule{{Match: "Bash", Off: true}}}, "Read", Lossless, ""},
		{"first rule wins", Options{Tools: []ToolRule{{Match: "Read", Margin: 0.9}, {Match: "*", Off: true}}}, "Read", None, "no gain"},
		{"short", Options{MinBytes: 1 << 20}, "Read", None, "short"},
		{"unknown shape", Options{}, "mcp__x__prose", None, "unknown shape"},
	}
	for _, c := range cases {
		r := Shape(text, Call{Tool: c.tool}, &c.o)
		if c.tool == "mcp__x__prose" {
			r = Shape(strings.Repeat("Some prose about the plan.\n", 40), Call{Tool: c.tool}, &c.o)
		}
		if r.Class != c.class || r.Why != c.why {
			t.Errorf("%s: class %s why %q, want %s %q", c.name, r.Class, r.Why, c.class, c.why)
		}
	}
}

// TestCeiling: a display shaping is not used under a lossless ceiling,
// and an elision needs Keep and an elide ceiling.
func TestCeiling(t *testing.T) {
	ansi := strings.Repeat("\x1b[32mok\x1b[0m step done, moving on to the next one\n", 40)
	call := Call{Tool: "Bash", Input: []byte(`{"command":"make"}`)}
	if r := Shape(ansi, call, &Options{Ceiling: Lossless}); r.Class != None {
		t.Errorf("lossless ceiling: class %s", r.Class)
	}
	if r := Shape(ansi, call, &Options{Ceiling: Display}); r.Class != Display {
		t.Errorf("display ceiling: class %s (%s)", r.Class, r.Why)
	}
	var tests strings.Builder
	for i := range 30 {
		fmt.Fprintf(&tests, "=== RUN   TestCase%d\n--- PASS: TestCase%d (0.00s)\n", i, i)
	}
	tests.WriteString("PASS\nok  \texample.com/x\t0.1s\n")
	gocall := Call{Tool: "Bash", Input: []byte(`{"command":"go test ./..."}`)}
	keep := func(string, [][2]int) (string, error) { return "terse chunk c_0 N", nil }
	if r := Shape(tests.String(), gocall, &Options{}); r.Class == Elide {
		t.Error("elided without Keep")
	}
	if r := Shape(tests.String(), gocall, &Options{Keep: keep, Ceiling: Display}); r.Class == Elide {
		t.Error("elided under a display ceiling")
	}
	if r := Shape(tests.String(), gocall, &Options{Keep: keep}); r.Class != Elide || !strings.Contains(r.Text, "(30 tests passed)") {
		t.Errorf("not elided: %s %s", r.Class, r.Why)
	}
}

// TestDetect names shapes from the tool and its input, and from content.
func TestDetect(t *testing.T) {
	cases := []struct {
		tool, input, text, want string
	}{
		{"Read", "", "x", "read"},
		{"Glob", "", "x", "paths"},
		{"Grep", `{"output_mode":"content"}`, "x", "grep"},
		{"Grep", `{}`, "x", "paths"},
		{"Grep", `{"output_mode":"count"}`, "x", ""},
		{"Bash", `{"command":"cd /x && go test ./..."}`, "x", "test"},
		{"Bash", `{"command":"cat -n main.go"}`, "x", "read"},
		{"Bash", `{"command":"find . -name '*.go'"}`, "x", "paths"},
		{"Bash", `{"command":"grep -rn foo ."}`, "x", "grep"},
		{"Bash", `{"command":"make"}`, "x", "log"},
		// Comment lines before the command.
		{"Bash", `{"command":"# Run the tests\ncd /x && go test ./..."}`, "x", "test"},
		{"Bash", `{"command":"# Recent history\n  # of main\ngit log --oneline | head -5"}`, "x", "git"},
		// Input piped into git: the output is git's.
		{"Bash", `{"command":"printf 'y\\nn\\n' | git add -p main.go"}`, "x", "git"},
		{"Bash", `{"command":"make; printf 'y\\n' | git add -p main.go"}`, "x", "log"},
		{"Bash", `{"command":"git log | grep fix"}`, "x", "log"},
		{"shell", `{"command":["bash","-lc","pytest -q"]}`, "x", "test"},
		{"exec_command", `{"cmd":"cargo test"}`, "x", "test"},
		{"WebFetch", "", read(10), ""},
		{"mcp__fs__read", "", read(10), "read"},
		{"mcp__x__y", "", "a/b.go:1:x\na/b.go:2:y\nc.go:3:z\n", "grep"},
		{"mcp__x__y", "", "2026-01-01T10:00:00Z a\n2026-01-01T10:00:01Z b\n2026-01-01T10:00:02Z c\n", ""},
		{"mcp__x__y", "", "src/a.go\nsrc/b.go\ndocs/c.md\n", "paths"},
		{"mcp__x__y", "", "just\nsome\nprose here\n", ""},
	}
	for _, c := range cases {
		if got := Detect(c.text, Call{Tool: c.tool, Input: []byte(c.input)}); got != c.want {
			t.Errorf("Detect(%s %s) = %q, want %q", c.tool, c.input, got, c.want)
		}
	}
}

// TestExpandErrors: a text that is not a shaping, or whose rules do not
// undo, is an error at its position.
func TestExpandErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"plain text", "line 1, column 1: not a shaped text"},
		{"> [elided: x]\ny", "line 1, column 1: an elided text is not expanded"},
		{"> [lossless: repeats folded", "line 1, column 28: the header line does not end"},
		{"> [lossless: bogus rule]\nx", `line 1, column 14: unknown rule "bogus rule"`},
		{"> [lossless: repeats folded]\n[… same line 2 more times …]", "line 2, column 1: a fold marker with no line above it"},
		{"> [lossless: matches grouped by file]\n 12:x", "line 2, column 1: a grouped result line"},
		{"> [lossless: paths as a tree from line 1]\na/\n  b\n  c", "line 3, column 1: indented 2 levels"},
		{"> [id: 1a2b]\n> [lossless: repeats folded]\n[… same line 2 more times …]", "line 3, column 1: a fold marker"},
		{"> [lossless: terminal view]\nx", "a terminal view is a display shaping's first rule"},
	}
	for _, c := range cases {
		_, err := Expand(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Expand(%q) = %v, want %q", c.text, err, c.want)
		}
	}
}

// TestPassLines: a runner the built-in patterns do not know is folded by
// a configured pattern, counted in its unit; a line that says something
// failed is never folded, whatever the pattern.
func TestPassLines(t *testing.T) {
	var sb strings.Builder
	for i := range 20 {
		fmt.Fprintf(&sb, "spec %02d ... green\n", i)
	}
	sb.WriteString("spec 20 ... green but failed to clean up\nspec 21 ... red\n2 specs, 1 failure\n")
	o := &Options{Keep: func(string, [][2]int) (string, error) { return "terse chunk c_0 N", nil },
		PassLines: []PassLine{{Pattern: regexp.MustCompile(`^spec \d+ \.\.\. green`), Unit: "specs passed"}}}
	r := Shape(sb.String(), Call{Tool: "Bash", Input: []byte(`{"command":"make test"}`)}, o)
	if r.Class != Elide || !strings.Contains(r.Text, "(20 specs passed)") || !strings.Contains(r.Text, "spec 20 ... green but failed to clean up") {
		t.Errorf("class %s:\n%s", r.Class, r.Text)
	}
}

// TestRelativeOnlyWhenSmaller: paths written relative to the working
// directory cost the base's declaration; when the shaping without it is
// smaller, that one is used.
func TestRelativeOnlyWhenSmaller(t *testing.T) {
	text := "building /home/dev/project/cmd/tool\n" +
		"/home/dev/project/cmd/tool/main.go:12:2: declared and not used: x\n" +
		"/home/dev/project/cmd/tool/run.go:40:9: undefined: Checkpoint\n" +
		strings.Repeat("warning: retrying download of module cache index\n", 5) +
		"make: *** [Makefile:12: build] Error 1\n"
	call := Call{Tool: "Bash", Input: []byte(`{"command":"make build"}`)}
	abs := Shape(text, call, &Options{})
	call.WorkDir = "/home/dev/project"
	rel := Shape(text, call, &Options{})
	if abs.Class != Lossless || rel.Class != Lossless {
		t.Fatalf("classes %v, %v", abs.Class, rel.Class)
	}
	if rel.ShapedTokens > abs.ShapedTokens {
		t.Errorf("with the working directory: %d tokens (rules %v), without: %d", rel.ShapedTokens, rel.Rules, abs.ShapedTokens)
	}
}
