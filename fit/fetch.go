package fit

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// MinBudget is the smallest budget a chunk is fetched with: a smaller
// one (even 10) is raised to it, so that a chunk split into smaller ones
// can list them with their handle. (A fit keeps its budget; when not even
// the overflow hint fits, the hint alone is returned, so that nothing is
// left out without a handle.)
const MinBudget = 200

// ChunkResult is one fetched chunk.
type ChunkResult struct {
	// Text is what the model reads: one line saying what the chunk is,
	// then either the chunk in full or, when it is over the budget, an
	// index of the smaller chunks it was split into.
	Text string
	// Whole reports that Text holds the chunk in full.
	Whole bool
	// Doc is, for a JSON chunk returned whole, the source document with
	// its item array (or object) cut to the chunk's items (members); the
	// zero Value otherwise. Text shows the chunk's items alone (an array
	// or object); a caller that must answer with structured content can
	// return Doc.
	Doc tree.Value
	// Tokens is the size of Text by the counter.
	Tokens int
}

// Chunk returns the text of chunk n (1-based) of the view stored under
// handle: [FetchChunk] without the details.
func Chunk(ctx context.Context, handle string, n int, opts *Options) (string, error) {
	r, err := FetchChunk(ctx, handle, n, opts)
	return r.Text, err
}

// FetchChunk returns chunk n (1-based) of the view stored under handle,
// within opts.Budget (zero means opts.FetchBudget, what a chunk index
// says a fetch gets; at least MinBudget): in
// full when it fits, else split into smaller chunks that each have a
// handle, listed with their ranges (a single unit too large for the
// budget is split into byte ranges of its text, to be joined in order).
// Fetching every chunk, recursively, gives back the whole source.
//
// opts supplies the store, counter, formats, fetch template and scope: a
// handle minted in another scope gives a [*ScopeError], an unknown or
// expired one an [*ExpiredError], a store that fails or does not answer
// within opts.StoreTimeout a [*StoreError].
func FetchChunk(ctx context.Context, handle string, n int, opts *Options) (ChunkResult, error) {
	o := opts.normalized()
	if o.Store == nil {
		return ChunkResult{}, &Error{"no store configured"}
	}
	if opts == nil || opts.Budget <= 0 {
		o.Budget = o.FetchBudget
	}
	o.Budget = max(o.Budget, MinBudget)
	h, payload, err := get(ctx, o, handle)
	if err != nil {
		return ChunkResult{}, err
	}
	if n < 1 || n > len(h.Chunks) {
		return ChunkResult{}, &ChunkRangeError{handle, n, len(h.Chunks)}
	}
	src, err := newSource(h, payload, o)
	if err != nil {
		return ChunkResult{}, &ExpiredError{handle}
	}
	sp := h.Chunks[n-1]
	if !src.valid(sp) {
		return ChunkResult{}, &ExpiredError{handle}
	}
	var whole string
	var doc tree.Value
	if sp.cut() {
		whole = partHead(n, len(h.Chunks), handle, src.partWhere(sp)) + src.unitText(sp.A)[sp.Off:sp.End]
	} else {
		var body string
		body, doc = src.render(sp.A, sp.B)
		whole = wholeHead(n, len(h.Chunks), handle, src.where(sp.A, sp.B)) + body
	}
	if fitsQuick(o, []byte(whole)) {
		return ChunkResult{Text: whole, Whole: true, Doc: doc, Tokens: o.Counter.Count(whole)}, nil
	}
	need := o.Counter.Count(whole)
	text, err := src.split(ctx, h, handle, n, sp, need)
	if err != nil {
		return ChunkResult{}, err
	}
	return ChunkResult{Text: text, Tokens: o.Counter.Count(text)}, nil
}

// partHead is the first line of a byte range of one unit's text fetched
// whole.
func partHead(n, of int, handle, where string) string {
	return inband.ChunkHead{N: n, Of: of, Handle: handle, Where: where, Parts: true}.String() + "\n"
}

// source is a stored payload, cut into its units.
type source struct {
	o     Options
	h     header
	root  tree.Value
	toks  []string
	items []tree.Value  // array mode
	mems  []tree.Member // members mode
	lines []string      // text and diff
	texts map[int]string
}

