package shape

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/internal/lazyre"
)

// passLine classifies a line of test output that reports only success:
// the unit it counts ("tests passed", "packages ok") and how many, or ok
// false for any other line (kept). Failures, errors, panics, stack traces,
// logs and summaries are never pass lines.
func passLine(l string) (unit string, n int, ok bool) {
	s := l
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiCode.ReplaceAllString(s, "")
	}
	switch {
	case goRun.MatchString(s), s == "PASS", s == "testing: warning: no tests to run":
		return "", 0, true
	case goPass.MatchString(s), cargoOK.MatchString(s), pytestPass.MatchString(s):
		return "tests passed", 1, true
	case jsPass.MatchString(s):
		if m := jsFile.FindStringSubmatch(s); m != nil {
			n, _ := strconv.Atoi(m[1])
			return "tests passed", n, true
		}
		return "tests passed", 1, true
	case jestFile.MatchString(s):
		return "test files passed", 1, true
	case goOK.MatchString(s):
		return "packages ok", 1, true
	case goNoTests.MatchString(s):
		return "packages without tests", 1, true
	}
	return "", 0, false
}

// builtinUnits are the units pass lines count, in the order a marker
// names them.
var builtinUnits = []string{"tests passed", "test files passed", "packages ok", "packages without tests"}

// PassLine is a pattern of lines that report only success (a runner the
// built-in patterns do not know), and the unit each such line counts one
// of ("specs passed"). A line that says something failed is never a pass
// line, whatever the pattern.
type PassLine struct {
	Pattern *regexp.Regexp
	Unit    string
}

var (
	ansiCode   = lazyre.New("\x1b\\[[0-9;?]*[A-Za-z]")
	goRun      = lazyre.New(`^=== (RUN|PAUSE|CONT|NAME) +\S+$`)
	goPass     = lazyre.New(`^ *--- PASS: \S+ \([\d.]+s\)$`)
	goOK       = lazyre.New(`^ok  \t\S+\t(\(cached\)|[\d.]+s)( \[no tests to run\])?$`)
	goNoTests  = lazyre.New(`^\?   \t\S+\t\[no test files\]$`)
	cargoOK    = lazyre.New(`^test \S.* \.\.\. ok$`)
	pytestPass = lazyre.New(`^\S+::\S+ PASSED +\[ *\d+%\]$`)
	// jsPass is a passed test (or, with "(N tests)", a test file whose N
	// tests passed) in vitest, jest or mocha output.
	jsPass   = lazyre.New(`^ *(✓|√|✔) \S`)
	jsFile   = lazyre.New(`^ *(?:✓|√|✔) \S+ \((\d+) tests?\)`)
	jestFile = lazyre.New(`^PASS \S+\.(test|spec)\.[jt]sx?( \([\d.]+ m?s\))?$`)
	// failLine is a line that says something failed.
	// mix test --trace: "  * test NAME (1.2ms) [L#12]", and the
	// failure report "  1) test NAME (Module)".
	mixTrace   = lazyre.New(`^ *\* ((?:test|doctest|property) .+) \(\d+(?:\.\d+)?ms\) \[L#\d+\]$`)
	mixFailure = lazyre.New(`(?m)^ +\d+\) ((?:test|doctest|property) .+) \([\w.]+\)$`)
	failLine   = lazyre.New(`(?i)(\bfail(ed|ures?)?\b|\berror\b|\bpanic\b|\bexception\b|traceback)`)
)

// elideTest folds runs of at least three pass lines of test output into a
// counted marker each, keeping every other line (failures, errors,
// panics, stack traces, logs, summaries) and the last two lines whole. A
// marker is never longer than a quarter of the lines it replaces.
func elideTest(text string, extra []PassLine) (candidate, bool) {
	passLine := passMatcher(text, extra)
	units := passUnits(extra)
	body := strings.TrimSuffix(text, "\n")
	lines := strings.Split(body, "\n")
	n := len(lines)
	runs := passRuns(lines, passLine)
	if len(runs) == 0 {
		return candidate{}, false
	}
	runs = foldable(runs, lines, units)
	if len(runs) == 0 {
		return candidate{}, false
	}
	ranges, out, folded := foldRuns(lines, runs, units)
	used := len(runs)
	head := elideTestHead(used, n-folded, n)
	shaped := head + "\n" + strings.Join(out, "\n")
	if strings.HasSuffix(text, "\n") {
		shaped += "\n"
	}
	// A failed run never reads as passing: every line that says
	// something failed is still there, as often as in the original.
	if countFail(text) != countFail(shaped) {
		return candidate{}, false
	}
	lost := foldedAnchors(lines, runs, passLine)
	return candidate{text: shaped, class: Elide, rules: []string{"tests folded"}, ranges: ranges, lost: lost}, true
}

