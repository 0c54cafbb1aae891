package inband

import (
	"errors"
	"github.com/terse-dev/terse/internal/lazyre"
	"iter"
	"strconv"
	"strings"
)

// IsNote reports whether line opens a result's notes: a "> [" note or a
// chunk index.
func IsNote(line string) bool {
	return strings.HasPrefix(line, "> [") || strings.HasPrefix(line, "[chunks] ")
}

// IsGap reports whether line is a gap marker ("[… N lines left out: …]").
func IsGap(line string) bool { return strings.HasPrefix(line, "[… ") }

// Notes yields the offsets in text of the lines after the first that
// could open its notes ([IsNote]), in order. A result is a document, then
// its notes; the document itself may hold such a line, so a reader that
// can check the document (decode it) tries each offset in turn, and one
// that cannot takes the first.
func Notes(text string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for k := 0; k < len(text); {
			if k > 0 && IsNote(text[k:]) && !yield(k) {
				return
			}
			i := strings.IndexByte(text[k:], '\n')
			if i < 0 {
				return
			}
			k += i + 1
		}
	}
}

// Split cuts text at its first note line ([Notes]): the document before
// it, without its line break, and the notes from it on. A text with no
// note line is all document; one that opens with a note has no document.
func Split(text string) (doc, notes string) {
	if IsNote(text) {
		return "", text
	}
	for k := range Notes(text) {
		return text[:k-1], text[k:]
	}
	return text, ""
}

// Family returns the family of the note text opens with ("ref" for
// "> [ref: …"), or "" when text does not open with a note.
func Family(text string) string {
	rest, ok := strings.CutPrefix(text, "> [")
	if !ok {
		return ""
	}
	i := strings.IndexAny(rest, ":]\n")
	if i < 0 || rest[i] != ':' {
		return ""
	}
	return rest[:i]
}

// ErrUnknown is returned by [Parse] for a line that is no in-band line.
var ErrUnknown = errors.New("inband: not an in-band line")

var (
	reNearChange = lazyre.New(`^([^:,\]]+): `)
	reLevels     = lazyre.New(`^> \[levels: full = as in the source;(?: standard = (.+?);)?(?: minimal = (.+?);)? missing or blank fields of a shortened item were left out\]$`)
	reLeftOut    = lazyre.New(`^> \[left out of (.+?): ((?:\w+) [\d–, ]+) \((\d+) of (\d+) (\w+)\)\]$`)
	reDetail     = lazyre.New(`^> \[detail (.+?): (?:(\w+ [\d–, ]+) standard \((.*?)\))?(?:(?:; )?(\w+ [\d–, ]+) minimal \((.*?)\))?(; the rest full)?\]$`)
	reChunkHead  = lazyre.New(`^> \[chunk (\d+) of (\d+) of (\S+): (.+), in full( \(join the parts in order\))?\]$`)
	reSplitShort = lazyre.New(`^> \[chunk (\d+) of (\d+) of (\S+): ([\d,]+) tokens in full, over the budget of ([\d,]+), so (.+)\]$`)
	reSplitLong  = lazyre.New(`^> \[chunk (\d+) of (\d+) of (\S+): (.+), ([\d,]+) tokens in full: over the budget of ([\d,]+), so (.+); (?:a budget of at least [\d,]+ gets it in one piece|no fetch returns more than ([\d,]+) tokens, so it comes back only in pieces)\]$`)
	reHow        = lazyre.New(`^(?:split into (\d+) chunks|split into (\d+) parts to join in order|its compact JSON is split into (\d+) parts to join in order|its text is split into (\d+) parts to join in order)$`)
	reSubIndex   = lazyre.New(`^\[chunks\] (\d+) (chunks|parts):$`)
	reSubChunk   = lazyre.New(`^  chunk (\d+): (.+), ≈([\d,]+) tokens(, over budget)?$`)
	reSubFoot    = lazyre.New(`^\[/chunks\] Get chunk N: (.+) \(no other arguments needed\)$`)
	reIndex      = lazyre.New(`^\[chunks\] (\d+) (\w+?)s?(?: (?:at|in) (.+?))?, numbered 1(?:–\d+)?, in (\d+) chunks?; this response shows (\d+) of them(?: \((.+)\))? and leaves out (\d+):$`)
	reIndexChunk = lazyre.New(`^  chunk (\d+): (.+?)(?:, ≈([\d,]+) tokens)?(, over budget)?(?:; (.+?))?; in this response: (.+)$`)
	reFootFetch  = lazyre.New(`^\[/chunks\] Get chunk N whole: (.+) \(no other arguments needed: a fetch returns up to ([\d,]+) tokens\)(; a chunk over budget comes back as smaller chunks, fetched the same way)?$`)
	reFootDown   = lazyre.New(`^\[/chunks\] The rest is not retrievable right now \(the chunk store is unavailable\); (.*)\.$`)
	reGap        = lazyre.New(`^\[… (\d+) lines? left out: lines? (\d+)(?:–(\d+))?(?:, (.+))? …\]$`)
	reElided     = lazyre.New(`^(?:all (\d+) (\w+) left out, too large for this budget|(\d+) of (\d+) (\w+) (left out|shortened|cut)(?:, (\d+) (shortened|cut))?)`)
	reOneChunk   = lazyre.New(`^: get (.+?)( whole)? with: (.+?)(, over budget: it comes back as smaller chunks, fetched the same way)?; a fetch returns up to ([\d,]+) tokens\]$`)
	reByChunk    = lazyre.New(`^: get chunk N of (\d+) whole with: (.+?); (chunk 1: .+); a fetch returns up to ([\d,]+) tokens\]$`)
	reBudget     = lazyre.New(`^> \[budget raised from (\d+) to (\d+) tokens: the least that declares what is left out\]$`)
	reJSONDoc    = lazyre.New(`^> \[JSON document (\d+) of (\d+)\]$`)
)

