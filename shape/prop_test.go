package shape

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/terse-dev/terse/inband"

	"github.com/terse-dev/terse/tokens"
)

// estimate counts fast for property tests: the gate is not what they
// check.
var estimate = tokens.Estimate()

// shaped counts the lossless and display shapings the property tests
// checked, so that a test can fail when it checked none.
var shaped [4]int

// formsChecked counts the read shapings checked by rule name.
var formsChecked = map[string]int{}

// check shapes text as call under every ceiling and checks the class's
// promise: a lossless shaping expands to text, a display one to its
// terminal view, anything else is text untouched. It checks the shaping
// of every shape, past the net-win gate, and what Shape returns.
func check(t interface {
	Fatalf(string, ...any)
}, text string, call Call) {
	verify := func(r Result, ceiling Class) {
		switch r.Class {
		case None:
			if r.Text != text {
				t.Fatalf("untouched result differs from its input")
			}
		case Lossless, Display:
			shaped[r.Class]++
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
	for _, ceiling := range []Class{Lossless, Display, Elide} {
		for _, kind := range []string{"read", "paths", "grep", "log", "test", "git", "build"} {
			if c, ok := lossless(text, kind, call, ceiling, ""); ok {
				verify(Result{Text: c.text, Class: c.class}, ceiling)
			}
		}
		for _, form := range ReadForms {
			if c, ok := lossless(text, "read", call, ceiling, form); ok {
				verify(Result{Text: c.text, Class: c.class}, ceiling)
				for _, r := range c.rules {
					formsChecked[r]++
				}
			}
			r := Shape(text, call, &Options{Counter: estimate, Margin: -1, MinBytes: 1, Ceiling: ceiling, ReadForm: form})
			verify(r, ceiling)
			if r.Shape == "git" && r.Class > Lossless || r.Shape == "build" && r.Class > Display {
				t.Fatalf("%s output shaped as %s", r.Shape, r.Class)
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
	{Tool: "Bash", Input: []byte(`{"command":"git log --oneline"}`), WorkDir: "/home/u/p"},
	{Tool: "Bash", Input: []byte(`{"command":"go vet ./..."}`), WorkDir: "/home/u/p"},
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
		// A read: a run of consecutively numbered lines, whose contents
		// may look numbered too, before the rest.
		if rapid.Bool().Draw(t, "read") {
			first := rapid.IntRange(0, 1200).Draw(t, "first")
			sep := rapid.SampledFrom([]string{"→", "\t"}).Draw(t, "sep")
			body := rapid.SliceOfN(lineGen(), 0, 30).Draw(t, "body")
			run := make([]string, len(body))
			for i, l := range body {
				run[i] = fmt.Sprintf("%6d%s%s", first+i, sep, l)
			}
			lines = append(run, lines...)
		}
		text := strings.Join(lines, "\n")
		if rapid.Bool().Draw(t, "newline") {
			text += "\n"
		}
		call := rapid.SampledFrom(calls).Draw(t, "call")
		check(t, text, call)
	})
	if shaped[Lossless] == 0 || shaped[Display] == 0 {
		t.Errorf("no shaping checked: %v", shaped)
	}
	if formsChecked[ReadSparse] == 0 || formsChecked[ReadRange] == 0 || formsChecked[ReadTab] == 0 {
		t.Errorf("no read form checked: %v", formsChecked)
	}
	t.Logf("checked %d lossless and %d display shapings", shaped[Lossless], shaped[Display])
}

// FuzzShapeExpand checks the class promises on any input, as every call.
func FuzzShapeExpand(f *testing.F) {
	f.Add("     1→a\n     2→b\n     3→c\n")
	f.Add("/home/u/p/a/b.go\n/home/u/p/a/c.go\n/home/u/p/d.go\n")
	f.Add("a.go:1:x\na.go:2:y\nb.go:3:z\n")
	f.Add("x\nx\nx\nx\n\x1b[31mred\x1b[0m\rblue\n")
	f.Add("     9→a\n    10→    11→b\n    11→\n    12→12→c\nend")
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
	f.Add("> [lossless: lines 9–12 numbered \"→\" on the first, the last and every 10th only (width 6)]\n9→a\n10→b\nc\n12→d\n<system-reminder>")
	f.Add("> [lossless: lines 1–3 follow without their \"\\t\" numbers (width 6)]\na\n\tb\nc")
	f.Add("> [lossless: lines 1–16777216 follow without their \"→\" numbers (width 6)]\na")
	f.Add("> [lossless: \"→\" numbers unpadded to width 6 and followed by \"\\t\"]\n1\ta\n2\t\tb\n123456→c")
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
	f.Add("HEAD detached at 9f2c1e4\nnothing to commit\n", "Bash", `{"command":"git -C repo status | tail -5"}`)
	f.Add("a.go:1:2: undefined: x\na.go:1:2: undefined: x\n", "Bash", `{"command":"cd x && go vet ./... || true"}`)
	f.Add("\x1b[96msrc/a.ts\x1b[0m:1:2 - error TS1: x\n", "exec", `{"cmd":"npx tsc --noEmit"}`)
	f.Fuzz(func(t *testing.T, text, tool, input string) {
		Detect(text, Call{Tool: tool, Input: []byte(input)})
		findAnchors(text)
	})
}

// folded reads a marker of folded lines with inband's parser.
func folded(l string) (inband.Folded, bool) {
	v, err := inband.Parse(l)
	f, ok := v.(inband.Folded)
	return f, err == nil && ok
}

// TestElideTestProperty: on arbitrary test output, an elision keeps every
// other line in order, replaces only runs of at least three pass lines,
// names each run by its range and chunk, counts what the runs hold
// exactly, keeps the last two lines, and its chunks cover the original in
// order.
func TestElideTestProperty(t *testing.T) {
	pass := rapid.OneOf(
		rapid.Custom(func(t *rapid.T) string {
			return fmt.Sprintf("--- PASS: Test%d (0.00s)", rapid.IntRange(0, 99).Draw(t, "n"))
		}),
		rapid.Custom(func(t *rapid.T) string {
			return fmt.Sprintf("=== RUN   Test%d", rapid.IntRange(0, 99).Draw(t, "n"))
		}),
		rapid.Custom(func(t *rapid.T) string {
			return fmt.Sprintf("test mod::case_%d ... ok", rapid.IntRange(0, 99).Draw(t, "n"))
		}),
		rapid.Custom(func(t *rapid.T) string {
			return fmt.Sprintf("tests/t.py::test_%d PASSED [ %d%%]", rapid.IntRange(0, 99).Draw(t, "n"), rapid.IntRange(0, 100).Draw(t, "p"))
		}),
		rapid.SampledFrom([]string{"ok  \tex.com/a\t0.1s", "?   \tex.com/b\t[no test files]", "PASS"}),
	)
	gen := rapid.OneOf(pass, pass, pass,
		rapid.SampledFrom([]string{"FAIL", "--- FAIL: TestX (0.00s)",
			"    x_test.go:3: error: want 1", "panic: boom", "test mod::bad ... FAILED", "", "[… 3 lines left out: lines 1–3; chunk 1 …]"}),
		rapid.String(),
	)
	elided := 0
	rapid.Check(t, func(t *rapid.T) {
		var lines []string
		for range rapid.IntRange(0, 12).Draw(t, "segments") {
			l := gen.Draw(t, "line")
			if _, _, ok := passLine(l); ok {
				for range rapid.IntRange(1, 20).Draw(t, "run") {
					lines = append(lines, pass.Draw(t, "pass"))
				}
			}
			lines = append(lines, l)
		}
		text := strings.Join(lines, "\n")
		c, ok := elideTest(text, nil)
		if !ok {
			return
		}
		elided++
		orig := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		next := 1
		for k, r := range c.ranges {
			if r[0] != next || r[1] < r[0] {
				t.Fatalf("chunk %d is lines %d–%d, want from %d", k+1, r[0], r[1], next)
			}
			next = r[1] + 1
		}
		if next != len(orig)+1 {
			t.Fatalf("chunks end at line %d of %d", next-1, len(orig))
		}
		out := strings.Split(strings.TrimSuffix(c.text, "\n"), "\n")[1:]
		i := 0
		for _, l := range out {
			f, ok := folded(l)
			if !ok || i >= len(orig) || orig[i] == l {
				if i >= len(orig) || orig[i] != l {
					t.Fatalf("kept line %q is not line %d of the original", l, i+1)
				}
				i++
				continue
			}
			a, b, k := f.First, f.Last, f.Chunk
			if a != i+1 || b-a+1 < 3 || b > len(orig)-2 || c.ranges[k-1] != [2]int{a, b} {
				t.Fatalf("marker %q at line %d (chunk %v)", l, i+1, c.ranges[k-1])
			}
			counts := map[string]int{}
			for _, o := range orig[a-1 : b] {
				unit, n, ok := passLine(o)
				if !ok {
					t.Fatalf("folded a line that is not a pass line: %q", o)
				}
				counts[unit] += n
			}
			if want := foldedMarker(a-1, b, counts, k, builtinUnits); want != l {
				t.Fatalf("marker %q, want %q", l, want)
			}
			i = b
		}
		if i != len(orig) {
			t.Fatalf("the elision covers %d of %d lines", i, len(orig))
		}
	})
	if elided == 0 {
		t.Error("nothing elided")
	}
	t.Logf("%d elisions checked", elided)
}

// TestElideLogProperty: a long log's elision keeps its first and last
// lines and every problem line whole, in order; each marker names the
// range it replaces and the chunk that holds it, and the chunks cover the
// original in order.
func TestElideLogProperty(t *testing.T) {
	line := rapid.OneOf(
		rapid.Custom(func(t *rapid.T) string {
			return fmt.Sprintf("INFO request %d served in %dms", rapid.IntRange(0, 1e6).Draw(t, "n"), rapid.IntRange(0, 999).Draw(t, "ms"))
		}),
		rapid.SampledFrom([]string{"ERROR disk full", "warning: slow", "panic: nil map", "    at f (x.js:1:2)", "FAIL", "ok  \tx\t0.1s", ""}),
		rapid.String(),
	)
	checked := 0
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(longLog, longLog+300).Draw(t, "n")
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprintf("INFO tick %d", i)
		}
		for range rapid.IntRange(0, 10).Draw(t, "others") {
			lines[rapid.IntRange(0, n-1).Draw(t, "at")] = line.Draw(t, "line")
		}
		text := strings.Join(lines, "\n") + "\n"
		lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		n = len(lines)
		c, ok := elideLog(text)
		if !ok {
			return
		}
		checked++
		next := 1
		for _, r := range c.ranges {
			if r[0] != next || r[1] < r[0] {
				t.Fatalf("chunks out of order: %v", c.ranges)
			}
			next = r[1] + 1
		}
		if next != n+1 {
			t.Fatalf("chunks end at %d of %d", next-1, n)
		}
		out := strings.Split(strings.TrimSuffix(c.text, "\n"), "\n")[1:]
		i := 0
		for _, l := range out {
			if f, ok := folded(l); ok && (i >= n || lines[i] != l) {
				a, b, k := f.First, f.Last, f.Chunk
				if a != i+1 || b-a+1 < 3 || c.ranges[k-1] != [2]int{a, b} || a <= logEnds || b > n-logEnds {
					t.Fatalf("marker %q at line %d", l, i+1)
				}
				for _, o := range lines[a-1 : b] {
					if problemLine.MatchString(o) || anchorError.MatchString(o) {
						t.Fatalf("elided a problem line %q", o)
					}
				}
				i = b
				continue
			}
			if i >= n || lines[i] != l {
				t.Fatalf("kept line %q is not line %d", l, i+1)
			}
			i++
		}
		if i != n {
			t.Fatalf("covers %d of %d lines", i, n)
		}
	})
	if checked == 0 {
		t.Error("nothing elided")
	}
	t.Logf("%d elisions checked", checked)
}

