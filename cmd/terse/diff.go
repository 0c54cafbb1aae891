package main

import (
	"fmt"
	"slices"
	"strings"
)

// Setup's dry run prints what it would change as a line diff. The
// configuration files it edits can be megabytes (Claude Code keeps every
// project's history in ~/.claude.json) while the edit is a few lines in
// a few places, so the diff is Myers' O((N+M)·D) algorithm in its
// linear-space form (the "middle snake" bisection), unchanged stretches
// are folded to one line, and the printed diff has a fixed maximum size.

// diffContext is how many unchanged lines are shown around each change.
const diffContext = 2

// maxDiffLines bounds the changed lines a diff prints; the rest are
// counted on a last line.
const maxDiffLines = 400

// maxDiffCost bounds the edit distance the bisection searches for in one
// stretch; a stretch that differs more is shown as removed and added
// whole (a correct diff, not a minimal one), so that time stays bounded.
const maxDiffCost = 1000

// lineDiff is a unified-style diff of two texts: unchanged lines start
// with " ", removed ones with "-", added ones with "+"; diffContext
// unchanged lines are shown around each change, and a longer unchanged
// stretch is one line "… N unchanged lines".
func lineDiff(a, b string) string {
	x, y := splitLines(a), splitLines(b)
	ops := removalsFirst(diffLines(x, y))
	var out strings.Builder
	shown, hidden := 0, 0
	for i, op := range ops {
		switch op.kind {
		case ' ':
			lead, trail := diffContext, diffContext
			if i == 0 {
				lead = 0
			}
			if i == len(ops)-1 {
				trail = 0
			}
			if op.n <= lead+trail {
				for j := 0; j < op.n; j++ {
					writeDiffLine(&out, ' ', x[op.a+j])
				}
				continue
			}
			for j := 0; j < lead; j++ {
				writeDiffLine(&out, ' ', x[op.a+j])
			}
			fmt.Fprintf(&out, "… %s\n", plural(op.n-lead-trail, "unchanged line"))
			for j := op.n - trail; j < op.n; j++ {
				writeDiffLine(&out, ' ', x[op.a+j])
			}
		case '-', '+':
			src := x
			if op.kind == '+' {
				src = y
			}
			for j := 0; j < op.n; j++ {
				if shown >= maxDiffLines {
					hidden++
					continue
				}
				writeDiffLine(&out, op.kind, src[op.a+j])
				shown++
			}
		}
		if hidden > 0 {
			// Past the limit: count what is left and stop.
			for _, rest := range ops[i+1:] {
				if rest.kind != ' ' {
					hidden += rest.n
				}
			}
			fmt.Fprintf(&out, "… %s more not shown\n", plural(hidden, "changed line"))
			break
		}
	}
	return out.String()
}

func writeDiffLine(w *strings.Builder, kind byte, line string) {
	w.WriteByte(kind)
	w.WriteString(strings.TrimSuffix(line, "\n"))
	w.WriteByte('\n')
}

// plural writes "1 line" or "N lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// splitLines splits s after each newline; a last line without one is a
// line too.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// removalsFirst orders each stretch of changes as a reader expects:
// the lines removed, then the lines added.
func removalsFirst(ops []diffOp) []diffOp {
	for i := 0; i < len(ops); {
		j := i
		for j < len(ops) && ops[j].kind != ' ' {
			j++
		}
		slices.SortStableFunc(ops[i:j], func(p, q diffOp) int { return int(q.kind) - int(p.kind) })
		i = j + 1
	}
	return ops
}

// diffOp is a run of n lines: unchanged (' ', from a in the old text),
// removed ('-', from a in the old text) or added ('+', from a in the new
// text).
type diffOp struct {
	kind byte
	a, n int
}

// diffLines returns the runs that turn x into y.
func diffLines(x, y []string) []diffOp {
	// Lines as numbers, so that the search compares ints.
	ids := make(map[string]int32)
	intern := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	d := &differ{a: intern(x), b: intern(y)}
	d.compare(0, len(x), 0, len(y))
	return d.ops
}

