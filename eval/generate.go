package eval

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/terse-dev/terse/tree"
)

// A Document is one JSON document questions are asked about.
type Document struct {
	Name  string
	Value tree.Value
}

// naturalKeys are the member names tried as an item's natural key, best
// first. A key is used only when every item has it once, as a short
// single-line string or number, and no two items share its value.
var naturalKeys = []string{"number", "iid", "id", "key", "name", "title", "login", "slug", "tag_name", "sha", "uid", "uuid", "path", "filename", "email", "username", "node_id"}

// Limits that keep questions answerable and their wording unambiguous.
const (
	maxKeyLen    = 80  // characters of a natural key value
	maxAnswerLen = 200 // characters of a string answer
	maxDepth     = 4   // object levels searched for lists and wrapper fields
	sampleItems  = 24  // items of a long list considered for item questions
	maxEnum      = 8   // distinct values of a field used as a filter
)

// Generate returns up to n questions about doc, deterministic for seed.
// Kinds are taken in turn (lookup, url, filter, count, presence, wrapper,
// position), each drawn at random from its candidates, so a small n still
// covers every kind the document supports. Every gold answer is computed by
// evaluating the question's Query on doc.
func Generate(doc Document, n int, seed uint64) []Question {
	if n <= 0 {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte(doc.Name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))

	g := &generator{doc: doc.Value, rng: rng, byKind: map[string][]Question{}}
	g.lists(doc.Value, "", nil, 0)
	g.wrapper(doc.Value, nil, 0)

	var out []Question
	seen := map[string]bool{}
	pools := make([][]Question, 0, len(Kinds))
	for _, k := range Kinds {
		c := g.byKind[k]
		rng.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
		pools = append(pools, c)
	}
	for len(out) < n {
		took := false
		for i := range pools {
			for len(pools[i]) > 0 && len(out) < n {
				q := pools[i][0]
				pools[i] = pools[i][1:]
				if seen[q.Text] {
					continue
				}
				ans, err := q.Query.Eval(doc.Value)
				if err != nil || ans != q.Answer {
					continue
				}
				seen[q.Text] = true
				q.Doc = doc.Name
				q.ID = fmt.Sprintf("%s#%d", doc.Name, len(out)+1)
				out = append(out, q)
				took = true
				break
			}
		}
		if !took {
			break
		}
	}
	return out
}

type generator struct {
	doc    tree.Value
	rng    *rand.Rand
	byKind map[string][]Question
}

func (g *generator) add(kind, text string, q *Query) {
	ans, err := q.Eval(g.doc)
	if err != nil {
		return
	}
	g.byKind[kind] = append(g.byKind[kind], Question{Kind: kind, Text: text, Answer: ans, Query: q})
}

// simpleKey reports whether a member name can be named in a question and in
// a dotted path without ambiguity.
func simpleKey(k string) bool {
	if k == "" || len(k) > 40 {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '$' || r == '@' || r == '+') {
			return false
		}
	}
	return true
}

// uniqueKeys reports whether an object names each member once.
func uniqueKeys(v tree.Value) bool {
	ms := v.Members()
	seen := make(map[string]bool, len(ms))
	for _, m := range ms {
		if seen[m.Key] {
			return false
		}
		seen[m.Key] = true
	}
	return true
}

// goodAnswer reports whether a primitive makes an unambiguous answer: not
// null, and a string short, on one line, without surrounding spaces and not
// one of the words graded specially.
func goodAnswer(v tree.Value) bool {
	switch v.Kind() {
	case tree.KindNumber, tree.KindBool:
		return true
	case tree.KindString:
		s := v.Str()
		if s == "" || utf8.RuneCountInString(s) > maxAnswerLen || strings.TrimSpace(s) != s || strings.ContainsAny(s, "\n\r\t") {
			return false
		}
		switch strings.ToLower(s) {
		case "true", "false":
			return false
		}
		// Words grading treats specially (null, empty, absent, not shown
		// and their spellings) would be ambiguous.
		switch Normalize(s) {
		case "null", PresenceEmpty, PresenceAbsent, NotShown:
			return false
		}
		return true
	}
	return false
}

