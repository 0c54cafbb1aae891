package dedup_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/inband"
)

// shownText is a text shown to the model and the name its references
// carry.
type shownText struct{ name, text string }

// referLines adds earlier to a fresh Lines, in order, and refers text.
func referLines(earlier []shownText, text string, minLines int) (string, int) {
	x := dedup.Lines{MinLines: minLines}
	for _, e := range earlier {
		x.Add(e.name, e.text)
	}
	return x.Refer(text, nil)
}

// lineCount is the number of lines of s: a final line break ends the
// last line, it opens none.
func lineCount(s string) int { return len(countedLines(s)) }

// countedLines are the lines of s a line reference counts: not terse's
// own (in-band) lines; a final line break opens no line.
func countedLines(s string) []string {
	var out []string
	if s == "" {
		return nil
	}
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if _, err := inband.Parse(l); err != nil {
			out = append(out, l)
		}
	}
	return out
}

// checkLines checks what Refer made of text against the earlier texts:
// text itself when it wrote no reference; otherwise a shorter text whose
// references name added texts and lines they have, never lines that are
// in-band lines, each at most a quarter of the bytes it stands for, and
// that ResolveLines puts back byte for byte. Refer is deterministic: a
// second Lines built the same way writes the same bytes.
func checkLines(t testing.TB, earlier []shownText, text string, minLines int) (string, int) {
	t.Helper()
	out, n := referLines(earlier, text, minLines)
	if again, m := referLines(earlier, text, minLines); again != out || m != n {
		t.Fatalf("not deterministic:\n%q (%d)\n%q (%d)", out, n, again, m)
	}
	if n == 0 {
		if out != text {
			t.Fatalf("no reference, but the text changed:\n%q\n%q", text, out)
		}
		return out, n
	}
	if len(out) >= len(text) {
		t.Fatalf("referred text is not shorter: %d ≥ %d bytes\n%q", len(out), len(text), out)
	}
	byName := make(map[string]string)
	for _, e := range earlier {
		byName[e.name] = e.text
	}
	refs := 0
	for _, l := range strings.Split(out, "\n") {
		v, err := inband.Parse(l)
		r, ok := v.(inband.RefLines)
		if err != nil || !ok {
			continue
		}
		refs++
		src, found := byName[r.ID]
		if !found {
			t.Fatalf("%q names no added text", l)
		}
		if r.To > lineCount(src) {
			t.Fatalf("%q: %s has %d lines", l, r.ID, lineCount(src))
		}
		run := countedLines(src)[r.From-1 : r.To]
		if r.To-r.From+1 < max(minLines, 1) {
			t.Fatalf("%q: a run shorter than %d lines", l, minLines)
		}
		for _, rl := range run {
			if _, err := inband.Parse(rl); err == nil {
				t.Fatalf("%q stands for the in-band line %q", l, rl)
			}
		}
		if replaced := len(strings.Join(run, "\n")); 4*len(l) > replaced {
			t.Fatalf("%q (%d bytes) stands for %d bytes: over a quarter", l, len(l), replaced)
		}
	}
	if refs != n {
		t.Fatalf("Refer said %d references, the text holds %d:\n%s", n, refs, out)
	}
	back, err := dedup.ResolveLines(out, func(name string) (string, bool) { s, ok := byName[name]; return s, ok })
	if err != nil {
		t.Fatalf("ResolveLines: %v\n%s", err, out)
	}
	if back != text {
		t.Fatalf("ResolveLines does not give the text back:\n got %q\nwant %q\n referred %q", back, text, out)
	}
	return out, n
}

// numbered is a Claude Code Read of lines: "     N→line".
func numbered(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d→%s\n", i+1, l)
	}
	return b.String()
}

// goLines is a Go source file of n lines, the same for the same n.
func goLines(n int) []string {
	out := []string{"package main", "", "import \"fmt\"", ""}
	for i := 0; len(out) < n; i++ {
		out = append(out, fmt.Sprintf("// step%d prints the %d-th value of the table.", i, i),
			fmt.Sprintf("func step%d(xs []int) int {", i),
			fmt.Sprintf("\tfmt.Println(\"step\", %d, len(xs))", i),
			fmt.Sprintf("\treturn xs[%d%%len(xs)] * %d", i, i+1),
			"}", "")
	}
	return out[:n]
}