var (
	reElidedRuns = lazyre.New(`^> \[elided: (.+), (\d+) runs? \((\d+) of (\d+) lines kept\); get chunk N whole: (.+)\]$`)
	reStale      = lazyre.New(`^> \[stale: result of (.+?) left out; (.+) changed the file since; read it again for its current content\]$`)
	reTrimmed    = lazyre.New(`^> \[trimmed: result of (.+); (?:(call it again to see it)|not recoverable: the call may have side effects, do not repeat it)\]$`)
	reApplied    = lazyre.New(`^> \[applied: (\d+) bytes of (.+?) left out of (.+), which succeeded; read the file for its current content\]$`)
	reElidedRes  = lazyre.New("^> \\[elided: result of (.+), (\\d+) bytes, left out (\\d+) requests later; (?:call it again to see it|`(.+)` prints it)\\]$")
	reToolCall   = lazyre.New(`^(.+?) call (\S*)(?: \((.+)\))?$`)
	reDropped    = lazyre.New(`^> \[trimmed: (\d+) earlier tool calls and their results left out \((.+?)(, …)?\); (?:call a tool again to see its result|(calls that only read can be made again, the others' results are not recoverable))\]$`)
	reFolded     = lazyre.New(`^\[… (\d+) lines left out: lines (\d+)–(\d+)(?: \((.+)\))?; chunk (\d+) …\]$`)
)

// parseToolCall reads a call as [ToolCall] writes it.
func parseToolCall(s string) (ToolCall, bool) {
	m := reToolCall.FindStringSubmatch(s)
	if m == nil {
		return ToolCall{}, false
	}
	return ToolCall{Tool: m[1], ID: m[2], Args: m[3]}, true
}

// parseCalls reads the calls a line's pattern found in m[1:n+1].
func parseCalls(m []string, n int) ([]ToolCall, bool) {
	if m == nil {
		return nil, false
	}
	cs := make([]ToolCall, n)
	for i := range cs {
		var ok bool
		if cs[i], ok = parseToolCall(m[i+1]); !ok {
			return nil, false
		}
	}
	return cs, true
}

func parseDropped(line string) (Line, bool) {
	m := reDropped.FindStringSubmatch(line)
	if m == nil {
		return nil, false
	}
	x := Dropped{N: atoi(m[1]), More: m[3] != "", Writes: m[4] != ""}
	for _, p := range strings.Split(m[2], ", ") {
		i := strings.LastIndex(p, " ×")
		if i < 0 {
			return nil, false
		}
		x.Tools = append(x.Tools, ToolCount{p[:i], atoi(p[i+len(" ×"):])})
	}
	return x, true
}

