package fit

import (
	"context"
	"fmt"
	"strings"

	"github.com/terse-dev/terse/inband"
)

// splitLines splits s into lines without their "\n". A final newline does
// not start an extra line.
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// isDiff reports whether lines look like a unified diff with file headers.
func isDiff(lines []string) bool {
	for i, l := range lines {
		if strings.HasPrefix(l, "diff --git ") {
			return true
		}
		if strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			return true
		}
	}
	return false
}

// gapMarker is the line that stands for the left-out source lines [a, b)
// (numbered from 1). Its form is part of the API (models parse it):
//
//	[… 118 lines left out: lines 3–120 …]
//	[… 1 line left out: line 7 …]
//	[… 40 lines left out: lines 120–159, +30/−10 …]
func gapMarker(a, b int, extra string) string {
	return inband.Gap{First: a + 1, Last: b, Extra: extra}.String()
}

// textUnit is a run of source lines [a, b) fitted as one item: a line, or a
// diff file section (or the preamble before the first file).
type textUnit struct {
	a, b   int
	path   string // diff file path
	add    int
	del    int
	levels []Level
	out    [][]string // lines per level, markers included
}

// FitText fits text (logs, diffs, prose) under the budget. Lines are never
// cut: a line is kept whole or declared in a gap marker with its line
// numbers. Diffs are fitted by file, each at full, standard (long hunks
// shortened) or minimal (the file header and its +/− counts).
func FitText(ctx context.Context, s string, opts *Options) (Result, error) {
	o := opts.normalized()
	if fitsQuick(o, []byte(s)) {
		return Result{Text: s, Stats: Stats{Kind: "text", Unit: "lines", Solver: SolverNone, Total: -1}}, nil
	}
	lines := splitLines(s)
	kind := "text"
	if isDiff(lines) {
		kind = "diff"
	}
	name, src, err := resolveStrategy(o, kind)
	if err != nil {
		return Result{}, err
	}
	t := &textFit{o: o, s: s, lines: lines, kind: kind, name: name}
	t.st = Stats{Kind: kind, Strategy: name, StrategySource: src}
	if kind == "diff" {
		t.units = diffUnits(lines, t.base)
		t.st.Unit = "files"
	} else {
		t.lineUnits()
		t.st.Unit = "lines"
	}
	t.newEngine()
	t.values()
	t.chunkIndex()
	t.assembler()
	storeErr := t.store(ctx)
	st := &t.st
	st.Budget = t.o.Budget
	st.Chunks = len(t.ck.ranges)
	text := t.e.run(st)
	return Result{Text: text, Stats: *st, StoreErr: storeErr, sel: t.e.sel}, nil
}

// textFit is one fitting of a text: its units (lines, or a diff's
// files), the engine that chooses their levels and what the engine
// calls back to render, chunk and assemble them.
type textFit struct {
	o     Options
	s     string
	lines []string
	kind  string
	name  string
	base  int
	st    Stats
	units []textUnit
	// promote is the engine's (see lineUnits).
	promote func(i int, l Level) Level
	n       int
	e       *engine
	// out returns unit i's lines at level l; a line unit is its line.
	out  func(i int, l Level) []string
	errs []bool
	ck   *chunkIndex
}

