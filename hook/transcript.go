package hook

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tree"
)

// Transcript is a Claude Code session transcript (JSONL, one entry per
// line), from its last compaction boundary on: what the model can still
// see. It answers two questions: which earlier call gave the same
// result ([Transcript.Find]), and which earlier results share runs of
// lines with it ([Transcript.Shown]).
type Transcript struct {
	data []byte // the lines after the last compaction boundary
	// Compactions counts the compaction boundaries read.
	Compactions int
	unmap       func() // set when data is a mapped file
}

// Text is the transcript from its last compaction boundary on (a copy).
func (t *Transcript) Text() string { return string(t.data) }

// ReadTranscript reads the transcript at path: at most max bytes, from
// its end (earlier lines are then not considered). The file is mapped
// into memory where the system allows it: call Close when done, and do
// not use the Transcript after that.
func ReadTranscript(path string, max int64) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := int64(0)
	if st.Size() > max {
		off = st.Size() - max
	}
	data, unmap, err := mapFile(f, off, st.Size()-off)
	if err != nil {
		data, unmap = make([]byte, st.Size()-off), nil
		if _, err := io.ReadFull(io.NewSectionReader(f, off, st.Size()-off), data); err != nil {
			return nil, err
		}
	}
	if off > 0 {
		// The first line is cut: drop it.
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		} else {
			data = nil
		}
	}
	t := ParseTranscript(data)
	t.unmap = unmap
	return t, nil
}

// Close releases a transcript ReadTranscript mapped into memory.
func (t *Transcript) Close() {
	if t != nil && t.unmap != nil {
		t.unmap()
		t.unmap, t.data = nil, nil
	}
}

// ParseTranscript returns the transcript of data (JSONL).
func ParseTranscript(data []byte) *Transcript {
	t := &Transcript{data: data}
	// A compaction boundary is a system entry with subtype
	// compact_boundary; the model sees nothing before the last one but
	// its summary.
	// Every occurrence is looked at (a forward search is the fast one);
	// the lines are short, and only those are parsed.
	needle := []byte(`compact_boundary"`)
	for off := 0; ; {
		i := bytes.Index(data[off:], needle)
		if i < 0 {
			break
		}
		start, end := lineAt(data, off+i)
		off = end
		if end-start < 1<<16 && isBoundary(data[start:end]) {
			t.data = data[end:]
			t.Compactions++
		}
	}
	return t
}

// lineAt returns the bounds of the line holding data[i].
func lineAt(data []byte, i int) (start, end int) {
	start = bytes.LastIndexByte(data[:i], '\n') + 1
	end = len(data)
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		end = i + j
	}
	return start, end
}

func isBoundary(line []byte) bool {
	v, err := tree.Parse(line)
	if err != nil || v.Kind() != tree.KindObject {
		return false
	}
	typ, _ := v.Get("type")
	sub, _ := v.Get("subtype")
	return typ.Str() == "system" && sub.Str() == "compact_boundary"
}

// entry is the part of a transcript line Find reads.
type entry struct {
	sidechain bool
	agentID   string
	// tool results of a user entry
	results []result
	// tool calls of an assistant entry
	calls []call
}

type result struct {
	id      string
	visible string     // the text the model was shown
	output  tree.Value // toolUseResult: the tool's output object
	// text is the text the model was shown when it is one text (the
	// content string, or a single text block), else "".
	text string
}

type call struct {
	id, name string
	input    tree.Value
	// the context of the entry that made the call
	sidechain bool
	agentID   string
}

func parseEntry(line []byte) (entry, bool) {
	v, err := tree.Parse(line)
	if err != nil || v.Kind() != tree.KindObject {
		return entry{}, false
	}
	var e entry
	if s, _ := v.Get("isSidechain"); s.Bool() {
		e.sidechain = true
	}
	a, _ := v.Get("agentId")
	e.agentID = a.Str()
	msg, _ := v.Get("message")
	content, _ := msg.Get("content")
	if content.Kind() != tree.KindArray {
		return e, true
	}
	out, hasOut := v.Get("toolUseResult")
	for _, b := range content.Items() {
		typ, _ := b.Get("type")
		switch typ.Str() {
		case "tool_result":
			id, _ := b.Get("tool_use_id")
			r := result{id: id.Str()}
			r.visible, r.text = visibleText(b)
			if hasOut {
				r.output = out
			}
			e.results = append(e.results, r)
		case "tool_use":
			id, _ := b.Get("id")
			name, _ := b.Get("name")
			in, _ := b.Get("input")
			e.calls = append(e.calls, call{id: id.Str(), name: name.Str(), input: in})
		}
	}
	return e, true
}

