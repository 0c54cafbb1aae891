package render

import (
	"bytes"
	"strings"

	"github.com/terse-dev/terse/internal/lazyre"
	"github.com/terse-dev/terse/tree"
)

// Shape is the overall form of a payload.
type Shape string

// Shapes of JSON payloads and of text.
const (
	ShapeArrayOfObjects Shape = "array_of_objects"
	ShapeArray          Shape = "array" // of primitives or mixed
	ShapeNestedObject   Shape = "nested_object"
	ShapeFlatObject     Shape = "flat_object"
	ShapeScalar         Shape = "scalar"
	ShapeEmpty          Shape = "empty"

	ShapeMarkdownTable Shape = "markdown_table"
	ShapeDiff          Shape = "diff"
	ShapeCode          Shape = "code"
	ShapeLog           Shape = "log"
	ShapeFileListing   Shape = "file_listing" // numbered lines, as file-read tools print
	ShapeProse         Shape = "prose"
)

// Inner formats detected in string leaves.
const (
	InnerURL        = "url"
	InnerHash       = "hash"
	InnerLog        = "log"
	InnerDiff       = "diff"
	InnerMarkdown   = "md_table"
	InnerStackTrace = "stack_trace"
	InnerJSON       = "json"
)

// ShapeOf classifies a JSON value.
func ShapeOf(v tree.Value) Shape {
	switch v.Kind() {
	case tree.KindArray:
		if v.Len() == 0 {
			return ShapeEmpty
		}
		for _, it := range v.Items() {
			if it.Kind() != tree.KindObject {
				return ShapeArray
			}
		}
		return ShapeArrayOfObjects
	case tree.KindObject:
		if v.Len() == 0 {
			return ShapeEmpty
		}
		for _, m := range v.Members() {
			if !m.Value.IsPrimitive() {
				return ShapeNestedObject
			}
		}
		return ShapeFlatObject
	}
	return ShapeScalar
}

var (
	logLine      = lazyre.New(`(?m)^\S*\s*\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}`)
	numberedLine = lazyre.New(`(?m)^ *\d+(→|\t|: )`)
	hashRe       = lazyre.New(`^[0-9a-f]{7,64}$`)
)

// DetectText classifies text that is not JSON.
func DetectText(text string) Shape {
	switch {
	case strings.TrimSpace(text) == "":
		return ShapeEmpty
	case hasMarkdownTable(text):
		return ShapeMarkdownTable
	case looksLikeDiff(text):
		return ShapeDiff
	case strings.Count(text, "\n```") >= 2 || strings.HasPrefix(text, "```"):
		return ShapeCode
	}
	lines := strings.Count(text, "\n") + 1
	if n := len(numberedLine.FindAllStringIndex(text, 50)); n >= 3 && n*2 >= min(lines, 50) {
		return ShapeFileListing
	}
	if n := len(logLine.FindAllStringIndex(text, 50)); n >= 3 && n*3 >= min(lines, 50) {
		return ShapeLog
	}
	return ShapeProse
}

// Detect classifies a payload: JSON shapes when data parses as JSON, text
// shapes otherwise.
func Detect(data []byte) Shape {
	if t := bytes.TrimSpace(data); len(t) > 0 {
		if v, err := tree.Parse(t); err == nil {
			return ShapeOf(v)
		}
	}
	return DetectText(string(data))
}

// looksLikeDiff reports whether s holds a unified diff.
func looksLikeDiff(s string) bool {
	return strings.HasPrefix(s, "diff --git") || strings.HasPrefix(s, "@@ ") ||
		strings.Contains(s, "\n@@ ") || strings.Contains(s, "\ndiff --git") ||
		strings.HasPrefix(s, "--- ") && strings.Contains(s, "\n+++ ")
}

// InnerFormat returns the format detected inside one string, or "".
func InnerFormat(s string) string {
	switch {
	case len(s) < 7:
		return ""
	case isURL(s):
		return InnerURL
	case hashRe.MatchString(s) && strings.ContainsAny(s, "abcdef") && strings.ContainsAny(s, "0123456789"):
		return InnerHash
	case looksLikeDiff(s):
		return InnerDiff
	case strings.Contains(s, "Traceback (most recent call last):") || strings.Contains(s, "\n    at ") ||
		strings.Contains(s, "\ngoroutine ") && strings.Contains(s, "panic:"):
		return InnerStackTrace
	case hasMarkdownTable(s):
		return InnerMarkdown
	case logLine.MatchString(s) && strings.Contains(s, "\n"):
		return InnerLog
	case (s[0] == '{' || s[0] == '[') && len(s) > 2:
		if _, err := tree.ParseString(s); err == nil {
			return InnerJSON
		}
	}
	return ""
}

// InnerFormats returns the sorted set of inner formats found in the string
// leaves of v.
func InnerFormats(v tree.Value) []string {
	seen := map[string]bool{}
	tree.Walk(v, func(_ tree.Pointer, x tree.Value) bool {
		if x.Kind() == tree.KindString {
			if f := InnerFormat(x.Str()); f != "" {
				seen[f] = true
			}
		}
		return true
	})
	var out []string
	for _, f := range []string{InnerDiff, InnerHash, InnerJSON, InnerLog, InnerMarkdown, InnerStackTrace, InnerURL} {
		if seen[f] {
			out = append(out, f)
		}
	}
	return out
}

func (s Shape) String() string { return string(s) }