// Parse reads one in-band line back into the value that writes it: the
// result's String is line again. A line that is no in-band line, or not
// as terse writes it, returns an error.
func Parse(line string) (Line, error) {
	v, ok := parse(line)
	if !ok || v.String() != line {
		return nil, ErrUnknown
	}
	return v, nil
}

func parse(line string) (Line, bool) {
	if strings.HasPrefix(line, "> [") {
		return parseNote(line)
	}
	return parseIndexLine(line)
}

// parseNote reads a "> [family: payload]" note.
func parseNote(line string) (Line, bool) {
	switch {
	case line == brake:
		return Brake{}, true
	case strings.HasPrefix(line, "> [id: ") && strings.HasSuffix(line, "]"):
		return ID{line[len("> [id: ") : len(line)-1]}, true
	case len(line) >= len("> [ref: ")+len(refLinesTail) && strings.HasPrefix(line, "> [ref: ") && strings.HasSuffix(line, refLinesTail):
		return parseRefLines(line[len("> [ref: ") : len(line)-len(refLinesTail)])
	case strings.HasPrefix(line, "> [ref: ") && strings.HasSuffix(line, ", byte-identical]"):
		return Ref{line[len("> [ref: ") : len(line)-len(", byte-identical]")]}, true
	case strings.HasPrefix(line, "> [near-ref: ") && strings.HasSuffix(line, "]"):
		return parseNearRef(line[len("> [near-ref: ") : len(line)-1])
	case strings.HasPrefix(line, "> [filtered: ") && strings.HasSuffix(line, "]"):
		return Filtered{strings.Split(line[len("> [filtered: "):len(line)-1], "; ")}, true
	case strings.HasPrefix(line, "> [filter failed: ") && strings.HasSuffix(line, "; output is unfiltered]"):
		return FilterFailed{line[len("> [filter failed: ") : len(line)-len("; output is unfiltered]")]}, true
	case strings.HasPrefix(line, "> [levels: full = the file's whole diff;"):
		return DiffLevels{strings.Contains(line, " standard = "+diffStandard+";"), strings.Contains(line, " minimal = "+diffMinimal+";")}, true
	case strings.HasPrefix(line, "> [levels: "):
		m := reLevels.FindStringSubmatch(line)
		if m == nil {
			return nil, false
		}
		return Levels{m[1], m[2]}, true
	case strings.HasPrefix(line, "> [left out of "):
		m := reLeftOut.FindStringSubmatch(line)
		if m == nil {
			return nil, false
		}
		return LeftOut{Label: m[1], Names: m[2], N: atoi(m[3]), Of: atoi(m[4]), Unit: m[5]}, true
	case strings.HasPrefix(line, "> [detail "):
		m := reDetail.FindStringSubmatch(line)
		if m == nil {
			return nil, false
		}
		return Detail{Label: m[1], Standard: m[2], StandardNote: m[3], Minimal: m[4], MinimalNote: m[5], RestFull: m[6] != ""}, true
	case strings.HasPrefix(line, "> [chunk "):
		return parseChunkLine(line)
	case strings.HasPrefix(line, "> [budget raised "):
		m := reBudget.FindStringSubmatch(line)
		if m == nil {
			return nil, false
		}
		return BudgetRaised{atoi(m[1]), atoi(m[2])}, true
	case strings.HasPrefix(line, "> [JSON document "):
		m := reJSONDoc.FindStringSubmatch(line)
		if m == nil {
			return nil, false
		}
		return JSONDoc{atoi(m[1]), atoi(m[2])}, true
	case strings.HasPrefix(line, "> [lossless: ") || strings.HasPrefix(line, "> [display: "):
		return parseShaping(line)
	case strings.HasPrefix(line, ElidedResultHead) && reElidedRes.MatchString(line):
		m := reElidedRes.FindStringSubmatch(line)
		c, ok := parseToolCall(m[1])
		return ElidedResult{Call: c, Size: atoi(m[2]), Age: atoi(m[3]), Fetch: m[4]}, ok
	case strings.HasPrefix(line, ElidedHead):
		m := reElidedRuns.FindStringSubmatch(line)
		if m == nil {
			return nil, false
		}
		return ElidedRuns{What: m[1], Runs: atoi(m[2]), Kept: atoi(m[3]), Total: atoi(m[4]), Call: m[5]}, true
	case strings.HasPrefix(line, "> [stale: "):
		m := reStale.FindStringSubmatch(line)
		cs, ok := parseCalls(m, 2)
		if !ok {
			return nil, false
		}
		return Stale{cs[0], cs[1]}, true
	case strings.HasPrefix(line, AppliedHead):
		m := reApplied.FindStringSubmatch(line)
		if m == nil {
			return nil, false
		}
		c, ok := parseToolCall(m[3])
		return Applied{N: atoi(m[1]), Field: m[2], Call: c}, ok
	case strings.HasPrefix(line, TrimmedHead):
		m := reTrimmed.FindStringSubmatch(line)
		cs, ok := parseCalls(m, 1)
		if !ok {
			return nil, false
		}
		return Trimmed{cs[0], m[2] != ""}, true
	case strings.HasPrefix(line, "> [trimmed: "):
		return parseDropped(line)
	case len(line) >= len("> [the result of ")+len(" follows, as sent]") && strings.HasPrefix(line, "> [the result of ") && strings.HasSuffix(line, " follows, as sent]"):
		c, ok := parseToolCall(line[len("> [the result of ") : len(line)-len(" follows, as sent]")])
		return Resent{c}, ok
	case strings.HasPrefix(line, "> ["):
		return parseOverflow(line[len("> ["):])
	}
	return nil, false
}