// lineUnits makes a text's units, one per line, a long line with
// shorter levels that cut it.
func (t *textFit) lineUnits() {
	o, lines := &t.o, t.lines
	units := make([]textUnit, len(lines))
	full := []Level{Full} // shared, read-only
	// A line too long for a good part of the budget can be shown cut,
	// its start kept and the rest declared ("…[+N chars]"): the
	// chunk that holds it has it whole.
	// Two cuts: about half the budget, and an eighth of it.
	// Every line longer than twice the short cut has both, whatever
	// the budget (the order lines gain detail in must not depend on
	// it, see upgrades): the short cut is the same at every budget,
	// the long one grows with it; a cut as long as the line shows it
	// whole, and declares it so.
	hi, lo := max(2*minLineCut, o.Budget*2), minLineCut
	// A long line's three renderings, allocated together for all
	// long lines (a log can have tens of thousands), and one list of
	// levels shared by them.
	long := 0
	for _, l := range lines {
		if len(l) > 2*minLineCut {
			long++
		}
	}
	three := []Level{Full, Standard, Minimal}
	strs, outs := make([]string, 3*long), make([][]string, 3*long)
	for i, l := range lines {
		units[i] = textUnit{a: i, b: i + 1, levels: full}
		if len(l) <= 2*minLineCut {
			continue
		}
		u := &units[i]
		s, out := strs[:3:3], outs[:3:3]
		strs, outs = strs[3:], outs[3:]
		s[0], s[1], s[2] = l, l, l
		if len(l) > 2*hi {
			if cut, ok := cutString(l, hi); ok {
				s[1] = cut
			}
		}
		if cut, ok := cutString(l, lo); ok && len(l) > 2*lo {
			s[2] = cut
		}
		for k := range out {
			out[k] = s[k : k+1 : k+1]
		}
		u.levels, u.out = three[:3:3], out
	}
	t.units = units
	e0 := &t.units
	t.promote = func(i int, l Level) Level {
		u := &(*e0)[i]
		if u.out != nil && l != Full && u.out[levelIndex(u.levels, l)][0] == u.out[0][0] {
			return Full
		}
		return l
	}
}

// newEngine makes the engine over the units, with their levels, sizes
// and renderings.
func (t *textFit) newEngine() {
	units, lines := t.units, t.lines
	n := len(units)
	t.n = n
	t.st.Total = n
	e := &engine{o: t.o, kind: t.kind, unit: t.st.Unit, n: n, vals: make([]float64, n), linear: t.kind == "text", promote: t.promote}
	t.e = e
	e.levels, e.bytes = make([][]Level, n), make([][]int, n)
	// out returns unit i's lines at level l; a line unit is its line.
	out := func(i int, l Level) []string {
		u := &units[i]
		if u.out == nil {
			return lines[u.a:u.b]
		}
		return u.out[levelIndex(u.levels, l)]
	}
	t.out = out
	sizes := make([]int, 0, n)
	for i, u := range units {
		e.levels[i] = u.levels
		if u.out == nil {
			sizes = append(sizes, len(lines[i])+1)
			e.bytes[i] = sizes[len(sizes)-1 : len(sizes) : len(sizes)]
			continue
		}
		e.bytes[i] = make([]int, len(u.out))
		for k, ls := range u.out {
			for _, l := range ls {
				e.bytes[i][k] += len(l) + 1
			}
		}
	}
	e.render = func(i int, l Level) []byte {
		return []byte(strings.Join(out(i, l), "\n") + "\n")
	}
}

// values sets the units' values by the strategy: a diff's files by
// path or position, a text's lines alike but for those around an error
// line (head_tail), and the head share of a text.
func (t *textFit) values() {
	e, units, n, name := t.e, t.units, t.n, t.name
	if t.kind == "text" {
		t.errs = errorLines(t.s, t.lines)
	}
	errs := t.errs
	switch {
	case t.kind == "diff":
		for i, u := range units {
			switch {
			case u.path == "":
				e.vals[i] = 1
			case name == StrategySizeProportional:
				e.vals[i] = PathWeight(u.path)
			case name == StrategyElementCount:
				e.vals[i] = positionValue(i, n)
			default:
				e.vals[i] = 1
			}
		}
	default:
		e.head = 0.3
		switch name {
		case StrategyDefault, StrategyElementCount:
			e.head = 1
		case StrategyCascading:
			e.head = 0
		}
		for i := range e.vals {
			e.vals[i] = 1
		}
		if name == StrategyHeadTail {
			for i, isErr := range errs {
				if isErr {
					for j := max(0, i-1); j <= min(n-1, i+1); j++ {
						e.vals[j] = boostValue
					}
				}
			}
		}
	}
	e.measure()
}

