package shape

import "github.com/terse-dev/terse/inband"

// Every line this package writes into a text a model reads is built here.
// The wording is part of the API (models and terse expand parse it):
// golden files in testdata pin it.

// header is the in-band line that declares a lossless or display
// shaping and its rules.
func header(c Class, rules []string) string {
	return inband.Shaping{Class: c.String(), Rules: rules}.String()
}

// The rules of a header line, written and read by package inband (see
// the package documentation).
const (
	ruleDisplay = string(inband.Terminal)
	ruleGroup   = string(inband.Grouped)
	ruleFold    = string(inband.RepeatsFolded)
)

// unpadRule is the rule of a gutter written without its padding, its
// separator written to.
func unpadRule(g gutter, to string) string {
	return inband.Unpadded{Sep: g.sep, Width: g.width, To: to}.String()
}

// treeRule is the rule of a path list written as a tree from body line
// first (1-based).
func treeRule(first int) string { return inband.PathTree{First: first}.String() }

// relRule is the rule of paths under base written "./".
func relRule(base string) string { return inband.Relative{Base: base}.String() }

// formRule is the rule of a read form (ReadSparse or ReadRange) of the
// numbered lines first–last.
func formRule(form string, first, last int, g gutter) string {
	return inband.ReadForm{Sparse: form == ReadSparse, First: first, Last: last, Sep: g.sep, Width: g.width}.String()
}

// foldMarkerLen is the length of the line that follows a line repeated
// n more times, without building it.
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
