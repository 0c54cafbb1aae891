package fit

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// Format is an output format: a name and an append-style encoder. Formats
// are plain values so that callers can plug in encoders (TOON, adaptive
// rendering) that this package does not import.
type Format struct {
	Name   string
	Append func(dst []byte, v tree.Value) []byte
	// Draft, when set, renders v exactly as Append does whenever Append's
	// own check of its output passes, without that check (an encoder that
	// verifies its text by decoding it, for example). The fitter costs and
	// counts candidate selections with Draft, and renders the text it
	// returns with Append: when the two differ, it fits again with Append
	// alone. A whole document is drafted too, to see whether it fits; if
	// it does, it is rendered with Append, so a pair that lets Append
	// check the draft it made instead of encoding again costs least. Nil
	// means Append.
	//
	// The bytes Append and Draft return are read and never written, so
	// that, given an empty dst, a format may return memory it keeps (a
	// remembered encoding) instead of a copy.
	Draft func(dst []byte, v tree.Value) []byte
}

// draft is the format's Draft, else its Append.
func (f Format) draft() func(dst []byte, v tree.Value) []byte {
	if f.Draft != nil {
		return f.Draft
	}
	return f.Append
}

// JSON is compact JSON, the baseline format.
var JSON = Format{Name: "json", Append: tree.AppendJSON}

// DefaultBudget is the budget used when Options.Budget is zero: the
// largest MCP result Claude Code accepts.
const DefaultBudget = 25000

// DefaultFetch is the default command template of hints and chunk indexes.
const DefaultFetch = "terse chunk {handle} {n}"

// Options configure fitting. The zero value works: a 25,000-token budget by
// o200k_base, compact JSON, the item array found by [FindItems], the
// strategy resolved from Tool, and nothing stored.
type Options struct {
	// Budget is the largest output, in tokens of Counter. Zero means
	// DefaultBudget.
	Budget int
	// Counter measures tokens. Nil means o200k_base.
	Counter tokens.Counter
	// Format renders JSON output. The zero value means [JSON].
	Format Format
	// Formats are the formats [Chunk] can render stored payloads in, by
	// name; JSON is always available.
	Formats []Format
	// Pointer is the JSON Pointer of the item array. Empty means found by
	// [FindItems].
	Pointer string
	// Tool is the tool name, used to resolve the strategy.
	Tool string
	// Strategy forces a strategy by name. Empty means resolved from Tool
	// with [Resolve].
	Strategy string
	// Strategies maps tool names or globs (a config rule's match) to
	// strategy names (configuration); it is consulted before the
	// built-in defaults.
	Strategies map[string]string
	// Drop lists extra fields the standard level drops; Keep lists fields
	// it never drops; Identity replaces [DefaultIdentity] for the minimal
	// level.
	Drop, Keep, Identity []string
	// Store keeps the full payload so that every chunk can be fetched
	// later. Nil means nothing is stored, and hints say to re-run with a
	// larger budget instead.
	Store store.Store
	// Fetch is the command shown for fetching chunk {n} of {handle}.
	// Empty means DefaultFetch.
	Fetch string
	// FetchBudget is the budget a fetch of a chunk with that command
	// gets when it names no budget of its own (the client's limit, see
	// [Clients]): chunks are sized to it, the index says it, and marks a
	// chunk over budget only when it is larger. Zero means
	// DefaultFetchBudget.
	FetchBudget int
	// Scope is the session (and conversation) the result belongs to: its
	// chunk handles are bound to it, and fetching them with another Scope
	// gives a [*ScopeError].
	Scope string
	// Key keys chunk handles (an HMAC of scope and content): with a
	// secret key (random bytes at process start will do: a fetch looks a
	// handle up and checks its scope, it never recomputes the MAC),
	// handles are unguessable. Empty means a public key: handles are then
	// the same in every process, and guessable by whoever knows the
	// content and the scope.
	Key []byte
	// StoreTimeout bounds each store call. Zero means
	// DefaultStoreTimeout.
	StoreTimeout time.Duration
	// RawHint says how to get a whole result when its chunks cannot be
	// stored (the store failed). Empty means DefaultRawHint.
	RawHint string
	// Compact is the compact JSON (tree.AppendJSON) of the document
	// given to FitJSON, when the caller has it already: it is then not
	// encoded again. It is kept (stored, or returned as the text) and
	// must not change.
	Compact []byte

	// wholeTokens is the count of the whole document's encoding, when
	// known (FitJSON counted it).
	wholeTokens int
}

