package dedup

import (
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/terse-dev/terse/inband"
)

// Line references: a run of lines of a result that repeats, byte for
// byte and in order, lines of one result the model was shown before
// (a file read again after an edit, a hunk that git add -p prints again
// after git diff, a pull-request comment whose diff hunk another one
// already carried) becomes one line naming that result and the run's
// place in it,
//
//	> [ref: toolu_01ABC (Read "a.go"), lines 12–80 of its result, byte-identical]
//
// where lines 12–80 are counted from the first line of the earlier
// result's text as the tool gave it (as shaped, before its own line
// references: a result given line references can be referred to in
// turn, and its lines keep their numbers if it gets its text back),
// not counting terse's own lines (a shaping's header, a note): in a
// file read, they are the numbers of the file's lines when the read
// starts at its first line. [Lines] finds the runs; [ResolveLines]
// puts them back.
//
// A run never holds an in-band line (a header, a note, another
// reference), nor a line the caller keeps in view (an error or verdict
// line of a command's output): what a reader needs to read a text stays
// in it. A result
// that already holds a line reading as a line reference gets none (it
// could not be told from one). A run is at least [Lines.MinLines] lines,
// and its reference at most a quarter of the bytes it stands for.

// Defaults of a zero [Lines].
const (
	DefaultMinLines = 4
	// maxCandidates bounds the earlier places a line is looked up at
	// (the most recent ones), so that a line repeated everywhere ("}")
	// costs no more than that.
	maxCandidates = 16
	// maxLinesText is the size above which a result is neither indexed
	// nor referred: the index stays bounded.
	maxLinesText = 4 << 20
)

var linesSeed = maphash.MakeSeed()

// Lines remembers the texts of results shown to the model, in order, and
// writes a new result's runs of lines that repeat one of them as line
// references. The zero value is ready to use; a Lines is not safe for
// concurrent use.
type Lines struct {
	// MinLines is the shortest run replaced (DefaultMinLines when 0).
	MinLines int
	// Name, when set, gives the ID a reference carries for the key a
	// text was added under (asked only when a reference is written);
	// otherwise the key is the ID.
	Name func(key string) string

	shown []shownText
	// last is the text Refer split last: Add records it without
	// splitting it again.
	last struct {
		text  string
		lines []string
	}
	// head holds, by the hash of a line, 1 + the index in places of the
	// line's most recent place; each place links to the one before.
	head   map[uint64]int32
	places []linePlace
}

type shownText struct {
	name  string
	lines []string // its counted lines (counted)
}

// linePlace is line line of shown text text, and 1 + the index in
// places of the place before it of a line of the same hash (0: none).
type linePlace struct{ text, line, prev int32 }

// Add records text, shown to the model (before line references), under
// name, the ID its references carry (a call id, optionally with the
// call's label: `toolu_01ABC (Read "a.go")`), or the key Lines.Name
// gives it from. A name with a line break, which no line can carry, is
// not recorded.
func (x *Lines) Add(name, text string) {
	if len(text) > maxLinesText || strings.Contains(name, "\n") {
		return
	}
	if x.head == nil {
		x.head = make(map[uint64]int32)
	}
	var lines []string
	if x.last.lines != nil && len(text) == len(x.last.text) && text == x.last.text {
		lines = countedOf(text, x.last.lines)
	} else {
		lines = counted(text)
	}
	x.last.text, x.last.lines = "", nil
	t := int32(len(x.shown))
	x.shown = append(x.shown, shownText{name: name, lines: lines})
	for i, l := range lines {
		k := maphash.String(linesSeed, l)
		x.places = append(x.places, linePlace{t, int32(i), x.head[k]})
		x.head[k] = int32(len(x.places))
	}
}

// counted are the lines of text a reference counts: all but terse's own
// (in-band) lines; a final line break ends the last line and opens none.
func counted(text string) []string { return countedOf(text, strings.Split(text, "\n")) }

// countedOf is counted of text split at its line breaks (lines, which it
// reuses).
func countedOf(text string, lines []string) []string {
	if strings.HasSuffix(text, "\n") {
		lines = lines[:len(lines)-1]
	}
	out := lines[:0]
	for _, l := range lines {
		if referable(l) {
			out = append(out, l)
		}
	}
	return out
}

// referable reports whether line may be part of a run: not an in-band
// line (anything inband.Parse reads: a "> [" note, but also a gap marker
// or a line of a chunk index; every one opens with ">", "[" or "  chunk ").
func referable(line string) bool {
	if line == "" || line[0] != '>' && line[0] != '[' && !strings.HasPrefix(line, "  chunk ") {
		return true
	}
	_, err := inband.Parse(line)
	return err != nil
}