// TestLinesPastLastLine: a text's final line break ends its last line;
// the empty string after it is no line of the text, and no reference
// names it (a text of 4 lines has no line 5).
func TestLinesPastLastLine(t *testing.T) {
	src := numbered(goLines(20))
	earlier := []shownText{{`toolu_01 (Read "a.go")`, src}}
	text := src + "\n" + "    21→tail\n"
	out, n := checkLines(t, earlier, text, 0)
	if n != 1 || !strings.Contains(out, "lines 1–20 of") {
		t.Fatalf("want lines 1–20 referred:\n%s", out)
	}
}

// TestLinesGapNotInRun: a gap marker ("[… 3 lines left out: …]") is an
// in-band line though it opens with no "> [": it is never part of a run.
func TestLinesGapNotInRun(t *testing.T) {
	g := strings.Split(numbered(goLines(40)), "\n")
	lines := append(append(append([]string{}, g[:20]...), inband.Gap{First: 21, Last: 23}.String()), g[23:]...)
	src := strings.Join(lines, "\n")
	out, n := checkLines(t, []shownText{{"toolu_01", src}}, src+"\nmore", 0)
	if n != 2 || !strings.Contains(out, "\n"+inband.Gap{First: 21, Last: 23}.String()+"\n") {
		t.Fatalf("want the gap marker kept between two references:\n%s", out)
	}
}

// TestLinesNameWithLineBreak: a name that cannot be written on one line
// is never referred to (its reference would not read back).
func TestLinesNameWithLineBreak(t *testing.T) {
	src := numbered(goLines(30))
	out, n := checkLines(t, []shownText{{"toolu_01\nx", src}}, src+"tail", 0)
	if n != 0 {
		t.Fatalf("referred under a name with a line break:\n%s", out)
	}
}

// TestLinesGolden: what line references read like, on the cases they
// are made for (testdata/lines.txtar: NAME/earlier/ID sections are the
// earlier texts in order, shown under ID; NAME/text is referred against
// them; NAME/want is the result).
func TestLinesGolden(t *testing.T) {
	const path = "testdata/lines.txtar"
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type tcase struct {
		earlier []shownText
		text    string
		want    int // index of the want file
	}
	cases := make(map[string]*tcase)
	var order []string
	for i, f := range ar.Files {
		name, part, _ := strings.Cut(f.Name, "/")
		c := cases[name]
		if c == nil {
			c = &tcase{want: -1}
			cases[name] = c
			order = append(order, name)
		}
		switch {
		case strings.HasPrefix(part, "earlier/"):
			c.earlier = append(c.earlier, shownText{strings.TrimPrefix(part, "earlier/"), string(f.Data)})
		case part == "text":
			c.text = string(f.Data)
		case part == "want":
			c.want = i
		default:
			t.Fatalf("%s: unknown section", f.Name)
		}
	}
	for _, name := range order {
		c := cases[name]
		got, n := checkLines(t, c.earlier, c.text, 0)
		if *update {
			if c.want < 0 {
				ar.Files = append(ar.Files, txtar.File{Name: name + "/want"})
				c.want = len(ar.Files) - 1
			}
			ar.Files[c.want].Data = []byte(got)
			continue
		}
		if c.want < 0 {
			t.Errorf("%s: no want section (run with -update)", name)
			continue
		}
		if want := string(ar.Files[c.want].Data); got != want {
			t.Errorf("%s (%d references):\n got:\n%s\nwant:\n%s", name, n, got, want)
		}
	}
	if *update {
		if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// vocabulary is a small set of lines, so that random texts repeat runs
// of each other; it holds empty lines, CRLF lines, in-band lines and a
// line that reads as a line reference.
var vocabulary = []string{
	"", "", "}", "\treturn nil", "\tif err != nil {", "func main() {",
	"import \"fmt\"", "// a comment long enough to pay for a reference line", "line\r", "\r",
	"     12→\tx := compute(a, b, c) // the twelfth line", "@@ -1,4 +1,5 @@", "+added line", "-removed line",
	`> [lossless: "→" numbers unpadded to width 6]`, inband.Gap{First: 3, Last: 5}.String(),
	"[… not quite a gap marker …]", "> [not an in-band line",
}

// refLineWord is a line that reads as a line reference: a text holding
// it gets none.
var refLineWord = inband.RefLines{ID: "toolu_9", From: 1, To: 2}.String()

// randomText is n lines drawn from vocabulary (refLine among them when
// withRef), with or without a final line break.
func randomText(r *rand.Rand, n int, withRef bool) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = vocabulary[r.IntN(len(vocabulary))]
		if withRef && r.IntN(50) == 0 {
			lines[i] = refLineWord
		}
	}
	s := strings.Join(lines, "\n")
	if r.IntN(2) == 0 {
		s += "\n"
	}
	return s
}