// DefaultRawHint is Options.RawHint's default.
const DefaultRawHint = "re-run with a larger budget to see more"

func (o *Options) normalized() Options {
	var x Options
	if o != nil {
		x = *o
	}
	if x.Budget <= 0 {
		x.Budget = DefaultBudget
	}
	if x.Counter == nil {
		x.Counter = tokens.O200kBase()
	}
	if x.Format.Append == nil {
		x.Format = JSON
	}
	if x.Fetch == "" {
		x.Fetch = DefaultFetch
	}
	if x.FetchBudget <= 0 {
		x.FetchBudget = DefaultFetchBudget
	}
	if x.StoreTimeout <= 0 {
		x.StoreTimeout = DefaultStoreTimeout
	}
	if x.RawHint == "" {
		x.RawHint = DefaultRawHint
	}
	return x
}

// Result is fitted text and what fitting did.
type Result struct {
	Text  string
	Stats Stats
	// StoreErr is the *StoreError of a store that failed to keep the
	// chunks (Stats.StoreFailed): the text still fits the budget and
	// says that the rest is not retrievable right now.
	StoreErr error

	sel []Level // the level of every unit, for tests
}

// Stats describe one fitting.
type Stats struct {
	Truncated      bool   // something was left out or shortened
	Kind           string // "json", "text" or "diff"
	Pointer        string // JSON Pointer of the item array ("" is the root)
	Unit           string // "items", "lines" or "files"
	Total          int    // items in the source
	Full           int    // items kept at full detail
	Standard       int    // … at standard
	Minimal        int    // … at minimal
	Strategy       string
	StrategySource string
	Solver         string
	Handle         string // store handle of the full payload, if stored
	StoreFailed    bool   // the chunks could not be stored (see Result.StoreErr)
	Budget         int    // the budget fitted to
	Chunks         int    // chunks in the index
	Tokens         int    // tokens of Text by the counter, when Counted
	Counted        bool
	Iterations     int // solve-render-count rounds
}

// Error is returned for options that cannot be applied.
type Error struct{ Msg string }

func (e *Error) Error() string { return "fit: " + e.Msg }

// level value factors: the share of an item's information each level
// keeps.
var levelValue = [...]float64{Full: 1, Standard: 0.6, Minimal: 0.3}

// engine is what the JSON and text paths share: per-item options and
// values, the solve-render-count loop and the in-band notes.
type engine struct {
	o      Options
	kind   string
	unit   string
	n      int
	vals   []float64
	levels [][]Level // available levels per item, richest first
	bytes  [][]int   // rendering size per available level
	costs  [][]int   // token cost per available level
	render func(i int, l Level) []byte
	// renderMany, when set, renders items at one level together, as
	// the output shows them: large inputs' samples are counted so.
	renderMany func(idx []int, l Level) []byte
	linear     bool    // items are lines: head+tail solver
	head       float64 // head share for linear text
	// assemble returns the complete output for a selection.
	assemble func(sel []Level, tier int) string
	chunks   *chunkIndex
	// sel and tier are the selection run returned and its tier.
	sel  []Level
	tier int
	up   *upgradeOrder // the upgrade order, built by upgrades
	// promote, when set, gives the level an item at level l is shown
	// and declared at (Full for a standard level that leaves it whole).
	promote func(i int, l Level) Level
	// estimated: costs were estimated from a counted sample (large
	// inputs); they only order the upgrades, the text is counted.
	estimated bool
	// fullRatio is the whole document's tokens per JSON byte of its
	// items at full detail, when it was counted (0: not known).
	fullRatio float64
	lc        *tokens.LineCounter // count's, made on first use
}

