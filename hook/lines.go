package hook

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// Shown is an earlier result the model still has, as it was shown: the
// text of its tool_result in the transcript (what the model read, line
// for line), and the name a reference to it carries ([RefName]).
type Shown struct {
	Name string
	Text string
}

// Bounds of [Transcript.Shown]: it reads only the transcript's last
// shownWindow bytes, and gives the results of at most maxShown entries
// of the call's context, the latest, of at most maxParsed entries read.
const (
	shownWindow = 4 << 20
	maxShown    = 8
	maxParsed   = 4 * maxShown
	// A run is at least minRunLines lines, and a line reference at
	// least minRefBytes long may stand for at most a quarter of the
	// run's bytes (dedup's rule): runs shorter than minRunBytes are not
	// looked for.
	minRunLines = 4
	minRefBytes = len("> [ref: , lines 1–4 of its result, byte-identical]")
	minRunBytes = 4 * minRefBytes
)

// LineSlot reports whether slot s of tool's output may have runs of
// lines replaced by line references to earlier results: Bash and
// BashOutput stdout, Grep content, WebFetch result, the text blocks of
// an MCP tool (never a list of names, never a file read).
func LineSlot(tool string, s Slot) bool {
	if IsMCP(tool) {
		return s.Name == "text"
	}
	switch tool {
	case "Bash", "BashOutput":
		return s.Name == "stdout"
	case "Grep":
		return s.Name == "content" && !s.Lines
	case "WebFetch":
		return s.Name == "result"
	}
	return false
}

// Shown returns the earlier results the model still has in the context
// of the current call exclude (as [Transcript.Find] tells them: the
// context of the entry that made the call, after the last compaction
// boundary, not a call on a path written since, not the call exclude)
// that hold a run of at least four lines of one of texts, in the order
// the model was shown them. A result counts only when it was shown as
// one text (a content string, or a single text block); its text is the
// one shown, whatever the tool's output was.
//
// The work is bounded: only the transcript's last 4 MB are searched, in
// one pass over the JSON text for runs of the lines of texts as Claude
// Code writes them, and only the latest 8 entries of the call's context
// holding one (of at most 32 read) are used.
func (t *Transcript) Shown(agentID, exclude string, texts []string) []Shown {
	if t == nil || exclude == "" || !slices.ContainsFunc(texts, mayRun) {
		return nil
	}
	cur, ok := t.call(exclude, t.data)
	if !ok || agentID != "" && cur.agentID != agentID {
		return nil
	}
	set := newLineSet(texts)
	if set.empty() {
		return nil
	}
	data := t.data
	from := max(0, len(data)-shownWindow)
	if from > 0 {
		// From the first whole line of the window.
		i := bytes.IndexByte(data[from:], '\n')
		if i < 0 {
			return nil
		}
		from += i + 1
	}
	var spans [][2]int // the transcript lines holding a run, in order
	set.runs(data[from:], func(at int) {
		start, end := lineAt(data, from+at)
		if n := len(spans); n > 0 && spans[n-1][0] == start {
			return
		}
		spans = append(spans, [2]int{start, end})
	})
	// The latest maxShown entries of the call's own context, of at most
	// maxParsed parsed (another sub-agent's entries may hold runs too).
	type held struct {
		sp [2]int
		e  entry
	}
	var keep []held
	for i, parsed := len(spans)-1, 0; i >= 0 && len(keep) < maxShown && parsed < maxParsed; i-- {
		parsed++
		if e, ok := parseEntry(data[spans[i][0]:spans[i][1]]); ok && e.sidechain == cur.sidechain && e.agentID == cur.agentID {
			keep = append(keep, held{spans[i], e})
		}
	}
	slices.Reverse(keep)
	var out []Shown
	for _, h := range keep {
		sp, e := h.sp, h.e
		for _, r := range e.results {
			if r.id == "" || r.id == exclude || r.text == "" {
				continue
			}
			c, ok := t.call(r.id, data[:sp[0]])
			if !ok || t.writtenSince(c.input, data[sp[1]:]) {
				continue
			}
			out = append(out, Shown{Name: RefName(c.name, Ref{ID: r.id, Input: c.input}), Text: r.text})
		}
	}
	return out
}

