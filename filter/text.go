package filter

import (
	"strconv"
	"strings"
)

// textStats is what the text filter reports.
type textStats struct {
	lines     int // lines in the input
	dropped   int // lines dropped by Include/Exclude
	collapsed int // lines merged into an earlier identical line
	cut       int // lines cut by Head/Tail
	kept      int // lines in the output
	head      int // lines kept from the start when cut
	tail      int // lines kept from the end when cut
	onEmpty   bool
}

// apply filters s line by line. Lines end at '\n'; a trailing newline does
// not start an extra empty line, and the output carries none.
func (t *textRule) apply(s string) (string, textStats) {
	var st textStats
	if t.spec.StripANSI {
		s = stripANSI(s)
	}
	s = strings.TrimSuffix(s, "\n")
	type line struct {
		text  string
		n     int // repeat count
		index int // last input line index of the run
	}
	var kept []line
	if s != "" {
		i := 0
		for rest := s; ; i++ {
			l, tail, more := strings.Cut(rest, "\n")
			st.lines++
			if t.keep(l) {
				if t.spec.Collapse && len(kept) > 0 {
					// Merge only lines that were adjacent in the input, so
					// filtering never makes distant lines look repeated.
					last := &kept[len(kept)-1]
					if last.text == l && last.index == i-1 {
						last.n++
						last.index = i
						st.collapsed++
						if !more {
							break
						}
						rest = tail
						continue
					}
				}
				kept = append(kept, line{text: l, n: 1, index: i})
			} else {
				st.dropped++
			}
			if !more {
				break
			}
			rest = tail
		}
	}
	head, tail := t.spec.Head, t.spec.Tail
	if (head > 0 || tail > 0) && len(kept) > head+tail {
		var cutLines []line
		if head > 0 {
			cutLines = append(cutLines, kept[:head]...)
		}
		if tail > 0 {
			cutLines = append(cutLines, kept[len(kept)-tail:]...)
		}
		st.cut = len(kept) - len(cutLines)
		st.head, st.tail = head, tail
		kept = cutLines
	}
	st.kept = len(kept)
	if len(kept) == 0 && t.spec.OnEmpty != "" {
		st.onEmpty = true
		return t.spec.OnEmpty, st
	}
	var b strings.Builder
	for i, l := range kept {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.text)
		if l.n > 1 {
			b.WriteString(" (x")
			b.WriteString(strconv.Itoa(l.n))
			b.WriteByte(')')
		}
	}
	return b.String(), st
}

func (t *textRule) keep(l string) bool {
	for _, re := range t.exclude {
		if re.MatchString(l) {
			return false
		}
	}
	if len(t.include) == 0 {
		return true
	}
	for _, re := range t.include {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// stripANSI removes CSI sequences: ESC '[', parameter and intermediate
// bytes, then one final byte in 0x40..0x7E.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
				j++
			}
			if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