// minStdCap is the fewest runes a standard level cuts a string to, at
// any budget (a larger budget over few items cuts them longer).
const minStdCap = 200

// exactBytes is the total rendering size up to which every option is
// counted exactly; above it, costs are estimated from an exactly counted
// sample and the final output is still counted exactly.
const exactBytes = 96 << 10

// sampleBytes is about how much of a level's renderings is counted when
// its costs are estimated.
const sampleBytes = 24 << 10

// measure sets e.costs: every option counted exactly for a small input,
// estimated from a counted sample otherwise. Costs are written over the
// sizes (e.bytes), which nothing reads after: a cost is written only
// once its size is read.
func (e *engine) measure() {
	e.costs = e.bytes
	defer func() { e.bytes = nil }()
	total := 0
	for i := range e.n {
		for _, b := range e.bytes[i] {
			total += b
		}
	}
	c := e.o.Counter
	if total <= exactBytes {
		for i := range e.n {
			for k, l := range e.levels[i] {
				e.costs[i][k] = tokens.CountBytes(c, e.render(i, l)) + 1
			}
		}
		return
	}
	e.estimated = true
	// Per level: count up to 32 evenly spread items exactly, estimate the
	// rest from the sample's tokens per byte, rounded up with a 10 % margin.
	// Large items are sampled by size: about sampleBytes of renderings (at
	// least 3 items) give a steady ratio, and counting more costs more
	// than the final text's exact count.
	idx := make([]int, 0, e.n) // the items that have level l: one slice for every level
	for l := Full; l < Skip; l++ {
		if l == Full && e.fullRatio > 0 {
			for i := range e.n {
				e.costs[i][0] = int(math.Ceil(float64(e.bytes[i][0])*e.fullRatio*1.1)) + 1
			}
			continue
		}
		idx = idx[:0]
		size := 0
		for i := range e.n {
			if k := levelIndex(e.levels[i], l); k >= 0 {
				idx = append(idx, i)
				size += e.bytes[i][k]
			}
		}
		if len(idx) == 0 {
			continue
		}
		want := 32
		if size > 0 {
			want = min(32, max(3, int(int64(sampleBytes)*int64(len(idx))/int64(size))))
		}
		step := max(1, len(idx)/want)
		if e.renderMany != nil {
			// The sample rendered together, as in the output (a table
			// of rows costs less than its rows alone), counted once.
			var sample []int
			byt := 0
			for j := 0; j < len(idx); j += step {
				sample = append(sample, idx[j])
				byt += e.bytes[idx[j]][levelIndex(e.levels[idx[j]], l)]
			}
			ratio := 0.3
			if byt > 0 {
				ratio = float64(tokens.CountBytes(c, e.renderMany(sample, l))) / float64(byt)
			}
			for _, i := range idx {
				k := levelIndex(e.levels[i], l)
				e.costs[i][k] = int(math.Ceil(float64(e.bytes[i][k])*ratio*1.1)) + 1
			}
			continue
		}
		tok, byt := 0, 0
		for j := 0; j < len(idx); j += step {
			i := idx[j]
			k := levelIndex(e.levels[i], l)
			byt += e.bytes[i][k]
			n := tokens.CountBytes(c, e.render(i, l))
			e.costs[i][k] = n + 1
			tok += n
		}
		ratio := 0.3
		if byt > 0 {
			ratio = float64(tok) / float64(byt)
		}
		for j, i := range idx {
			if j%step == 0 {
				continue
			}
			k := levelIndex(e.levels[i], l)
			e.costs[i][k] = int(math.Ceil(float64(e.bytes[i][k])*ratio*1.1)) + 1
		}
	}
}

// problem returns the knapsack of the engine's options, weights in units
// of quantum tokens (rounded), the options of all items in one slab.
func (e *engine) problem(quantum int) *problem {
	p := &problem{items: make([][]option, e.n)}
	nopts := 0
	for _, ls := range e.levels {
		nopts += len(ls)
	}
	slab := make([]option, nopts)
	for i := range e.n {
		opts := slab[:len(e.levels[i]):len(e.levels[i])]
		slab = slab[len(opts):]
		for k, l := range e.levels[i] {
			opts[k] = option{(e.costs[i][k] + quantum/2) / quantum, e.vals[i] * levelValue[l]}
		}
		p.items[i] = opts
	}
	return p
}