// mayRun reports whether text is long enough to hold a run.
func mayRun(text string) bool {
	return len(text) >= minRunBytes && strings.Count(text, "\n") >= minRunLines-1
}

// lineSet holds the lines of texts as a transcript writes them (JSON
// string content, escaped as Claude Code escapes it), to find runs of
// them in the transcript's bytes without parsing it.
type lineSet struct {
	lines map[string]struct{}
	// quick has a bit set for each line's length and end bytes: most
	// pieces of a transcript are told apart from every line by it alone.
	quick [1 << 10]uint64
}

func newLineSet(texts []string) *lineSet {
	s := &lineSet{lines: make(map[string]struct{})}
	var b []byte
	for _, text := range texts {
		for line := range strings.SplitSeq(text, "\n") {
			b = appendEscaped(b[:0], line, math.MaxInt)
			if _, ok := s.lines[string(b)]; !ok {
				s.lines[string(b)] = struct{}{}
				k := quickKey(b)
				s.quick[k>>6] |= 1 << (k & 63)
			}
		}
	}
	return s
}

func (s *lineSet) empty() bool { return len(s.lines) == 0 }

func quickKey(p []byte) uint {
	k := uint(len(p)) * 0x9e37
	if len(p) > 0 {
		k += uint(p[0])*31 + uint(p[len(p)-1])
	}
	return k & (1<<16 - 1)
}

func (s *lineSet) has(p []byte) bool {
	k := quickKey(p)
	if s.quick[k>>6]&(1<<(k&63)) == 0 {
		return false
	}
	_, ok := s.lines[string(p)]
	return ok
}

// runs calls found with an offset in data inside each run of at least
// minRunLines consecutive lines of the set, of minRunBytes bytes or
// more, in one of data's JSON strings. It reads data as JSON text
// (JSONL): a string's pieces are the text between its quotes and its
// line breaks (the escape \n), so a text's first and last lines are
// pieces too, and a run never spans two strings. It skips what is never
// a result the model was shown: the rest of a line from its
// toolUseResult member on (the tool's output object, which Claude Code
// writes after the message), and lines whose type is assistant or
// progress. A line cut short may throw the reading of strings off until
// the next such skip: that only hides runs, it never shows one that is
// not there (Shown reads each entry it finds in full).
func (s *lineSet) runs(data []byte, found func(at int)) {
	run, runBytes, told := 0, 0, false
	piece := func(p []byte, at int) {
		if !s.has(p) {
			run, runBytes, told = 0, 0, false
			return
		}
		run++
		runBytes += len(p) + 1
		if !told && run >= minRunLines && runBytes >= minRunBytes {
			found(at)
			told = true
		}
	}
	inString := false
	start := 0 // where the current piece starts
	for i := 0; i < len(data); {
		j := nextSpecial(data, i)
		if j == len(data) {
			break
		}
		if data[j] == '\\' {
			if inString && j+1 < len(data) && data[j+1] == 'n' {
				piece(data[start:j], j)
				start = j + 2
			}
			i = j + 2
			continue
		}
		i = j + 1
		if !inString {
			inString, start = true, i
			continue
		}
		inString = false
		piece(data[start:j], j)
		run, runBytes, told = 0, 0, false
		if i < len(data) && data[i] == ':' && skipsLine(data[start:j], data[i+1:]) {
			k := bytes.IndexByte(data[i:], '\n')
			if k < 0 {
				break
			}
			i += k + 1
		}
	}
}

// skipsLine reports whether a transcript line's member key, whose value
// starts value, ends what the model may have been shown in it.
func skipsLine(key, value []byte) bool {
	switch string(key) {
	case "toolUseResult":
		return true
	case "type":
		return bytes.HasPrefix(value, []byte(`"assistant"`)) || bytes.HasPrefix(value, []byte(`"progress"`))
	}
	return false
}

// nextSpecial returns the index of the first backslash or quote in
// b[i:], or len(b): eight bytes at a time.
func nextSpecial(b []byte, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		bs, q := x^('\\'*lo), x^('"'*lo)
		// The lowest byte flagged is the first zero byte of bs or q.
		if t := ((bs-lo)&^bs | (q-lo)&^q) & hi; t != 0 {
			return i + bits.TrailingZeros64(t)>>3
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '\\' || c == '"' {
			return i
		}
	}
	return len(b)
}
