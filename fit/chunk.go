package fit

import (
	"strings"

	"github.com/terse-dev/terse/inband"
)

// chunkIndex splits the source into sequential chunks and describes them.
type chunkIndex struct {
	ranges [][2]int // [start, end) in units
	// sizes are the tokens of what fetching each chunk whole returns (its
	// first line and its units in full), counted when needed (see size);
	// est are their estimates, from the units' costs.
	sizes, est []int
	c          *chunker
	fetch      int    // the budget a fetch without a budget of its own gets
	unit       string // "items", "members", "lines", "files"
	label      string // where the units are ("/items", "the root array"); "" for text
	handle     string
	// failed: chunks could not be stored (the store is down).
	failed  bool
	summary func(a, b int) string
	sums    []string // summaries, computed on first use
	// span names a chunk's range ("items 1–4"; diff: "files 1–2 (lines 1–80)").
	span func(a, b int) string
	// levels: units have detail levels (else a kept unit is "shown").
	levels bool
	// uncounted: nothing can be fetched (no store), so chunks are packed
	// by their estimates and the index states no sizes.
	uncounted bool
}

// wholeHead is the first line of a chunk fetched whole: which chunk of
// which handle, and where its units are ("items 5–8 of 30 at the root
// array", "the document"). The index counts it into a chunk's size.
func wholeHead(n, of int, handle, where string) string {
	return inband.ChunkHead{N: n, Of: of, Handle: handle, Where: where}.String() + "\n"
}

// chunker measures chunks as a fetch returns them: where names the
// units [a, b) within the source, body renders them in full.
type chunker struct {
	counter interface{ Count(string) int }
	where   func(a, b int) string
	body    func(a, b int) string
	bodies  map[[2]int]int // the bodies counted, by range
}

// size is the token count of chunk n of of, holding units [a, b), fetched
// whole: its first line (with a handle of the one length all handles
// have) and its units. The two are counted apart (the line ends in
// "]\n", where a tokenizer's pieces end too), and each body once.
func (c *chunker) size(n, of, a, b int) int {
	if c.bodies == nil {
		c.bodies = map[[2]int]int{}
	}
	head := wholeHead(n, of, sampleHandle, c.where(a, b))
	body, ok := c.bodies[[2]int{a, b}]
	if !ok {
		text := c.body(a, b)
		body = -1 // a body that starts with white space is counted with its line
		if text == "" || !strings.ContainsRune(" \t\r\n\v\f", rune(text[0])) {
			body = c.counter.Count(text)
		}
		c.bodies[[2]int{a, b}] = body
	}
	if body < 0 {
		return c.counter.Count(head + c.body(a, b))
	}
	return c.counter.Count(head) + body
}

// partition packs the units, in order, into chunks that a fetch without a
// budget of its own (fetch tokens) returns whole: runs whose estimated
// cost (costs, the units' costs, plus a first line) is at most the
// fetch budget, each counted as a fetch returns it when its estimate
// comes near that budget, and cut further where the count is over. A
// unit larger than that alone is a chunk of its own, over budget (it
// comes back in parts). When that makes more chunks than the index can
// list within about a fifth of the budget, it makes that many chunks of
// about equal cost instead (a chunk over the fetch budget comes back
// split into smaller ones). With no store (stored false) nothing can be
// fetched: runs are packed by their estimates alone, and never counted.
func partition(costs []int, budget, fetch int, stored bool, c *chunker) *chunkIndex {
	n := len(costs)
	maxChunks := min(max(2, budget/250), 32)
	total := 0
	for _, x := range costs {
		total += x
	}
	// Room for a chunk, its first line's numbers counted as the largest
	// the index may show; a chunk estimated under near is not counted
	// to see whether it fits.
	room := fetch - 2
	const headEstimate = 64
	near := room * 9 / 10
	ck := &chunkIndex{fetch: fetch, c: c, uncounted: !stored}
	var rs [][2]int
	if total/max(1, room) < maxChunks {
		of := maxChunks
		fits := func(a, b int) bool { return c.size(of, of, a, b) <= room }
		for a := 0; a < n && len(rs) <= maxChunks; {
			b, used := a+1, headEstimate+costs[a]
			for b < n && used+costs[b] <= room {
				used += costs[b]
				b++
			}
			if stored && used > near && b > a+1 && !fits(a, b) {
				// Over by the count: the longest run that fits.
				lo, hi := a+1, b
				for lo+1 < hi {
					if m := (lo + hi) / 2; fits(a, m) {
						lo = m
					} else {
						hi = m
					}
				}
				b = lo
			}
			rs = append(rs, [2]int{a, b})
			a = b
		}
	}
	if len(rs) == 0 || len(rs) > maxChunks || rs[len(rs)-1][1] != n {
		rs = rs[:0]
		start, used := 0, 0
		per := total / maxChunks
		for i, x := range costs {
			if i > start && used+x > per && len(rs) < maxChunks-1 {
				rs = append(rs, [2]int{start, i})
				start, used = i, 0
			}
			used += x
		}
		if n > 0 {
			rs = append(rs, [2]int{start, n})
		}
	}
	ck.ranges = rs
	ck.est = make([]int, len(rs))
	for k, r := range rs {
		ck.est[k] = headEstimate
		for _, x := range costs[r[0]:r[1]] {
			ck.est[k] += x
		}
	}
	return ck
}

