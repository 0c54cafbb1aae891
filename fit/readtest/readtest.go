// Package readtest reads fitted results the way a model must: only from
// their text. It parses the in-band notes, the overflow hint and the
// chunk index of a result, answers questions about it (how many items in
// total, is item K shown whole, what a fetch without a budget of its own
// returns, which exact call returns item K whole, from the index or from
// the chunk ranges the hint lists), reads a chunk that came back split
// ([ParseSplit]), and follows chunk handles through a fetch function
// until an item comes back whole. Tests use it to check that the in-band
// text is enough.
//
// It understands results rendered as compact JSON and text (lines).
package readtest

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tree"
)

// Fetch returns the text of chunk n of handle, as the call the text
// names would (with the reader's budget).
type Fetch func(handle string, n int) (string, error)

// Response is what the reader understood of a fitted result.
type Response struct {
	Body    string  // the document or the kept lines, before the notes
	Unit    string  // "items", "lines", …
	Total   int     // units in the source (-1: unknown)
	Label   string  // where the items are ("the root array", "/items")
	Handle  string  // chunk handle ("" when nothing is retrievable)
	Call    string  // the call template, with N for the chunk number
	Chunks  []Chunk // the chunk index (nil when the response has none)
	NChunks int     // chunks the hint names when there is no index
	// Ranges are the chunks' ranges as the hint lists them when there is
	// no index (no levels: Runs is nil).
	Ranges []Chunk
	// FetchBudget is what a fetch without a budget of its own returns at
	// most, as the index (or the hint) says (0: not said).
	FetchBudget int
	// Notes: the levels the notes give, by unit (1-based), when there is
	// no index; Rest is the level of the units they do not name.
	Notes map[int]string
	Rest  string
	// Decode reads a JSON result's document (and its chunks): nil means
	// JSON; set it for another format (TOON).
	Decode func(string) (tree.Value, error)
}

func (r *Response) decode(s string) (tree.Value, error) {
	if r.Decode != nil {
		return r.Decode(s)
	}
	return tree.ParseString(s)
}

// Chunk is one line of a chunk index: units A–B (1-based, inclusive) and
// what this response holds of each.
type Chunk struct {
	N, A, B int
	Size    int // tokens of its fetch, as the index lists them (0: not listed)
	Runs    []Run
	Over    bool // marked over budget: it comes back split
}

// Run is a run of units A–B (1-based, inclusive) at one level ("full",
// "standard", "minimal", "shown", "left out").
type Run struct {
	A, B  int
	Level string
}

var (
	reHandle = regexp.MustCompile(`c_[0-9a-f]{16}`)
	reWhole  = regexp.MustCompile(`^(\w+?)s? (\d+)(?:–(\d+))?(?: \(lines [^)]*\))? of (\d+)(?: at (.+))?$`)
)

// Parse reads a fitted result: its document, then its in-band notes,
// each read by inband.Parse.
func Parse(text string) (*Response, error) {
	r := &Response{Total: -1}
	doc, notes := inband.Split(strings.TrimSuffix(text, "\n"))
	r.Body = doc
	for _, l := range strings.Split(notes, "\n") {
		v, err := inband.Parse(l)
		if err != nil {
			continue
		}
		switch x := v.(type) {
		case inband.Index:
			r.Total, r.Unit, r.Label = x.Total, x.Unit, x.Label
		case inband.IndexChunk:
			_, a, b, _ := inband.ParseSpan(x.Span)
			c := Chunk{N: x.N, A: a, B: b, Size: x.Tokens, Over: x.Over}
			runs, err := inband.ParseRuns(x.Runs, c.A, c.B)
			if err != nil {
				return nil, fmt.Errorf("chunk %d: %w", c.N, err)
			}
			for _, run := range runs {
				c.Runs = append(c.Runs, Run(run))
			}
			r.Chunks = append(r.Chunks, c)
		case inband.IndexFoot:
			if x.How == inband.FetchWhole {
				r.Call, r.Handle, r.FetchBudget = x.Call, reHandle.FindString(x.Call), x.Fetch
			}
		case inband.LeftOut:
			r.note(x.Names, "left out")
		case inband.Detail:
			if x.Standard != "" {
				r.note(x.Standard, "standard")
			}
			if x.Minimal != "" {
				r.note(x.Minimal, "minimal")
			}
			if x.RestFull {
				r.Rest = "full"
			}
		case inband.Overflow:
			if err := r.overflow(x); err != nil {
				return nil, err
			}
		}
	}
	if r.Chunks == nil && r.Notes == nil && r.Total >= 0 && r.Unit == "lines" {
		r.walkLines()
	}
	return r, nil
}