// mutate returns src with a few runs of lines replaced, dropped or
// repeated: a text that shares runs with it.
func mutate(r *rand.Rand, src string) string {
	lines := strings.Split(src, "\n")
	for k := r.IntN(4); k > 0 && len(lines) > 0; k-- {
		i := r.IntN(len(lines))
		j := min(len(lines), i+1+r.IntN(5))
		switch r.IntN(3) {
		case 0:
			lines = append(lines[:i:i], append([]string{vocabulary[r.IntN(len(vocabulary))]}, lines[j:]...)...)
		case 1:
			lines = append(lines[:i:i], lines[j:]...)
		default:
			lines = append(lines[:j:j], append(append([]string{}, lines[i:j]...), lines[j:]...)...)
		}
	}
	return strings.Join(lines, "\n")
}

// TestLinesProperties refers random texts that share runs with several
// earlier ones: the invariants of checkLines hold for each.
func TestLinesProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	referred := 0
	for iter := 0; iter < 3000; iter++ {
		var earlier []shownText
		for k := r.IntN(4) + 1; k > 0; k-- {
			var s string
			if len(earlier) > 0 && r.IntN(2) == 0 {
				s = mutate(r, earlier[r.IntN(len(earlier))].text)
			} else {
				s = randomText(r, r.IntN(60), r.IntN(4) == 0)
			}
			earlier = append(earlier, shownText{fmt.Sprintf("toolu_%02d (Read \"f%d.go\")", len(earlier), iter), s})
		}
		text := mutate(r, earlier[r.IntN(len(earlier))].text)
		if r.IntN(3) == 0 {
			text += "\n" + mutate(r, earlier[r.IntN(len(earlier))].text)
		}
		if r.IntN(5) == 0 {
			text = strings.ReplaceAll(text, "\n", "\r\n")
		}
		if _, n := checkLines(t, earlier, text, r.IntN(3)+1); n > 0 {
			referred++
		}
	}
	if referred < 300 {
		t.Fatalf("only %d of 3000 texts got references: the test does not exercise Refer", referred)
	}
}

// FuzzLines refers a text against two earlier ones: the invariants of
// checkLines hold.
func FuzzLines(f *testing.F) {
	src := numbered(goLines(30))
	f.Add(src, "x\ny", src[:len(src)/2]+"     99→edited\n"+src[len(src)/2:], 4)
	f.Add("a\nb\nc\nd\ne\n", "", "a\nb\nc\nd\ne\n", 1)
	f.Add("a\r\nb\r\nc\r\nd\r\n", "", "a\r\nb\r\nc\r\nd\r\nx", 2)
	f.Add(src, src, refLineWord+"\n"+src, 4)
	f.Fuzz(func(t *testing.T, a, b, text string, minLines int) {
		earlier := []shownText{{`toolu_a (Read "a.go")`, a}, {"toolu_b", b}}
		checkLines(t, earlier, text, minLines%8)
	})
}

// FuzzResolveLines resolves arbitrary text against fixed earlier
// texts: it never panics, and an error names the line of the reference
// it could not resolve.
func FuzzResolveLines(f *testing.F) {
	texts := map[string]string{"toolu_a": "one\ntwo\nthree\nfour\n", "toolu_b": "x"}
	lookup := func(name string) (string, bool) { s, ok := texts[name]; return s, ok }
	f.Add(inband.RefLines{ID: "toolu_a", From: 1, To: 4}.String())
	f.Add("x\n" + inband.RefLines{ID: "toolu_a", From: 2, To: 5}.String())
	f.Add(inband.RefLines{ID: "toolu_c", From: 1, To: 1}.String() + "\n")
	f.Add("> [ref: toolu_a, lines 0–1 of its result, byte-identical]")
	reLine := regexp.MustCompile(`^line (\d+): `)
	f.Fuzz(func(t *testing.T, text string) {
		got, err := dedup.ResolveLines(text, lookup)
		if err != nil {
			m := reLine.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("error names no line: %v", err)
			}
			n, _ := strconv.Atoi(m[1])
			lines := strings.Split(text, "\n")
			if n < 1 || n > len(lines) {
				t.Fatalf("error names line %d of %d", n, len(lines))
			}
			if v, err := inband.Parse(lines[n-1]); err != nil {
				t.Fatalf("error names line %d, no line reference: %q", n, lines[n-1])
			} else if _, ok := v.(inband.RefLines); !ok {
				t.Fatalf("error names line %d, no line reference: %q", n, lines[n-1])
			}
			return
		}
		if !strings.Contains(text, "of its result, byte-identical]") && got != text {
			t.Fatalf("a text without references changed: %q → %q", text, got)
		}
	})
}

