package fit

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tree"
)

// chunkIndex splits the source into sequential chunks and describes them.
type chunkIndex struct {
	ranges    [][2]int // [start, end) in items
	unit      string   // "items", "lines", "files"
	label     string   // where the items are ("/items", "root array", "the log")
	zeroBased bool
	base      int // added to item numbers (a chunk fitted again)
	handle    string
	summary   func(a, b int) string
	sums      []string // summaries, computed on first use
	// span, when set, describes a chunk's range (text: "lines 1–500").
	span func(a, b int) string
}

// partition packs items, in order, into chunks of at most about 80 % of the
// budget (by full cost, after the envelope), so that a fetched chunk fits
// the same budget. When that would make more chunks than the index can
// list within about a fifth of the budget, it makes that many chunks of
// equal cost instead (a fetched chunk over budget is then fitted again).
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
	return &chunkIndex{ranges: rs}
}

// write renders the chunk index. Its wording is part of the API:
//
//	[chunks] 120 items at /items in 4 chunks; this response has 25 (10 full, 15 minimal):
//	  chunk 1 (offset=0, limit=30): 30 items; state: 20 open, 10 closed << here: 0–9 full, 10–24 minimal
//	  chunk 2 (offset=30, limit=30): 30 items; state: 30 open
//	[/chunks] Get chunk N in full: terse chunk c_0123456789abcdef N
func (c *chunkIndex) write(sb *strings.Builder, o Options, sel []Level) {
	total := len(sel)
	var counts [4]int
	for _, l := range sel {
		counts[l]++
	}
	kept := total - counts[Skip]
	at := ""
	if c.label != "" {
		at = " at " + c.label
	}
	fmt.Fprintf(sb, "[chunks] %d %s%s in %d chunks; this response has %d", total, c.unit, at, len(c.ranges), kept)
	if kept > 0 {
		var parts []string
		for l := Full; l < Skip; l++ {
			if counts[l] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[l], l))
			}
		}
		fmt.Fprintf(sb, " (%s)", strings.Join(parts, ", "))
	}
	sb.WriteString(":\n")
	base := 1 + c.base
	if c.zeroBased {
		base = c.base
	}
	for k, r := range c.ranges {
		if c.span != nil {
			fmt.Fprintf(sb, "  chunk %d (%s): ", k+1, c.span(r[0], r[1]))
		} else {
			fmt.Fprintf(sb, "  chunk %d (offset=%d, limit=%d): ", k+1, r[0]+c.base, r[1]-r[0])
		}
		if c.sums == nil {
			c.sums = make([]string, len(c.ranges))
			for j, q := range c.ranges {
				c.sums[j] = c.summary(q[0], q[1])
			}
		}
		sb.WriteString(c.sums[k])
		var byLevel [Skip][]int
		all := true
		for i := r[0]; i < r[1]; i++ {
			if l := sel[i]; l != Skip {
				byLevel[l] = append(byLevel[l], i)
			}
			if sel[i] != Full {
				all = false
			}
		}
		var here []string
		for l := Full; l < Skip; l++ {
			if len(byLevel[l]) > 0 {
				here = append(here, ranges(byLevel[l], base)+" "+l.String())
			}
		}
		switch {
		case all:
			sb.WriteString(" << here: all, full")
		case len(here) > 0:
			sb.WriteString(" << here: " + strings.Join(here, ", "))
		}
		sb.WriteByte('\n')
	}
	if c.handle != "" {
		fmt.Fprintf(sb, "[/chunks] Get chunk N in full: %s\n", fetch(o, c.handle, "N"))
	} else {
		sb.WriteString("[/chunks] Not stored: re-run with a larger budget to get more.\n")
	}
}

// categoryKeys are fields whose values summarize a chunk of items.
var categoryKeys = []string{"state", "status", "type", "kind", "level", "severity", "action", "event", "resolved"}

