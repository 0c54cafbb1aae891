package shape_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/internal/replay"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
)

// reader answers questions from a shaped text alone, the way a model
// must: it reads the header line and the markers, never calls Expand,
// and fetches the chunks an elision names.
type reader struct {
	text  string
	fetch func(handle string, n int) (string, error)
}

var (
	gutterRe = regexp.MustCompile(`^ *(\d+)(→|\t)`)
	passedRe = regexp.MustCompile(`(\d+) tests? passed`)
)

// rules returns the header's rules, read by inband's parser, and the
// body lines.
func (r reader) rules() ([]inband.Rule, []string) {
	head, body, _ := strings.Cut(r.text, "\n")
	v, err := inband.Parse(head)
	sh, ok := v.(inband.Shaping)
	if err != nil || !ok {
		return nil, strings.Split(r.text, "\n")
	}
	var rules []inband.Rule
	for _, s := range sh.Rules {
		if x, err := inband.ParseRule(s); err == nil {
			rules = append(rules, x)
		}
	}
	return rules, strings.Split(body, "\n")
}

// folded reads a marker of folded lines.
func folded(l string) (inband.Folded, bool) {
	v, err := inband.Parse(l)
	f, ok := v.(inband.Folded)
	return f, err == nil && ok
}

// rule returns the header's rule of type R.
func rule[R inband.Rule](rules []inband.Rule) (R, bool) {
	for _, r := range rules {
		if x, ok := r.(R); ok {
			return x, true
		}
	}
	var zero R
	return zero, false
}

// line answers "what is line n of the file" in a numbered read: the text
// after its number and separator; in a read form, the body line counted
// from the range its rule declares.
func (r reader) line(n int) (string, bool) {
	rules, lines := r.rules()
	if f, ok := rule[inband.ReadForm](rules); ok {
		a, b := f.First, f.Last
		if n < a || n > b || n-a >= len(lines) {
			return "", false
		}
		l := lines[n-a]
		if f.Sparse && (n == a || n == b || n%10 == 0) {
			return strings.CutPrefix(l, strconv.Itoa(n)+f.Sep)
		}
		return l, true
	}
	for _, l := range lines {
		if m := gutterRe.FindStringSubmatch(l); m != nil && m[1] == strconv.Itoa(n) {
			return l[len(m[0]):], true
		}
	}
	return "", false
}

// paths answers "which paths does the listing hold", in order: a tree is
// read by its indentation (a line ending in "/" with deeper lines under
// it opens a directory), "./" stands for the declared base.
func (r reader) paths() []string {
	rules, lines := r.rules()
	rel, _ := rule[inband.Relative](rules)
	base := rel.Base
	t, _ := rule[inband.PathTree](rules)
	from := t.First
	var out, dirs []string
	for i, l := range lines {
		if l == "" || from > 0 && i < from-1 {
			continue
		}
		p := l
		if from > 0 {
			d := len(l) - len(strings.TrimLeft(l, " "))
			dirs = dirs[:min(d, len(dirs))]
			seg := l[d:]
			if strings.HasSuffix(seg, "/") && i+1 < len(lines) && len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) == d+1 {
				dirs = append(dirs, seg)
				continue
			}
			p = strings.Join(dirs, "") + seg
		}
		if base != "" && strings.HasPrefix(p, "./") {
			p = base + p[2:]
		}
		out = append(out, p)
	}
	return out
}

// tests answers "which tests failed, what is the verdict, how many
// passed and how many lines were left out": from the kept lines and the
// markers' counts.
func (r reader) tests() (failed []string, verdict string, passed, leftOut int) {
	for l := range strings.SplitSeq(strings.TrimSuffix(r.text, "\n"), "\n") {
		if f, ok := folded(l); ok {
			leftOut += f.Last - f.First + 1
			if p := passedRe.FindStringSubmatch(f.What); p != nil {
				k, _ := strconv.Atoi(p[1])
				passed += k
			}
			continue
		}
		if name, ok := failedTest(l); ok {
			failed = append(failed, name)
		}
		passed += passCount(l)
		if l != "" {
			verdict = l
		}
	}
	return failed, verdict, passed, leftOut
}

var (
	goFail    = regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	cargoFail = regexp.MustCompile(`^test (\S+) \.\.\. FAILED$`)
	pyFail    = regexp.MustCompile(`^(\S+::\S+) FAILED`)
	goPassRe  = regexp.MustCompile(`^\s*--- PASS: `)
	cargoPass = regexp.MustCompile(`^test \S.* \.\.\. ok$`)
	pyPass    = regexp.MustCompile(`^\S+::\S+ PASSED`)
)

func failedTest(l string) (string, bool) {
	for _, re := range []*regexp.Regexp{goFail, cargoFail, pyFail} {
		if m := re.FindStringSubmatch(l); m != nil {
			return m[1], true
		}
	}
	return "", false
}

