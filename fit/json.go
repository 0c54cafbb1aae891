package fit

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tree"
)

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