// FuzzElide: on any input, an elision of test output or of a long log
// covers the original's lines in order with its chunks, and keeps every
// line that says something failed.
func FuzzElide(f *testing.F) {
	f.Add("--- PASS: A (0.00s)\n--- PASS: B (0.00s)\n--- PASS: C (0.00s)\n--- PASS: D (0.00s)\n--- PASS: E (0.00s)\n--- PASS: F (0.00s)\n--- PASS: G (0.00s)\n--- PASS: H (0.00s)\n--- PASS: I (0.00s)\nFAIL\nok")
	f.Add(strings.Repeat("INFO tick\n", 500) + "ERROR x\n")
	f.Add("  * test a (0.1ms) [L#1]\n  * test b (0.1ms) [L#2]\n  * test c (0.1ms) [L#3]\n  * test d (0.1ms) [L#4]\n  * test e (0.1ms) [L#5]\n\n  1) test c (M)\n     x.exs:3\n\n5 tests, 1 failure\n")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) < 2000 && rand(text)%2 == 0 {
			text = strings.Repeat(text+"\n", longLog/max(1, strings.Count(text, "\n")+1)+1)
		}
		n := len(strings.Split(strings.TrimSuffix(text, "\n"), "\n"))
		for _, c := range []func() (candidate, bool){
			func() (candidate, bool) { return elideTest(text, nil) },
			func() (candidate, bool) { return elideLog(text) },
		} {
			e, ok := c()
			if !ok {
				continue
			}
			next := 1
			for _, r := range e.ranges {
				if r[0] != next || r[1] < r[0] {
					t.Fatalf("chunks out of order: %v", e.ranges)
				}
				next = r[1] + 1
			}
			if next != n+1 {
				t.Fatalf("chunks end at line %d of %d", next-1, n)
			}
			// A mix test --trace line of a test named in a failure
			// report is kept as many times as the original has it.
			for _, m := range mixFailure.FindAllStringSubmatch(text, -1) {
				for _, l := range strings.Split(text, "\n") {
					if tm := mixTrace.FindStringSubmatch(l); tm != nil && tm[1] == m[1] && strings.Count(e.text, l) < strings.Count(text, l) {
						t.Fatalf("the line of failed %q was folded", m[1])
					}
				}
			}
			if countFail(e.text) != countFail(text) {
				t.Fatalf("lines that say something failed: %d, the original has %d", countFail(e.text), countFail(text))
			}
		}
	})
}

// rand is a cheap deterministic choice from an input.
func rand(s string) int {
	h := 0
	for i := 0; i < len(s) && i < 64; i++ {
		h = h*31 + int(s[i])
	}
	return max(h, -h)
}
