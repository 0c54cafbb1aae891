package eval

import (
	"math/big"
	"regexp"
	"strings"
)

// Grade reports whether reply answers a question whose gold answer is gold
// (also is a list of other accepted answers). Both sides are normalised
// first ([Normalize]); then
//
//   - numbers compare by value: 1.50 = 1.5 = 1.5e0, and 1,234 = 1234;
//   - null, None, nil and NULL are the same;
//   - true/false, "not shown" and one-word answers (enum values such as
//     "open" or "IN_PROGRESS") compare without case;
//   - everything else (titles, URLs, ids) must match exactly.
func Grade(reply, gold string, also ...string) bool {
	r := Normalize(reply)
	for _, g := range append([]string{gold}, also...) {
		if match(r, Normalize(g)) {
			return true
		}
	}
	return false
}

func match(r, g string) bool {
	if r == g {
		return true
	}
	if a, ok := number(r); ok {
		if b, ok := number(g); ok {
			return a.Cmp(b) == 0
		}
	}
	if caseless(g) && strings.EqualFold(r, g) {
		return true
	}
	return false
}

// caseless reports whether an answer is compared without case: one short
// word of letters, digits, '_' and '-', or the words graded specially.
func caseless(s string) bool {
	if s == NotShown {
		return true
	}
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

var (
	answerPrefix = regexp.MustCompile(`(?i)^(?:final answer|answer|the answer is)\s*[:：]?\s*`)
	thousands    = regexp.MustCompile(`^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$`)
)

// Normalize reduces a reply or a gold answer to the form compared: the
// first line that says something, without "Answer:", code fences,
// backticks, surrounding quotes, angle brackets around a URL, trailing
// full stop or bold markers; null spellings as "null"; "" and the words
// "empty string" as "empty"; "not present"/"missing" as "absent"; replies
// meaning "not shown" as [NotShown].
func Normalize(s string) string {
	s = strings.TrimSpace(s)
	// A fenced reply: keep its body.
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.Contains(s[:i], " ") {
			s = s[i+1:]
		}
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
		s = strings.TrimSpace(s)
	}
	// The first non-empty line.
	for _, line := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			s = t
			break
		}
	}
	for range 3 {
		before := s
		s = answerPrefix.ReplaceAllString(s, "")
		s = strings.TrimSpace(s)
		s = strings.TrimPrefix(strings.TrimSuffix(s, "**"), "**")
		if len(s) >= 2 {
			f, l := s[0], s[len(s)-1]
			if (f == '"' && l == '"') || (f == '\'' && l == '\'') || (f == '`' && l == '`') || (f == '<' && l == '>') {
				if s == `""` || s == "''" {
					return PresenceEmpty
				}
				s = s[1 : len(s)-1]
			}
		}
		// A full stop after the answer; applied to the gold too, so a gold
		// that ends in one still matches.
		if strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "..") {
			s = s[:len(s)-1]
		}
		if s == before {
			break
		}
	}
	switch strings.ToLower(s) {
	case "null", "none", "nil", "(null)", "<null>", "json null":
		return "null"
	case "empty", "empty string", "an empty string", "(empty)", "<empty>":
		return PresenceEmpty
	case "absent", "missing", "not present", "no such field", "undefined", "(absent)":
		return PresenceAbsent
	case "the document does not show it", "not in the document":
		return NotShown
	}
	// "Not shown", "not shown (left out)", "Not shown in the document."
	if l := strings.ToLower(s); strings.HasPrefix(l, NotShown) && (len(l) == len(NotShown) || !isWordByte(l[len(NotShown)])) {
		return NotShown
	}
	return s
}

// number parses a decimal number (JSON grammar, also with thousands
// separators or a leading '+') exactly.
func number(s string) (*big.Rat, bool) {
	if s == "" || len(s) > 400 {
		return nil, false
	}
	if thousands.MatchString(s) {
		s = strings.ReplaceAll(s, ",", "")
	}
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return nil, false
	}
	c := s[0]
	if !(c == '-' || c >= '0' && c <= '9') {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+') {
			return nil, false
		}
	}
	// Exponents beyond this would make big.Rat allocate without bound.
	if i := strings.IndexAny(s, "eE"); i >= 0 && len(s)-i > 5 {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
}
