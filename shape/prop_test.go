package shape

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/terse-dev/terse/tokens"
)

// estimate counts fast for property tests: the gate is not what they
// check.
var estimate = tokens.Estimate()

// check shapes text as call under every ceiling and checks the class's
// promise: a lossless shaping expands to text, a display one to its
// terminal view, anything else is text untouched.
func check(t interface {
	Fatalf(string, ...any)
}, text string, call Call) {
	for _, ceiling := range []Class{Lossless, Display, Elide} {
		o := &Options{Counter: estimate, Margin: -1, MinBytes: 1, Ceiling: ceiling}
		r := Shape(text, call, o)
		switch r.Class {
		case None:
			if r.Text != text {
				t.Fatalf("untouched result differs from its input")
			}
		case Lossless, Display:
			if r.Class > ceiling {
				t.Fatalf("class %s over the ceiling %s", r.Class, ceiling)
			}
			back, class, err := ExpandClass(r.Text)
			if err != nil {
				t.Fatalf("expand: %v\nshaped:\n%s", err, r.Text)
			}
			want := text
			if class == Display {
				want = TerminalView(text)
			}
			if back != want || class != r.Class {
				t.Fatalf("expand(shape(x)) != x\nx:\n%q\nshaped:\n%q\nback:\n%q", want, r.Text, back)
			}
		}
	}
}

var calls = []Call{
	{Tool: "Read"},
	{Tool: "Glob", WorkDir: "/home/u/p"},
	{Tool: "Grep", Input: []byte(`{"output_mode":"content"}`)},
	{Tool: "Bash", Input: []byte(`{"command":"make"}`), WorkDir: "/home/u/p"},
	{Tool: "Bash", Input: []byte(`{"command":"cat -n x"}`)},
	{Tool: "mcp__x__y"},
}

// lineGen draws lines that the rules act on: numbered lines, paths,
// search results, repeats, escape codes, carriage returns, and lines
// shaped like what the rules write (markers, "./", indentation).
func lineGen() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.Custom(func(t *rapid.T) string {
			return fmt.Sprintf("%6d→%s", rapid.IntRange(0, 2000000).Draw(t, "n"), rapid.StringOf(rapid.RuneFrom([]rune("ab \t→:/."))).Draw(t, "s"))
		}),
		rapid.Custom(func(t *rapid.T) string {
			return fmt.Sprintf("%d→x", rapid.IntRange(0, 99).Draw(t, "n"))
		}),
		rapid.Custom(func(t *rapid.T) string {
			return fmt.Sprintf("%6d\t%s", rapid.IntRange(0, 999).Draw(t, "n"), rapid.String().Draw(t, "s"))
		}),
		rapid.SampledFrom([]string{
			"/home/u/p/a/b.go", "/home/u/p/a/c.go", "/home/u/p/d/e.go", "./x", " ./y", "a/b/", "a/", "a//b", "/", "",
			"src/x.go:12:func x()", "src/x.go-13-}", "src/x.go:14:y", "--", " 12:not grouped", " 3-x",
			"[… same line 2 more times …]", "[… same line 0 more times …]", "same", "same", "same",
			"\x1b[31mred\x1b[0m", "abc\rX", "progress 10%\rprogress 100%", "a\bb", "\x1b[2K\rdone", "\x1b[1Aup",
			"crlf\r", "\t/home/u/p/f.go:3 +0x1", "> [lossless: repeats folded]", "é\rx", "\xff\xfe",
		}),
		rapid.String(),
	)
}

// TestExpandShapeProperty: expand(shape(x)) == x (the terminal view of x
// for a display shaping) on arbitrary texts built from lines the rules
// act on.
func TestExpandShapeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lines := rapid.SliceOfN(lineGen(), 0, 40).Draw(t, "lines")
		// Runs: repeat some lines.
		if len(lines) > 0 && rapid.Bool().Draw(t, "run") {
			i := rapid.IntRange(0, len(lines)-1).Draw(t, "i")
			k := rapid.IntRange(2, 6).Draw(t, "k")
			run := make([]string, k)
			for j := range run {
				run[j] = lines[i]
			}
			lines = append(lines[:i], append(run, lines[i:]...)...)
		}
		text := strings.Join(lines, "\n")
		if rapid.Bool().Draw(t, "newline") {
			text += "\n"
		}
		call := rapid.SampledFrom(calls).Draw(t, "call")
		check(t, text, call)
	})
}

// FuzzShapeExpand checks the class promises on any input, as every call.
func FuzzShapeExpand(f *testing.F) {
	f.Add("     1→a\n     2→b\n     3→c\n")
	f.Add("/home/u/p/a/b.go\n/home/u/p/a/c.go\n/home/u/p/d.go\n")
	f.Add("a.go:1:x\na.go:2:y\nb.go:3:z\n")
	f.Add("x\nx\nx\nx\n\x1b[31mred\x1b[0m\rblue\n")
	f.Fuzz(func(t *testing.T, text string) {
		for _, c := range calls {
			check(t, text, c)
		}
	})
}

// FuzzExpand: Expand never panics, and a text it accepts is stable:
// expanding what it returns again fails or gives the same (the header is
// gone).
func FuzzExpand(f *testing.F) {
	f.Add("> [lossless: \"→\" numbers unpadded to width 6]\n1→a\n2→b")
	f.Add("> [lossless: ./ = \"/a/\"; paths as a tree from line 1]\n./\n b/\n  c\n  d\n e")
	f.Add("> [lossless: matches grouped by file]\na.go\n 1:x\n 2-y")
	f.Add("> [display: terminal view; repeats folded]\nx\n[… same line 3 more times …]")
	f.Add("> [lossless: paths as a tree from line 9]\n")
	f.Add("> [lossless: repeats folded]\n[… same line 999999999 more times …]")
	f.Fuzz(func(t *testing.T, text string) {
		out, err := Expand(text)
		if err != nil {
			if _, ok := err.(*ExpandError); !ok {
				t.Fatalf("error %T is not an *ExpandError", err)
			}
			return
		}
		_ = out
	})
}

// FuzzDetect: Detect and the anchor finder never panic.
func FuzzDetect(f *testing.F) {
	f.Add("     1→a\n     2→b\n     3→c\n", "Read", "")
	f.Add("ok  \tpkg\t0.1s\nFAIL\tx\n", "Bash", `{"command":"go test ./..."}`)
	f.Add("x", "Bash", `{"command":["bash","-lc","cat -n f"]}`)
	f.Fuzz(func(t *testing.T, text, tool, input string) {
		Detect(text, Call{Tool: tool, Input: []byte(input)})
		findAnchors(text)
	})
}