func newSource(h header, payload []byte, o Options) (*source, error) {
	s := &source{o: o, h: h, texts: map[int]string{}}
	if h.Kind != "json" {
		s.lines = splitLines(string(payload))
		if h.Kind == "diff" && len(h.Files) != h.Total || h.Kind == "text" && len(s.lines) != h.Total {
			return nil, &Error{"stored text does not match its header"}
		}
		for _, f := range h.Files {
			if f[0] < 0 || f[1] < f[0] || f[1] > len(s.lines) {
				return nil, &Error{"stored diff does not match its header"}
			}
		}
		return s, nil
	}
	root, err := tree.Parse(payload)
	if err != nil {
		return nil, err
	}
	s.root = root
	s.toks, _ = tree.Pointer(h.Pointer).Tokens()
	for _, f := range o.Formats {
		if f.Name == h.Format && f.Append != nil {
			s.o.Format = f
		}
	}
	if s.o.Format.Name != h.Format {
		s.o.Format = JSON
	}
	switch jsonMode(h.Mode) {
	case modeArray:
		v, err := tree.Lookup(root, tree.Pointer(h.Pointer))
		if err != nil || v.Kind() != tree.KindArray {
			return nil, &Error{"stored item array not found"}
		}
		s.items = v.Items()
	case modeMembers:
		v, err := tree.Lookup(root, tree.Pointer(h.Pointer))
		if err != nil || v.Kind() != tree.KindObject {
			return nil, &Error{"stored object not found"}
		}
		s.mems = v.Members()
	}
	if s.n() != h.Total {
		return nil, &Error{"stored document does not match its header"}
	}
	return s, nil
}

// valid reports whether a stored span fits the source (a damaged view
// is treated as gone).
func (s *source) valid(sp span) bool {
	if sp.A < 0 || sp.B <= sp.A || sp.B > s.n() {
		return false
	}
	if sp.Off == 0 && sp.End == 0 {
		return true
	}
	return sp.B == sp.A+1 && sp.Off >= 0 && sp.End > sp.Off && sp.End <= len(s.unitText(sp.A))
}

func (s *source) n() int {
	switch {
	case s.h.Kind == "diff":
		return len(s.h.Files)
	case s.h.Kind == "text":
		return len(s.lines)
	case jsonMode(s.h.Mode) == modeArray:
		return len(s.items)
	case jsonMode(s.h.Mode) == modeMembers:
		return len(s.mems)
	}
	return 1
}

// at is " at LABEL" or "".
func (s *source) at() string {
	switch {
	case s.h.Label == "":
		return ""
	case s.h.Kind == "diff":
		return " in " + s.h.Label
	}
	return " at " + s.h.Label
}

// name names the units [a, b): "items 5–8", "line 3", "files 2–3 (lines
// 40–99)", "the document".
func (s *source) name(a, b int) string {
	switch {
	case s.h.Kind == "diff":
		return fmt.Sprintf("%s (lines %d–%d)", inband.Range("files", a, b), s.h.Files[a][0]+1, s.h.Files[b-1][1])
	case s.h.Kind == "json" && jsonMode(s.h.Mode) == modeSingle:
		return "the document"
	}
	return inband.Range(s.h.Unit, a, b)
}

// where names the units [a, b) within the source: "items 5–8 of 30 at
// the root array", "the document".
func (s *source) where(a, b int) string {
	if s.h.Kind == "json" && jsonMode(s.h.Mode) == modeSingle {
		return "the document"
	}
	return fmt.Sprintf("%s of %d%s", s.name(a, b), s.h.Total, s.at())
}

// textOf says what the text of unit i is: "item 7's compact JSON".
func (s *source) textOf(i int) string {
	switch {
	case s.h.Kind != "json":
		return s.name(i, i+1) + fmt.Sprintf(" of %d", s.h.Total)
	case jsonMode(s.h.Mode) == modeSingle:
		return "the document's compact JSON"
	}
	return "the compact JSON of " + s.where(i, i+1)
}

