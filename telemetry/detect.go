package telemetry

import "bytes"

// detectLimit bounds the bytes Detect looks at: a shape is decided by a
// result's beginning, and detection must stay cheap on large results.
const detectLimit = 16 << 10

// Features describe a result's structure for an Event.
type Features struct {
	Shape Shape
	Inner Inner
	Depth uint8  // JSON nesting depth (1 for a flat object or array)
	Cols  uint16 // columns of the first Markdown table
}

// Detect classifies a result by its first 16 KiB, in one pass, without
// allocating: JSON by its top-level kind and nesting, text by its first
// recognisable form (Markdown table, diff, code block, numbered or bullet
// list, log, prose). Inner formats are found in the scanned bytes.
func Detect(data []byte) Features {
	if len(data) > detectLimit {
		data = data[:detectLimit]
	}
	var f Features
	f.Inner = inner(data)
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 {
		f.Shape = ShapeEmpty
		return f
	}
	if t[0] == '{' || t[0] == '[' {
		if s, d, ok := jsonShape(t); ok {
			f.Shape, f.Depth = s, d
			return f
		}
	}
	f.Shape, f.Cols = textShape(data)
	return f
}

// jsonShape scans JSON structure: the top-level kind, the kind of the
// first array element, and the maximum depth. ok is false when the text
// is not balanced JSON-looking structure (then it is text).
func jsonShape(t []byte) (Shape, uint8, bool) {
	depth, maxDepth := 0, 0
	inStr, esc := false, false
	top := t[0]
	first := byte(0) // first non-space byte inside a top-level array
	sawContent := false
	allPrim := true // top-level array elements are primitives (depth stays 1)
	for i := 0; i < len(t); i++ {
		c := t[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
			sawContent = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				maxDepth = depth
			}
			if depth == 2 {
				allPrim = false
			}
			if depth == 2 && top == '[' && first == 0 {
				first = c
			}
		case '}', ']':
			depth--
			if depth < 0 {
				return 0, 0, false
			}
		case ' ', '\t', '\r', '\n', ',', ':':
		default:
			sawContent = true
		}
		if depth == 1 && top == '[' && first == 0 && c != '[' && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' {
			first = c
		}
		if depth == 0 && i > 0 {
			// Anything but whitespace after the value: JSON Lines or text.
			if len(bytes.TrimSpace(t[i+1:])) != 0 {
				return 0, 0, false
			}
			break
		}
	}
	if inStr || depth > 0 && len(t) < detectLimit {
		return 0, 0, false
	}
	d := uint8(min(maxDepth, 255))
	switch {
	case top == '{' && maxDepth == 1 && !sawContent:
		return ShapeEmpty, d, true
	case top == '{' && maxDepth == 1:
		return ShapeFlatObject, d, true
	case top == '{':
		return ShapeNestedObject, d, true
	case first == 0:
		return ShapeEmpty, d, true
	case first == '{' && maxDepth >= 2:
		return ShapeArrayOfObjects, d, true
	case allPrim:
		return ShapeArrayOfPrimitives, d, true
	}
	return ShapeNestedObject, d, true
}

// textShape finds the first recognisable text form.
func textShape(data []byte) (Shape, uint16) {
	var prev []byte
	fences, numbered, bullets, logs, diffs, lines := 0, 0, 0, 0, 0, 0
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		lines++
		if prev != nil && isSeparator(line) && isTableRow(prev) {
			return ShapeMarkdownTable, uint16(min(bytes.Count(bytes.TrimSpace(prev), []byte("|"))-1, 65535))
		}
		prev = line
		switch {
		case bytes.HasPrefix(line, []byte("```")):
			fences++
		case bytes.HasPrefix(line, []byte("diff --git")) || bytes.HasPrefix(line, []byte("@@ ")):
			diffs++
		case isNumbered(line):
			numbered++
		case (bytes.HasPrefix(line, []byte("- ")) || bytes.HasPrefix(line, []byte("* "))):
			bullets++
		case hasTimestamp(line, 32):
			logs++
		}
	}
	switch {
	case diffs > 0:
		return ShapeDiff, 0
	case fences >= 2:
		return ShapeCodeBlock, 0
	case numbered >= 3:
		return ShapeNumberedList, 0
	case bullets >= 3:
		return ShapeBulletList, 0
	case logs >= 3 && logs*2 >= lines:
		return ShapeLog, 0
	}
	return ShapeProse, 0
}

