package filter

import (
	"slices"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// Options control one application of a [Rule]. The zero value (or nil)
// works: sizes are measured in bytes only.
type Options struct {
	// Counter, when set, counts the original and result tokens for the
	// Report. Counting a large payload exactly costs far more than
	// filtering it, so it is opt-in.
	Counter tokens.Counter
}

// Result is the outcome of applying a [Rule]: the filtered payload, the
// in-band note declaring what was left out, and the Report.
type Result struct {
	// Value is the filtered JSON payload; unused when IsText.
	Value tree.Value
	// Text is the output when IsText: filtered text, or items rendered by
	// a compact template.
	Text   string
	IsText bool
	// Note is the one-line in-band declaration of everything left out that
	// the model could not infer, as a Markdown blockquote
	// ("> [filtered: ...]"); empty when nothing was left out. Its wording
	// is API: models read it, and golden files pin it.
	Note string
	// Report describes what the filter did, for people and telemetry. It
	// is never mixed into the payload.
	Report Report
}

// Append appends what the model reads: the note on its own line (when
// there is one), then the payload as compact JSON or text.
func (r Result) Append(dst []byte) []byte {
	if r.Note != "" {
		dst = append(dst, r.Note...)
		dst = append(dst, '\n')
	}
	if r.IsText {
		return append(dst, r.Text...)
	}
	return tree.AppendJSON(dst, r.Value)
}

// ApplyBytes filters a payload given as bytes. JSON input goes to [Rule.Apply];
// input that is not JSON goes to [Rule.ApplyText] when the rule has text
// filters, and is a *tree.SyntaxError otherwise (when the rule has JSON
// operations) or passes unchanged (when it has none).
func (r *Rule) ApplyBytes(data []byte, opts *Options) (Result, error) {
	v, err := tree.Parse(data)
	if err != nil {
		if r.text != nil || !r.structural() {
			return r.ApplyText(string(data), opts), nil
		}
		return Result{}, err
	}
	return r.Apply(v, opts), nil
}

// ApplyText filters text with the rule's text filters. Without them the
// text passes unchanged.
func (r *Rule) ApplyText(s string, opts *Options) Result {
	res := Result{Text: s, IsText: true}
	if r.text != nil {
		out, st := r.text.apply(s)
		res.Text = out
		res.Report.Applied = true
		res.Report.Lines, res.Report.LinesKept = st.lines, st.kept
		res.Note = r.note(textParts(st))
	}
	measure(&res, len(s), func() string { return s }, opts)
	return res
}

// Apply filters v and never fails: when the rule cannot apply (a total
// select miss, a missing root, a failing template) the Report carries the
// error, the payload passes unfiltered, and the note says so.
//
// # Root
//
// The operations apply to each item of the payload's item array, or to a
// single object. An explicit [Spec.Root] wins. Otherwise: a top-level array
// is the item list; a top-level object is a wrapper when its "items",
// "data" or "result" member (in that order) is an array, else when its
// first array-valued member is; and is a single object otherwise. A
// wrapper guess is checked against the select paths: when they match the
// object itself better than its array's items, it is a single object (a
// GitHub issue is not a list of its assignees). Without select paths the
// first-array fallback needs an envelope: that array is the object's only
// array, every other member is a scalar or a small object (such as
// {"next_cursor": ...}), and the array holds at least as many values as
// they do. Sibling members of the root pass unchanged (a compact rendering
// leaves them out and says so).
//
// A top-level JSON string goes to the text filters when the rule has them.
func (r *Rule) Apply(v tree.Value, opts *Options) Result {
	if v.Kind() == tree.KindString && r.text != nil {
		res := r.ApplyText(v.Str(), nil)
		measure(&res, tree.JSONLen(v), v.String, opts)
		return res
	}
	res := r.apply(v)
	measure(&res, tree.JSONLen(v), v.String, opts)
	return res
}

func (r *Rule) apply(v tree.Value) Result {
	res := Result{Value: v}
	rep := &res.Report
	if !r.structural() {
		return res
	}
	toks, detected := r.root, false
	if !r.rootSet {
		toks, detected = r.detectRoot(v), true
	}
	rep.Root = pointer(toks)
	rep.Detected = detected
	target, ok := lookupTokens(v, toks)
	if !ok {
		rep.Err = &RootError{Root: rep.Root}
		res.Note = inband.FilterFailed{Reason: inband.FilterRootMissing(rep.Root)}.String()
		return res
	}
	st := &state{r: r, found: make([]bool, len(r.fields))}
	var out tree.Value
	var items []tree.Value // filtered items, for compact
	switch target.Kind() {
	case tree.KindArray:
		rep.List = true
		all := target.Items()
		rep.Total = len(all)
		n := len(all)
		if m := r.spec.MaxItems; m > 0 && m < n {
			n = m
			rep.TruncatedFrom = len(all)
		}
		items = make([]tree.Value, n)
		for i, it := range all[:n] {
			items[i] = st.item(it)
		}
		rep.Count = n
		out = tree.Array(items...)
	case tree.KindObject:
		rep.Total, rep.Count = 1, 1
		out = st.item(target)
		items = []tree.Value{out}
	default:
		// A scalar root has nothing to filter.
		return res
	}
	if len(r.fields) > 0 && st.objects > 0 && !st.anyFound {
		paths := make([]string, len(r.fields))
		for i, f := range r.fields {
			paths[i] = f.path
		}
		slices.Sort(paths)
		rep.Err = &MissError{Paths: slices.Compact(paths)}
		rep.Total, rep.Count, rep.TruncatedFrom = 0, 0, 0
		res.Note = inband.FilterFailed{Reason: inband.FilterNoMatch}.String()
		return res
	}
	for i, f := range r.fields {
		if !st.found[i] && rep.Count > 0 {
			rep.Unmatched = append(rep.Unmatched, f.path)
		}
	}
	slices.Sort(rep.Unmatched)
	rep.Unmatched = slices.Compact(rep.Unmatched)
	rep.FieldsOmitted = st.omitted()
	rep.NullsDropped, rep.EmptyDropped = st.nulls, st.empties
	rep.Applied = true

	parts := structParts(rep)
	if r.compact != nil {
		text, err := r.compact.render(items, rep.Total)
		if err != nil {
			rep.Err = &TemplateError{Err: err}
			parts = append(parts, "compact template failed, showing JSON")
		} else {
			res.Text, res.IsText = text, true
			if w := wrapperMembers(v, toks); w > 0 {
				parts = append(parts, plural(w, "wrapper field")+" omitted")
			}
		}
	}
	if !res.IsText {
		res.Value = replaceAt(v, toks, out)
	}
	res.Note = r.note(parts)
	return res
}

// state accumulates per-application counts; one per Apply call, so a Rule
// stays immutable.
type state struct {
	r        *Rule
	found    []bool
	anyFound bool
	objects  int
	vals     []tree.Value
	ok       []bool
	parents  []string

	topKeys  map[string]struct{} // source top-level keys not selected
	prevKeys []tree.Member
	excluded map[string]struct{} // distinct excluded key paths
	nulls    int
	empties  int
}

// item filters one item: select, then exclude, drop_nulls and drop_empty.
func (st *state) item(v tree.Value) tree.Value {
	r := st.r
	if v.Kind() != tree.KindObject {
		return v
	}
	st.objects++
	if len(r.fields) > 0 {
		st.noteTopKeys(v)
		v = st.project(v)
	}
	if len(r.excludes) > 0 || r.spec.DropNulls || r.spec.DropEmpty {
		v, _ = st.clean(v)
	}
	return v
}

// noteTopKeys records top-level keys that no select path starts with. Runs
// of items with the same keys (the common case) are checked once.
func (st *state) noteTopKeys(v tree.Value) {
	mems := v.Members()
	if len(mems) == len(st.prevKeys) {
		same := true
		for i := range mems {
			if mems[i].Key != st.prevKeys[i].Key {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	st.prevKeys = mems
	for _, m := range mems {
		sel := false
		for _, f := range st.r.fields {
			// Only a path that takes the whole member keeps it; "user.login"
			// leaves the rest of user out.
			if len(f.steps) == 1 && f.steps[0].kind == stepKey && f.steps[0].key == m.Key {
				sel = true
				break
			}
		}
		if !sel {
			if st.topKeys == nil {
				st.topKeys = map[string]struct{}{}
			}
			st.topKeys[m.Key] = struct{}{}
		}
	}
}

func (st *state) omitted() int { return len(st.topKeys) + len(st.excluded) }

func (st *state) project(v tree.Value) tree.Value {
	fields := st.r.fields
	if st.vals == nil {
		st.vals = make([]tree.Value, len(fields))
		st.ok = make([]bool, len(fields))
	}
	for i, f := range fields {
		st.vals[i], st.ok[i] = resolve(v, f.steps)
		if st.ok[i] {
			st.found[i] = true
			st.anyFound = true
		}
	}
	out, _ := st.build(st.r.shape)
	return out
}

func (st *state) build(n *outNode) (tree.Value, bool) {
	mems := make([]tree.Member, 0, len(n.keys))
	for i, k := range n.keys {
		if idx := n.leaf[i]; idx >= 0 {
			if st.ok[idx] {
				mems = append(mems, tree.Member{Key: k, Value: st.vals[idx]})
			}
			continue
		}
		if c, ok := st.build(n.children[i]); ok {
			mems = append(mems, tree.Member{Key: k, Value: c})
		}
	}
	return tree.Object(mems...), len(mems) > 0
}

// clean applies exclude, drop_nulls and drop_empty below v. It copies only
// the objects and arrays that change.
func (st *state) clean(v tree.Value) (tree.Value, bool) {
	r := st.r
	switch v.Kind() {
	case tree.KindObject:
		mems := v.Members()
		var out []tree.Member // nil until something changes
		for i, m := range mems {
			drop := false
			for _, p := range r.excludes {
				if p.matches(st.parents, m.Key) {
					st.noteExcluded(m.Key)
					drop = true
					break
				}
			}
			val := m.Value
			changed := false
			if !drop && (val.Kind() == tree.KindObject || val.Kind() == tree.KindArray) {
				st.parents = append(st.parents, m.Key)
				val, changed = st.clean(val)
				st.parents = st.parents[:len(st.parents)-1]
			}
			if !drop && r.spec.DropNulls && val.Kind() == tree.KindNull {
				drop = true
				st.nulls++
			}
			if !drop && r.spec.DropEmpty && isEmpty(val) {
				drop = true
				st.empties++
			}
			if (drop || changed) && out == nil {
				out = make([]tree.Member, i, len(mems))
				copy(out, mems[:i])
			}
			if out != nil && !drop {
				out = append(out, tree.Member{Key: m.Key, Value: val})
			}
		}
		if out == nil {
			return v, false
		}
		return tree.Object(out...), true
	case tree.KindArray:
		items := v.Items()
		var out []tree.Value
		for i, x := range items {
			if x.Kind() != tree.KindObject && x.Kind() != tree.KindArray {
				if out != nil {
					out = append(out, x)
				}
				continue
			}
			y, changed := st.clean(x)
			if changed && out == nil {
				out = make([]tree.Value, i, len(items))
				copy(out, items[:i])
			}
			if out != nil {
				out = append(out, y)
			}
		}
		if out == nil {
			return v, false
		}
		return tree.Array(out...), true
	}
	return v, false
}

func (st *state) noteExcluded(key string) {
	if st.excluded == nil {
		st.excluded = map[string]struct{}{}
	}
	if len(st.parents) == 0 {
		st.excluded[key] = struct{}{}
		return
	}
	st.excluded[strings.Join(st.parents, ".")+"."+key] = struct{}{}
}

func isEmpty(v tree.Value) bool {
	switch v.Kind() {
	case tree.KindString:
		return v.Str() == ""
	case tree.KindArray, tree.KindObject:
		return v.Len() == 0
	}
	return false
}

// wrapperKeys are the members that conventionally hold a list, by
// priority.
var wrapperKeys = [...]string{"items", "data", "result"}

// detectRoot returns the pointer tokens of the item list or object to
// filter; see Apply.
func (r *Rule) detectRoot(v tree.Value) []string {
	if v.Kind() != tree.KindObject {
		return nil
	}
	key, conventional := "", false
	for _, k := range wrapperKeys {
		if x, ok := v.Get(k); ok && x.Kind() == tree.KindArray {
			key, conventional = k, true
			break
		}
	}
	if key == "" {
		for _, m := range v.Members() {
			if m.Value.Kind() == tree.KindArray {
				key = m.Key
				break
			}
		}
	}
	if key == "" {
		return nil
	}
	arr, _ := v.Get(key)
	if len(r.fields) > 0 {
		self, items := r.score(v), 0
		n := 0
		for _, it := range arr.Items() {
			if it.Kind() != tree.KindObject {
				continue
			}
			items = max(items, r.score(it))
			if n++; n == 16 {
				break
			}
		}
		if self > items || (!conventional && self == items) {
			return nil
		}
		return []string{key}
	}
	if conventional || isEnvelope(v, key) {
		return []string{key}
	}
	return nil
}

// score counts the select paths that resolve in v.
func (r *Rule) score(v tree.Value) int {
	n := 0
	for _, f := range r.fields {
		if _, ok := resolve(v, f.steps); ok {
			n++
		}
	}
	return n
}

// isEnvelope reports whether v looks like a response wrapper around its
// array member key: that array is non-empty and v's only array, every
// other member is a scalar or an object of at most four members, and the
// array holds at least as many values as all the other members together.
func isEnvelope(v tree.Value, key string) bool {
	others := 0
	var arr tree.Value
	for _, m := range v.Members() {
		switch m.Value.Kind() {
		case tree.KindArray:
			if m.Key != key || m.Value.Len() == 0 {
				return false
			}
			arr = m.Value
			continue
		case tree.KindObject:
			if m.Value.Len() > 4 {
				return false
			}
		}
		others += countValues(m.Value, -1)
	}
	return countValues(arr, others) >= others
}

// countValues counts v and the values inside it, stopping once the count
// exceeds limit (when limit >= 0).
func countValues(v tree.Value, limit int) int {
	n := 1
	switch v.Kind() {
	case tree.KindArray:
		for _, x := range v.Items() {
			if limit >= 0 && n > limit {
				return n
			}
			n += countValues(x, limit-n)
		}
	case tree.KindObject:
		for _, m := range v.Members() {
			if limit >= 0 && n > limit {
				return n
			}
			n += countValues(m.Value, limit-n)
		}
	}
	return n
}

func pointer(toks []string) string {
	var p tree.Pointer
	for _, t := range toks {
		p = p.Key(t)
	}
	return string(p)
}

func lookupTokens(v tree.Value, toks []string) (tree.Value, bool) {
	x, err := tree.Lookup(v, tree.Pointer(pointer(toks)))
	return x, err == nil
}

// replaceAt returns v with the value at toks replaced by x, copying only
// the containers on the path.
func replaceAt(v tree.Value, toks []string, x tree.Value) tree.Value {
	if len(toks) == 0 {
		return x
	}
	switch v.Kind() {
	case tree.KindObject:
		mems := slices.Clone(v.Members())
		for i := range mems {
			if mems[i].Key == toks[0] {
				mems[i].Value = replaceAt(mems[i].Value, toks[1:], x)
				break
			}
		}
		return tree.Object(mems...)
	case tree.KindArray:
		items := slices.Clone(v.Items())
		if i, err := strconv.Atoi(toks[0]); err == nil && i >= 0 && i < len(items) {
			items[i] = replaceAt(items[i], toks[1:], x)
		}
		return tree.Array(items...)
	}
	return v
}

// wrapperMembers counts the members beside the path to the root, which a
// compact rendering leaves out.
func wrapperMembers(v tree.Value, toks []string) int {
	n := 0
	for _, t := range toks {
		switch v.Kind() {
		case tree.KindObject:
			n += v.Len() - 1
			v, _ = v.Get(t)
		case tree.KindArray:
			n += v.Len() - 1
			x, _ := tree.Lookup(v, tree.Pointer("").Key(t))
			v = x
		}
	}
	return n
}