// unitText is the text whose bytes a cut span counts: a JSON unit's
// compact JSON ({"key":value} for a member), a line, a diff file's lines.
func (s *source) unitText(i int) string {
	if t, ok := s.texts[i]; ok {
		return t
	}
	var t string
	switch {
	case s.h.Kind == "text":
		t = s.lines[i]
	case s.h.Kind == "diff":
		f := s.h.Files[i]
		t = strings.Join(s.lines[f[0]:f[1]], "\n")
	case jsonMode(s.h.Mode) == modeArray:
		t = string(tree.AppendJSON(nil, s.items[i]))
	case jsonMode(s.h.Mode) == modeMembers:
		t = string(tree.AppendJSON(nil, tree.Object(s.mems[i])))
	default:
		t = string(tree.AppendJSON(nil, s.root))
	}
	s.texts[i] = t
	return t
}

// render is the units [a, b) in full, in the stored format: the items
// as an array (the members as an object, the whole document), or the
// lines; and, for JSON, the source document with its item array (object)
// cut to them.
func (s *source) render(a, b int) (string, tree.Value) {
	switch s.h.Kind {
	case "text":
		return strings.Join(s.lines[a:b], "\n"), tree.Value{}
	case "diff":
		return strings.Join(s.lines[s.h.Files[a][0]:s.h.Files[b-1][1]], "\n"), tree.Value{}
	}
	var body, doc tree.Value
	switch jsonMode(s.h.Mode) {
	case modeArray:
		body = tree.Array(s.items[a:b]...)
		doc = setAt(s.root, s.toks, body)
	case modeMembers:
		body = tree.Object(s.mems[a:b]...)
		doc = setAt(s.root, s.toks, body)
	default:
		body, doc = s.root, s.root
	}
	return string(s.o.Format.Append(nil, body)), doc
}

// partWhere names a byte range of one unit's text: "bytes 1–3,064 of
// 13,625 of the compact JSON of item 17 of 30 at the root array".
func (s *source) partWhere(sp span) string {
	return fmt.Sprintf("bytes %s–%s of %s of %s", inband.Thousands(sp.Off+1), inband.Thousands(sp.End), inband.Thousands(len(s.unitText(sp.A))), s.textOf(sp.A))
}

// fetchSize is the token count of what fetching sp as chunk n of of
// returns whole: its first line (with a handle of the length every
// handle has) and its text.
func (s *source) fetchSize(n, of int, sp span) int {
	if sp.cut() {
		return s.o.Counter.Count(partHead(n, of, sampleHandle, s.partWhere(sp)) + s.unitText(sp.A)[sp.Off:sp.End])
	}
	body, _ := s.render(sp.A, sp.B)
	return s.o.Counter.Count(wholeHead(n, of, sampleHandle, s.where(sp.A, sp.B)) + body)
}

// split answers a chunk over the budget: it cuts the span into the
// fewest smaller spans that each come back whole within the budget
// (runs of units; a single unit, into byte ranges of its text), stores
// them as a view of their own and returns the index of that view, with
// every smaller chunk's size as its fetch returns it. need is the
// chunk's size in full.
func (s *source) split(ctx context.Context, h header, handle string, n int, sp span, need int) (string, error) {
	v := &splitView{s: s, h: h, handle: handle, n: n, sp: sp, need: need}
	v.parts = sp.cut() || sp.B == sp.A+1
	if sp.cut() {
		v.intro = fmt.Sprintf("bytes %s–%s of %s", inband.Thousands(sp.Off+1), inband.Thousands(sp.End), s.textOf(sp.A))
	} else {
		v.intro = s.where(sp.A, sp.B)
	}
	subs := v.subSpans()
	costs := v.sizes(subs)
	// The index must fit the budget: merge neighbours until it does (the
	// merged chunks are over the budget, and come back split in turn).
	for len(subs) > 2 && s.o.Counter.Count(v.render(subs, costs, sampleHandle)) > s.o.Budget {
		subs = mergePairs(subs)
		costs = v.sizes(subs)
	}
	return v.store(ctx, subs, costs)
}