func isTableRow(l []byte) bool {
	l = bytes.TrimSpace(l)
	return len(l) >= 3 && l[0] == '|' && l[len(l)-1] == '|'
}

func isSeparator(l []byte) bool {
	l = bytes.TrimSpace(l)
	if len(l) < 3 || l[0] != '|' || bytes.IndexByte(l, '-') < 0 {
		return false
	}
	for _, c := range l {
		if c != '|' && c != '-' && c != ':' && c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// isNumbered matches the line-numbered file reads agents print:
// spaces, digits, then "→" or a tab.
func isNumbered(l []byte) bool {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	j := i
	for j < len(l) && l[j] >= '0' && l[j] <= '9' {
		j++
	}
	if j == i || j >= len(l) {
		return false
	}
	return l[j] == '\t' || bytes.HasPrefix(l[j:], []byte("→"))
}

// hasTimestamp reports a YYYY-MM-DD[ T]HH: timestamp within the first n
// bytes of l.
func hasTimestamp(l []byte, n int) bool {
	if len(l) > n {
		l = l[:n]
	}
	for i := 0; i+13 <= len(l); i++ {
		if isTS(l[i:]) {
			return true
		}
	}
	return false
}

func isTS(b []byte) bool {
	d := func(c byte) bool { return c >= '0' && c <= '9' }
	return d(b[0]) && d(b[1]) && d(b[2]) && d(b[3]) && b[4] == '-' && d(b[5]) && d(b[6]) && b[7] == '-' &&
		d(b[8]) && d(b[9]) && (b[10] == ' ' || b[10] == 'T') && d(b[11]) && d(b[12])
}

// lineStart reports whether position p of b starts a line: the start of
// b, after a newline, or after an escaped newline inside a JSON string.
func lineStart(b []byte, p int) bool {
	return p == 0 || b[p-1] == '\n' || p >= 2 && b[p-2] == '\\' && b[p-1] == 'n'
}

// inner finds embedded formats. A log is a timestamp that starts a line
// (a timestamp field alone is not a log). A hash is a run of 7 to 64 hex digits
// holding both a letter and a digit (plain numbers are not hashes).
func inner(b []byte) Inner {
	var in Inner
	if bytes.Contains(b, []byte("http://")) || bytes.Contains(b, []byte("https://")) {
		in |= InURL
	}
	if bytes.Contains(b, []byte("diff --git")) || bytes.Contains(b, []byte("\n@@ -")) || bytes.Contains(b, []byte("\\n@@ -")) {
		in |= InDiff
	}
	if bytes.Contains(b, []byte("Traceback (most recent call last)")) || bytes.Contains(b, []byte("\n    at ")) || bytes.Contains(b, []byte("\\n    at ")) {
		in |= InStackTrace
	}
	if bytes.Contains(b, []byte("```")) {
		in |= InCodeFence
	}
	if bytes.Contains(b, []byte("|---")) || bytes.Contains(b, []byte("| ---")) || bytes.Contains(b, []byte("|:--")) {
		in |= InMarkdownTable
	}
	run, letter, digit := 0, false, false
	for i := 0; i < len(b); i++ {
		switch hexClass[b[i]] {
		case 1:
			run++
			digit = true
		case 2:
			run++
			letter = true
		default:
			if run >= 7 && run <= 64 && letter && digit {
				in |= InHash
			}
			run, letter, digit = 0, false, false
			if b[i] == '-' && in&InLog == 0 && i >= 4 && i+9 <= len(b) && isTS(b[i-4:]) && lineStart(b, i-4) {
				in |= InLog
			}
		}
	}
	if run >= 7 && run <= 64 && letter && digit {
		in |= InHash
	}
	return in
}

// hexClass is 1 for decimal digits, 2 for a-f, 0 otherwise.
var hexClass = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = 1
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = 2
	}
	return t
}()