// overflow reads an overflow hint that names a call: the whole source
// in one chunk, or chunk N of several with their ranges.
func (r *Response) overflow(x inband.Overflow) error {
	switch x.How {
	case inband.OneChunk:
		r.Total, r.Unit = x.What.Total, x.What.Unit
		r.NChunks = 1
		r.Call, r.Handle, r.FetchBudget = x.Call, reHandle.FindString(x.Call), x.Fetch
		r.Ranges = append(r.Ranges, Chunk{N: 1, A: 1, B: r.Total, Over: x.Over})
	case inband.ByChunk:
		r.Total, r.Unit = x.What.Total, x.What.Unit
		r.NChunks = x.Chunks
		r.Call, r.Handle, r.FetchBudget = x.Call, reHandle.FindString(x.Call), x.Fetch
		cs, err := inband.ParseChunkList(x.List)
		if err != nil {
			return err
		}
		for _, c := range cs {
			_, a, b, _ := inband.ParseSpan(c.Span)
			r.Ranges = append(r.Ranges, Chunk{N: c.N, A: a, B: b, Over: c.Over})
		}
	}
	return nil
}

// walkLines reads which lines a text shows from the text itself: every
// body line is the next source line, shown or cut, or a gap marker that
// stands for the lines it names.
func (r *Response) walkLines() {
	r.Notes, r.Rest = map[int]string{}, "left out"
	k := 1
	for _, l := range strings.Split(r.Body, "\n") {
		if v, err := inband.Parse(l); err == nil {
			if g, ok := v.(inband.Gap); ok {
				k = g.Last + 1
				continue
			}
		}
		r.Notes[k] = "full"
		if inband.IsCut(l) {
			r.Notes[k] = "cut"
		}
		k++
	}
}

// note records the level of the units a list names ("items 1–3, 7").
func (r *Response) note(list, level string) {
	if r.Notes == nil {
		r.Notes = map[int]string{}
		r.Rest = "full"
	}
	_, nums, _ := strings.Cut(list, " ")
	for _, p := range strings.Split(nums, ", ") {
		a, b, ok := strings.Cut(p, "–")
		x, y := inband.Number(a), inband.Number(a)
		if ok {
			y = inband.Number(b)
		}
		for k := x; k <= y; k++ {
			r.Notes[k] = level
		}
	}
}

// TotalItems is the number of units in the source: from the index or
// the hint; a result with neither is whole, and its items are counted.
func (r *Response) TotalItems() int {
	if r.Total >= 0 {
		return r.Total
	}
	v, err := r.decode(r.Body)
	if err == nil && v.Kind() == tree.KindArray {
		return v.Len()
	}
	return len(strings.Split(r.Body, "\n"))
}