// splitView is the split of one chunk over the budget (see split): the
// chunk (n, its span sp, its size need), the handle it was fetched
// with, and how its index is written.
type splitView struct {
	s      *source
	h      header
	handle string
	n      int
	sp     span
	need   int
	// parts: the chunk is one unit, cut into byte ranges (or one
	// already cut).
	parts bool
	intro string
	short bool // the short header, when the budget is very tight
}

// head is the index's first line, for k smaller chunks.
func (v *splitView) head(k int) string {
	o, s, sp := v.s.o, v.s, v.sp
	x := inband.SplitHead{N: v.n, Of: len(v.h.Chunks), Handle: v.handle, Need: v.need, Budget: o.Budget, K: k}
	switch {
	case !v.parts:
		x.How = inband.Chunks
	case sp.cut():
		x.How = inband.Parts
	case s.h.Kind == "json":
		x.How = inband.JSONParts
	default:
		x.How = inband.TextParts
	}
	if !v.short {
		x.Intro = v.intro
		if v.need > o.FetchBudget {
			x.MaxFetch = o.FetchBudget
		}
	}
	return x.String() + "\n"
}

// subSpans cuts the chunk into smaller spans: every smaller chunk is
// fetched within the budget, its own first line included; its number is
// counted as the largest it can be.
func (v *splitView) subSpans() []span {
	s, sp := v.s, v.sp
	room := s.o.Budget - 2
	var subs []span
	if v.parts {
		a, b := 0, len(s.unitText(sp.A))
		if sp.cut() {
			a, b = sp.Off, sp.End
		}
		subs = s.pieces(sp.A, a, b, room, v.need)
	} else {
		of := sp.B - sp.A
		fits := func(a, b int) bool { return s.fetchSize(of, of, span{A: a, B: b}) <= room }
		subs = pack(sp.A, sp.B, fits)
	}
	return subs
}

// sizes returns each smaller chunk's size as its fetch returns it.
func (v *splitView) sizes(subs []span) []int {
	cs := make([]int, len(subs))
	for k, x := range subs {
		cs[k] = v.s.fetchSize(k+1, len(subs), x)
	}
	return cs
}

// line is the index line of smaller chunk k, x, of size c.
func (v *splitView) line(k int, x span, c int) string {
	l := inband.SubChunk{N: k + 1, Tokens: c, Over: c > v.s.o.Budget}
	if x.cut() {
		l.Span = "bytes " + inband.Thousands(x.Off+1) + "–" + inband.Thousands(x.End)
	} else {
		l.Span = v.s.name(x.A, x.B)
	}
	return l.String() + "\n"
}

// foot is the index's last line: how to fetch a smaller chunk of hd.
func (v *splitView) foot(hd string) string {
	return inband.SubFoot{Call: fetch(v.s.o, hd, "N")}.String() + "\n"
}

// render writes the index of subs (sizes costs) stored under hd.
func (v *splitView) render(subs []span, costs []int, hd string) string {
	var sb strings.Builder
	sb.WriteString(v.head(len(subs)))
	sb.WriteString(inband.SubIndex{K: len(subs), Parts: v.parts}.String() + "\n")
	for k, x := range subs {
		sb.WriteString(v.line(k, x, costs[k]))
	}
	sb.WriteString(v.foot(hd))
	return sb.String()
}

// store stores subs as a view of their own and returns its index,
// merging neighbours (then shortening the header) until it fits the
// budget.
func (v *splitView) store(ctx context.Context, subs []span, costs []int) (string, error) {
	o, h := v.s.o, v.h
	nh := h
	nh.Payload = v.handle
	if h.Payload != "" {
		nh.Payload = h.Payload
	}
	for {
		nh.Chunks = subs
		hd, err := put(ctx, o, nh, nil)
		if err != nil {
			return "", err
		}
		text := v.render(subs, costs, hd)
		if o.Counter.Count(text) <= o.Budget || len(subs) <= 2 && v.short {
			return text, nil
		}
		if len(subs) > 2 {
			subs = mergePairs(subs)
			costs = v.sizes(subs)
		} else {
			v.short = true
		}
	}
}

