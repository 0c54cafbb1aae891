package fit

import (
	"fmt"
	"strconv"
	"strings"
)

// chunkIndex splits the source into sequential chunks and describes them.
type chunkIndex struct {
	ranges [][2]int // [start, end) in units
	costs  []int    // tokens of each chunk in full, estimated
	unit   string   // "items", "members", "lines", "files"
	label  string   // where the units are ("/items", "the root array"); "" for text
	handle string
	// failed: chunks could not be stored (the store is down).
	failed  bool
	summary func(a, b int) string
	sums    []string // summaries, computed on first use
	// span names a chunk's range ("items 1–4"; diff: "files 1–2 (lines 1–80)").
	span func(a, b int) string
	// levels: units have detail levels (else a kept unit is "shown").
	levels bool
	head   int // tokens of a fetched chunk's first line, once counted
}

// partition packs items, in order, into chunks of at most about 80 % of the
// budget (by full cost, after the envelope), so that a fetched chunk fits
// the same budget. When that would make more chunks than the index can
// list within about a fifth of the budget, it makes that many chunks of
// equal cost instead (a fetched chunk over its budget comes back split).
func partition(costs []int, budget, envelope int) *chunkIndex {
	n := len(costs)
	maxChunks := min(max(2, budget/250), 32)
	capacity := max(1, (budget-envelope)*8/10)
	var rs [][2]int
	start, used := 0, 0
	for i, c := range costs {
		if i > start && used+c > capacity {
			rs = append(rs, [2]int{start, i})
			start, used = i, 0
		}
		used += c
	}
	if n > 0 {
		rs = append(rs, [2]int{start, n})
	}
	if len(rs) > maxChunks {
		total := 0
		for _, c := range costs {
			total += c
		}
		rs = rs[:0]
		start, used = 0, 0
		per := total / maxChunks
		for i, c := range costs {
			if i > start && used+c > per && len(rs) < maxChunks-1 {
				rs = append(rs, [2]int{start, i})
				start, used = i, 0
			}
			used += c
		}
		rs = append(rs, [2]int{start, n})
	}
	ck := &chunkIndex{ranges: rs, costs: make([]int, len(rs))}
	for k, r := range rs {
		t := envelope + 1
		for _, c := range costs[r[0]:r[1]] {
			t += c
		}
		ck.costs[k] = t
	}
	return ck
}

// singular returns the singular of a unit name: "items" → "item".
func singular(unit string) string { return strings.TrimSuffix(unit, "s") }

// posRange names the units [a, b) by their 1-based numbers: "items 5–8",
// "item 7".
func posRange(unit string, a, b int) string {
	if b == a+1 {
		return fmt.Sprintf("%s %d", singular(unit), a+1)
	}
	return fmt.Sprintf("%s %d–%d", unit, a+1, b)
}

// posList names sorted 0-based unit indexes by their 1-based numbers,
// merging runs: "items 1–9, 14, 20–24", "item 7".
func posList(unit string, idx []int) string {
	var sb strings.Builder
	if len(idx) == 1 {
		sb.WriteString(singular(unit))
	} else {
		sb.WriteString(unit)
	}
	sb.WriteByte(' ')
	first := true
	for j := 0; j < len(idx); {
		k := j
		for k+1 < len(idx) && idx[k+1] == idx[k]+1 {
			k++
		}
		if !first {
			sb.WriteString(", ")
		}
		first = false
		if k == j {
			fmt.Fprintf(&sb, "%d", idx[j]+1)
		} else {
			fmt.Fprintf(&sb, "%d–%d", idx[j]+1, idx[k]+1)
		}
		j = k + 1
	}
	return sb.String()
}

// thousands writes n with comma separators: 12,345.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var sb strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		sb.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(s[i : i+3])
	}
	return sb.String()
}

// levelWord is how the index names the level of a unit in this response.
func (c *chunkIndex) levelWord(l Level) string {
	switch {
	case l == Skip:
		return "left out"
	case !c.levels && l == Full:
		return "shown"
	case !c.levels:
		return "cut"
	}
	return l.String()
}