// Refer returns text with its runs of lines that repeat lines of one
// shown result replaced by references to them, and how many it wrote
// (text itself and 0 when none pays). Lines keep reports true for (when
// keep is not nil) stay as they are; keep is asked only of lines that
// could start or extend a run. Refer does not record text.
func (x *Lines) Refer(text string, keep func(line string) bool) (string, int) {
	if len(x.shown) == 0 || len(text) > maxLinesText {
		return text, 0
	}
	lines := strings.Split(text, "\n")
	x.last.text, x.last.lines = text, lines
	if inband.HasRefLines(text) {
		return text, 0
	}
	minLines := x.MinLines
	if minLines <= 0 {
		minLines = DefaultMinLines
	}
	// Whether a run may hold a line is asked only of the lines that
	// start or extend one.
	ok := okLines{lines: lines, keep: keep, state: make([]int8, len(lines))}
	var b strings.Builder
	refs, done := 0, 0 // lines[:done] are written
	for i := 0; i+minLines <= len(lines); {
		run, from := x.longest(lines, &ok, i)
		if run >= minLines {
			id := x.shown[from.text].name
			if x.Name != nil {
				id = x.Name(id)
			}
			ref := inband.RefLines{ID: id, From: int(from.line) + 1, To: int(from.line) + run}.String()
			// The run's bytes, without the line break that follows it.
			if 4*len(ref) <= runBytes(lines[i:i+run])-1 {
				if refs == 0 {
					b.Grow(len(text))
				}
				for _, l := range lines[done:i] {
					b.WriteString(l)
					b.WriteByte('\n')
				}
				b.WriteString(ref)
				if i+run < len(lines) {
					b.WriteByte('\n')
				}
				refs++
				i += run
				done = i
				continue
			}
		}
		i++
	}
	if refs == 0 {
		return text, 0
	}
	if done < len(lines) {
		b.WriteString(strings.Join(lines[done:], "\n"))
	}
	return b.String(), refs
}

// longest finds the longest run of lines from lines[i] that repeats
// lines of one shown text, the most recent one on a tie; ok says which
// lines a run may hold.
func (x *Lines) longest(lines []string, ok *okLines, i int) (int, linePlace) {
	j := x.head[maphash.String(linesSeed, lines[i])]
	if j == 0 || !ok.at(i) {
		return 0, linePlace{}
	}
	best, at := 0, linePlace{}
	for k := 0; j != 0 && k < maxCandidates; j, k = x.places[j-1].prev, k+1 {
		c := x.places[j-1]
		prev := x.shown[c.text].lines[c.line:]
		n := 0
		for n < len(prev) && i+n < len(lines) && prev[n] == lines[i+n] && ok.at(i+n) {
			n++
		}
		if n > best {
			best, at = n, c
		}
	}
	return best, at
}

// okLines says which lines a run may hold, each asked once.
type okLines struct {
	lines []string
	keep  func(string) bool
	state []int8 // 0 not asked, 1 yes, 2 no
}

func (o *okLines) at(i int) bool {
	if o.state[i] == 0 {
		o.state[i] = 2
		// The empty "line" after a final line break is not a line.
		last := i == len(o.lines)-1 && o.lines[i] == ""
		if !last && referable(o.lines[i]) && (o.keep == nil || !o.keep(o.lines[i])) {
			o.state[i] = 1
		}
	}
	return o.state[i] == 1
}

// runBytes is the size of lines with their line breaks.
func runBytes(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

// ErrUnresolved is the error of [ResolveLines] when a reference names a
// result it cannot look up, or lines that result does not have.
var ErrUnresolved = errors.New("unresolved line reference")

// ResolveLines replaces every line reference of text with the lines it
// names, looked up by name in the texts shown before (lookup returns a
// result's text as [Lines.Add] recorded it): the inverse of
// [Lines.Refer].
func ResolveLines(text string, lookup func(name string) (string, bool)) (string, error) {
	if !inband.HasRefLines(text) {
		return text, nil
	}
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	split := make(map[string][]string) // name → its counted lines
	for n, l := range lines {
		v, err := inband.Parse(l)
		r, ok := v.(inband.RefLines)
		if err != nil || !ok {
			out = append(out, l)
			continue
		}
		prev, seen := split[r.ID]
		if !seen {
			src, found := lookup(r.ID)
			if !found {
				return "", fmt.Errorf("line %d: %w: no result %s", n+1, ErrUnresolved, r.ID)
			}
			prev = counted(src)
			split[r.ID] = prev
		}
		if r.To > len(prev) {
			return "", fmt.Errorf("line %d: %w: %s has %d lines, not %d", n+1, ErrUnresolved, r.ID, len(prev), r.To)
		}
		out = append(out, prev[r.From-1:r.To]...)
	}
	return strings.Join(out, "\n"), nil
}
