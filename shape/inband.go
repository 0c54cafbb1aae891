package shape

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/inband"
)

// Every line this package writes into a text a model reads is built here.
// The wording is part of the API (models and terse expand parse it):
// golden files in testdata pin it.

// header is the in-band line that declares a lossless or display
// shaping and its rules.
func header(c Class, rules []string) string {
	return inband.Shaping{Class: c.String(), Rules: rules}.String()
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
func foldMarker(n int) string { return inband.Repeat{N: n}.String() }

// foldMarkerLen is len(foldMarker(n)), without building it.
func foldMarkerLen(n int) int { return inband.Repeat{N: n}.Len() }

// foldCount parses a fold marker, without allocating.
func foldCount(l string) (int, bool) {
	x, ok := inband.ParseRepeat(l)
	return x.N, ok
}

// An elided text opens with its header line ([inband.ElidedRuns]), and
// each run left out is one line where its lines were ([inband.Folded]).

// ElideHeader is the opening of an elided text's header line.
const ElideHeader = inband.ElidedHead

// fetchPlaceholder stands for the fetch command in an elision until
// Options.Keep has stored the original.
const fetchPlaceholder = "\x00fetch\x00"

// elideTestHead is the header of a test run whose passing tests were
// folded in runs, kept of n lines.
func elideTestHead(runs, kept, n int) string {
	return inband.ElidedRuns{What: inband.ElidedTests, Runs: runs, Kept: kept, Total: n, Call: fetchPlaceholder}.String()
}

// elideLogHead is the header of a long log whose middle was left out in
// runs, kept of n lines.
func elideLogHead(runs, kept, n int) string {
	return inband.ElidedRuns{What: inband.ElidedLog(logEnds, logContext), Runs: runs, Kept: kept, Total: n, Call: fetchPlaceholder}.String()
}

// leftOutMarker stands where lines [a, b) (0-based) of the original were,
// chunk k; what counts what they held ("12 tests passed") or is "".
func leftOutMarker(a, b int, what string, k int) string {
	return inband.Folded{First: a + 1, Last: b, What: what, Chunk: k}.String()
}