// runs writes the units [a, b) of a selection in order, merging runs of
// the same level: "items 1–3 standard, item 4 full, items 5–6 left out",
// or "all full" / "none" when the whole range is one level.
func (c *chunkIndex) runs(sb *strings.Builder, sel []Level, a, b int) {
	if allOf(sel[a:b], sel[a]) {
		if sel[a] == Skip {
			sb.WriteString("none")
		} else {
			sb.WriteString("all " + c.levelWord(sel[a]))
		}
		return
	}
	var num [20]byte
	for i := a; i < b; {
		j := i
		for j < b && sel[j] == sel[i] {
			j++
		}
		if i > a {
			sb.WriteString(", ")
		}
		if j == i+1 {
			sb.WriteString(singular(c.unit))
		} else {
			sb.WriteString(c.unit)
		}
		sb.WriteByte(' ')
		sb.Write(strconv.AppendInt(num[:0], int64(i+1), 10))
		if j > i+1 {
			sb.WriteString("–")
			sb.Write(strconv.AppendInt(num[:0], int64(j), 10))
		}
		sb.WriteByte(' ')
		sb.WriteString(c.levelWord(sel[i]))
		i = j
	}
}

func allOf(sel []Level, l Level) bool {
	for _, x := range sel {
		if x != l {
			return false
		}
	}
	return true
}

// write renders the chunk index. Its wording is part of the API:
//
//	[chunks] 25 items at the root array, numbered 1–25, in 6 chunks; this response shows 13 of them (2 full, 6 standard, 5 minimal) and leaves out 12:
//	  chunk 1: items 1–4, ≈900 tokens; state: 4 open; in this response: items 1–3 standard, item 4 full
//	  chunk 6: item 25, ≈3,100 tokens, over budget; state: 1 open; in this response: none
//	[/chunks] Get chunk N whole: terse chunk c_0123456789abcdef N (no other arguments needed); a chunk over budget comes back as smaller chunks unless fetched with a larger budget
func (c *chunkIndex) write(sb *strings.Builder, o Options, sel []Level) {
	total := len(sel)
	var counts [4]int
	for _, l := range sel {
		counts[l]++
	}
	shown := total - counts[Skip]
	at := ""
	switch {
	case strings.HasPrefix(c.label, "the diff"):
		at = " in " + c.label
	case c.label != "":
		at = " at " + c.label
	}
	numbered := fmt.Sprintf("numbered 1–%d", total)
	if total == 1 {
		numbered = "numbered 1"
	}
	fmt.Fprintf(sb, "[chunks] %s%s, %s, in %s; this response shows %d of them", plural(total, singular(c.unit)), at, numbered, plural(len(c.ranges), "chunk"), shown)
	if cut := counts[Standard] + counts[Minimal]; !c.levels && cut > 0 {
		fmt.Fprintf(sb, " (%d cut)", cut)
	} else if shown > 0 && c.levels {
		var parts []string
		for l := Full; l < Skip; l++ {
			if counts[l] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[l], l))
			}
		}
		fmt.Fprintf(sb, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(sb, " and leaves out %d:\n", counts[Skip])
	over := false
	// A fetched chunk starts with a line saying what it is.
	if c.head == 0 {
		c.head = o.Counter.Count(fmt.Sprintf("> [chunk %d of %d of c_0123456789abcdef: %s of %d%s, in full]\n", len(c.ranges), len(c.ranges), c.span(0, total), total, at))
	}
	head := c.head
	for k, r := range c.ranges {
		fmt.Fprintf(sb, "  chunk %d: %s, ≈%s tokens", k+1, c.span(r[0], r[1]), thousands(c.costs[k]))
		if c.costs[k]+head > o.Budget {
			sb.WriteString(", over budget")
			over = true
		}
		if c.sums == nil {
			c.sums = make([]string, len(c.ranges))
			for j, q := range c.ranges {
				c.sums[j] = c.summary(q[0], q[1])
			}
		}
		if s := c.sums[k]; s != "" {
			sb.WriteString("; " + s)
		}
		sb.WriteString("; in this response: ")
		c.runs(sb, sel, r[0], r[1])
		sb.WriteByte('\n')
	}
	switch {
	case c.handle != "":
		fmt.Fprintf(sb, "[/chunks] Get chunk N whole: %s (no other arguments needed)", fetch(o, c.handle, "N"))
		if over {
			sb.WriteString("; a chunk over budget comes back as smaller chunks unless fetched with a larger budget")
		}
		sb.WriteByte('\n')
	case c.failed:
		fmt.Fprintf(sb, "[/chunks] The rest is not retrievable right now (the chunk store is unavailable); %s.\n", o.RawHint)
	default:
		sb.WriteString("[/chunks] Not stored: re-run with a larger budget to get more.\n")
	}
}

func fetch(o Options, handle, n string) string {
	return strings.NewReplacer("{handle}", handle, "{n}", n).Replace(o.Fetch)
}