// visibleText is the text of a tool_result block: its content string, or
// its text blocks joined. one is the text when the block shows one text
// (its content string, or a single text block and nothing else), whose
// lines the model reads as they are numbered in it; else "".
func visibleText(b tree.Value) (visible, one string) {
	c, _ := b.Get("content")
	if c.Kind() == tree.KindString {
		if c.Escaped() {
			return c.Str(), ""
		}
		return c.Str(), c.Str()
	}
	items := c.Items()
	var sb strings.Builder
	for _, it := range items {
		if t, _ := it.Get("text"); t.Kind() == tree.KindString {
			sb.WriteString(t.Str())
			sb.WriteByte('\n')
		}
	}
	if len(items) == 1 {
		typ, _ := items[0].Get("type")
		if t, _ := items[0].Get("text"); typ.Str() == "text" && t.Kind() == tree.KindString && !t.Escaped() {
			one = t.Str()
		}
	}
	return sb.String(), one
}

// needle is how a transcript line holding text writes its start: the
// first characters of text escaped as a JSON string's content the way
// Claude Code writes its transcripts (JSON.stringify: quotes, backslashes
// and control characters escaped, everything else as it is), at most
// maxNeedle bytes. Lines holding an earlier copy of the text hold it.
func needle(text string) []byte {
	return appendEscaped(nil, text, maxNeedle)
}

// appendEscaped appends text escaped as Claude Code escapes a JSON
// string's content (see needle) to b, stopping before b would grow past
// max bytes (at a character boundary).
func appendEscaped(b []byte, text string, max int) []byte {
	for i := 0; i < len(text) && len(b) < max; i++ {
		if utf8.RuneStart(text[i]) {
			_, size := utf8.DecodeRuneInString(text[i:])
			if len(b)+size > max {
				break
			}
		}
		c := text[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			b = append(b, c)
		}
	}
	return b
}

// maxNeedle bounds a needle: bytes.Index is fastest for short ones (up to
// 63 bytes on amd64), and 32 bytes of a result rarely match anything but
// a copy of it; a line that does is parsed and compared in full.
const maxNeedle = 32

// Ref is an earlier tool call whose result the model still has.
type Ref struct {
	// ID is the call's tool_use_id.
	ID string
	// Input is the call's input.
	Input tree.Value
}

// Find returns the latest earlier call of tool whose result the model
// still has in the context of the current call exclude (the main
// conversation, or a sub-agent: the context of the entry that made the
// call, which must be in the transcript and, when agentID is set, be that
// sub-agent's) and whose slots hold exactly texts:
//
//   - it comes after the last compaction boundary;
//   - it was shown as it was: the text the model was shown still holds
//     every slot's text (a result cleared, or replaced by a reference or a
//     shorter rendering, does not);
//   - it is not a call on a path written since (a Write, Edit, MultiEdit
//     or NotebookEdit of that path, or of a path under it);
//   - it is not the call exclude (the current one).
//
// ok is false when there is none.
func (t *Transcript) Find(tool, agentID, exclude string, texts []string) (ref Ref, ok bool) {
	id, in := t.find(tool, agentID, exclude, texts)
	return Ref{ID: id, Input: in}, id != ""
}

// find is Find: the call's id ("" for none) and input. The context is the
// one of the current call (exclude), which the transcript must show.
func (t *Transcript) find(tool, agentID, exclude string, texts []string) (id string, input tree.Value) {
	if t == nil || len(texts) == 0 || exclude == "" {
		return "", tree.Value{}
	}
	// The context is the current call's: the transcript must show it
	// (after the last compaction), or nothing in it can be told to be
	// visible to the caller (a sub-agent sees only its own results).
	cur, ok := t.call(exclude, t.data)
	if !ok || agentID != "" && cur.agentID != agentID {
		return "", tree.Value{}
	}
	longest := ""
	for _, s := range texts {
		if len(s) > len(longest) {
			longest = s
		}
	}
	p := needle(longest)
	// A line holding the result holds, escaped the same way, the longest
	// line of its texts (a string field's text is its lines joined by
	// escaped line breaks, a list's items are strings): only lines that
	// do are parsed, so that the many lines a common start matches
	// (outputs of the same command) cost a search each, not a parse.
	whole := appendEscaped(nil, longestLine(texts), math.MaxInt)
	data := t.data
	seen := -1 // end of the last line looked at
	for off := 0; ; {
		i := bytes.Index(data[off:], p)
		if i < 0 {
			break
		}
		start, end := lineAt(data, off+i)
		off = end
		if start <= seen {
			continue
		}
		seen = end
		if len(whole) > len(p) && !bytes.Contains(data[start:end], whole) {
			continue
		}
		e, ok := parseEntry(data[start:end])
		if !ok || e.sidechain != cur.sidechain || e.agentID != cur.agentID {
			continue
		}
		for _, r := range e.results {
			if r.id == "" || r.id == exclude || (r.output.Kind() != tree.KindObject && r.output.Kind() != tree.KindArray) {
				continue
			}
			c, ok := t.call(r.id, data[:start])
			if !ok || c.name != tool {
				continue
			}
			if !sameTexts(Slots(tool, r.output), texts) || !showsAll(r.visible, texts) {
				continue
			}
			if t.writtenSince(c.input, data[end:]) {
				continue
			}
			id, input = r.id, c.input
		}
	}
	return id, input
}

