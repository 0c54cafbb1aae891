package shape

import (
	"fmt"
	"strings"

	"github.com/terse-dev/terse/inband"
)

// ExpandError is an error of [Expand] at a position of its input: a text
// that is not a lossless or display shaping, or one whose rules do not
// undo.
type ExpandError struct {
	Line, Col int // 1-based
	Msg       string
}

func (e *ExpandError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// Expand returns the original of a lossless shaping, byte for byte, or
// the terminal view of the original of a display shaping: it undoes the
// rules its header line names, in reverse order. A text without such a
// header, or one the rules do not undo, is an *ExpandError.
func Expand(text string) (string, error) {
	s, _, err := expand(text)
	return s, err
}

// ExpandClass is Expand that also returns the shaping's class.
func ExpandClass(text string) (string, Class, error) { return expand(text) }

// pipelineNote reports whether line is a note a pipeline may put before
// a shaped text (a dedup id, a filter note): expand skips them.
func pipelineNote(line string) bool {
	v, err := inband.Parse(line)
	if err != nil {
		return false
	}
	switch v.(type) {
	case inband.ID, inband.Filtered, inband.FilterFailed:
		return true
	}
	return false
}

func expand(text string) (string, Class, error) {
	skipped := 0
	for {
		head, rest, ok := strings.Cut(text, "\n")
		if !ok || !pipelineNote(head) {
			break
		}
		text = rest
		skipped++
	}
	s, c, err := expandAt(text)
	if ee, ok := err.(*ExpandError); ok {
		ee.Line += skipped
	}
	return s, c, err
}

func expandAt(text string) (string, Class, error) {
	head, body, _ := strings.Cut(text, "\n")
	var class Class
	switch inband.Family(head) {
	case Lossless.String():
		class = Lossless
	case Display.String():
		class = Display
	default:
		msg := `not a shaped text: it does not open with "> [lossless: …]" or "> [display: …]"`
		if strings.HasPrefix(head, inband.ElidedHead) {
			msg = "an elided text is not expanded: fetch its chunks (the command it names) to get the original"
		}
		return "", None, &ExpandError{Line: 1, Col: 1, Msg: msg}
	}
	if !strings.HasSuffix(head, "]") {
		return "", None, &ExpandError{Line: 1, Col: len(head) + 1, Msg: `the header line does not end with "]"`}
	}
	v, err := inband.Parse(head)
	sh, ok := v.(inband.Shaping)
	if err != nil || !ok {
		return "", None, &ExpandError{Line: 1, Col: 1, Msg: "the header line is not as terse writes it"}
	}
	rules, col := sh.Rules, sh.RulesAt()
	if len(rules) == 0 {
		return "", None, &ExpandError{Line: 1, Col: col + 1, Msg: "no rules"}
	}
	cols := make([]int, len(rules))
	for i, r := range rules {
		cols[i] = col
		col += len(r) + len("; ")
	}
	lines := strings.Split(body, "\n")
	if inband.HasRefLines(body) {
		for n, l := range lines {
			if inband.HasRefLines(l) {
				return "", None, &ExpandError{Line: n + 2, Col: 1, Msg: "a line reference stands for lines of an earlier result: put them back first (terse api's dedup.ResolveLines)"}
			}
		}
	}
	for i := len(rules) - 1; i >= 0; i-- {
		r := rules[i]
		if r == ruleDisplay && (class != Display || i != 0) {
			return "", None, &ExpandError{Line: 1, Col: cols[i] + 1, Msg: "a terminal view is a display shaping's first rule"}
		}
		out, err := invert(r, lines, 2)
		if err != nil {
			if ee, ok := err.(*ExpandError); ok {
				return "", None, ee
			}
			return "", None, &ExpandError{Line: 1, Col: cols[i] + 1, Msg: err.Error()}
		}
		lines = out
	}
	return strings.Join(lines, "\n"), class, nil
}
