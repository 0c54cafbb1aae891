package inband

import (
	"strconv"
	"strings"
)

// The lines of a shaped text (package shape): the header of a lossless
// or display shaping, the header of an elided text, and the markers
// inside the text for lines folded or left out.

// Shaping declares a lossless or display shaping and its rules, in the
// order they were applied:
//
//	> [lossless: ./ = "/home/dev/project/"; repeats folded]
//
// A rule may hold a quoted string; rules are separated by "; " outside
// quotes ([SplitRules]).
type Shaping struct {
	Class string // "lossless", "display"
	Rules []string
}

func (x Shaping) String() string { return "> [" + x.Class + ": " + strings.Join(x.Rules, "; ") + "]" }

// RulesAt is the byte offset in the header line of its first rule.
func (x Shaping) RulesAt() int { return len("> [") + len(x.Class) + len(": ") }

// SplitRules splits a shaping header's rules at "; " outside quoted
// strings.
func SplitRules(s string) []string {
	var rules []string
	start := 0
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch {
		case inQuote && s[i] == '\\':
			i++
		case s[i] == '"':
			inQuote = !inQuote
		case !inQuote && s[i] == ';' && i+1 < len(s) && s[i+1] == ' ':
			rules = append(rules, s[start:i])
			start = i + 2
			i++
		}
	}
	if start < len(s) {
		rules = append(rules, s[start:])
	}
	return rules
}

func parseShaping(line string) (Line, bool) {
	class, rules, ok := strings.Cut(line[len("> ["):], ": ")
	if !ok || (class != "lossless" && class != "display") || !strings.HasSuffix(rules, "]") {
		return nil, false
	}
	return Shaping{class, SplitRules(rules[:len(rules)-1])}, true
}

// ElidedRuns opens a text whose runs of lines were folded or left out,
// What saying which: Runs runs, Kept of Total lines kept, the rest by
// Call.
//
//	> [elided: passing tests folded into counts, 3 runs (41 of 58 lines kept); get chunk N whole: terse chunk c_0123456789abcdef N]
type ElidedRuns struct {
	What        string
	Runs        int
	Kept, Total int
	Call        string
}

// ElidedHead opens the line of [ElidedRuns].
const ElidedHead = "> [elided: "

func (x ElidedRuns) String() string {
	return ElidedHead + x.What + ", " + Plural(x.Runs, "run") + " (" + strconv.Itoa(x.Kept) + " of " + strconv.Itoa(x.Total) + " lines kept); get chunk N whole: " + x.Call + "]"
}

// ElidedTests is the What of an [ElidedRuns] of a test run whose
// passing tests were folded.
const ElidedTests = "passing tests folded into counts"

// ElidedLog is the What of an [ElidedRuns] of a long log that keeps its
// first and last ends lines and every problem line with context lines
// either side.
func ElidedLog(ends, context int) string {
	return "long log, first and last " + strconv.Itoa(ends) + " lines and every problem line with " + strconv.Itoa(context) + " either side kept"
}

// Folded stands for the lines First–Last (1-based) of an elided text that
// chunk Chunk holds; What counts what they held.
//
//	[… 24 lines left out: lines 3–26 (12 tests passed); chunk 2 …]
type Folded struct {
	First, Last int
	What        string
	Chunk       int
}

func (x Folded) String() string {
	what := ""
	if x.What != "" {
		what = " (" + x.What + ")"
	}
	return "[… " + strconv.Itoa(x.Last-x.First+1) + " lines left out: lines " + strconv.Itoa(x.First) + "–" + strconv.Itoa(x.Last) + what + "; chunk " + strconv.Itoa(x.Chunk) + " …]"
}

// Repeat follows a line repeated N (≥ 1) more times:
// "[… same line 3 more times …]".
type Repeat struct{ N int }

const (
	repeatOpen  = "[… same line "
	repeatClose = " more times …]"
)

