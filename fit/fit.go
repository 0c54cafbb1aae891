package fit

import (
	"bytes"
	"context"
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

// FitJSON fits a JSON document under the budget.
func FitJSON(ctx context.Context, root tree.Value, opts *Options) (Result, error) {
	o := opts.normalized()
	if sampledSize(root) > 40*o.Budget {
		// Far too large to fit (real JSON averages well under 40 bytes
		// per token): skip encoding it whole just to find out. Were the
		// guess wrong, the fitter would keep every item at full detail
		// and give the plain encoding anyway.
		return fitJSON(ctx, o, root, nil)
	}
	// Drafted: most large results do not fit, and then the whole
	// encoding is only counted.
	var body []byte
	if o.Compact != nil && o.Format.Name == JSON.Name {
		body = o.Compact
	} else {
		body = o.Format.draft()(nil, root)
	}
	var fits bool
	if _, ok := o.Counter.(knownCounter); ok && len(body) > o.Budget {
		// A counter that remembers counts (a pipeline's): the whole
		// encoding is counted once, here, since its caller counts it
		// for its report anyway; the fitter scales its estimates by it.
		o.wholeTokens = o.Counter.Count(unsafe.String(unsafe.SliceData(body), len(body)))
		fits = o.wholeTokens <= o.Budget
	} else {
		fits = fitsQuick(o, body)
	}
	if fits {
		if o.Format.Draft != nil {
			final := o.Format.Append(nil, root)
			if !bytes.Equal(final, body) && !fitsQuick(o, final) {
				o.wholeTokens = 0
				return fitJSON(ctx, o, root, final)
			}
			body = final
		}
		// body is ours and never written again: share it.
		return Result{Text: unsafe.String(unsafe.SliceData(body), len(body)), Stats: Stats{Kind: "json", Solver: SolverNone, Unit: "items", Total: -1}}, nil
	}
	return fitJSON(ctx, o, root, body)
}

// sampledSize estimates the JSON size of a large array from 16 of its
// items; it is 0 for anything else (then the caller just encodes).
func sampledSize(v tree.Value) int {
	n := v.Len()
	if v.Kind() != tree.KindArray || n < 64 {
		return 0
	}
	items := v.Items()
	total := 0
	for k := range 16 {
		total += tree.JSONLen(items[k*n/16])
	}
	return total * n / 16
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

// jsonMode is how a JSON document is split into items.
type jsonMode uint8

const (
	modeArray   jsonMode = iota // the elements of the item array
	modeMembers                 // the members of the root object
	modeSingle                  // the whole document as one item
)

func fitJSON(ctx context.Context, o Options, root tree.Value, body []byte) (Result, error) {
	ptr := tree.Pointer(o.Pointer)
	mode := modeArray
	if o.Pointer != "" {
		v, err := tree.Lookup(root, ptr)
		if err != nil {
			return Result{}, &Error{err.Error()}
		}
		if v.Kind() != tree.KindArray {
			return Result{}, &Error{fmt.Sprintf("pointer %q is a %s, not an array", o.Pointer, v.Kind())}
		}
	} else if p, ok := FindItems(root); ok {
		ptr = p
		// A list of one object is that object: fit its members.
		if arr, _ := tree.Lookup(root, p); arr.Len() == 1 && arr.Index(0).Kind() == tree.KindObject {
			mode, ptr = modeMembers, p.Index(0)
		}
	} else if root.Kind() == tree.KindObject {
		mode = modeMembers
	} else {
		mode = modeSingle
	}
	if mode == modeMembers {
		ptr = unwrap(root, ptr)
	}
	res, err := fitJSONMode(ctx, o, root, body, mode, ptr)
	if err != nil || mode != modeArray || o.Pointer != "" || root.Kind() != tree.KindObject ||
		res.Stats.Full+res.Stats.Standard+res.Stats.Minimal > 0 {
		return res, err
	}
	// The envelope around the item array left no room: fit the root
	// object's members instead, when that shows something. Otherwise the
	// items' own index, which says which items each chunk holds, is the
	// more useful of two texts that show nothing, when it is within the
	// budget.
	alt, err := fitJSONMode(ctx, o, root, body, modeMembers, unwrap(root, ""))
	if err == nil && alt.Stats.Full+alt.Stats.Standard+alt.Stats.Minimal == 0 && o.Counter.Count(res.Text) <= o.Budget {
		return res, nil
	}
	return alt, err
}

// unwrap descends from the object at p through objects that have a single
// member holding an object ({"danger": {"git": …, "github": …}}), so that
// members mode fits the object that has the content.
func unwrap(root tree.Value, p tree.Pointer) tree.Pointer {
	v, err := tree.Lookup(root, p)
	for err == nil && v.Kind() == tree.KindObject && v.Len() == 1 && v.Members()[0].Value.Kind() == tree.KindObject {
		m := v.Members()[0]
		p, v = p.Key(m.Key), m.Value
	}
	return p
}

func fitJSONMode(ctx context.Context, o Options, root tree.Value, body []byte, mode jsonMode, ptr tree.Pointer) (Result, error) {
	j := &jsonFit{o: o, root: root, body: body, mode: mode, ptr: ptr}
	j.selectItems()
	name, src, err := resolveStrategy(o, "json")
	if err != nil {
		return Result{}, err
	}
	j.st.Strategy, j.st.StrategySource = name, src
	j.newEngine(name)
	j.levelValues()
	j.sizeLevels()
	j.drafts()
	j.priceFull()
	j.chunkIndex()
	j.assembler()
	storeErr := j.store(ctx)
	e, st := j.e, &j.st
	st.Budget = j.o.Budget
	st.Chunks = len(j.ck.ranges)
	text := e.run(st)
	if j.o.Format.Draft != nil && text != "" && j.assemble(j.o.Format.Append, e.sel, e.tier) != text {
		// Append's check rejected a draft (its output differs): what was
		// counted is not what would be shown. Fit with Append alone.
		j.o.Format.Draft = nil
		return fitJSONMode(ctx, j.o, root, body, mode, ptr)
	}
	return Result{Text: text, Stats: *st, StoreErr: storeErr, sel: e.sel}, nil
}

// jsonFit is one fitting of a JSON document split into items (mode):
// its items, the engine that chooses their levels and what the engine
// calls back to render, chunk and assemble them.
type jsonFit struct {
	o    Options
	root tree.Value
	body []byte
	mode jsonMode
	ptr  tree.Pointer
	st   Stats
	// items are the document's items; keys their keys (members mode).
	items []tree.Value
	keys  []string
	toks  []string
	name  string
	n     int
	// r cuts levels at the budget's cut, ref at the smallest (see
	// levelValues).
	r, ref *rules
	e      *engine
	// value is an item at a level as shown; refValue as costed.
	value, refValue func(i int, l Level) tree.Value
	draft           func(dst []byte, v tree.Value) []byte
	label           string
	ck              *chunkIndex
	assemble        func(app func([]byte, tree.Value) []byte, sel []Level, tier int) string
}

// selectItems sets the items the document is split into, and the
// Stats' unit, pointer and total.
func (j *jsonFit) selectItems() {
	j.st = Stats{Kind: "json", Unit: "items"}
	switch j.mode {
	case modeArray:
		v, _ := tree.Lookup(j.root, j.ptr)
		j.items = v.Items()
	case modeMembers:
		obj, _ := tree.Lookup(j.root, j.ptr)
		for _, m := range obj.Members() {
			j.items, j.keys = append(j.items, m.Value), append(j.keys, m.Key)
		}
		j.st.Unit = "members"
	default:
		j.items = []tree.Value{j.root}
	}
	j.toks, _ = j.ptr.Tokens()
	j.st.Pointer, j.st.Total = string(j.ptr), len(j.items)
}

// newEngine makes the engine and the level rules of the strategy name,
// with the items' values.
func (j *jsonFit) newEngine(name string) {
	o := &j.o
	j.name = name
	n := len(j.items)
	j.n = n
	stdCap := max(minStdCap, o.Budget*2/max(1, n))
	j.r = newRules(o, name, stdCap)
	j.e = &engine{o: *o, kind: "json", unit: j.st.Unit, n: n, vals: jsonValues(name, j.items)}
	if j.mode == modeMembers {
		// Members that the standard level would drop (urls, node ids, …)
		// are worth little on their own.
		obj, _ := tree.Lookup(j.root, j.ptr)
		_, primary := primaryTimestamp(obj)
		for i, m := range obj.Members() {
			j.e.vals[i] = 1
			if j.r.lowValue(m, primary) {
				j.e.vals[i] = 0.1
			}
		}
	}
	j.ref = j.r
	if stdCap != minStdCap {
		j.ref = newRules(o, name, minStdCap)
	}
}

// levelValues sets how an item at a level is shown (value), costed
// (refValue) and declared (the engine's promote).
func (j *jsonFit) levelValues() {
	items, r, ref, n, e := j.items, j.r, j.ref, j.n, j.e
	// An item's shortened levels are derived again whenever they are
	// needed (levels are pure functions of the item): only their sizes
	// are kept, so that a large array is not held a second and third
	// time while a few of its items are chosen.
	// The probes of the prefix search show the same items again: the
	// levels of an item shown are kept (as many as the budget shows).
	shown := map[int]tree.Value{} // key: item<<2 | level
	j.value = func(i int, l Level) tree.Value {
		if l == Full {
			return items[i]
		}
		key := i<<2 | int(l)
		if v, ok := shown[key]; ok {
			return v
		}
		var v tree.Value
		if l == Standard {
			v, _ = r.standard(items[i])
		} else {
			v = r.minimal(items[i])
		}
		shown[key] = v
		return v
	}
	// The order in which items gain detail must not depend on the
	// budget (see upgrades): levels are costed with strings cut at the
	// smallest cut a budget gives. The text cuts them at the budget's
	// (never shorter), and an item that the budget's cut leaves whole
	// is shown, and declared, at full detail.
	j.refValue = func(i int, l Level) tree.Value {
		switch l {
		case Standard:
			s, _ := ref.standard(items[i])
			return s
		case Minimal:
			return ref.minimal(items[i])
		}
		return items[i]
	}
	whole := make([]int8, n) // 1: the budget's standard leaves item i whole; 2: it does not
	e.promote = func(i int, l Level) Level {
		if l != Standard || ref == r {
			return l
		}
		if whole[i] == 0 {
			whole[i] = 2
			if _, changed := r.standard(items[i]); !changed {
				whole[i] = 1
			}
		}
		if whole[i] == 1 {
			return Full
		}
		return l
	}
}

// sizeLevels sets each item's list of levels and their JSON sizes.
func (j *jsonFit) sizeLevels() {
	items, ref, n, e, mode := j.items, j.ref, j.n, j.e, j.mode
	// Every item's list of levels is one of a few shared lists, and its
	// sizes are in one slab: a large input allocates nothing per item.
	e.levels, e.bytes = make([][]Level, n), make([][]int, n)
	sizes := make([]int, 0, n)
	for i, it := range items {
		// JSON size stands in for the rendering's size: costs are
		// counted exactly for small inputs, and estimated from a
		// counted sample (tokens per JSON byte, per level) otherwise.
		set := 1 << Full
		sizes = append(sizes, tree.JSONLen(it))
		last := it
		if s, changed := ref.standard(it); changed {
			set, last = set|1<<Standard, s
			sizes = append(sizes, tree.JSONLen(s))
		}
		if it.Kind() != tree.KindArray || mode == modeArray {
			m := ref.minimal(it)
			// An empty shell says nothing: no minimal level then.
			if !(m.Kind() >= tree.KindArray && m.Len() == 0) && !tree.Equal(m, last) {
				set |= 1 << Minimal
				sizes = append(sizes, tree.JSONLen(m))
			}
		}
		e.levels[i] = levelLists[set]
	}
	// The slab grew by appending: the items' sizes are sliced from its
	// final copy.
	for i, at := 0, 0; i < n; i++ {
		k := len(e.levels[i])
		e.bytes[i] = sizes[at : at+k : at+k]
		at += k
	}
}

// drafts sets how the engine renders candidates: drafted; the returned
// text is rendered with Append.
func (j *jsonFit) drafts() {
	keys, refValue, e, mode := j.keys, j.refValue, j.e, j.mode
	draft := j.o.Format.draft()
	j.draft = draft
	e.render = func(i int, l Level) []byte {
		v := refValue(i, l)
		if mode == modeMembers {
			v = tree.Object(tree.Member{Key: keys[i], Value: v})
		}
		return draft(nil, v)
	}
	e.renderMany = func(idx []int, l Level) []byte {
		if mode == modeMembers {
			mems := make([]tree.Member, len(idx))
			for j, i := range idx {
				mems[j] = tree.Member{Key: keys[i], Value: refValue(i, l)}
			}
			return draft(nil, tree.Object(mems...))
		}
		vs := make([]tree.Value, len(idx))
		for j, i := range idx {
			vs[j] = refValue(i, l)
		}
		return draft(nil, tree.Array(vs...))
	}
}

// priceFull measures the items' costs, the full level priced from the
// whole document's count when it is known.
func (j *jsonFit) priceFull() {
	o, e, n := &j.o, j.e, j.n
	var envelope tree.Value
	switch j.mode {
	case modeArray:
		envelope = setAt(j.root, j.toks, tree.Array())
	case modeMembers:
		envelope = setAt(j.root, j.toks, tree.Object())
	}
	envCost := e.count(string(j.draft(nil, envelope)))
	if o.wholeTokens > envCost {
		// The whole document is its items at full detail, in context:
		// its count prices that level without a sample.
		size := 0
		for i := range n {
			size += e.bytes[i][0]
		}
		if size > 0 {
			e.fullRatio = float64(o.wholeTokens-envCost) / float64(size)
		}
	}
	e.measure()
}

// chunkIndex partitions the items into chunks, each fetched as its items
// alone, in the format.
func (j *jsonFit) chunkIndex() {
	o, e, n, mode, ptr, root, items, keys, draft := &j.o, j.e, j.n, j.mode, j.ptr, j.root, j.items, j.keys, j.draft
	unit := j.st.Unit
	fullCosts := make([]int, n)
	for i := range n {
		fullCosts[i] = e.costs[i][0]
	}
	label := ""
	switch mode {
	case modeArray:
		label = string(ptr)
		if ptr == "" {
			label = "the root array"
		}
	case modeMembers:
		label = "the root object"
		if ptr != "" {
			label = string(ptr)
		}
	}
	j.label = label
	// A chunk is fetched as its items alone, in the format.
	var mems []tree.Member
	if mode == modeMembers {
		obj, _ := tree.Lookup(root, ptr)
		mems = obj.Members()
	}
	ck := partition(fullCosts, o.Budget, o.FetchBudget, o.Store != nil, &chunker{
		counter: o.Counter,
		where: func(a, b int) string {
			if mode == modeSingle {
				return "the document"
			}
			return fmt.Sprintf("%s of %d at %s", inband.Range(unit, a, b), n, label)
		},
		body: func(a, b int) string {
			switch mode {
			case modeArray:
				return string(draft(nil, tree.Array(items[a:b]...)))
			case modeMembers:
				return string(draft(nil, tree.Object(mems[a:b]...)))
			}
			return string(draft(nil, root))
		},
	})
	ck.unit, ck.levels, ck.label = unit, true, label
	ck.span = func(a, b int) string { return inband.Range(unit, a, b) }
	switch mode {
	case modeArray:
		ck.summary = func(a, b int) string { return summarizeItems(items[a:b]) }
	case modeMembers:
		ck.summary = func(a, b int) string { return "keys " + keyList(keys[a:b], 6) }
	default:
		ck.span = func(a, b int) string { return "item 1 (the whole document)" }
		ck.summary = func(a, b int) string { return "" }
	}
	e.chunks = ck
	j.ck = ck
}

// assembler sets how a selection becomes the returned text: the
// document of the items kept, its notes, hint and chunk index.
func (j *jsonFit) assembler() {
	o, r, n, mode, root, toks, items, keys, value, ck := &j.o, j.r, j.n, j.mode, j.root, j.toks, j.items, j.keys, j.value, j.ck
	unit := j.st.Unit
	detail := detailNote(j.name)
	name0 := func(idx []int) string {
		if mode == modeMembers {
			ks := make([]string, len(idx))
			for j, i := range idx {
				ks[j] = keys[i]
			}
			return keyList(ks, 8)
		}
		return inband.List(unit, idx)
	}
	// Whether an item's minimal level cuts a string, once known: its
	// level is then declared with the cut marker.
	minCut := make([]int8, n)
	minimalCuts := func(i int) bool {
		if minCut[i] == 0 {
			minCut[i] = 1
			if r.cutsAtMinimal(items[i]) {
				minCut[i] = 2
			}
		}
		return minCut[i] == 2
	}
	// The document of a selection is built once, so that the returned
	// text is rendered from the very value its draft was made from (a
	// format may remember its drafts by value).
	docs := map[string]tree.Value{}
	assemble := func(app func([]byte, tree.Value) []byte, sel []Level, tier int) string {
		key := unsafe.Slice((*byte)(unsafe.SliceData(sel)), len(sel))
		d, ok := docs[string(key)]
		if !ok {
			var kept []tree.Value
			var mems []tree.Member
			for i, l := range sel {
				if l == Skip {
					continue
				}
				v := value(i, l)
				if mode == modeMembers {
					mems = append(mems, tree.Member{Key: keys[i], Value: v})
				} else {
					kept = append(kept, v)
				}
			}
			switch {
			case mode == modeArray:
				d, ok = setAt(root, toks, tree.Array(kept...)), true
			case mode == modeMembers:
				d, ok = setAt(root, toks, tree.Object(mems...)), true
			case len(kept) == 1:
				d, ok = kept[0], true
			}
			if ok {
				docs[string(key)] = d
			}
		}
		var sb strings.Builder
		if ok {
			sb.Write(app(nil, d))
			sb.WriteByte('\n')
		}
		minNote := "identity fields only"
		for i, l := range sel {
			if l == Minimal && minimalCuts(i) {
				minNote += `, long strings cut at "…[+N chars]"`
				break
			}
		}
		writeJSONNotes(&sb, sel, ck.label, unit, detail, minNote, name0, tier == tierIndex)
		writeHintAndIndex(&sb, *o, sel, ck, tier)
		return strings.TrimSuffix(sb.String(), "\n")
	}
	j.assemble = assemble
	draft := j.draft
	j.e.assemble = func(sel []Level, tier int) string { return assemble(draft, sel, tier) }
}

// store puts the document in the store, when there is one, and returns
// the store's error: the chunk index then says it failed.
func (j *jsonFit) store(ctx context.Context) error {
	o, ck, st := j.o, j.ck, &j.st
	var storeErr error
	if o.Store != nil {
		h, err := put(ctx, o, header{Kind: "json", Pointer: string(j.ptr), Mode: int(j.mode), Format: o.Format.Name,
			Chunks: spans(ck.ranges), Label: ck.label, Unit: st.Unit, Total: j.n}, stored(o, j.root, j.body))
		if err != nil {
			storeErr, ck.failed, st.StoreFailed = err, true, true
		}
		ck.handle, st.Handle = h, h
	}
	return storeErr
}

// spans turns chunk ranges into stored spans.
func spans(rs [][2]int) []span {
	out := make([]span, len(rs))
	for k, r := range rs {
		out[k] = span{A: r[0], B: r[1]}
	}
	return out
}

// keyList joins up to max keys, then "… (+k more)".
func keyList(keys []string, max int) string {
	keys = slices.Clone(keys)
	for i, k := range keys {
		keys[i] = oneLine(k)
	}
	if len(keys) <= max {
		return strings.Join(keys, ", ")
	}
	return strings.Join(keys[:max], ", ") + fmt.Sprintf(", … (+%d more)", len(keys)-max)
}

// stored is the stored form of a JSON payload: compact JSON, reusing the
// plain encoding when that is compact JSON already.
func stored(o Options, root tree.Value, body []byte) []byte {
	if body != nil && o.Format.Name == JSON.Name {
		return body
	}
	if o.Compact != nil {
		return o.Compact
	}
	return tree.AppendJSON(nil, root)
}

// knownCounter is a counter that remembers counts (a cache in front of
// the tokenizer): Known returns the count of s when it has it, without
// counting.
type knownCounter interface {
	Known(s string) (int, bool)
}

func detailNote(strategy string) string {
	s := `urls, avatars, node ids, extra timestamps and empty values dropped, long strings cut at "…[+N chars]"`
	if strategy == StrategyThreadLevel {
		s += ", threads cut to their first and last note"
	}
	return s
}

// writeJSONNotes declares the gaps and the detail levels of a JSON
// selection. When a chunk index follows (indexed), it already says which
// items this response holds and at which level, so for item arrays the
// notes only define the levels. Items are numbered from 1. The wording is
// part of the API (models parse it):
//
//	> [levels: full = as in the source; standard = dropped urls, …; long strings cut at "…[+N chars]"; minimal = identity fields only, long strings cut at "…[+N chars]"; missing or blank fields of a shortened item were left out]
//	> [left out of /items: items 11–14, 16–120 (114 of 120 items)]
//	> [detail /items: items 11–14 standard (dropped …); item 15 minimal (identity fields only); the rest full]
//	> [left out of the root object: history, info (2 of 5 members)]
func writeJSONNotes(sb *strings.Builder, sel []Level, label, unit, detail, minimal string, names func([]int) string, indexed bool) {
	if indexed && unit == "items" {
		var x inband.Levels
		if slices.Contains(sel, Standard) {
			x.Standard = detail
		}
		if slices.Contains(sel, Minimal) {
			x.Minimal = minimal
		}
		if x != (inband.Levels{}) {
			sb.WriteString(x.String())
			sb.WriteByte('\n')
		}
		return
	}
	var skipped, std, min []int
	for i, l := range sel {
		switch l {
		case Skip:
			skipped = append(skipped, i)
		case Standard:
			std = append(std, i)
		case Minimal:
			min = append(min, i)
		}
	}
	if len(skipped) > 0 {
		sb.WriteString(inband.LeftOut{Label: label, Names: names(skipped), N: len(skipped), Of: len(sel), Unit: unit}.String())
		sb.WriteByte('\n')
	}
	if len(std)+len(min) > 0 {
		x := inband.Detail{Label: label, RestFull: len(std)+len(min)+len(skipped) < len(sel)}
		if len(std) > 0 {
			x.Standard, x.StandardNote = names(std), detail
		}
		if len(min) > 0 {
			x.Minimal, x.MinimalNote = names(min), minimal
		}
		sb.WriteString(x.String())
		sb.WriteByte('\n')
	}
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
