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
	reIndex   = regexp.MustCompile(`^\[chunks\] (\d+) (\w+)(?: (?:at|in) (.+?))?, numbered 1(?:–\d+)?, in (\d+) chunks?; this response shows (\d+) of them.* and leaves out (\d+):$`)
	reLine    = regexp.MustCompile(`^  chunk (\d+): (\w+?)s? (\d+)(?:–(\d+))?(?: \([^)]*\))?(?:, ≈([\d,]+) tokens)?.*; in this response: (.*)$`)
	reRun     = regexp.MustCompile(`^(\w+?)s? (\d+)(?:–(\d+))? (full|standard|minimal|shown|cut|left out)$`)
	reFoot    = regexp.MustCompile(`^\[/chunks\] Get chunk N(?: whole)?: (.*) \(no other arguments needed(?:: a fetch returns up to ([\d,]+) tokens)?\)`)
	reHint    = regexp.MustCompile(`^> \[(?:all (\d+) (\w+) left out|(\d+) of (\d+) (\w+) (?:left out|shortened|cut)).*?: get chunk N(?: of (\d+))? whole with: (.*?)(?:; (chunk 1: .*); a fetch returns up to ([\d,]+) tokens)?\]$`)
	reHint1   = regexp.MustCompile(`^> \[(?:all (\d+) (\w+) left out|(\d+) of (\d+) (\w+) (?:left out|shortened|cut)).*?: get (?:all \d+ \w+|\w+ 1) (whole )?with: (.*?)(, over budget: .*?)?; a fetch returns up to ([\d,]+) tokens\]$`)
	reRange   = regexp.MustCompile(`^chunk (\d+): (\w+?)s? (\d+)(?:–(\d+))?(?: \((?:lines [^)]*|the whole document)\))?( \(over budget\))?$`)
	reHandle  = regexp.MustCompile(`c_[0-9a-f]{16}`)
	reHead    = regexp.MustCompile(`^> \[chunk (\d+) of (\d+) of (c_[0-9a-f]+): (.*)\]$`)
	reWhole   = regexp.MustCompile(`^(\w+?)s? (\d+)(?:–(\d+))?(?: \(lines [^)]*\))? of (\d+)(?: at (.+))?, in full$`)
	reBytes   = regexp.MustCompile(`^bytes ([\d,]+)–([\d,]+) of ([\d,]+) of .*, in full \(join the parts in order\)$`)
	reSub     = regexp.MustCompile(`^  chunk (\d+): (?:bytes ([\d,]+)–([\d,]+)|(\w+?)s? (\d+)(?:–(\d+))?(?: \(lines [^)]*\))?), ≈`)
	reLeft    = regexp.MustCompile(`^> \[left out of .+?: ((?:items?|lines?) [\d–, ]+) \(\d+ of (\d+) (\w+)\)\]$`)
	reDetail  = regexp.MustCompile(`^> \[detail .+?: (.*)\]$`)
	reLevel   = regexp.MustCompile(`^((?:items?|lines?) [\d–, ]+) (standard|minimal) \(`)
	reSplitOf = regexp.MustCompile(`^(?:bytes [\d,]+–[\d,]+ of (?:the compact JSON of )?)?(\w+?)s? (\d+)(?:–(\d+))?`)
	reSubFt   = regexp.MustCompile(`^\[/chunks\] Get chunk N: (.*) \(no other arguments needed\)`)
)