// passMatcher returns what says whether a line of text is a pass line,
// and its unit and count: the built-in patterns, mix test --trace's
// lines of tests that did not fail, and the extra patterns.
func passMatcher(text string, extra []PassLine) func(l string) (string, int, bool) {
	failedMix := failedMixTests(text)
	return func(l string) (string, int, bool) {
		if u, n, ok := passLine(l); ok {
			return u, n, ok
		}
		if failedMix != nil {
			// mix test --trace prints a test's line before its failure
			// report: a test named in a failure report is no pass.
			if m := mixTrace.FindStringSubmatch(l); m != nil && !failedMix[m[1]] && !failLine.MatchString(l) {
				return "tests passed", 1, true
			}
		}
		for _, p := range extra {
			if p.Pattern != nil && p.Pattern.MatchString(l) && !failLine.MatchString(l) {
				return p.Unit, 1, true
			}
		}
		return "", 0, false
	}
}

// failedMixTests are the tests a failure report of mix test --trace
// names, or nil for a text without mix test --trace's lines.
func failedMixTests(text string) map[string]bool {
	if !strings.Contains(text, "ms) [L#") {
		return nil
	}
	failed := map[string]bool{}
	for _, m := range mixFailure.FindAllStringSubmatch(text, -1) {
		failed[m[1]] = true
	}
	return failed
}

// passUnits is the built-in units and the extra patterns' units.
func passUnits(extra []PassLine) []string {
	units := builtinUnits
	for _, p := range extra {
		if !slices.Contains(units, p.Unit) {
			units = append(slices.Clip(units), p.Unit)
		}
	}
	return units
}

// passRun is a run of pass lines, with its counts per unit.
type passRun struct {
	a, b   int // 0-based, [a, b)
	counts map[string]int
}

// passRuns finds the runs of at least three pass lines, the last two
// lines never among them.
func passRuns(lines []string, passLine func(string) (string, int, bool)) []passRun {
	n := len(lines)
	last := n - 2 // the last two lines are never folded
	var runs []passRun
	for i := 0; i < n; {
		if i >= last {
			break
		}
		if _, _, ok := passLine(lines[i]); !ok {
			i++
			continue
		}
		j := i
		counts := map[string]int{}
		for j < last {
			unit, k, ok := passLine(lines[j])
			if !ok {
				break
			}
			if unit != "" {
				counts[unit] += k
			}
			j++
		}
		end := j
		// A run ends on a line that counts something: the "=== RUN"
		// line of the test that follows stays with it.
		for end > i {
			if unit, _, _ := passLine(lines[end-1]); unit != "" {
				break
			}
			end--
		}
		if end-i >= 3 {
			runs = append(runs, passRun{i, end, counts})
		}
		i = j
	}
	return runs
}

// foldable keeps the runs whose marker is at most a quarter of their
// lines: runs too short for their marker are kept as they are.
func foldable(runs []passRun, lines []string, units []string) []passRun {
	kept := runs[:0]
	for _, r := range runs {
		size := 0
		for _, l := range lines[r.a:r.b] {
			size += len(l) + 1
		}
		if len(foldedMarker(r.a, r.b, r.counts, 1000, units))*4 <= size {
			kept = append(kept, r)
		}
	}
	return kept
}

// foldRuns replaces each run by its marker. It returns the chunks (the
// kept stretches and the folded runs, in order), the lines and the
// number of lines folded.
func foldRuns(lines []string, runs []passRun, units []string) ([][2]int, []string, int) {
	n := len(lines)
	var ranges [][2]int
	var out []string
	prev, folded := 0, 0
	for _, r := range runs {
		if r.a > prev {
			ranges = append(ranges, [2]int{prev + 1, r.a})
			out = append(out, lines[prev:r.a]...)
		}
		ranges = append(ranges, [2]int{r.a + 1, r.b})
		out = append(out, foldedMarker(r.a, r.b, r.counts, len(ranges), units))
		folded += r.b - r.a
		prev = r.b
	}
	ranges = append(ranges, [2]int{prev + 1, n})
	out = append(out, lines[prev:]...)
	return ranges, out, folded
}

// foldedAnchors returns the candidate's lost: how many anchors are in a
// folded run without being pass lines.
func foldedAnchors(lines []string, runs []passRun, passLine func(string) (string, int, bool)) func(anchors []anchor) int {
	n := len(lines)
	keptLines := make([]bool, n)
	for i := range keptLines {
		keptLines[i] = true
	}
	for _, r := range runs {
		for i := r.a; i < r.b; i++ {
			keptLines[i] = false
		}
	}
	return func(anchors []anchor) int {
		k := 0
		for _, a := range anchors {
			if a.line >= n || keptLines[a.line] {
				continue
			}
			// Inside a folded run, named by its range: a pass line only.
			if _, _, ok := passLine(lines[a.line]); !ok {
				k++
			}
		}
		return k
	}
}