// chunkIndex partitions the units into chunks, each fetched as its
// source lines.
func (t *textFit) chunkIndex() {
	o, e, n, kind, units, lines, errs := &t.o, t.e, t.n, t.kind, t.units, t.lines, t.errs
	fullCosts := make([]int, n)
	for i := range n {
		fullCosts[i] = e.costs[i][0]
	}
	label := ""
	if kind == "diff" {
		label = "the diff"
		if len(units) > 0 && units[0].path == "" {
			label = "the diff (file 1 is its preamble)"
		}
	}
	// A chunk is fetched as its source lines.
	ck := partition(fullCosts, o.Budget, o.FetchBudget, o.Store != nil, &chunker{
		counter: o.Counter,
		where: func(a, b int) string {
			if kind == "diff" {
				return fmt.Sprintf("%s (lines %d–%d) of %d in %s", inband.Range("files", a, b), units[a].a+1, units[b-1].b, n, label)
			}
			return fmt.Sprintf("%s of %d", inband.Range("lines", a, b), n)
		},
		body: func(a, b int) string { return strings.Join(lines[units[a].a:units[b-1].b], "\n") },
	})
	ck.unit, ck.label = t.st.Unit, label
	if kind == "diff" {
		ck.levels = true
		ck.span = func(a, b int) string {
			return fmt.Sprintf("%s (lines %d–%d)", inband.Range("files", a, b), units[a].a+1, units[b-1].b)
		}
		ck.summary = func(a, b int) string {
			var paths []string
			add, del := 0, 0
			for _, u := range units[a:b] {
				if u.path != "" {
					paths = append(paths, u.path)
				}
				add, del = add+u.add, del+u.del
			}
			if len(paths) == 0 {
				return "preamble"
			}
			return fmt.Sprintf("%s; +%d/−%d", dirSummary(paths), add, del)
		}
	} else {
		ck.span = func(a, b int) string { return inband.Range("lines", a, b) }
		ck.summary = func(a, b int) string {
			ne := 0
			for _, isErr := range errs[a:b] {
				if isErr {
					ne++
				}
			}
			if ne > 0 {
				return inband.Plural(ne, "error line")
			}
			return ""
		}
	}
	e.chunks = ck
	t.ck = ck
}

// assembler sets how a selection becomes the returned text: the units
// kept, a gap marker for each run left out, the diff's levels, hint and
// chunk index.
func (t *textFit) assembler() {
	o, n, kind, units, base, out, ck := &t.o, t.n, t.kind, t.units, t.base, t.out, t.ck
	trailing := strings.HasSuffix(t.s, "\n")
	t.e.assemble = func(sel []Level, tier int) string {
		var sb strings.Builder
		for i := 0; i < n; {
			if sel[i] == Skip {
				j := i
				for j < n && sel[j] == Skip {
					j++
				}
				extra := ""
				if kind == "diff" {
					files := 0
					for _, u := range units[i:j] {
						if u.path != "" {
							files++
						}
					}
					if files > 0 {
						extra = inband.Plural(files, "file")
					}
				}
				sb.WriteString(gapMarker(units[i].a+base, units[j-1].b+base, extra))
				sb.WriteByte('\n')
				i = j
				continue
			}
			for _, l := range out(i, sel[i]) {
				sb.WriteString(l)
				sb.WriteByte('\n')
			}
			i++
		}
		if kind == "diff" {
			writeDiffLevels(&sb, sel)
		}
		writeHintAndIndex(&sb, *o, sel, ck, tier)
		out := sb.String()
		if !trailing {
			out = strings.TrimSuffix(out, "\n")
		}
		return out
	}
}

