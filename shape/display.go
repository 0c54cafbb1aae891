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
	buf := make([]byte, 0, len(text))
	for {
		i := strings.IndexByte(text, '\n')
		line := text
		if i >= 0 {
			line = text[:i]
		}
		var ok bool
		if buf, ok = displayLine(buf, line); !ok {
			return "", false
		}
		if i < 0 {
			break
		}
		buf = append(buf, '\n')
		text = text[i+1:]
	}
	return string(buf), true
}

// displayLine appends what a terminal shows of l (one line, no "\n") to
// dst.
func displayLine(dst []byte, l string) ([]byte, bool) {
	if plainRun(l) == len(l) {
		return append(dst, l...), true
	}
	base := len(dst) // the line as shown is dst[base:], ASCII only once overwritten
	cur := 0
	overwrote, wide := false, false
	for i := 0; i < len(l); {
		b := l[i]
		switch {
		case b == 0x1b:
			n, op, ok := escape(l[i:])
			if !ok {
				return dst, false
			}
			cells := dst[base:]
			switch op {
			case 'K':
				dst = dst[:base+min(cur, len(cells))]
			case '1': // erase from the start to the cursor
				for k := 0; k < cur && k < len(cells); k++ {
					cells[k] = ' '
				}
			case '2':
				dst = dst[:base]
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
			run := l[i : i+plainRun(l[i:])]
			for k := 0; k < len(run) && !wide; k++ {
				if run[k] == '\t' || run[k] >= utf8.RuneSelf {
					wide = true
				}
			}
			if base+cur == len(dst) {
				dst = append(dst, run...)
				cur += len(run)
			} else {
				for k := 0; k < len(run); k++ {
					if base+cur < len(dst) {
						dst[base+cur] = run[k]
						overwrote = true
					} else {
						dst = append(dst, run[k])
					}
					cur++
				}
			}
			i += len(run)
		}
	}
	if overwrote && wide {
		return dst, false
	}
	if cur < len(dst)-base && wide {
		// A shorter line after a carriage return left part of a longer
		// one: its columns are only known for ASCII.
		return dst, false
	}
	return dst, true
}

// plainRun is the length of the run of bytes at the start of l that are
// not an escape, a carriage return or a backspace.
func plainRun(l string) int {
	for i := 0; i < len(l); i++ {
		if c := l[i]; c == 0x1b || c == '\r' || c == '\b' {
			return i
		}
	}
	return len(l)
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