// listName names a list in a question.
func listName(path []string) string {
	if len(path) == 0 {
		return "the top-level list"
	}
	return "the list " + fieldName(path)
}

// quoteValue writes a key value as the question shows it: strings quoted,
// numbers bare.
func quoteValue(v tree.Value) string {
	if v.Kind() == tree.KindString {
		return strconv.Quote(v.Str())
	}
	return scalarText(v)
}

// lists finds the item lists reachable through object members and adds
// their questions.
func (g *generator) lists(v tree.Value, p tree.Pointer, path []string, depth int) {
	switch v.Kind() {
	case tree.KindArray:
		g.list(v, p, path)
	case tree.KindObject:
		if depth >= maxDepth || !uniqueKeys(v) {
			return
		}
		for _, m := range v.Members() {
			if !simpleKey(m.Key) {
				continue
			}
			g.lists(m.Value, p.Key(m.Key), append(slices.Clip(path), m.Key), depth+1)
		}
	}
}

// list adds the questions about one list of objects.
func (g *generator) list(arr tree.Value, p tree.Pointer, path []string) {
	items := arr.Items()
	if len(items) < 2 {
		return
	}
	for _, it := range items {
		if it.Kind() != tree.KindObject || !uniqueKeys(it) {
			return
		}
	}
	name := listName(path)
	base := Query{Array: p, HasArray: true}

	// Counts.
	q := base
	q.Op = OpCount
	g.add(KindCount, fmt.Sprintf("How many items does %s have?", name), &q)
	g.filters(items, base, name)

	// First and last item.
	for _, pos := range []string{"first", "last"} {
		it := items[0]
		if pos == "last" {
			it = items[len(items)-1]
		}
		fields := scalarFields(it)
		if len(fields) == 0 {
			continue
		}
		f := fields[g.rng.IntN(len(fields))]
		q := base
		q.Op, q.Pos, q.Field = OpGet, pos, f
		g.add(KindPosition, fmt.Sprintf("In %s, what is %s of the %s item?", name, fieldName(f), pos), &q)
	}

	key := naturalKey(items)
	if key == "" {
		return
	}
	// Item questions on a sample of the items.
	idx := g.rng.Perm(len(items))
	if len(idx) > sampleItems {
		idx = idx[:sampleItems]
	}
	slices.Sort(idx)
	union := memberUnion(items)
	for _, i := range idx {
		it := items[i]
		kv, _ := it.Get(key)
		who := fmt.Sprintf("the item whose %q is %s", key, quoteValue(kv))
		for _, f := range scalarFields(it) {
			if len(f) == 1 && f[0] == key {
				continue
			}
			v, _ := follow(it, f)
			q := base
			q.Op, q.Key, q.KeyValue, q.Field = OpGet, key, scalarText(kv), f
			if s := v.Str(); v.Kind() == tree.KindString && (strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")) {
				g.add(KindURL, fmt.Sprintf("In %s, what is the full URL in %s of %s?", name, fieldName(f), who), &q)
				continue
			}
			g.add(KindLookup, fmt.Sprintf("In %s, what is %s of %s?", name, fieldName(f), who), &q)
		}
		// Null, empty and absent members.
		for _, k := range union {
			v, ok := it.Get(k)
			if ok && !v.IsNull() && !(v.Kind() == tree.KindString && v.Str() == "") {
				continue
			}
			q := base
			q.Op, q.Key, q.KeyValue, q.Field = OpPresence, key, scalarText(kv), []string{k}
			g.add(KindPresence, fmt.Sprintf("In %s, for %s: is %s null, an empty string, or absent (no such field)? Answer null, empty or absent.", name, who, fieldName(q.Field)), &q)
		}
	}
}

