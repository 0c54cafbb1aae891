package shape

import (
	"fmt"
	"strings"
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

// notes are the in-band lines a pipeline may put before a shaped text
// (a dedup id, a filter note): expand skips them.
var notes = []string{"> [id: ", "> [filtered: ", "> [filter failed: "}

func expand(text string) (string, Class, error) {
	skipped := 0
	for {
		ok := false
		for _, n := range notes {
			if strings.HasPrefix(text, n) {
				ok = true
			}
		}
		i := strings.IndexByte(text, '\n')
		if !ok || i < 0 {
			break
		}
		text = text[i+1:]
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
	var rest string
	switch {
	case strings.HasPrefix(head, headLossless):
		class, rest = Lossless, head[len(headLossless):]
	case strings.HasPrefix(head, headDisplay):
		class, rest = Display, head[len(headDisplay):]
	default:
		msg := `not a shaped text: it does not open with "> [lossless: …]" or "> [display: …]"`
		if strings.HasPrefix(head, elideHead) {
			msg = "an elided text is not expanded: fetch its chunks (the command it names) to get the original"
		}
		return "", None, &ExpandError{Line: 1, Col: 1, Msg: msg}
	}
	if !strings.HasSuffix(rest, "]") {
		return "", None, &ExpandError{Line: 1, Col: len(head) + 1, Msg: `the header line does not end with "]"`}
	}
	rest = rest[:len(rest)-1]
	rules, cols := splitRules(rest, len(head)-len(rest)-1)
	if len(rules) == 0 {
		return "", None, &ExpandError{Line: 1, Col: cols[0] + 1, Msg: "no rules"}
	}
	lines := strings.Split(body, "\n")
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

// splitRules splits a header's rules at "; " outside quoted strings, and
// returns each rule's 0-based column (off is the column of s).
func splitRules(s string, off int) (rules []string, cols []int) {
	start := 0
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch {
		case inQuote && s[i] == '\\':
			i++
		case s[i] == '"':
			inQuote = !inQuote
		case !inQuote && s[i] == ';' && i+1 < len(s) && s[i+1] == ' ':
			rules, cols = append(rules, s[start:i]), append(cols, off+start)
			start = i + 2
			i++
		}
	}
	if start < len(s) {
		rules, cols = append(rules, s[start:]), append(cols, off+start)
	}
	if len(cols) == 0 {
		cols = []int{off}
	}
	return rules, cols
}
