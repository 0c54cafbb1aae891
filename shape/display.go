package shape

import (
	"strings"
	"unicode/utf8"
)

// needsDisplay reports whether text holds what a terminal would not show
// as it is: an escape code, a carriage return that does not end a line, or
// a backspace.
func needsDisplay(text string) bool {
	if strings.IndexByte(text, 0x1b) >= 0 || strings.IndexByte(text, '\b') >= 0 {
		return true
	}
	for i := strings.IndexByte(text, '\r'); i >= 0; {
		if i+1 < len(text) && text[i+1] != '\n' {
			return true
		}
		j := strings.IndexByte(text[i+1:], '\r')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// display returns what a terminal shows of text: SGR (colour) codes,
// erase-in-line codes, OSC strings (titles, hyperlinks) and character
// set selections are applied and dropped; a carriage return or backspace
// moves the cursor back and later characters overwrite what was there. A
// line ending "\r\n" ends with "\n". ok is false when the text holds
// codes whose effect this does not model (cursor movement, screen
// erasure), or overwrites a line holding tabs or non-ASCII characters,
// whose columns depend on the terminal: such text is left alone.
func display(text string) (string, bool) {
	var sb strings.Builder
	sb.Grow(len(text))
	for line := range strings.SplitSeq(text, "\n") {
		l, ok := displayLine(line)
		if !ok {
			return "", false
		}
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	s := sb.String()
	return s[:len(s)-1], true
}

// displayLine is display on one line (no "\n").
func displayLine(l string) (string, bool) {
	if !strings.ContainsAny(l, "\x1b\r\b") {
		return l, true
	}
	var cells []byte // the line as shown, ASCII only once overwritten
	cur := 0
	overwrote, wide := false, false
	put := func(b byte) {
		if cur < len(cells) {
			cells[cur] = b
			overwrote = true
		} else {
			cells = append(cells, b)
		}
		cur++
	}
	for i := 0; i < len(l); {
		b := l[i]
		switch {
		case b == 0x1b:
			n, op, ok := escape(l[i:])
			if !ok {
				return "", false
			}
			switch op {
			case 'K':
				cells = cells[:min(cur, len(cells))]
			case '1': // erase from the start to the cursor
				for k := 0; k < cur && k < len(cells); k++ {
					cells[k] = ' '
				}
			case '2':
				cells = cells[:0]
			}
			i += n
		case b == '\r':
			if i == len(l)-1 {
				i++ // a CRLF line end
				continue
			}
			cur = 0
			i++
		case b == '\b':
			if cur > 0 {
				cur--
			}
			i++
		default:
			if b == '\t' || b >= utf8.RuneSelf {
				wide = true
			}
			put(b)
			i++
		}
	}
	if overwrote && wide {
		return "", false
	}
	if cur < len(cells) && wide {
		// A shorter line after a carriage return left part of a longer
		// one: its columns are only known for ASCII.
		return "", false
	}
	return string(cells), true
}

// escape parses the escape sequence at the start of s: its length and
// what it does: 0 (nothing shown), 'K' (erase to the end of the line),
// '1' (erase to the cursor), '2' (erase the line). ok is false for a
// sequence whose effect display does not model.
func escape(s string) (n int, op byte, ok bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	switch s[1] {
	case '[': // CSI: parameters, intermediates, a final byte
		i := 2
		for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
			i++
		}
		params := s[2:i]
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i >= len(s) || s[i] < 0x40 || s[i] > 0x7e {
			return 0, 0, false
		}
		switch s[i] {
		case 'm':
			return i + 1, 0, true
		case 'K':
			switch params {
			case "", "0":
				return i + 1, 'K', true
			case "1":
				return i + 1, '1', true
			case "2":
				return i + 1, '2', true
			}
		}
		return 0, 0, false
	case ']': // OSC, up to BEL or ST
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1, 0, true
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2, 0, true
			}
		}
		return 0, 0, false
	case '(', ')':
		if len(s) >= 3 {
			return 3, 0, true
		}
	}
	return 0, 0, false
}

// TerminalView is what a terminal shows of text (see the display class):
// the text itself when it holds no escape codes or overwrites, or when
// it holds ones whose effect is not modelled.
func TerminalView(text string) string {
	if !needsDisplay(text) {
		return text
	}
	if d, ok := display(text); ok {
		return d
	}
	return text
}
