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

func (x Repeat) String() string { return string(x.Append(nil)) }

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