// store puts the text in the store, when there is one, and returns the
// store's error: the chunk index then says it failed.
func (t *textFit) store(ctx context.Context) error {
	o, ck, st, n, units := t.o, t.ck, &t.st, t.n, t.units
	var storeErr error
	if o.Store != nil {
		var files [][2]int
		if t.kind == "diff" {
			files = make([][2]int, n)
			for i, u := range units {
				files[i] = [2]int{u.a, u.b}
			}
		}
		h, err := put(ctx, o, header{Kind: t.kind, Label: ck.label, Unit: st.Unit, Total: n, Files: files,
			Chunks: spans(ck.ranges)}, []byte(t.s))
		if err != nil {
			storeErr, ck.failed, st.StoreFailed = err, true, true
		}
		ck.handle, st.Handle = h, h
	}
	return storeErr
}

// minLineCut is the runes a long line is cut to at minimal detail (at
// standard, a larger budget cuts it longer).
const minLineCut = 100

// lineOrder is the order in which the lines of a text are shown, the
// same at every budget: error lines and their neighbours (boosted) take
// every other place while they last, latest first; the others come from
// the head and the tail, the head taking its share of them (1: a prefix,
// 0: a suffix). Every line comes first at its cheapest level, and long
// lines gain their richer levels after every line is shown, in the same
// order (lineUpgrades).
func lineOrder(levels [][]Level, vals []float64, head float64) []int {
	n := len(levels)
	var boosted []int
	for i := n - 1; i >= 0; i-- {
		if vals[i] >= boostValue {
			boosted = append(boosted, i)
		}
	}
	isBoosted := make([]bool, n)
	for _, i := range boosted {
		isBoosted[i] = true
	}
	order := make([]int, 0, n)
	h, t, fromHead, taken := 0, n-1, 0, 0
	next := func() int { // the next head or tail line, -1 when none is left
		for h <= t && isBoosted[h] {
			h++
		}
		for t >= h && isBoosted[t] {
			t--
		}
		if h > t {
			return -1
		}
		taken++
		if float64(fromHead) < head*float64(taken) {
			fromHead++
			h++
			return h - 1
		}
		t--
		return t + 1
	}
	for b := 0; ; b++ {
		if b < len(boosted) {
			order = append(order, boosted[b])
		}
		i := next()
		if i >= 0 {
			order = append(order, i)
		}
		if i < 0 && b >= len(boosted) {
			break
		}
	}
	return order
}

// lineUpgrades returns the steps after every line of order is shown at
// its cheapest level: each line's richer levels, in the same order.
func lineUpgrades(order []int, levels [][]Level) []step {
	size := 0
	for _, ls := range levels {
		size += len(ls) - 1
	}
	steps := make([]step, 0, size)
	for _, i := range order {
		for k := len(levels[i]) - 2; k >= 0; k-- {
			steps = append(steps, step{item: i, from: k + 1, to: k})
		}
	}
	return steps
}

// writeDiffLevels defines the detail levels a diff selection uses:
//
//	> [levels: full = the file's whole diff; standard = hunks over 8 lines cut to their first 5 and last 2, later hunks after 20 lines left out; minimal = the file's header line and +/− counts]
func writeDiffLevels(sb *strings.Builder, sel []Level) {
	var std, min bool
	for _, l := range sel {
		std, min = std || l == Standard, min || l == Minimal
	}
	if !std && !min {
		return
	}
	sb.WriteString(inband.DiffLevels{Standard: std, Minimal: min}.String())
	sb.WriteByte('\n')
}