// Parse reads a fitted result.
func Parse(text string) (*Response, error) {
	r := &Response{Total: -1}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	body := len(lines)
	for i, l := range lines {
		if strings.HasPrefix(l, "> [") || strings.HasPrefix(l, "[chunks] ") {
			body = i
			break
		}
	}
	r.Body = strings.Join(lines[:body], "\n")
	for _, l := range lines[body:] {
		if m := reIndex.FindStringSubmatch(l); m != nil {
			r.Total, _ = strconv.Atoi(m[1])
			r.Unit, r.Label = m[2], m[3]
			continue
		}
		if m := reLine.FindStringSubmatch(l); m != nil {
			c := Chunk{N: atoi(m[1]), A: atoi(m[3]), Size: atoi(m[5]), Over: strings.Contains(l, " tokens, over budget")}
			c.B = c.A
			if m[4] != "" {
				c.B = atoi(m[4])
			}
			runs, err := parseRuns(m[6], c.A, c.B)
			if err != nil {
				return nil, fmt.Errorf("chunk %d: %w", c.N, err)
			}
			c.Runs = runs
			r.Chunks = append(r.Chunks, c)
			continue
		}
		if m := reFoot.FindStringSubmatch(l); m != nil {
			r.Call, r.Handle = m[1], reHandle.FindString(m[1])
			r.FetchBudget = atoi(m[2])
			continue
		}
		if m := reLeft.FindStringSubmatch(l); m != nil {
			r.note(m[1], "left out")
			continue
		}
		if m := reDetail.FindStringSubmatch(l); m != nil {
			for _, p := range strings.Split(m[1], "; ") {
				if p == "the rest full" {
					r.Rest = "full"
				} else if x := reLevel.FindStringSubmatch(p); x != nil {
					r.note(x[1], x[2])
				}
			}
			continue
		}
		if m := reHint1.FindStringSubmatch(l); m != nil {
			// One chunk: the whole source, by the call the hint names.
			if m[1] != "" {
				r.Total, r.Unit = atoi(m[1]), m[2]
			} else {
				r.Total, r.Unit = atoi(m[4]), m[5]
			}
			r.NChunks = 1
			r.Call, r.Handle = m[7], reHandle.FindString(m[7])
			r.FetchBudget = atoi(m[9])
			r.Ranges = append(r.Ranges, Chunk{N: 1, A: 1, B: r.Total, Over: m[8] != ""})
			continue
		}
		if m := reHint.FindStringSubmatch(l); m != nil {
			if m[1] != "" {
				r.Total, r.Unit = atoi(m[1]), m[2]
			} else {
				r.Total, r.Unit = atoi(m[4]), m[5]
			}
			if m[6] != "" {
				r.NChunks = atoi(m[6])
			}
			r.Call, r.Handle = m[7], reHandle.FindString(m[7])
			r.FetchBudget = atoi(m[9])
			if m[8] != "" {
				for _, p := range strings.Split(m[8], ", chunk ") {
					x := reRange.FindStringSubmatch("chunk " + strings.TrimPrefix(p, "chunk "))
					if x == nil {
						return nil, fmt.Errorf("cannot read the chunk range %q", p)
					}
					c := Chunk{N: atoi(x[1]), A: atoi(x[3]), Over: x[5] != ""}
					c.B = c.A
					if x[4] != "" {
						c.B = atoi(x[4])
					}
					r.Ranges = append(r.Ranges, c)
				}
			}
		}
	}
	if r.Chunks == nil && r.Notes == nil && r.Total >= 0 && r.Unit == "lines" {
		r.walkLines()
	}
	return r, nil
}

var (
	reGap = regexp.MustCompile(`^\[… (\d+) lines? left out: lines? (\d+)(?:–(\d+))?(?:, .*)? …\]$`)
	reCut = regexp.MustCompile(`…\[\+\d+ chars\]$`)
)