var (
	jsPassRe = regexp.MustCompile(`^ *(?:\x1b\[[0-9;]*m)*(✓|√|✔)(?:\x1b\[[0-9;]*m)* \S`)
	jsTests  = regexp.MustCompile(`\((\d+) tests?\)`)
	ansiRe   = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")
)

// passCount is how many passed tests a line reports.
func passCount(l string) int {
	switch {
	case goPassRe.MatchString(l) || cargoPass.MatchString(l) || pyPass.MatchString(l):
		return 1
	case jsPassRe.MatchString(l):
		if m := jsTests.FindStringSubmatch(ansiRe.ReplaceAllString(l, "")); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
		return 1
	}
	return 0
}

// chunk fetches the chunk a marker names and returns its lines.
func (r reader) chunk(k int) (string, error) {
	head, _, _ := strings.Cut(r.text, "\n")
	v, err := inband.Parse(head)
	e, ok := v.(inband.ElidedRuns)
	f := strings.Fields(e.Call)
	if err != nil || !ok || len(f) < 2 || f[len(f)-1] != "N" {
		return "", fmt.Errorf("no fetch call in the header")
	}
	t, err := r.fetch(f[len(f)-2], k)
	if err != nil {
		return "", err
	}
	_, body, _ := strings.Cut(t, "\n")
	return body, nil
}

// TestReading asks questions of shaped texts — the exact line at a given
// number in a read, whether a path appears in a listing, which tests
// failed and the verdict, how many tests passed and how many lines were
// left out, what a named chunk holds — and has a reader that follows only
// the text answer them. Every answer must equal the one the original
// gives.
func TestReading(t *testing.T) {
	results := replay.Results(t)
	for _, form := range shape.ReadForms {
		t.Run(form, func(t *testing.T) { reading(t, results, form) })
	}
}

func reading(t *testing.T, results []replay.Result, form string) {
	c := tokens.O200kBase()
	ctx := context.Background()
	fo := &fit.Options{Store: &store.Mem{}, Counter: c, Budget: 1 << 20}
	o := &shape.Options{Counter: c, ReadForm: form, Keep: func(text string, ranges [][2]int) (string, error) {
		h, err := fit.StoreLines(ctx, text, ranges, fo)
		return fit.FetchCommand(fo, h), err
	}}
	fetch := func(h string, n int) (string, error) { return fit.Chunk(ctx, h, n, fo) }
	asked, right := 0, 0
	ask := func(what string, ok bool) {
		asked++
		if ok {
			right++
		} else {
			t.Errorf("wrong answer: %s", what)
		}
	}
	for _, r := range results {
		res := shape.Shape(r.Text, shape.Call{Tool: r.Tool, Input: r.Input, WorkDir: r.WorkDir}, o)
		if res.Class == shape.None {
			continue
		}
		shaped, orig := reader{res.Text, fetch}, reader{r.Text, fetch}
		switch res.Shape {
		case "read":
			lines := strings.Split(r.Text, "\n")
			for _, n := range []int{1, 2, len(lines) / 2, len(lines) - 3} {
				want, ok := orig.line(n)
				if !ok {
					continue
				}
				got, ok2 := shaped.line(n)
				ask(fmt.Sprintf("%s: line %d of a read", r.File, n), ok2 && got == want)
			}
		case "paths":
			want := orig.paths()
			got := shaped.paths()
			ask(fmt.Sprintf("%s: the paths of a listing", r.File), strings.Join(got, "\n") == strings.Join(want, "\n"))
			if len(want) > 0 {
				absent := want[0] + ".absent"
				ask("an absent path", !strings.Contains("\n"+strings.Join(got, "\n")+"\n", "\n"+absent+"\n"))
			}
		case "test":
			if res.Class != shape.Elide {
				continue
			}
			wf, wv, wp, _ := orig.tests()
			gf, gv, gp, left := shaped.tests()
			ask(r.File+": failed tests", strings.Join(gf, ",") == strings.Join(wf, ","))
			ask(r.File+": verdict", gv == wv)
			ask(r.File+": tests passed", gp == wp)
			leftOut := 0
			lines := strings.Split(strings.TrimSuffix(r.Text, "\n"), "\n")
			for l := range strings.SplitSeq(res.Text, "\n") {
				m, ok := folded(l)
				if !ok {
					continue
				}
				a, b, k := m.First, m.Last, m.Chunk
				leftOut += b - a + 1
				got, err := shaped.chunk(k)
				ask(fmt.Sprintf("%s: chunk %d holds lines %d–%d", r.File, k, a, b), err == nil && got == strings.Join(lines[a-1:b], "\n"))
			}
			body := strings.Split(strings.TrimSuffix(res.Text, "\n"), "\n")[1:]
			markers := 0
			for _, l := range body {
				if _, ok := folded(l); ok {
					markers++
				}
			}
			ask(r.File+": lines left out", left == leftOut && len(body)-markers == len(lines)-leftOut)
		}
	}
	t.Logf("%d questions, %d answered right", asked, right)
	if asked == 0 {
		t.Fatal("no questions asked")
	}
}