// parseIndexLine reads a line of a chunk index, or a marker inside a
// kept text.
func parseIndexLine(line string) (Line, bool) {
	switch {
	case strings.HasPrefix(line, "[chunks] "):
		if m := reSubIndex.FindStringSubmatch(line); m != nil {
			return SubIndex{atoi(m[1]), m[2] == "parts"}, true
		}
		return parseIndex(line)
	case strings.HasPrefix(line, "  chunk "):
		if m := reIndexChunk.FindStringSubmatch(line); m != nil {
			return IndexChunk{N: atoi(m[1]), Span: m[2], Tokens: atoi(m[3]), Over: m[4] != "", Summary: m[5], Runs: m[6]}, true
		}
		if m := reSubChunk.FindStringSubmatch(line); m != nil {
			return SubChunk{N: atoi(m[1]), Span: m[2], Tokens: atoi(m[3]), Over: m[4] != ""}, true
		}
	case strings.HasPrefix(line, "[/chunks] "):
		if m := reFootFetch.FindStringSubmatch(line); m != nil {
			return IndexFoot{How: FetchWhole, Call: m[1], Fetch: atoi(m[2]), Over: m[3] != ""}, true
		}
		if m := reFootDown.FindStringSubmatch(line); m != nil {
			return IndexFoot{How: StoreDown, RawHint: m[1]}, true
		}
		if m := reSubFoot.FindStringSubmatch(line); m != nil {
			return SubFoot{m[1]}, true
		}
		return IndexFoot{How: NothingStored}, true
	case strings.HasPrefix(line, repeatOpen):
		x, ok := ParseRepeat(line)
		return x, ok
	case IsGap(line) && strings.HasSuffix(line, " …]") && strings.Contains(line, "; chunk "):
		m := reFolded.FindStringSubmatch(line)
		if m == nil {
			return nil, false
		}
		return Folded{First: atoi(m[2]), Last: atoi(m[3]), What: m[4], Chunk: atoi(m[5])}, true
	case IsGap(line):
		m := reGap.FindStringSubmatch(line)
		if m == nil {
			return nil, false
		}
		g := Gap{First: atoi(m[2]), Extra: m[4]}
		g.Last = g.First
		if m[3] != "" {
			g.Last = atoi(m[3])
		}
		return g, true
	}
	return nil, false
}

// parseRefLines reads "ID, lines A–B" of a RefLines line.
func parseRefLines(s string) (Line, bool) {
	i := strings.LastIndex(s, ", lines ")
	if i < 0 {
		return nil, false
	}
	a, b, ok := strings.Cut(s[i+len(", lines "):], "–")
	from, to := atoi(a), atoi(b)
	if !ok || from < 1 || to < from {
		return nil, false
	}
	return RefLines{ID: s[:i], From: from, To: to}, true
}