func (x Repeat) String() string {
	var b strings.Builder
	b.Grow(x.Len())
	b.WriteString(repeatOpen)
	b.WriteString(strconv.Itoa(x.N))
	b.WriteString(repeatClose)
	return b.String()
}

// Append appends the line to dst.
func (x Repeat) Append(dst []byte) []byte {
	dst = append(dst, repeatOpen...)
	dst = strconv.AppendInt(dst, int64(x.N), 10)
	return append(dst, repeatClose...)
}

// Len is len(x.String()), without building it.
func (x Repeat) Len() int {
	d, n := 1, x.N
	if n < 0 {
		d, n = 2, -n
	}
	for ; n >= 10; n /= 10 {
		d++
	}
	return len(repeatOpen) + d + len(repeatClose)
}

// ParseRepeat reads a [Repeat] line, without allocating: the count of
// the repeats, or false for any other line.
func ParseRepeat(line string) (Repeat, bool) {
	if len(line) < len(repeatOpen)+len(repeatClose)+1 || !strings.HasPrefix(line, repeatOpen) || !strings.HasSuffix(line, repeatClose) {
		return Repeat{}, false
	}
	s := line[len(repeatOpen) : len(line)-len(repeatClose)]
	if s[0] == '0' || len(s) > 18 {
		return Repeat{}, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return Repeat{}, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return Repeat{n}, true
}

// A Rule is one rule a [Shaping] header names: a [Named] rule, or an
// [Unpadded], [PathTree], [Relative] or [ReadForm] rule ([ParseRule]).
type Rule interface{ String() string }

// Named is a rule that is its own wording.
type Named string

// The named rules.
const (
	// Terminal: the text is its terminal view (a display shaping's
	// first rule).
	Terminal Named = "terminal view"
	// Grouped: matches "file:line:text" are grouped under their file.
	Grouped Named = "matches grouped by file"
	// RepeatsFolded: a run of identical lines is written once and a
	// [Repeat] line.
	RepeatsFolded Named = "repeats folded"
)

func (x Named) String() string { return string(x) }

// Unpadded: the lines numbered Sep-separated, padded to Width, are
// written without the padding, and followed by To when it is not Sep.
//
//	"→" numbers unpadded to width 6
//	"→" numbers unpadded to width 6 and followed by "\t"
type Unpadded struct {
	Sep   string
	Width int
	To    string
}

const (
	unpadWord = " numbers unpadded to width "
	unpadTo   = " and followed by "
)

func (x Unpadded) String() string {
	r := strconv.Quote(x.Sep) + unpadWord + strconv.Itoa(x.Width)
	if x.To != "" && x.To != x.Sep {
		r += unpadTo + strconv.Quote(x.To)
	}
	return r
}

// PathTree: the path list from body line First (1-based) on is written
// as a tree: "paths as a tree from line 1".
type PathTree struct{ First int }

const treePrefix = "paths as a tree from line "

func (x PathTree) String() string { return treePrefix + strconv.Itoa(x.First) }

// Relative: paths under Base are written "./": `./ = "/home/dev/project/"`.
type Relative struct{ Base string }

const relPrefix = "./ = "

func (x Relative) String() string { return relPrefix + strconv.Quote(x.Base) }

// ReadForm: the numbered lines First–Last (Sep-separated, padded to
// Width) open the body; their numbers are shown on the first, the last
// and every 10th line only (Sparse), or not at all.
//
//	lines 1–250 numbered "→" on the first, the last and every 10th only (width 6)
//	lines 1–250 follow without their "→" numbers (width 6)
type ReadForm struct {
	Sparse      bool
	First, Last int
	Sep         string
	Width       int
}

const (
	formPrefix   = "lines "
	sparseMiddle = " numbered "
	sparseSuffix = " on the first, the last and every 10th only"
	rangeMiddle  = " follow without their "
	rangeSuffix  = " numbers"
	widthOpen    = " (width "
)

func (x ReadForm) String() string {
	middle, suffix := rangeMiddle, rangeSuffix
	if x.Sparse {
		middle, suffix = sparseMiddle, sparseSuffix
	}
	return formPrefix + strconv.Itoa(x.First) + "–" + strconv.Itoa(x.Last) + middle + strconv.Quote(x.Sep) + suffix + widthOpen + strconv.Itoa(x.Width) + ")"
}

// RuleError is an error of [ParseRule]: a rule no shaping writes
// (Unknown), or one of a known kind that is malformed.
type RuleError struct {
	Rule    string
	Unknown bool
}

func (e *RuleError) Error() string {
	if e.Unknown {
		return "unknown rule " + strconv.Quote(e.Rule)
	}
	return "bad rule " + strconv.Quote(e.Rule)
}

// ParseRule reads one rule of a [Shaping] header, as terse writes it
// (the result's String is r again). An [Unpadded] rule reads back with To
// set (to Sep when the rule does not name another).
func ParseRule(r string) (Rule, error) {
	x, err := parseRule(r)
	if err == nil && x.String() != r {
		return nil, &RuleError{Rule: r}
	}
	return x, err
}

func parseRule(r string) (Rule, error) {
	switch n := Named(r); n {
	case Terminal, Grouped, RepeatsFolded:
		return n, nil
	}
	bad := &RuleError{Rule: r}
	switch {
	case strings.HasPrefix(r, treePrefix):
		s := r[len(treePrefix):]
		n, ok := number(s)
		if !ok || n < 1 {
			return nil, bad
		}
		return PathTree{n}, nil
	case strings.HasPrefix(r, relPrefix):
		base, err := strconv.Unquote(r[len(relPrefix):])
		if err != nil {
			return nil, bad
		}
		return Relative{base}, nil
	case strings.HasPrefix(r, formPrefix):
		f, ok := parseReadForm(r[len(formPrefix):])
		if !ok {
			return nil, bad
		}
		return f, nil
	case strings.Contains(r, unpadWord):
		u, ok := parseUnpadded(r)
		if !ok {
			return nil, bad
		}
		return u, nil
	}
	return nil, &RuleError{Rule: r, Unknown: true}
}

// number reads a non-negative decimal written without a sign or leading
// zeros.
func number(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == s
}

func parseUnpadded(r string) (Unpadded, bool) {
	q, rest, _ := strings.Cut(r, unpadWord)
	w, toQ, hasTo := strings.Cut(rest, unpadTo)
	sep, err := strconv.Unquote(q)
	width, ok := number(w)
	if err != nil || !ok || sep == "" || width < 1 || width > 32 {
		return Unpadded{}, false
	}
	x := Unpadded{Sep: sep, Width: width, To: sep}
	if hasTo {
		if x.To, err = strconv.Unquote(toQ); err != nil || x.To == "" {
			return Unpadded{}, false
		}
	}
	return x, true
}

func parseReadForm(rest string) (f ReadForm, ok bool) {
	nums, rest, ok := strings.Cut(rest, " ")
	if !ok {
		return f, false
	}
	rest = " " + rest
	a, b, ok := strings.Cut(nums, "–")
	if f.First, ok = number(a); !ok {
		return f, false
	}
	if f.Last, ok = number(b); !ok || f.Last < f.First || f.Last-f.First > 1<<24 {
		return f, false
	}
	var suffix string
	switch {
	case strings.HasPrefix(rest, sparseMiddle):
		f.Sparse, rest, suffix = true, rest[len(sparseMiddle):], sparseSuffix
	case strings.HasPrefix(rest, rangeMiddle):
		rest, suffix = rest[len(rangeMiddle):], rangeSuffix
	default:
		return f, false
	}
	q, w, ok := strings.Cut(rest, suffix+widthOpen)
	if !ok || !strings.HasSuffix(w, ")") {
		return f, false
	}
	var err error
	if f.Sep, err = strconv.Unquote(q); err != nil || f.Sep == "" {
		return f, false
	}
	if f.Width, ok = number(w[:len(w)-1]); !ok || f.Width < 1 || f.Width > 32 {
		return f, false
	}
	return f, true
}