// longestLine is the longest line of texts.
func longestLine(texts []string) string {
	longest := ""
	for _, s := range texts {
		for line := range strings.SplitSeq(s, "\n") {
			if len(line) > len(longest) {
				longest = line
			}
		}
	}
	return longest
}

func sameTexts(slots []Slot, texts []string) bool {
	if len(slots) != len(texts) {
		return false
	}
	for i := range slots {
		if slots[i].Text != texts[i] {
			return false
		}
	}
	return true
}

func showsAll(visible string, texts []string) bool {
	if inband.Family(visible) == "ref" {
		return false
	}
	for _, s := range texts {
		if !strings.Contains(visible, s) {
			return false
		}
	}
	return true
}

// call finds the tool call id in before (the lines before its result).
func (t *Transcript) call(id string, before []byte) (call, bool) {
	needle := []byte(id)
	for end := len(before); ; {
		i := lastIndex(before[:end], needle)
		if i < 0 {
			return call{}, false
		}
		start, lend := lineAt(before, i)
		end = start
		e, ok := parseEntry(before[start:lend])
		if !ok {
			continue
		}
		for _, c := range e.calls {
			if c.id == id {
				c.sidechain, c.agentID = e.sidechain, e.agentID
				return c, true
			}
		}
	}
}

// lastIndex is bytes.LastIndex, fast also when sep is far from the end or
// absent: the last 64 KB are searched backwards (a call is most often
// near its result), the rest forwards (bytes.Index is vectorised,
// bytes.LastIndex is not).
func lastIndex(s, sep []byte) int {
	const tail = 64 << 10
	if len(s) <= tail {
		return bytes.LastIndex(s, sep)
	}
	cut := len(s) - tail
	if i := bytes.LastIndex(s[cut:], sep); i >= 0 {
		return cut + i
	}
	last := -1
	head := s[:min(len(s), cut+len(sep)-1)]
	for off := 0; ; {
		i := bytes.Index(head[off:], sep)
		if i < 0 {
			return last
		}
		last = off + i
		off += i + 1
	}
}

// mutating are the tools whose call writes the path it names.
var mutating = []string{"Write", "Edit", "MultiEdit", "NotebookEdit"}

// writtenSince reports whether a call with input names a path (file_path,
// notebook_path or path) that a mutating call in after writes, or a path
// under it.
func (t *Transcript) writtenSince(input tree.Value, after []byte) bool {
	p := inputPath(input)
	if p == "" {
		return false
	}
	for _, name := range mutating {
		needle := []byte(`"` + name + `"`)
		for off := 0; ; {
			i := bytes.Index(after[off:], needle)
			if i < 0 {
				break
			}
			start, end := lineAt(after, off+i)
			off = end
			e, ok := parseEntry(after[start:end])
			if !ok {
				continue
			}
			for _, c := range e.calls {
				if c.name == name && under(inputPath(c.input), p) {
					return true
				}
			}
		}
	}
	return false
}

// inputPath is the path a call's input names, if any.
func inputPath(in tree.Value) string {
	for _, k := range [...]string{"file_path", "notebook_path", "path"} {
		if v, ok := in.Get(k); ok && v.Str() != "" {
			return filepath.Clean(v.Str())
		}
	}
	return ""
}

// under reports whether path w is p or under p.
func under(w, p string) bool {
	return w != "" && (w == p || strings.HasPrefix(w, strings.TrimSuffix(p, "/")+"/"))
}