// summarizeItems describes JSON items: how many, then either the paths and
// +/− lines of diff-like items or the counts of a category field.
func summarizeItems(items []tree.Value) string {
	n := len(items)
	s := fmt.Sprintf("%d items", n)
	var paths []string
	add, del, hasStat := 0, 0, false
	for _, it := range items {
		if p := itemPath(it); p != "" && (it.Has("diff") || it.Has("patch") || it.Has("new_path") || it.Has("additions")) {
			paths = append(paths, p)
			a, d, ok := itemStat(it)
			add, del, hasStat = add+a, del+d, hasStat || ok
		}
	}
	if len(paths)*2 >= n && n > 0 {
		s += "; " + dirSummary(paths)
		if hasStat {
			s += fmt.Sprintf("; +%d/−%d", add, del)
		}
		return s
	}
	for _, k := range categoryKeys {
		counts := map[string]int{}
		seen := 0
		for _, it := range items {
			if v, ok := it.Get(k); ok && (v.Kind() == tree.KindString || v.Kind() == tree.KindBool) {
				seen++
				if v.Kind() == tree.KindBool {
					counts[fmt.Sprint(v.Bool())]++
				} else {
					t, _ := cutString(v.Str(), 24)
					counts[t]++
				}
			}
		}
		if seen*2 < n || len(counts) == 0 {
			continue
		}
		keys := make([]string, 0, len(counts))
		for v := range counts {
			keys = append(keys, v)
		}
		slices.SortFunc(keys, func(a, b string) int {
			if c := cmp.Compare(counts[b], counts[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		var parts []string
		for j, v := range keys {
			if j == 3 {
				parts = append(parts, fmt.Sprintf("%d other", n-sumCounts(counts, keys[:3])))
				break
			}
			parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
		}
		return s + "; " + k + ": " + strings.Join(parts, ", ")
	}
	return s
}

func sumCounts(m map[string]int, keys []string) int {
	t := 0
	for _, k := range keys {
		t += m[k]
	}
	return t
}

// itemStat returns the added and deleted lines of a diff-like item.
func itemStat(it tree.Value) (add, del int, ok bool) {
	if a, okA := it.Get("additions"); okA {
		if d, okD := it.Get("deletions"); okD {
			x, _ := a.Int()
			y, _ := d.Int()
			return int(x), int(y), true
		}
	}
	for _, k := range []string{"diff", "patch"} {
		if v, has := it.Get(k); has && v.Kind() == tree.KindString {
			for line := range strings.SplitSeq(v.Str(), "\n") {
				switch {
				case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
				case strings.HasPrefix(line, "+"):
					add++
				case strings.HasPrefix(line, "-"):
					del++
				}
			}
			return add, del, true
		}
	}
	return 0, 0, false
}

// dirSummary groups paths by their directory (up to two segments):
// "src/app/* (3 files), README.md, 4 top-level files".
func dirSummary(paths []string) string {
	dirOf := func(p string) string {
		d := path.Dir(p)
		if segs := strings.Split(d, "/"); len(segs) > 2 {
			d = strings.Join(segs[:2], "/")
		}
		return d
	}
	groups := map[string][]string{}
	for _, p := range paths {
		d := dirOf(p)
		groups[d] = append(groups[d], p)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for j, k := range keys {
		if j == 4 {
			parts = append(parts, fmt.Sprintf("%d more dirs", len(keys)-4))
			break
		}
		if g := groups[k]; len(g) <= 2 {
			parts = append(parts, g...)
		} else if k == "." {
			parts = append(parts, fmt.Sprintf("%d top-level files", len(g)))
		} else {
			parts = append(parts, fmt.Sprintf("%s/* (%d files)", k, len(g)))
		}
	}
	return strings.Join(parts, ", ")
}

// header is the first line of a stored payload: what Chunk needs to cut
// and render chunks again.
type header struct {
	V         int      `json:"v"`
	Kind      string   `json:"kind"` // json, text, diff
	Pointer   string   `json:"pointer,omitempty"`
	Mode      int      `json:"mode,omitempty"`
	Format    string   `json:"format,omitempty"`
	Budget    int      `json:"budget"`
	Tokenizer string   `json:"tokenizer"`
	Label     string   `json:"label"`
	Unit      string   `json:"unit,omitempty"`
	Chunks    [][2]int `json:"chunks"`
	Base      int      `json:"base,omitempty"` // item/line numbers start here
	// Lines holds, for text, each chunk's line range [start, end) (0-based).
	Lines [][2]int `json:"lines,omitempty"`
}

// save stores header and payload under a handle derived from both, so the
// same input and options always give the same handle (and output).
func save(ctx context.Context, o Options, h header, payload []byte) (string, error) {
	h.V, h.Base = 1, o.lineBase
	hj, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	blob := make([]byte, 0, len(hj)+1+len(payload))
	blob = append(append(append(blob, hj...), '\n'), payload...)
	sum := sha256.Sum256(blob)
	handle := "c_" + hex.EncodeToString(sum[:8])
	if err := o.Store.Put(ctx, handle, blob); err != nil {
		return "", fmt.Errorf("fit: storing chunks: %w", err)
	}
	return handle, nil
}

// ExpiredError is returned by [Chunk] for a handle that is unknown or has
// expired. Its message is terminal and says how to get the data again; it
// is part of the API.
type ExpiredError struct {
	Handle string
}

func (e *ExpiredError) Error() string {
	return "chunk handle " + e.Handle + " is unknown or expired (chunks are kept for a while after last use); " +
		"re-run the original call to get the data again"
}

// ChunkRangeError is returned by [Chunk] for a chunk number out of range.
type ChunkRangeError struct {
	Handle string
	N      int
	Chunks int
}

func (e *ChunkRangeError) Error() string {
	return fmt.Sprintf("chunk %d of %s does not exist: chunks are numbered 1 to %d", e.N, e.Handle, e.Chunks)
}

// Chunk returns chunk n (1-based) of the payload stored under handle, in
// full, preceded by one line saying what it is. A chunk over the stored
// budget (possible when the index had to merge chunks) is fitted to that
// budget again, with its own index and handle. opts supplies the store,
// counter, formats and fetch template; its Budget is ignored.
func Chunk(ctx context.Context, handle string, n int, opts *Options) (string, error) {
	o := opts.normalized()
	if o.Store == nil {
		return "", &Error{"no store configured"}
	}
	if !store.ValidKey(handle) {
		return "", &ExpiredError{handle}
	}
	blob, err := o.Store.Get(ctx, handle)
	if errors.Is(err, store.ErrNotFound) {
		return "", &ExpiredError{handle}
	}
	if err != nil {
		return "", err
	}
	nl := bytes.IndexByte(blob, '\n')
	var h header
	if nl < 0 || json.Unmarshal(blob[:nl], &h) != nil || h.V != 1 {
		return "", &ExpiredError{handle}
	}
	payload := blob[nl+1:]
	if n < 1 || n > len(h.Chunks) {
		return "", &ChunkRangeError{handle, n, len(h.Chunks)}
	}
	o.Budget = h.Budget
	r := h.Chunks[n-1]
	sub := o
	sub.Fetch = o.Fetch
	switch h.Kind {
	case "json":
		root, err := tree.Parse(payload)
		if err != nil {
			return "", &ExpiredError{handle}
		}
		for _, f := range o.Formats {
			if f.Name == h.Format && f.Append != nil {
				o.Format = f
			}
		}
		if h.Format != o.Format.Name && h.Format == "json" {
			o.Format = JSON
		}
		var doc tree.Value
		switch jsonMode(h.Mode) {
		case modeSingle:
			doc = root
		case modeMembers:
			obj, err := tree.Lookup(root, tree.Pointer(h.Pointer))
			if err != nil || obj.Kind() != tree.KindObject || r[1] > obj.Len() {
				return "", &ExpiredError{handle}
			}
			toks, _ := tree.Pointer(h.Pointer).Tokens()
			doc = setAt(root, toks, tree.Object(obj.Members()[r[0]:r[1]]...))
		default:
			arr, err := tree.Lookup(root, tree.Pointer(h.Pointer))
			if err != nil {
				return "", &ExpiredError{handle}
			}
			toks, _ := tree.Pointer(h.Pointer).Tokens()
			doc = setAt(root, toks, tree.Array(arr.Items()[r[0]:r[1]]...))
		}
		head := fmt.Sprintf("> [chunk %d of %d (%s): %s %d–%d of %d at %s]\n", n, len(h.Chunks), handle, h.Unit, r[0]+h.Base, r[1]-1+h.Base, h.Chunks[len(h.Chunks)-1][1], h.Label)
		sub.Budget = o.Budget - o.Counter.Count(head)
		sub.Format = o.Format
		sub.Pointer = ""
		if jsonMode(h.Mode) == modeArray {
			sub.Pointer = h.Pointer
			sub.lineBase = r[0] + h.Base
		}
		res, err := FitJSON(ctx, doc, &sub)
		if err != nil {
			return "", err
		}
		return head + res.Text, nil
	default:
		lr := h.Lines[n-1]
		text := string(payload)
		lines := splitLines(text)
		part := strings.Join(lines[lr[0]:lr[1]], "\n")
		head := fmt.Sprintf("> [chunk %d of %d (%s): lines %d–%d of %d]\n", n, len(h.Chunks), handle, lr[0]+1+h.Base, lr[1]+h.Base, len(lines))
		sub.Budget = o.Budget - o.Counter.Count(head)
		sub.lineBase = lr[0] + h.Base
		res, err := FitText(ctx, part, &sub)
		if err != nil {
			return "", err
		}
		return head + res.Text, nil
	}
}