// walkLines reads which lines a text shows from the text itself: every
// body line is the next source line, shown or cut, or a gap marker that
// stands for the lines it names.
func (r *Response) walkLines() {
	r.Notes, r.Rest = map[int]string{}, "left out"
	k := 1
	for _, l := range strings.Split(r.Body, "\n") {
		if m := reGap.FindStringSubmatch(l); m != nil {
			k = atoi(m[2]) + atoi(m[1])
			continue
		}
		r.Notes[k] = "full"
		if reCut.MatchString(l) {
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
		x, y := atoi(a), atoi(a)
		if ok {
			y = atoi(b)
		}
		for k := x; k <= y; k++ {
			r.Notes[k] = level
		}
	}
}

func parseRuns(s string, a, b int) ([]Run, error) {
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
			return nil, fmt.Errorf("cannot read %q", p)
		}
		x := Run{A: atoi(m[2]), Level: m[4]}
		x.B = x.A
		if m[3] != "" {
			x.B = atoi(m[3])
		}
		if x.A != next || x.B < x.A {
			return nil, fmt.Errorf("runs out of order or with gaps at %q", p)
		}
		next = x.B + 1
		runs = append(runs, x)
	}
	if next != b+1 {
		return nil, fmt.Errorf("runs %q do not cover %d–%d", s, a, b)
	}
	return runs, nil
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n
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
	m := reHead.FindStringSubmatch(head)
	if m == nil {
		return "", fmt.Errorf("not a chunk header: %q", head)
	}
	what := m[4]
	if what == "the document, in full" {
		v, err := r.decode(body)
		if err != nil {
			return "", err
		}
		return string(tree.AppendJSON(nil, v)), nil
	}
	if w := reWhole.FindStringSubmatch(what); w != nil {
		a := atoi(w[2])
		b := a
		if w[3] != "" {
			b = atoi(w[3])
		}
		if k < a || k > b {
			return "", errNotHere
		}
		if w[1] == "line" {
			return strings.Split(body, "\n")[k-a], nil
		}
		return r.itemOf(body, w[5], k-a)
	}
	if reBytes.MatchString(what) {
		return body, nil
	}
	if !strings.Contains(what, "over the budget") {
		return "", fmt.Errorf("cannot read chunk header %q", head)
	}
	if u := reSplitOf.FindStringSubmatch(what); u != nil && !strings.Contains(what, "the document") {
		a := atoi(u[2])
		b := a
		if u[3] != "" {
			b = atoi(u[3])
		}
		if k < a || k > b {
			return "", errNotHere
		}
	}
	// Split: read the smaller chunks.
	var subs [][4]int // n, a, b, isBytes
	call := ""
	for _, l := range strings.Split(body, "\n") {
		if s := reSub.FindStringSubmatch(l); s != nil {
			if s[2] != "" {
				subs = append(subs, [4]int{atoi(s[1]), atoi(s[2]), atoi(s[3]), 1})
			} else {
				a := atoi(s[5])
				b := a
				if s[6] != "" {
					b = atoi(s[6])
				}
				subs = append(subs, [4]int{atoi(s[1]), a, b, 0})
			}
		}
		if s := reSubFt.FindStringSubmatch(l); s != nil {
			call = s[1]
		}
	}
	h := reHandle.FindString(call)
	if h == "" || len(subs) == 0 {
		return "", fmt.Errorf("split chunk without index: %q", text)
	}
	if subs[0][3] == 1 { // byte ranges of one unit: join them all
		var sb strings.Builder
		for _, s := range subs {
			t, err := r.retrieve(fetch, h, s[0], k, calls)
			if err != nil {
				return "", err
			}
			sb.WriteString(t)
		}
		return sb.String(), nil
	}
	for _, s := range subs {
		if k >= s[1] && k <= s[2] {
			return r.retrieve(fetch, h, s[0], k, calls)
		}
	}
	return "", errNotHere
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

var (
	reSplitHead = regexp.MustCompile(`^> \[chunk \d+ of \d+ of c_[0-9a-f]+: .*?([\d,]+) tokens in full(?::|,) over the budget of ([\d,]+), so `)
	reSubSize   = regexp.MustCompile(`, ≈([\d,]+) tokens`)
)

// ParseSplit reads the text of a chunk that came back split.
func ParseSplit(text string) (*Split, error) {
	head, body, _ := strings.Cut(text, "\n")
	m := reSplitHead.FindStringSubmatch(head)
	if m == nil {
		return nil, fmt.Errorf("not a split chunk: %q", head)
	}
	sp := &Split{Need: atoi(m[1]), Budget: atoi(m[2]), Parts: strings.Contains(head, "parts to join in order")}
	for _, l := range strings.Split(body, "\n") {
		if s := reSub.FindStringSubmatch(l); s != nil {
			c := Chunk{N: atoi(s[1]), Over: strings.HasSuffix(l, ", over budget")}
			if z := reSubSize.FindStringSubmatch(l); z != nil {
				c.Size = atoi(z[1])
			}
			if s[2] != "" {
				c.A, c.B = atoi(s[2]), atoi(s[3])
			} else {
				c.A, c.B = atoi(s[5]), atoi(s[5])
				if s[6] != "" {
					c.B = atoi(s[6])
				}
			}
			sp.Subs = append(sp.Subs, c)
		}
		if s := reSubFt.FindStringSubmatch(l); s != nil {
			sp.Handle = reHandle.FindString(s[1])
		}
	}
	if sp.Handle == "" || len(sp.Subs) == 0 {
		return nil, fmt.Errorf("split chunk without its index: %q", text)
	}
	return sp, nil
}