// ShownWhole reports whether unit k (1-based) is in this response in
// full. A result without an index or hint is whole.
func (r *Response) ShownWhole(k int) (bool, error) {
	if r.Total < 0 {
		return true, nil
	}
	for _, c := range r.Chunks {
		if k < c.A || k > c.B {
			continue
		}
		for _, x := range c.Runs {
			if k >= x.A && k <= x.B {
				return x.Level == "full" || x.Level == "shown", nil
			}
		}
	}
	if r.Chunks == nil && r.Notes != nil {
		l, ok := r.Notes[k]
		if !ok {
			l = r.Rest
		}
		return l == "full", nil
	}
	if r.Chunks == nil {
		return false, errors.New("no chunk index and no notes: which items are whole is not said")
	}
	return false, fmt.Errorf("item %d is in no chunk", k)
}

// ChunkOf returns the number of the chunk that holds unit k, from the
// index or the hint's ranges, or 0 when the response names no ranges.
func (r *Response) ChunkOf(k int) int {
	for _, c := range slices.Concat(r.Chunks, r.Ranges) {
		if k >= c.A && k <= c.B {
			return c.N
		}
	}
	return 0
}

// Over reports whether the chunk holding unit k is marked over budget.
func (r *Response) Over(k int) bool {
	for _, c := range slices.Concat(r.Chunks, r.Ranges) {
		if k >= c.A && k <= c.B {
			return c.Over
		}
	}
	return false
}

// CallFor is the exact call that returns the chunk holding unit k.
func (r *Response) CallFor(k int) string {
	n := r.ChunkOf(k)
	if n == 0 || r.Call == "" {
		return ""
	}
	return reN.ReplaceAllString(r.Call, "${1}"+strconv.Itoa(n))
}

// reN finds the chunk number placeholder of a call: "terse chunk H N",
// `this tool with _chunk "H.N"`.
var reN = regexp.MustCompile(`([ .#:/])N\b`)

// Retrieve fetches unit k (1-based) of the response, following the calls
// the texts name: the chunk that holds it, and, when that chunk comes
// back split, the smaller chunk that holds it, down to byte ranges of a
// unit too large for the budget, which are joined. It returns the unit's
// text (compact JSON of an item, or a line) and the calls made.
func (r *Response) Retrieve(fetch Fetch, k int) (string, int, error) {
	if r.Handle == "" {
		return "", 0, errors.New("no handle")
	}
	calls := 0
	if n := r.ChunkOf(k); n > 0 {
		t, err := r.retrieve(fetch, r.Handle, n, k, &calls)
		return t, calls, err
	}
	// No index: chunk headers say their ranges; look through them.
	for n := 1; n <= r.NChunks; n++ {
		t, err := r.retrieve(fetch, r.Handle, n, k, &calls)
		if err == errNotHere {
			continue
		}
		return t, calls, err
	}
	return "", calls, fmt.Errorf("item %d in none of %d chunks", k, r.NChunks)
}

var errNotHere = errors.New("not in this chunk")

func (r *Response) retrieve(fetch Fetch, handle string, n, k int, calls *int) (string, error) {
	*calls++
	if *calls > 10000 {
		return "", errors.New("too many calls")
	}
	text, err := fetch(handle, n)
	if err != nil {
		return "", err
	}
	head, body, _ := strings.Cut(text, "\n")
	v, err := inband.Parse(head)
	if err != nil {
		return "", fmt.Errorf("not a chunk header: %q", head)
	}
	switch x := v.(type) {
	case inband.ChunkHead:
		if x.Parts {
			return body, nil // a byte range of one unit
		}
		if x.Where == "the document" {
			v, err := r.decode(body)
			if err != nil {
				return "", err
			}
			return string(tree.AppendJSON(nil, v)), nil
		}
		w := reWhole.FindStringSubmatch(x.Where)
		if w == nil {
			return "", fmt.Errorf("cannot read chunk header %q", head)
		}
		a := inband.Number(w[2])
		b := a
		if w[3] != "" {
			b = inband.Number(w[3])
		}
		if k < a || k > b {
			return "", errNotHere
		}
		if w[1] == "line" {
			return strings.Split(body, "\n")[k-a], nil
		}
		return r.itemOf(body, w[5], k-a)
	case inband.SplitHead:
		if x.Intro != "" && !strings.HasPrefix(x.Intro, "bytes ") && !strings.Contains(x.Intro, "the document") {
			if _, a, b, ok := inband.ParseSpan(x.Intro); ok && (k < a || k > b) {
				return "", errNotHere
			}
		}
	default:
		return "", fmt.Errorf("cannot read chunk header %q", head)
	}
	// Split: read the smaller chunks.
	subs, h := subChunks(body)
	if h == "" || len(subs) == 0 {
		return "", fmt.Errorf("split chunk without index: %q", text)
	}
	if subs[0].bytes { // byte ranges of one unit: join them all
		var sb strings.Builder
		for _, s := range subs {
			t, err := r.retrieve(fetch, h, s.N, k, calls)
			if err != nil {
				return "", err
			}
			sb.WriteString(t)
		}
		return sb.String(), nil
	}
	for _, s := range subs {
		if k >= s.A && k <= s.B {
			return r.retrieve(fetch, h, s.N, k, calls)
		}
	}
	return "", errNotHere
}