// pack cuts the units [a, b) into the fewest runs, in order, that each
// fit (fits reports whether a run does): the longest run from each
// start, found by doubling and halving. A unit that does not fit alone
// is a run of its own.
func pack(a, b int, fits func(a, b int) bool) []span {
	var subs []span
	for a < b {
		lo, hi := a+1, b+1 // the run [a, lo) is taken; [a, hi) does not fit (or hi is past b)
		for step := 1; lo < b; step *= 2 {
			t := min(b, lo+step)
			if !fits(a, t) {
				hi = t
				break
			}
			lo = t
		}
		for lo+1 < hi && lo < b {
			m := (lo + hi) / 2
			if fits(a, m) {
				lo = m
			} else {
				hi = m
			}
		}
		subs = append(subs, span{A: a, B: lo})
		a = lo
	}
	return subs
}

// pieces cuts bytes [a, b) of unit i's text into the fewest byte ranges,
// on rune boundaries, whose fetch (its first line included) fits room
// tokens: each the longest that does, found by bisecting its end from
// an estimate. need is the tokens of the whole range, for the estimate.
// There are at least two when b-a > 1.
func (s *source) pieces(i, a, b, room, need int) []span {
	t := s.unitText(i)
	// Token counts of byte ranges, without their first line: the head of
	// a part is about the same for every part.
	headTok := s.o.Counter.Count(partHead(99, 99, sampleHandle, s.partWhere(span{A: i, B: i + 1, Off: a, End: b})))
	fits := func(x, y int) bool {
		return headTok+tokens.CountBytes(s.o.Counter, []byte(t[x:y])) <= room
	}
	back := func(y int) int { // the rune boundary at or before y (after x)
		for y < b && !runeBoundary(t, y) {
			y--
		}
		return y
	}
	per := max(1, int(float64(b-a)*float64(room-headTok)/float64(max(need, 1))))
	var subs []span
	for x := a; x < b; {
		// The longest end y with fits(x, y), at least one rune.
		lo := x + 1
		for lo < b && !runeBoundary(t, lo) {
			lo++
		}
		hi := b + 1
		if g := back(min(b, x+per)); g > lo {
			if fits(x, g) {
				lo = g
			} else {
				hi = g
			}
		}
		for step := max(1, per/8); lo < b && hi == b+1; step *= 2 {
			y := back(min(b, lo+step))
			if y <= lo {
				y = min(b, lo+step)
				for y < b && !runeBoundary(t, y) {
					y++
				}
			}
			if !fits(x, y) {
				hi = y
				break
			}
			lo = y
		}
		for hi-lo > 1 && lo < b {
			m := back((lo + hi) / 2)
			if m <= lo {
				break
			}
			if fits(x, m) {
				lo = m
			} else {
				hi = m
			}
		}
		if x == a && lo == b && b-a > 1 {
			// One piece would be the whole: two halves, so that a part
			// is never the chunk it is a part of.
			lo = back(a + (b-a+1)/2)
			if lo <= a {
				lo = a + (b-a+1)/2
				for lo < b && !runeBoundary(t, lo) {
					lo++
				}
			}
		}
		subs = append(subs, span{A: i, B: i + 1, Off: x, End: lo})
		x = lo
	}
	return subs
}

// runeBoundary reports whether offset y of t cuts no rune as UTF-8
// decoding reads them: a continuation byte starts no rune, but one that
// belongs to no valid encoding is a rune of its own (a run of them can be
// cut anywhere).
func runeBoundary(t string, y int) bool {
	if y <= 0 || y >= len(t) || utf8.RuneStart(t[y]) {
		return true
	}
	for x := y - 1; x >= 0 && x > y-utf8.UTFMax; x-- {
		if utf8.RuneStart(t[x]) {
			_, w := utf8.DecodeRuneInString(t[x:])
			return x+w <= y
		}
	}
	return true
}

// mergePairs halves a list of spans by joining neighbours.
func mergePairs(subs []span) []span {
	var out []span
	for k := 0; k < len(subs); k += 2 {
		if k+1 == len(subs) {
			out = append(out, subs[k])
			break
		}
		x, y := subs[k], subs[k+1]
		m := span{A: x.A, B: y.B}
		if x.cut() {
			m = span{A: x.A, B: x.B, Off: x.Off, End: y.End}
		}
		out = append(out, m)
	}
	return out
}