func parseNearRef(s string) (Line, bool) {
	id, rest, _ := strings.Cut(s, ", ")
	x := NearRef{ID: id}
	for rest != "" {
		m := reNearChange.FindStringSubmatch(rest)
		if m == nil {
			return nil, false
		}
		c := Change{Path: m[1]}
		rest = rest[len(m[0]):]
		var ok bool
		if c.Old, rest, ok = scalar(rest, "→"); !ok {
			return nil, false
		}
		rest = strings.TrimPrefix(rest, "→")
		if c.New, rest, ok = scalar(rest, ", "); !ok {
			return nil, false
		}
		x.Changes = append(x.Changes, c)
		rest = strings.TrimPrefix(rest, ", ")
	}
	return x, true
}

// scalar reads a near-ref value: a JSON string, or bare text up to end.
func scalar(s, end string) (v, rest string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				return s[:i+1], s[i+1:], true
			}
		}
		return "", "", false
	}
	i := strings.Index(s, end)
	if i < 0 {
		if end == "→" {
			return "", "", false
		}
		return s, "", true
	}
	return s[:i], s[i:], true
}

func parseChunkLine(line string) (Line, bool) {
	if m := reSplitLong.FindStringSubmatch(line); m != nil {
		x := SplitHead{N: atoi(m[1]), Of: atoi(m[2]), Handle: m[3], Intro: m[4], Need: atoi(m[5]), Budget: atoi(m[6]), MaxFetch: atoi(m[8])}
		if !parseHow(&x, m[7]) {
			return nil, false
		}
		return x, true
	}
	if m := reSplitShort.FindStringSubmatch(line); m != nil {
		x := SplitHead{N: atoi(m[1]), Of: atoi(m[2]), Handle: m[3], Need: atoi(m[4]), Budget: atoi(m[5])}
		if !parseHow(&x, m[6]) {
			return nil, false
		}
		return x, true
	}
	if m := reChunkHead.FindStringSubmatch(line); m != nil {
		return ChunkHead{N: atoi(m[1]), Of: atoi(m[2]), Handle: m[3], Where: m[4], Parts: m[5] != ""}, true
	}
	return nil, false
}

func parseHow(x *SplitHead, s string) bool {
	m := reHow.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	for i, p := range []Pieces{Chunks, Parts, JSONParts, TextParts} {
		if m[i+1] != "" {
			x.How, x.K = p, atoi(m[i+1])
		}
	}
	return true
}

func parseIndex(line string) (Line, bool) {
	m := reIndex.FindStringSubmatch(line)
	if m == nil {
		return nil, false
	}
	x := Index{Total: atoi(m[1]), Unit: m[2] + "s", Label: m[3], Chunks: atoi(m[4]), Shown: atoi(m[5]), LeftOut: atoi(m[7])}
	if p := m[6]; p != "" {
		if n, ok := strings.CutSuffix(p, " cut"); ok && !strings.Contains(n, " ") {
			x.Cut = atoi(n)
		} else {
			x.Levels = true
			for _, part := range strings.Split(p, ", ") {
				n, level, _ := strings.Cut(part, " ")
				switch level {
				case "full":
					x.Full = atoi(n)
				case "standard":
					x.Standard = atoi(n)
				case "minimal":
					x.Minimal = atoi(n)
				default:
					return nil, false
				}
			}
		}
	}
	return x, true
}