// subChunk is a smaller chunk of a split chunk: units A–B, or bytes A–B
// of one unit.
type subChunk struct {
	Chunk
	bytes bool
}

// subChunks reads the index of a split chunk's smaller chunks: each
// chunk, and the handle of the call that fetches them.
func subChunks(body string) ([]subChunk, string) {
	var subs []subChunk
	handle := ""
	for _, l := range strings.Split(body, "\n") {
		v, err := inband.Parse(l)
		if err != nil {
			continue
		}
		switch x := v.(type) {
		case inband.SubChunk:
			unit, a, b, _ := inband.ParseSpan(x.Span)
			subs = append(subs, subChunk{Chunk{N: x.N, A: a, B: b, Size: x.Tokens, Over: x.Over}, unit == "byte"})
		case inband.SubFoot:
			handle = reHandle.FindString(x.Call)
		}
	}
	return subs, handle
}

// itemOf returns the compact JSON of item i of a chunk body: an array
// of items, or an object of members.
func (r *Response) itemOf(body, label string, i int) (string, error) {
	v, err := r.decode(body)
	if err != nil {
		return "", fmt.Errorf("cannot decode the chunk body: %w", err)
	}
	switch {
	case v.Kind() == tree.KindArray && i < v.Len():
		return string(tree.AppendJSON(nil, v.Index(i))), nil
	case v.Kind() == tree.KindObject && label == "" && i == 0:
		return string(tree.AppendJSON(nil, v)), nil // the whole document
	case v.Kind() == tree.KindObject && i < v.Len():
		return string(tree.AppendJSON(nil, tree.Object(v.Members()[i]))), nil
	}
	return "", fmt.Errorf("no item %d in the chunk body", i+1)
}

// Split is what the reader understood of a chunk that came back split
// into smaller chunks: its size in full, the budget it was over, and the
// smaller chunks with the sizes the text lists.
type Split struct {
	Need, Budget int
	Parts        bool // byte ranges of one unit, to be joined
	Handle       string
	Subs         []Chunk // A–B: units, or bytes when Parts
}

// ParseSplit reads the text of a chunk that came back split.
func ParseSplit(text string) (*Split, error) {
	head, body, _ := strings.Cut(text, "\n")
	v, err := inband.Parse(head)
	x, ok := v.(inband.SplitHead)
	if err != nil || !ok {
		return nil, fmt.Errorf("not a split chunk: %q", head)
	}
	sp := &Split{Need: x.Need, Budget: x.Budget, Parts: x.How != inband.Chunks}
	subs, handle := subChunks(body)
	for _, c := range subs {
		sp.Subs = append(sp.Subs, c.Chunk)
	}
	sp.Handle = handle
	if sp.Handle == "" || len(sp.Subs) == 0 {
		return nil, fmt.Errorf("split chunk without its index: %q", text)
	}
	return sp, nil
}
