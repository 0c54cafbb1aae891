package shape

import (
	"fmt"
	"strconv"
	"strings"
)

// Every line this package writes into a text a model reads is built here.
// The wording is part of the API (models and terse expand parse it):
// golden files in testdata pin it.

// Header lines of a lossless and a display shaping.
const (
	headLossless = "> [lossless: "
	headDisplay  = "> [display: "
)

// header is the in-band line that declares a lossless or display
// shaping and its rules.
func header(c Class, rules []string) string {
	return "> [" + c.String() + ": " + strings.Join(rules, "; ") + "]"
}

// The rules' wording in a header line (see the package documentation).
const (
	ruleDisplay = "terminal view"
	ruleGroup   = "matches grouped by file"
	ruleFold    = "repeats folded"
	treePrefix  = "paths as a tree from line "
	unpadWord   = " numbers unpadded to width "
	relPrefix   = "./ = "
)

// unpadTo introduces the separator an unpadded gutter is written with
// when it is not the gutter's own:
//
//	"→" numbers unpadded to width 6 and followed by "\t"
const unpadTo = " and followed by "

// unpadRule is the rule of a gutter written without its padding, its
// separator written to.
func unpadRule(g gutter, to string) string {
	r := strconv.Quote(g.sep) + unpadWord + strconv.Itoa(g.width)
	if to != g.sep {
		r += unpadTo + strconv.Quote(to)
	}
	return r
}

// treeRule is the rule of a path list written as a tree from body line
// first (1-based).
func treeRule(first int) string { return treePrefix + strconv.Itoa(first) }

// relRule is the rule of paths under base written "./".
func relRule(base string) string { return relPrefix + strconv.Quote(base) }

// The read forms' rules: the numbered lines first–last open the body, and
// their numbers are shown on the first, the last and every 10th line only
// (sparse), or not at all (range); g.width restores their padding.
//
//	lines 1–250 numbered "→" on the first, the last and every 10th only (width 6)
//	lines 1–250 follow without their "→" numbers (width 6)
const (
	formPrefix   = "lines "
	sparseMiddle = " numbered "
	sparseSuffix = " on the first, the last and every 10th only"
	rangeMiddle  = " follow without their "
	rangeSuffix  = " numbers"
	widthOpen    = " (width "
)

func sparseRule(first, last int, g gutter) string {
	return formPrefix + strconv.Itoa(first) + "–" + strconv.Itoa(last) + sparseMiddle + strconv.Quote(g.sep) + sparseSuffix + widthOpen + strconv.Itoa(g.width) + ")"
}

func rangeRule(first, last int, g gutter) string {
	return formPrefix + strconv.Itoa(first) + "–" + strconv.Itoa(last) + rangeMiddle + strconv.Quote(g.sep) + rangeSuffix + widthOpen + strconv.Itoa(g.width) + ")"
}

// formRule is a parsed read form rule.
type formRule struct {
	form        string // ReadSparse or ReadRange
	first, last int
	g           gutter
}

// parseFormRule parses a read form's rule; ok is false for another rule.
func parseFormRule(r string) (f formRule, ok bool, err error) {
	rest, ok := strings.CutPrefix(r, formPrefix)
	if !ok {
		return f, false, nil
	}
	bad := fmt.Errorf("bad rule %q", r)
	nums, rest, ok := strings.Cut(rest, " ")
	if !ok {
		return f, true, bad
	}
	rest = " " + rest
	a, b, ok := strings.Cut(nums, "–")
	if f.first, err = strconv.Atoi(a); err != nil || !ok || strconv.Itoa(f.first) != a || f.first < 0 {
		return f, true, bad
	}
	if f.last, err = strconv.Atoi(b); err != nil || strconv.Itoa(f.last) != b || f.last < f.first || f.last-f.first > 1<<24 {
		return f, true, bad
	}
	var suffix string
	switch {
	case strings.HasPrefix(rest, sparseMiddle):
		f.form, rest, suffix = ReadSparse, rest[len(sparseMiddle):], sparseSuffix
	case strings.HasPrefix(rest, rangeMiddle):
		f.form, rest, suffix = ReadRange, rest[len(rangeMiddle):], rangeSuffix
	default:
		return f, true, bad
	}
	q, w, ok := strings.Cut(rest, suffix+widthOpen)
	if !ok || !strings.HasSuffix(w, ")") {
		return f, true, bad
	}
	if f.g.sep, err = strconv.Unquote(q); err != nil || f.g.sep == "" {
		return f, true, bad
	}
	if f.g.width, err = strconv.Atoi(w[:len(w)-1]); err != nil || f.g.width < 1 || f.g.width > 32 {
		return f, true, bad
	}
	return f, true, nil
}

// foldMarker is the line that follows a line repeated n more times.
func foldMarker(n int) string {
	return "[… same line " + strconv.Itoa(n) + " more times …]"
}

// foldMarkerLen is len(foldMarker(n)), without building it.
func foldMarkerLen(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return len(foldMarker(0)) - 1 + d
}

// foldCount parses a fold marker.
func foldCount(l string) (int, bool) {
	const pre, post = "[… same line ", " more times …]"
	if !strings.HasPrefix(l, pre) || !strings.HasSuffix(l, post) || len(l) < len(pre)+len(post)+1 {
		return 0, false
	}
	s := l[len(pre) : len(l)-len(post)]
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// elideHead opens an elided text:
//
//	> [elided: passing tests folded into counts, 3 runs (41 of 58 lines kept); get chunk N whole: terse chunk c_0123456789abcdef N]
//
// and each run left out is one line where its lines were:
//
//	[… 24 lines left out: lines 3–26 (12 tests passed); chunk 2 …]
const elideHead = "> [elided: "

// ElideHeader is the opening of an elided text's header line.
const ElideHeader = elideHead

// fetchPlaceholder stands for the fetch command in an elision until
// Options.Keep has stored the original.
const fetchPlaceholder = "\x00fetch\x00"

// elideTestHead is the header of a test run whose passing tests were
// folded in runs, kept of n lines.
func elideTestHead(runs, kept, n int) string {
	return fmt.Sprintf("%spassing tests folded into counts, %d %s (%d of %d lines kept); get chunk N whole: %s]",
		elideHead, runs, plural(runs, "run"), kept, n, fetchPlaceholder)
}

// elideLogHead is the header of a long log whose middle was left out in
// runs, kept of n lines.
func elideLogHead(runs, kept, n int) string {
	return fmt.Sprintf("%slong log, first and last %d lines and every problem line with %d either side kept, %d %s (%d of %d lines kept); get chunk N whole: %s]",
		elideHead, logEnds, logContext, runs, plural(runs, "run"), kept, n, fetchPlaceholder)
}

// leftOutMarker stands where lines [a, b) (0-based) of the original were,
// chunk k; what counts what they held (" (12 tests passed)") or is "".
func leftOutMarker(a, b int, what string, k int) string {
	return fmt.Sprintf("[… %d lines left out: lines %d–%d%s; chunk %d …]", b-a, a+1, b, what, k)
}