// size is the tokens of what fetching chunk k (0-based) whole returns,
// counted once.
func (c *chunkIndex) size(k int) int {
	if c.sizes == nil {
		c.sizes = make([]int, len(c.ranges))
	}
	if c.sizes[k] == 0 {
		r := c.ranges[k]
		c.sizes[k] = c.c.size(k+1, len(c.ranges), r[0], r[1])
	}
	return c.sizes[k]
}

// over reports whether chunk k (0-based) is larger than a fetch returns:
// a chunk estimated well under the fetch budget is not counted.
func (c *chunkIndex) over(k int) bool {
	if c.uncounted || c.est[k] <= c.fetch*9/10 {
		return false
	}
	return c.size(k) > c.fetch
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
	var runs []inband.Run
	for i := a; i < b; {
		j := i
		for j < b && sel[j] == sel[i] {
			j++
		}
		runs = append(runs, inband.Run{A: i + 1, B: j, Level: c.levelWord(sel[i])})
		i = j
	}
	sb.WriteString(inband.Runs(c.unit, runs))
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
//	[chunks] 25 items at the root array, numbered 1–25, in 2 chunks; this response shows 13 of them (2 full, 6 standard, 5 minimal) and leaves out 12:
//	  chunk 1: items 1–24, ≈17,900 tokens; state: 24 open; in this response: items 1–3 standard, item 4 full, items 5–13 minimal, items 14–24 left out
//	  chunk 2: item 25, ≈31,100 tokens, over budget; state: 1 open; in this response: none
//	[/chunks] Get chunk N whole: terse chunk c_0123456789012345 N (no other arguments needed: a fetch returns up to 20,000 tokens); a chunk over budget comes back as smaller chunks, fetched the same way
//
// Every size is the count of what fetching the chunk returns (its first
// line and its units in full); a chunk is over budget when that is more
// than the fetch budget the last line states. An index of chunks that
// were not stored states no sizes: nothing can fetch them.
func (c *chunkIndex) write(sb *strings.Builder, o Options, sel []Level) {
	counts := levelCounts(sel)
	head := inband.Index{Total: len(sel), Unit: c.unit, Label: c.label, Chunks: len(c.ranges),
		Shown: len(sel) - counts[Skip], Levels: c.levels, LeftOut: counts[Skip]}
	if c.levels {
		head.Full, head.Standard, head.Minimal = counts[Full], counts[Standard], counts[Minimal]
	} else {
		head.Cut = counts[Standard] + counts[Minimal]
	}
	sb.WriteString(head.String())
	sb.WriteByte('\n')
	over := false
	for k, r := range c.ranges {
		line := inband.IndexChunk{N: k + 1, Span: c.span(r[0], r[1])}
		if !c.uncounted {
			line.Tokens = c.size(k)
			line.Over = line.Tokens > c.fetch
			over = over || line.Over
		}
		if c.sums == nil {
			c.sums = make([]string, len(c.ranges))
			for j, q := range c.ranges {
				c.sums[j] = c.summary(q[0], q[1])
			}
		}
		line.Summary = c.sums[k]
		var runs strings.Builder
		c.runs(&runs, sel, r[0], r[1])
		line.Runs = runs.String()
		sb.WriteString(line.String())
		sb.WriteByte('\n')
	}
	foot := inband.IndexFoot{How: inband.NothingStored}
	switch {
	case c.handle != "":
		foot = inband.IndexFoot{How: inband.FetchWhole, Call: fetch(o, c.handle, "N"), Fetch: c.fetch, Over: over}
	case c.failed:
		foot = inband.IndexFoot{How: inband.StoreDown, RawHint: o.RawHint}
	}
	sb.WriteString(foot.String())
	sb.WriteByte('\n')
}

// list names every chunk's range, for a hint without the index: "chunk
// 1: items 1–24, chunk 2: item 25 (over budget)".
func (c *chunkIndex) list() string {
	cs := make([]inband.ChunkRange, len(c.ranges))
	for k, r := range c.ranges {
		cs[k] = inband.ChunkRange{N: k + 1, Span: c.span(r[0], r[1]), Over: c.over(k)}
	}
	return inband.ChunkList(cs)
}

func fetch(o Options, handle, n string) string {
	return strings.NewReplacer("{handle}", handle, "{n}", n).Replace(o.Fetch)
}