func parseOverflow(s string) (Line, bool) {
	m := reElided.FindStringSubmatch(s)
	if m == nil {
		return nil, false
	}
	var w Elided
	if m[1] != "" {
		w = Elided{Skipped: atoi(m[1]), Total: atoi(m[1]), Unit: m[2]}
	} else {
		w = Elided{Total: atoi(m[4]), Unit: m[5]}
		switch {
		case m[6] == "left out":
			w.Skipped = atoi(m[3])
			if m[7] != "" {
				w.Short, w.Cut = atoi(m[7]), m[8] == "cut"
			}
		case m[7] != "":
			return nil, false
		default:
			w.Short, w.Cut = atoi(m[3]), m[6] == "cut"
		}
	}
	rest := s[len(m[0]):]
	x := Overflow{What: w}
	switch {
	case rest == ": not stored; re-run with a larger budget to see them]":
		x.How = NotStored
	case strings.HasPrefix(rest, ": not retrievable right now (the chunk store is unavailable); ") && strings.HasSuffix(rest, "]"):
		x.How, x.RawHint = Unavailable, rest[len(": not retrievable right now (the chunk store is unavailable); "):len(rest)-1]
	default:
		if c := reByChunk.FindStringSubmatch(rest); c != nil {
			x.How, x.Chunks, x.Call, x.List, x.Fetch = ByChunk, atoi(c[1]), c[2], c[3], atoi(c[4])
			return x, true
		}
		c := reOneChunk.FindStringSubmatch(rest)
		if c == nil || (c[2] != "") == (c[4] != "") {
			return nil, false
		}
		x.How, x.Get, x.Call, x.Over, x.Fetch = OneChunk, c[1], c[3], c[4] != "", atoi(c[5])
	}
	return x, true
}

// ParseRuns reads what a chunk index line says a response holds of the
// chunk's units a–b (1-based, inclusive), as [Runs] writes it.
func ParseRuns(s string, a, b int) ([]Run, error) {
	switch {
	case s == "none":
		return []Run{{a, b, "left out"}}, nil
	case strings.HasPrefix(s, "all "):
		return []Run{{a, b, strings.TrimPrefix(s, "all ")}}, nil
	}
	var runs []Run
	next := a
	for _, p := range strings.Split(s, ", ") {
		m := reRun.FindStringSubmatch(p)
		if m == nil {
			return nil, errors.New("inband: cannot read the run " + strconv.Quote(p))
		}
		x := Run{A: atoi(m[2]), Level: m[4]}
		x.B = x.A
		if m[3] != "" {
			x.B = atoi(m[3])
		}
		if x.A != next || x.B < x.A {
			return nil, errors.New("inband: runs out of order or with gaps at " + strconv.Quote(p))
		}
		next = x.B + 1
		runs = append(runs, x)
	}
	if next != b+1 {
		return nil, errors.New("inband: runs " + strconv.Quote(s) + " do not cover their chunk")
	}
	return runs, nil
}

var reRun = lazyre.New(`^(\w+?)s? (\d+)(?:–(\d+))? (full|standard|minimal|shown|cut|left out)$`)

// Number reads a count as the in-band text writes it ("12,345").
func Number(s string) int { return atoi(s) }

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n
}

var (
	reSpan = lazyre.New(`^(\w+?)s? ([\d,]+)(?:–([\d,]+))?`)
	reCut  = lazyre.New(`…\[\+\d+ chars\]$`)
)

// ParseSpan reads the range a span opens with ("items 5–8 of 30",
// "item 7", "bytes 1–4,000", "files 1–2 (lines 1–80)"): the unit in the
// singular and the first and last numbers (1-based, inclusive).
func ParseSpan(span string) (unit string, a, b int, ok bool) {
	m := reSpan.FindStringSubmatch(span)
	if m == nil {
		return "", 0, 0, false
	}
	a = atoi(m[2])
	b = a
	if m[3] != "" {
		b = atoi(m[3])
	}
	return m[1], a, b, true
}

// ParseChunkList reads the chunks' ranges an overflow hint lists
// ([ChunkList]).
func ParseChunkList(s string) ([]ChunkRange, error) {
	var cs []ChunkRange
	for _, p := range strings.Split(s, ", chunk ") {
		p = strings.TrimPrefix(p, "chunk ")
		n, span, ok := strings.Cut(p, ": ")
		if !ok {
			return nil, errors.New("inband: cannot read the chunk range " + strconv.Quote(p))
		}
		c := ChunkRange{N: atoi(n), Span: span}
		c.Span, c.Over = strings.CutSuffix(span, " (over budget)")
		if _, _, _, ok := ParseSpan(c.Span); !ok || strconv.Itoa(c.N) != n {
			return nil, errors.New("inband: cannot read the chunk range " + strconv.Quote(p))
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// IsCut reports whether s ends with the marker of a shortened string
// ([Cut]).
func IsCut(s string) bool { return reCut.MatchString(s) }