// filters adds "how many items have F equal to V" for fields with a few
// distinct short values.
func (g *generator) filters(items []tree.Value, base Query, name string) {
	counts := map[string]map[string]int{}
	var order []string
	for _, m := range items[0].Members() {
		if simpleKey(m.Key) {
			order = append(order, m.Key)
		}
	}
	for _, k := range order {
		vals := map[string]int{}
		ok := true
		for _, it := range items {
			v, has := it.Get(k)
			if !has || !(v.Kind() == tree.KindString || v.Kind() == tree.KindBool) || !goodAnswer(v) || len(v.Str()) > 40 {
				ok = false
				break
			}
			vals[scalarText(v)]++
			if len(vals) > maxEnum {
				ok = false
				break
			}
		}
		// A field whose values are all different (a key) makes no filter.
		if ok && len(vals) >= 2 && len(vals) < len(items) {
			counts[k] = vals
		}
	}
	for _, k := range order {
		vals := counts[k]
		if vals == nil {
			continue
		}
		keys := make([]string, 0, len(vals))
		for v := range vals {
			keys = append(keys, v)
		}
		slices.Sort(keys)
		val := keys[g.rng.IntN(len(keys))]
		shown := strconv.Quote(val)
		if val == "true" || val == "false" {
			// A boolean column never holds the strings "true"/"false"
			// here: goodAnswer rejects them.
			shown = val
		}
		q := base
		q.Op, q.Field, q.Value = OpCount, []string{k}, val
		g.add(KindFilter, fmt.Sprintf("How many items in %s have %s equal to %s?", name, fieldName(q.Field), shown), &q)
	}
}

// naturalKey returns the first of naturalKeys that identifies every item.
func naturalKey(items []tree.Value) string {
	for _, k := range naturalKeys {
		seen := make(map[string]bool, len(items))
		ok := true
		for _, it := range items {
			v, has := it.Get(k)
			if !has || !(v.Kind() == tree.KindString || v.Kind() == tree.KindNumber) {
				ok = false
				break
			}
			t := scalarText(v)
			if t == "" || utf8.RuneCountInString(t) > maxKeyLen || strings.TrimSpace(t) != t || strings.ContainsAny(t, "\n\r\t") || seen[t] {
				ok = false
				break
			}
			seen[t] = true
		}
		if ok {
			return k
		}
	}
	return ""
}

// scalarFields lists the paths of good answers in an item: its own scalar
// members and those of its object members (user.login).
func scalarFields(it tree.Value) [][]string {
	var out [][]string
	for _, m := range it.Members() {
		if !simpleKey(m.Key) {
			continue
		}
		switch {
		case m.Value.IsPrimitive():
			if goodAnswer(m.Value) {
				out = append(out, []string{m.Key})
			}
		case m.Value.Kind() == tree.KindObject && uniqueKeys(m.Value):
			for _, c := range m.Value.Members() {
				if simpleKey(c.Key) && c.Value.IsPrimitive() && goodAnswer(c.Value) {
					out = append(out, []string{m.Key, c.Key})
				}
			}
		}
	}
	return out
}

// memberUnion lists the member names that some item has, in first-seen
// order.
func memberUnion(items []tree.Value) []string {
	seen := map[string]bool{}
	var out []string
	for _, it := range items {
		for _, m := range it.Members() {
			if simpleKey(m.Key) && !seen[m.Key] {
				seen[m.Key] = true
				out = append(out, m.Key)
			}
		}
	}
	return out
}

// wrapper adds questions about scalars reached from the root through object
// members only: the wrapper around an item list, or a single object.
func (g *generator) wrapper(v tree.Value, path []string, depth int) {
	if v.Kind() != tree.KindObject || depth >= maxDepth || !uniqueKeys(v) {
		return
	}
	for _, m := range v.Members() {
		if !simpleKey(m.Key) {
			continue
		}
		f := append(slices.Clip(path), m.Key)
		switch {
		case m.Value.IsPrimitive() && goodAnswer(m.Value):
			q := &Query{Op: OpGet, Field: f}
			where := "the top-level field " + fieldName(f)
			if len(f) > 1 {
				where = "the field " + fieldName(f) + " (a path from the top level)"
			}
			g.add(KindWrapper, fmt.Sprintf("What is the value of %s?", where), q)
		case m.Value.IsNull() || m.Value.Kind() == tree.KindString && m.Value.Str() == "":
			q := &Query{Op: OpPresence, Field: f}
			g.add(KindPresence, fmt.Sprintf("Is the field %s (a path from the top level) null, an empty string, or absent (no such field)? Answer null, empty or absent.", fieldName(f)), q)
		case m.Value.Kind() == tree.KindObject:
			g.wrapper(m.Value, f, depth+1)
		}
	}
}