// diffUnits splits a diff into its preamble and one unit per file, with
// the three detail levels of each file.
func diffUnits(lines []string, base int) []textUnit {
	var starts []int
	for i, l := range lines {
		if strings.HasPrefix(l, "diff --git ") {
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 { // plain unified diff: split at "--- " before "+++ "
		for i, l := range lines {
			if strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
				starts = append(starts, i)
			}
		}
	}
	var units []textUnit
	if starts[0] > 0 {
		pre := lines[:starts[0]]
		u := textUnit{a: 0, b: starts[0], levels: []Level{Full}, out: [][]string{pre}}
		if len(pre) > 1 {
			u.levels = append(u.levels, Minimal)
			u.out = append(u.out, []string{pre[0], gapMarker(1+base, starts[0]+base, "")})
		}
		units = append(units, u)
	}
	for k, a := range starts {
		b := len(lines)
		if k+1 < len(starts) {
			b = starts[k+1]
		}
		units = append(units, diffFile(lines, a, b, base))
	}
	return units
}

// diffFile builds the unit of one file section lines[a:b].
func diffFile(lines []string, a, b, base int) textUnit {
	sec := lines[a:b]
	u := textUnit{a: a, b: b}
	for _, l := range sec {
		switch {
		case strings.HasPrefix(l, "+++ "):
			p := strings.TrimPrefix(l, "+++ ")
			if p == "/dev/null" {
				break
			}
			u.path = strings.TrimPrefix(p, "b/")
		case strings.HasPrefix(l, "--- ") && u.path == "":
			if p := strings.TrimPrefix(l, "--- "); p != "/dev/null" {
				u.path = strings.TrimPrefix(p, "a/")
			}
		case strings.HasPrefix(l, "+"):
			u.add++
		case strings.HasPrefix(l, "-"):
			u.del++
		}
	}
	if u.path == "" && strings.HasPrefix(sec[0], "diff --git ") {
		if f := strings.Fields(sec[0]); len(f) >= 4 {
			u.path = strings.TrimPrefix(f[3], "b/")
		}
	}
	// Standard: headers kept; each hunk body longer than 8 lines keeps its
	// first 5 and last 2 lines around a gap marker; after 20 lines, the
	// remaining hunks become one gap marker (after 20 lines).
	var std []string
	changed := false
	for i := 0; i < len(sec); {
		if !strings.HasPrefix(sec[i], "@@") {
			std = append(std, sec[i])
			i++
			continue
		}
		if len(std) >= 20 {
			std = append(std, gapMarker(a+i+base, b+base, "later hunks"))
			changed = true
			break
		}
		std = append(std, sec[i])
		j := i + 1
		for j < len(sec) && !strings.HasPrefix(sec[j], "@@") {
			j++
		}
		body := sec[i+1 : j]
		if len(body) > 8 {
			std = append(std, body[:5]...)
			std = append(std, gapMarker(a+i+1+5+base, a+j-2+base, ""))
			std = append(std, body[len(body)-2:]...)
			changed = true
		} else {
			std = append(std, body...)
		}
		i = j
	}
	u.levels = []Level{Full}
	u.out = [][]string{sec}
	if changed {
		u.levels = append(u.levels, Standard)
		u.out = append(u.out, std)
	}
	if len(sec) > 1 {
		u.levels = append(u.levels, Minimal)
		u.out = append(u.out, []string{sec[0], gapMarker(a+1+base, b+base, fmt.Sprintf("+%d/−%d", u.add, u.del))})
	}
	return u
}

// plural returns "1 file", "2 files".
// errorLines marks the lines that contain an error marker, searching the
// whole text once per marker rather than every line for every marker.
func errorLines(s string, lines []string) []bool {
	errs := make([]bool, len(lines))
	starts := make([]int, len(lines))
	off := 0
	for i, l := range lines {
		starts[i] = off
		off += len(l) + 1
	}
	for _, m := range errorMarkers {
		for at := 0; ; {
			k := strings.Index(s[at:], m)
			if k < 0 {
				break
			}
			pos := at + k
			// the line holding pos: the last start ≤ pos
			lo, hi := 0, len(starts)
			for lo+1 < hi {
				mid := (lo + hi) / 2
				if starts[mid] <= pos {
					lo = mid
				} else {
					hi = mid
				}
			}
			if lo < len(errs) {
				errs[lo] = true
			}
			at = pos + len(m)
		}
	}
	return errs
}
