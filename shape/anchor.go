package shape

import (
	"strings"

	"github.com/terse-dev/terse/internal/lazyre"
)

// anchor is a fact of an original a reader may look for: a path, a
// file:line reference, an error or verdict line, an identifier. line is
// its 0-based line.
type anchor struct {
	text string
	line int
}

var anchorError = lazyre.New(`(?i)\b(error|fail(ed|ure)?|panic|exception|traceback|fatal)\b|^(ok  \t|FAIL|--- FAIL|test result:|Tests?:|Test Files)`)

// errorHints are substrings one of which every line anchorError matches
// holds: the regular expression runs only on such lines.
var errorHints = []string{"rror", "RROR", "ail", "AIL", "anic", "ANIC", "xception", "XCEPTION", "raceback", "RACEBACK", "atal", "ATAL", "ok  \t", "est result:", "ests:", "est:", "est Files"}

// maxAnchors bounds the anchors collected from one text.
const maxAnchors = 100_000

// findAnchors lists the anchors of text: whole error, failure and verdict
// lines, and paths (with an extension, and a line number if any) and
// identifiers (hex of 7 to 40 digits holding a digit, UUIDs, issue keys
// such as ABC-12) anywhere.
func findAnchors(text string) []anchor {
	var out []anchor
	i := 0
	for line := range strings.SplitSeq(text, "\n") {
		if len(out) >= maxAnchors {
			break
		}
		for _, h := range errorHints {
			if strings.Contains(line, h) {
				if anchorError.MatchString(line) {
					out = append(out, anchor{line, i})
				}
				break
			}
		}
		for f := range strings.FieldsFuncSeq(line, notWordish) {
			f = strings.TrimRight(f, ".:-")
			if isPathAnchor(f) || isIDAnchor(f) {
				out = append(out, anchor{f, i})
			}
		}
		i++
	}
	return out
}

func notWordish(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '/' || r == ':' || r == '-')
}

// isPathAnchor: a path of two parts or more whose last part has an
// extension, optionally followed by :line[:col].
func isPathAnchor(f string) bool {
	if !strings.Contains(f, "/") {
		return false
	}
	p, _, _ := strings.Cut(f, ":")
	last := p[strings.LastIndexByte(p, '/')+1:]
	dot := strings.LastIndexByte(last, '.')
	return dot > 0 && dot < len(last)-1 && strings.Count(p, "/") >= 1 && len(p) > len(last)
}

// isIDAnchor: a hex identifier of 7 to 40 digits holding a digit and a
// letter-free or hex spelling, a UUID, or an issue key (ABC-123).
func isIDAnchor(f string) bool {
	if strings.ContainsAny(f, "/:.") {
		return false
	}
	if len(f) == 36 && f[8] == '-' && f[13] == '-' && f[18] == '-' && f[23] == '-' {
		return isHex(strings.ReplaceAll(f, "-", ""), true)
	}
	if len(f) >= 7 && len(f) <= 40 && isHex(f, false) && strings.ContainsAny(f, "0123456789") {
		return true
	}
	if k := strings.IndexByte(f, '-'); k >= 2 && k < len(f)-1 {
		key, num := f[:k], f[k+1:]
		if key[0] >= 'A' && key[0] <= 'Z' && strings.ToUpper(key) == key && digits(num) == len(num) && !strings.ContainsAny(key, "-_.") {
			return true
		}
	}
	return false
}

func isHex(s string, upper bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || upper && c >= 'A' && c <= 'F') {
			return false
		}
	}
	return len(s) > 0
}

// ErrorLine reports whether line is an error, failure or verdict line.
func ErrorLine(line string) bool {
	for _, h := range errorHints {
		if strings.Contains(line, h) {
			return anchorError.MatchString(line)
		}
	}
	return false
}

// InView reports whether a line of a command's output stays in view
// when what is around it is a reference to lines shown before: an error,
// failure or verdict line, or one that names a file:line (a compiler's
// or a linter's finding).
func InView(line string) bool {
	if ErrorLine(line) {
		return true
	}
	if !strings.Contains(line, ":") {
		return false
	}
	for f := range strings.FieldsFuncSeq(line, notWordish) {
		f = strings.TrimRight(f, ".:-")
		if p, rest, ok := strings.Cut(f, ":"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' && isPathAnchor(p) {
			return true
		}
	}
	return false
}

// Outcome reports whether text, the result of call as the tool gave it,
// may be the output of a run whose error and verdict lines state how it
// went: anything but a file read, a search, a listing, a fetched page and
// JSON data. A reference that stands for lines shown before keeps those
// lines of it in view (dedup.Lines.Refer with InView). It looks at the
// tool's name and the text's first byte only: it is asked on every
// request.
func Outcome(text string, call Call) bool {
	switch call.Tool {
	case "Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch":
		return false
	}
	t := strings.TrimLeft(text, " \t\r\n")
	return t == "" || t[0] != '{' && t[0] != '['
}