// levelLists holds each list of levels an item can have, richest first,
// indexed by the set of them (bit 1<<l for level l).
var levelLists = func() (t [1 << Skip][]Level) {
	for set := range t {
		for l := Full; l < Skip; l++ {
			if set&(1<<l) != 0 {
				t[set] = append(t[set], l)
			}
		}
	}
	return t
}()

func levelIndex(ls []Level, l Level) int {
	for k, x := range ls {
		if x == l {
			return k
		}
	}
	return -1
}

// count counts a draft of the output. The drafts of one fit share most
// of their lines, each counted once (tokens.LineCounter).
func (e *engine) count(s string) int {
	if e.lc == nil {
		e.lc = tokens.NewLineCounter(e.o.Counter)
	}
	return e.lc.Count(s)
}

// run finds the selection: solve with an estimated capacity, render, count
// the whole output exactly, and tighten until it fits. The budget is a
// guarantee: the returned text is ≤ Budget by the counter, or, when not
// even the notice of what is left out fits, that notice.
func (e *engine) run(st *Stats) string {
	// Tiers of in-band apparatus, richest first: hint and chunk index,
	// hint only, declarations only. The tier is the same at every budget
	// (so that a larger one never shows less), but a poorer tier is used
	// when the richer one leaves no room for any item.
	var text string
	var sel []Level
	iters := 0
	// With a handle, every response says how to get what it leaves out.
	minTier := tierNone
	if e.chunks != nil && e.chunks.handle != "" {
		minTier = tierHint
	}
	tokens, counted := 0, false
	// One chunk (a source a fetch returns whole, at every budget): the
	// hint names its range and says all the index would, for less.
	first := tierIndex
	if e.chunks != nil && len(e.chunks.ranges) == 1 && minTier <= tierHint {
		first = tierHint
	}
	for tier := first; tier >= minTier; tier-- {
		s, t, ok := e.runTier(tier, &iters, st)
		if ok && (kept(s) > 0 || tier == tierNone || tier == minTier && sel == nil) {
			sel, text, e.tier = s, t, tier
			tokens, counted = st.Tokens, st.Counted
			break
		}
		if ok && sel == nil {
			sel, text, e.tier = s, t, tier // nothing kept, but fits: the fallback
			tokens, counted = st.Tokens, st.Counted
		}
	}
	st.Tokens, st.Counted = tokens, counted
	st.Iterations = iters
	if sel == nil {
		sel = make([]Level, e.n)
		for i := range sel {
			sel[i] = Skip
		}
		// Not even the notice that declares what is left out fits: it
		// is shown anyway, over the budget, so that nothing is left out
		// undeclared (nor without its handle, when stored) and a
		// non-empty source never gives an empty text. The caller raises
		// its budget to it (see the package doc, "The budget rule").
		e.tier = tierHint
		text = e.assemble(sel, tierHint)
		st.Tokens, st.Counted = e.count(text), true
	}
	e.sel = sel
	st.Truncated = false
	for _, l := range sel {
		if l != Full {
			st.Truncated = true
		}
		switch l {
		case Full:
			st.Full++
		case Standard:
			st.Standard++
		case Minimal:
			st.Minimal++
		}
	}
	return text
}

// The in-band apparatus tiers.
const (
	tierNone  = iota // gaps declared, nothing else
	tierHint         // plus the overflow hint
	tierIndex        // plus the chunk index
)

func kept(sel []Level) int {
	n := 0
	for _, l := range sel {
		if l != Skip {
			n++
		}
	}
	return n
}