// reRefLine is a line reference as a reader finds it: by its words.
var reRefLine = regexp.MustCompile(`^> \[ref: (.+), lines (\d+)–(\d+) of its result, byte-identical\]$`)

// reNumbered is a line of a numbered read: "     N→text".
var reNumbered = regexp.MustCompile(`^ *(\d+)→(.*)$`)

// readFileLines reads a numbered file read the way a model must: from
// its text, following each line reference to the earlier result it
// names (by the name the reference carries) and taking the lines it
// says. It returns the file's lines by number.
func readFileLines(text string, shown func(name string) (string, bool)) (map[int]string, error) {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		m := reRefLine.FindStringSubmatch(l)
		if m == nil {
			lines = append(lines, l)
			continue
		}
		src, ok := shown(m[1])
		if !ok {
			return nil, fmt.Errorf("%q names no result shown", l)
		}
		from, _ := strconv.Atoi(m[2])
		to, _ := strconv.Atoi(m[3])
		prev := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
		if from < 1 || to > len(prev) || from > to {
			return nil, fmt.Errorf("%q: %s has %d lines", l, m[1], len(prev))
		}
		lines = append(lines, prev[from-1:to]...)
	}
	out := make(map[int]string)
	for _, l := range lines {
		m := reNumbered.FindStringSubmatch(l)
		if m == nil {
			return nil, fmt.Errorf("not a numbered line: %q", l)
		}
		n, _ := strconv.Atoi(m[1])
		if _, dup := out[n]; dup {
			return nil, fmt.Errorf("line %d twice", n)
		}
		out[n] = m[2]
	}
	return out, nil
}

// editFile changes a few lines of a file in place, inserts some and
// deletes some, as an agent's edits do.
func editFile(r *rand.Rand, lines []string) []string {
	out := append([]string{}, lines...)
	for k := 1 + r.IntN(3); k > 0 && len(out) > 0; k-- {
		i := r.IntN(len(out))
		switch r.IntN(3) {
		case 0:
			out[i] = "\t" + out[i] + " // changed"
		case 1:
			out = append(out[:i:i], append([]string{"\tlog.Println(\"inserted\")"}, out[i:]...)...)
		default:
			out = append(out[:i:i], out[i+1:]...)
		}
	}
	return out
}

// TestLinesReading: a file read again after an edit, referred against
// the earlier read (and the edit's snippet), answers "what is the exact
// text of line N" for every line of the file, read only from its text
// and the earlier results its references name.
func TestLinesReading(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	asked, referred, before, after := 0, 0, 0, 0
	for iter := 0; iter < 200; iter++ {
		file := goLines(20 + r.IntN(400))
		for i := range file { // lines of their own, so that a run is one place
			if r.IntN(3) == 0 {
				file[i] += fmt.Sprintf(" // v%d", r.IntN(1000))
			}
		}
		edited := editFile(r, file)
		name := fmt.Sprintf("toolu_%03dR (Read \"f%d.go\")", iter, iter)
		texts := map[string]string{name: numbered(file)}
		var x dedup.Lines
		x.Add(name, texts[name])
		if r.IntN(2) == 0 { // the edit's snippet: some lines of the new file
			i := r.IntN(len(edited))
			snip := "The file f.go has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n"
			for j := i; j < min(len(edited), i+12); j++ {
				snip += fmt.Sprintf("%6d→%s\n", j+1, edited[j])
			}
			sn := fmt.Sprintf("toolu_%03dE (Edit \"f%d.go\")", iter, iter)
			texts[sn] = snip
			x.Add(sn, snip)
		}
		reread := numbered(edited)
		out, n := x.Refer(reread, nil)
		if n > 0 {
			referred++
		}
		before, after = before+len(reread), after+len(out)
		read, err := readFileLines(out, func(name string) (string, bool) { s, ok := texts[name]; return s, ok })
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(read) != len(edited) {
			t.Fatalf("read %d lines, the file has %d:\n%s", len(read), len(edited), out)
		}
		for i, want := range edited {
			asked++
			if got, ok := read[i+1]; !ok || got != want {
				t.Fatalf("line %d: read %q, the file has %q\n%s", i+1, got, want, out)
			}
		}
	}
	if referred < 150 {
		t.Fatalf("only %d of 200 re-reads got references", referred)
	}
	t.Logf("%d lines asked, all answered; %d of 200 re-reads referred, %d → %d bytes", asked, referred, before, after)
}