// singular writes a unit for one: its first plural word loses its "s"
// ("test files passed" → "test file passed").
func singular(u string) string {
	words := strings.Fields(u)
	for i, w := range words {
		if len(w) > 1 && strings.HasSuffix(w, "s") {
			words[i] = w[:len(w)-1]
			break
		}
	}
	return strings.Join(words, " ")
}

// foldedMarker is the line that stands for the folded lines [a, b)
// (0-based) that chunk k holds.
func foldedMarker(a, b int, counts map[string]int, k int, units []string) string {
	var parts []string
	for _, u := range units {
		if c := counts[u]; c > 0 {
			w := u
			if c == 1 {
				w = singular(u)
			}
			parts = append(parts, strconv.Itoa(c)+" "+w)
		}
	}
	return leftOutMarker(a, b, strings.Join(parts, ", "), k)
}

// countFail counts the lines that say something failed (pass lines
// aside: a test named after an error passed).
func countFail(s string) int {
	n := 0
	for l := range strings.SplitSeq(s, "\n") {
		if _, _, pass := passLine(l); !pass && failLine.MatchString(l) {
			n++
		}
	}
	return n
}

// Long logs: a log of more than longLog lines keeps its first and last
// logEnds lines and every line that reports a problem with logContext
// lines either side; the rest is elided in counted runs.
const (
	longLog    = 400
	logEnds    = 30
	logContext = 2
)

// problemLine reports a line that says something went wrong (or may
// have): errors, failures, panics, warnings, stack frames.
var problemLine = lazyre.New(`(?i)\b(error|errors|fail(ed|ure|ures)?|panic|fatal|exception|traceback|warn(ing)?|denied|refused|timeout|timed out|killed|abort(ed)?)\b|^\s+at |^goroutine \d+|\.go:\d+|\.py", line \d+`)

// elideLog elides the middle of a long log, keeping its head and tail
// and every problem line with its neighbours whole. A diff is never
// elided here (its lines are the change itself).
func elideLog(text string) (candidate, bool) {
	body := strings.TrimSuffix(text, "\n")
	if strings.Count(body, "\n") < longLog || strings.Contains(text, "\ndiff --git ") || strings.HasPrefix(text, "diff --git ") || strings.Contains(text, "\n@@ -") {
		return candidate{}, false
	}
	lines := strings.Split(body, "\n")
	n := len(lines)
	keep := make([]bool, n)
	for i := range n {
		if i < logEnds || i >= n-logEnds {
			keep[i] = true
		}
	}
	for i, l := range lines {
		if problemLine.MatchString(l) || anchorError.MatchString(l) {
			for j := max(0, i-logContext); j <= min(n-1, i+logContext); j++ {
				keep[j] = true
			}
		}
	}
	// mix test --trace's line of a test a failure report names is that
	// test's: kept, as the test elision keeps it.
	if failed := failedMixTests(text); failed != nil {
		for i, l := range lines {
			if m := mixTrace.FindStringSubmatch(l); m != nil && failed[m[1]] {
				keep[i] = true
			}
		}
	}
	var ranges [][2]int
	var out []string
	prev, left, runs := 0, 0, 0
	for i := 0; i < n; {
		if keep[i] {
			i++
			continue
		}
		j := i
		for j < n && !keep[j] {
			j++
		}
		size := 0
		for _, l := range lines[i:j] {
			size += len(l) + 1
		}
		if j-i < 3 || len(foldedMarker(i, j, nil, 1000, nil))*4 > size {
			i = j
			continue
		}
		if i > prev {
			ranges = append(ranges, [2]int{prev + 1, i})
			out = append(out, lines[prev:i]...)
		}
		ranges = append(ranges, [2]int{i + 1, j})
		out = append(out, foldedMarker(i, j, nil, len(ranges), nil))
		left += j - i
		runs++
		prev, i = j, j
	}
	if runs == 0 {
		return candidate{}, false
	}
	ranges = append(ranges, [2]int{prev + 1, n})
	out = append(out, lines[prev:]...)
	head := elideLogHead(runs, n-left, n)
	shaped := head + "\n" + strings.Join(out, "\n")
	if strings.HasSuffix(text, "\n") {
		shaped += "\n"
	}
	if countFail(text) != countFail(shaped) {
		return candidate{}, false
	}
	lost := func(anchors []anchor) int {
		k := 0
		for _, a := range anchors {
			// An elided anchor is named by its run's range; a problem
			// line is never elided.
			if a.line < n && !keep[a.line] && (problemLine.MatchString(lines[a.line]) || anchorError.MatchString(lines[a.line])) {
				k++
			}
		}
		return k
	}
	return candidate{text: shaped, class: Elide, rules: []string{"log middle elided"}, ranges: ranges, lost: lost}, true
}