// runTier solves at one tier: solve with the capacity left beside the
// apparatus, render, count exactly, tighten until it fits, then drop the
// least valuable items if it still does not. ok is false when not even
// the empty selection fits.
func (e *engine) runTier(tier int, iters *int, st *Stats) ([]Level, string, bool) {
	budget := e.o.Budget
	skip := make([]Level, e.n)
	for i := range skip {
		skip[i] = Skip
	}
	empty := e.assemble(skip, tier)
	base := e.count(empty)
	if base > budget {
		return nil, "", false
	}
	return e.runPrefix(tier, skip, empty, base, iters, st)
}

// upgrades is the order in which items gain detail, the same at every
// budget: every item shown at its cheapest level, the most valuable
// first, then made richer along its convex hull, by value gained per
// token (see showFirst). A selection is a
// prefix of it, so that a larger budget, which fits a longer prefix,
// never shows fewer items, fewer items whole, or less of any item.
func (e *engine) upgrades() *upgradeOrder {
	if e.up == nil {
		if e.linear {
			e.up = &upgradeOrder{first: lineOrder(e.levels, e.vals, e.head), levels: e.levels}
			e.up.steps = lineUpgrades(e.up.first, e.levels)
		} else {
			e.up = &upgradeOrder{steps: showFirst(e.problem(1))}
		}
	}
	return e.up
}

// upgradeOrder is an order of upgrade steps: first, items shown at
// their cheapest level, one step each (lines: a text of 100,000 lines
// has as many, and a fit reads the first few hundred), then steps.
type upgradeOrder struct {
	first  []int
	levels [][]Level
	steps  []step
}

func (u *upgradeOrder) len() int { return len(u.first) + len(u.steps) }

// at returns step j.
func (u *upgradeOrder) at(j int) step {
	if j < len(u.first) {
		i := u.first[j]
		return step{item: i, from: -1, to: len(u.levels[i]) - 1}
	}
	return u.steps[j-len(u.first)]
}

// runPrefix fits the longest prefix of the upgrades whose text, counted,
// fits the budget: doubling from one step while it fits, then halving
// the last interval. The probes do not depend on the budget until a
// larger budget fits one that a smaller does not, and from there on it
// only looks further: the prefix never shrinks as the budget grows.
func (e *engine) runPrefix(tier int, skip []Level, empty string, base int, iters *int, st *Stats) ([]Level, string, bool) {
	up := e.upgrades()
	st.Solver = SolverGreedy
	if e.linear {
		st.Solver = SolverHeadTail
	}
	type probe struct {
		sel  []Level
		text string
		n    int
	}
	// cur is the selection of the best prefix so far (of lo steps); a
	// probe applies the steps after it in place and takes them back
	// when it does not fit (a selection is as long as the input: one
	// copy per probe would cost more than the probe's count).
	cur := slices.Clone(skip)
	best := probe{sel: cur, text: empty, n: base}
	lo, hi := 0, up.len()+1 // the prefix of lo steps fits; of hi, not (or hi is past the end)
	type undo struct {
		item int
		l    Level
	}
	var undos []undo
	try := func(k int) (probe, bool) {
		*iters++
		undos = undos[:0]
		for j := lo; j < k; j++ {
			x := up.at(j)
			undos = append(undos, undo{x.item, cur[x.item]})
			cur[x.item] = e.levels[x.item][x.to]
			if e.promote != nil {
				cur[x.item] = e.promote(x.item, cur[x.item])
			}
		}
		p := probe{sel: cur}
		p.text = e.assemble(cur, tier)
		p.n = e.count(p.text)
		if p.n > e.o.Budget {
			for i := len(undos) - 1; i >= 0; i-- {
				cur[undos[i].item] = undos[i].l
			}
			return p, false
		}
		return p, true
	}
	for k := 1; k <= up.len(); k = min(2*k, up.len()) {
		p, ok := try(k)
		if !ok {
			hi = k
			break
		}
		best, lo = p, k
		if k == up.len() {
			break
		}
	}
	for hi-lo > 1 && lo < up.len() {
		m := (lo + hi) / 2
		if p, ok := try(m); ok {
			best, lo = p, m
		} else {
			hi = m
		}
	}
	st.Tokens, st.Counted = best.n, true
	return best.sel, best.text, true
}