// differ holds the two texts' lines as numbers and the runs found so far,
// in order.
type differ struct {
	a, b   []int32
	ops    []diffOp
	v1, v2 []int
}

func (d *differ) emit(kind byte, a, n int) {
	if n == 0 {
		return
	}
	if l := len(d.ops); l > 0 && d.ops[l-1].kind == kind && d.ops[l-1].a+d.ops[l-1].n == a {
		d.ops[l-1].n += n
		return
	}
	d.ops = append(d.ops, diffOp{kind, a, n})
}

// compare appends the runs that turn a[a0:a1] into b[b0:b1].
func (d *differ) compare(a0, a1, b0, b1 int) {
	p := 0
	for a0+p < a1 && b0+p < b1 && d.a[a0+p] == d.b[b0+p] {
		p++
	}
	d.emit(' ', a0, p)
	a0, b0 = a0+p, b0+p
	s := 0
	for a1-s > a0 && b1-s > b0 && d.a[a1-1-s] == d.b[b1-1-s] {
		s++
	}
	a1, b1 = a1-s, b1-s
	switch {
	case a0 == a1:
		d.emit('+', b0, b1-b0)
	case b0 == b1:
		d.emit('-', a0, a1-a0)
	default:
		if x, y, ok := d.bisect(a0, a1, b0, b1); ok && x+y > a0+b0 && x+y < a1+b1 {
			d.compare(a0, x, b0, y)
			d.compare(x, a1, y, b1)
		} else {
			d.emit('-', a0, a1-a0)
			d.emit('+', b0, b1-b0)
		}
	}
	d.emit(' ', a1, s)
}

// bisect finds a point (x, y) on an optimal edit path from (a0, b0) to
// (a1, b1) by running Myers' search from both ends until the paths meet;
// the stretches have no common first or last line. It reports false
// when the edit distance exceeds maxDiffCost. (The search follows
// diff-match-patch's bisect, which also stops paths that leave the grid.)
func (d *differ) bisect(a0, a1, b0, b1 int) (int, int, bool) {
	n, m := a1-a0, b1-b0
	maxD := min((n+m+1)/2, maxDiffCost)
	off := maxD + 1
	size := 2*maxD + 3
	if cap(d.v1) < size {
		d.v1, d.v2 = make([]int, size), make([]int, size)
	}
	v1, v2 := d.v1[:size], d.v2[:size]
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	delta := n - m
	front := delta%2 != 0
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	for D := 0; D < maxD; D++ {
		for k1 := -D + k1start; k1 <= D-k1end; k1 += 2 {
			i := off + k1
			var x1 int
			if k1 == -D || k1 != D && v1[i-1] < v1[i+1] {
				x1 = v1[i+1]
			} else {
				x1 = v1[i-1] + 1
			}
			y1 := x1 - k1
			for x1 < n && y1 < m && d.a[a0+x1] == d.b[b0+y1] {
				x1++
				y1++
			}
			v1[i] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > m:
				k1start += 2
			case front:
				j := off + delta - k1
				if j >= 0 && j < size && v2[j] != -1 && x1 >= n-v2[j] {
					return a0 + x1, b0 + y1, true
				}
			}
		}
		for k2 := -D + k2start; k2 <= D-k2end; k2 += 2 {
			i := off + k2
			var x2 int
			if k2 == -D || k2 != D && v2[i-1] < v2[i+1] {
				x2 = v2[i+1]
			} else {
				x2 = v2[i-1] + 1
			}
			y2 := x2 - k2
			for x2 < n && y2 < m && d.a[a1-1-x2] == d.b[b1-1-y2] {
				x2++
				y2++
			}
			v2[i] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > m:
				k2start += 2
			case !front:
				j := off + delta - k2
				if j >= 0 && j < size && v1[j] != -1 {
					x1 := v1[j]
					y1 := x1 - (j - off)
					if x1 >= n-x2 {
						return a0 + x1, b0 + y1, true
					}
				}
			}
		}
	}
	return 0, 0, false
}
