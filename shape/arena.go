package shape

import (
	"strconv"

	"github.com/terse-dev/terse/inband"
)

// arena builds the lines a rule rewrites in one allocation: the lines it
// keeps stay the input's strings.
type arena struct {
	buf  []byte
	at   []int // the line index of each line built
	ends []int // where each line built ends in buf
}

// reserve makes room for n lines of size bytes in all.
func (a *arena) reserve(size, n int) {
	a.buf = make([]byte, 0, size)
	a.at = make([]int, 0, n)
	a.ends = make([]int, 0, n)
}

// size is the bytes of lines.
func size(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	return n
}

// line builds the line for index i from parts.
func (a *arena) line(i int, p1, p2, p3 string) {
	a.at = append(a.at, i)
	a.buf = append(a.buf, p1...)
	a.buf = append(a.buf, p2...)
	a.buf = append(a.buf, p3...)
	a.ends = append(a.ends, len(a.buf))
}

// numbered builds the line for index i: the number k padded with
// spaces to width (0: no padding), sep and content.
func (a *arena) numbered(i, k, width int, sep, content string) {
	a.at = append(a.at, i)
	var b [20]byte
	num := strconv.AppendInt(b[:0], int64(k), 10)
	if len(num) < width {
		a.buf = append(a.buf, pad(width-len(num))...)
	}
	a.buf = append(a.buf, num...)
	a.buf = append(a.buf, sep...)
	a.buf = append(a.buf, content...)
	a.ends = append(a.ends, len(a.buf))
}

// repeat builds the line for index i: the marker of a line repeated n
// more times.
func (a *arena) repeat(i, n int) {
	a.at = append(a.at, i)
	a.buf = inband.Repeat{N: n}.Append(a.buf)
	a.ends = append(a.ends, len(a.buf))
}

// fill sets out[i] of every line built.
func (a *arena) fill(out []string) {
	s := string(a.buf)
	prev := 0
	for k, i := range a.at {
		out[i] = s[prev:a.ends[k]]
		prev = a.ends[k]
	}
}