// fitsQuick reports whether text is within budget without trimming. A
// token is at least one byte, so a text no longer than the budget in bytes
// fits without being counted. A text whose first budget×8 bytes already
// count more than the budget (plus a margin for the piece cut at the end)
// does not fit, without counting the rest. This is only a shortcut: a
// wrong "no" would still give the plain encoding, since the fitter keeps
// every item at full detail when they all fit.
func fitsQuick(o Options, text []byte) bool {
	if len(text) <= o.Budget {
		return true
	}
	if k, ok := o.Counter.(knownCounter); ok {
		// text is only read during the call.
		if n, ok := k.Known(unsafe.String(unsafe.SliceData(text), len(text))); ok {
			return n <= o.Budget
		}
	}
	if p := o.Budget * 8; len(text) > 2*p && tokens.CountBytes(o.Counter, text[:p]) > o.Budget+64 {
		return false
	}
	return tokens.CountBytes(o.Counter, text) <= o.Budget
}

func resolveStrategy(o Options, kind string) (string, string, error) {
	name, src := o.Strategy, "option"
	if name == "" {
		name, src = Resolve(o.Tool, o.Strategies)
		if src == "uniform" {
			switch kind {
			case "diff":
				name, src = StrategySizeProportional, "kind default"
			case "text":
				name, src = StrategyHeadTail, "kind default"
			}
		}
	}
	if !knownStrategy(name) {
		return "", "", &Error{fmt.Sprintf("unknown strategy %q (want one of %s)", name, strings.Join(Strategies, ", "))}
	}
	return name, src, nil
}

// spans turns chunk ranges into stored spans.
func spans(rs [][2]int) []span {
	out := make([]span, len(rs))
	for k, r := range rs {
		out[k] = span{A: r[0], B: r[1]}
	}
	return out
}

// knownCounter is a counter that remembers counts (a cache in front of
// the tokenizer): Known returns the count of s when it has it, without
// counting.
type knownCounter interface {
	Known(s string) (int, bool)
}

// writeHintAndIndex writes the overflow hint and the chunk index.
//
//	> [92 of 118 lines left out: not stored; re-run with a larger budget to see them]
//	> [all 2 items left out, too large for this budget: get chunk N of 2 whole with: terse chunk c_0123456789012345 N; chunk 1: item 1, chunk 2: item 2 (over budget); a fetch returns up to 20,000 tokens]
//	> [114 of 120 items left out, 5 shortened: get all 120 items whole with: terse chunk c_0123456789012345 1; a fetch returns up to 20,000 tokens]
//	> [23 of 25 items shortened: not retrievable right now (the chunk store is unavailable); re-run with a larger budget to see more]
func writeHintAndIndex(sb *strings.Builder, o Options, sel []Level, idx *chunkIndex, tier int) {
	counts := levelCounts(sel)
	skipped, short := counts[Skip], counts[Standard]+counts[Minimal]
	if skipped+short == 0 || tier == tierNone {
		return
	}
	x := inband.Overflow{What: inband.Elided{Skipped: skipped, Short: short, Total: len(sel), Unit: idx.unit, Cut: !idx.levels}}
	switch {
	case tier == tierIndex:
		// The index says it all: what is here, what is not, and the call.
		idx.write(sb, o, sel)
		return
	case idx.handle != "" && len(idx.ranges) == 1:
		// One chunk: the source whole, by one call.
		x.How, x.Get = inband.OneChunk, fmt.Sprintf("all %d %s", len(sel), idx.unit)
		if len(sel) == 1 {
			x.Get = inband.Range(idx.unit, 0, 1)
		}
		x.Call, x.Over, x.Fetch = fetch(o, idx.handle, "1"), idx.over(0), idx.fetch
	case idx.handle != "":
		x.How, x.Chunks, x.Call, x.List, x.Fetch = inband.ByChunk, len(idx.ranges), fetch(o, idx.handle, "N"), idx.list(), idx.fetch
	case idx.failed:
		x.How, x.RawHint = inband.Unavailable, o.RawHint
	default:
		x.How = inband.NotStored
	}
	sb.WriteString(x.String())
	sb.WriteByte('\n')
}
