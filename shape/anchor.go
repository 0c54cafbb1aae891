package shape

import (
	"regexp"
	"strings"
)

// anchor is a fact of an original a reader may look for: a path, a
// file:line reference, an error or verdict line, an identifier. line is
// its 0-based line.
type anchor struct {
	text string
	line int
}

var (
	anchorPath  = regexp.MustCompile(`(?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)+\.[A-Za-z]\w*(?::\d+(?::\d+)?)?`)
	anchorID    = regexp.MustCompile(`\b(?:[0-9a-f]{7,40}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[A-Z][A-Z0-9]+-\d+)\b`)
	anchorError = regexp.MustCompile(`(?i)\b(error|fail(ed|ure)?|panic|exception|traceback|fatal)\b|^(ok  \t|FAIL|--- FAIL|test result:|Tests?:|Test Files)`)
)

// maxAnchors bounds the anchors collected from one text.
const maxAnchors = 100_000

// findAnchors lists the anchors of text: whole error, failure and verdict
// lines, and paths and identifiers anywhere (an identifier must hold a
// digit, so that words are not taken for SHAs).
func findAnchors(text string) []anchor {
	var out []anchor
	i := 0
	for line := range strings.SplitSeq(text, "\n") {
		if len(out) >= maxAnchors {
			break
		}
		if anchorError.MatchString(line) {
			out = append(out, anchor{line, i})
		}
		if strings.Contains(line, "/") {
			for _, m := range anchorPath.FindAllString(line, 8) {
				out = append(out, anchor{m, i})
			}
		}
		for _, m := range anchorID.FindAllString(line, 8) {
			if strings.ContainsAny(m, "0123456789") {
				out = append(out, anchor{m, i})
			}
		}
		i++
	}
	return out
}
