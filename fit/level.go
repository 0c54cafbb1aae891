package fit

import (
	"bytes"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tree"
)

// Level is how much of an item a result shows.
type Level uint8

// The detail levels, richest first.
const (
	Full     Level = iota // the item as it is
	Standard              // low-value fields dropped, long strings cut
	Minimal               // identity fields only, short strings
	Skip                  // left out (declared as a gap)
)

var levelNames = [...]string{"full", "standard", "minimal", "skip"}

func (l Level) String() string { return levelNames[l] }

// DefaultIdentity lists the fields Minimal keeps (case-insensitive).
// With the default list, Minimal also keeps identifier fields named
// *_id (ghsa_id, issue_id), *Id or *ID, uuid, guid and sha, except the
// opaque node ids that Standard drops.
var DefaultIdentity = []string{"id", "key", "number", "iid", "name", "title", "state", "status",
	"login", "slug", "path", "filename", "new_path", "type", "kind", "level", "severity", "summary", "ts", "user", "username"}

// cutString cuts s after max runes, on a rune boundary, and appends the
// marker with the number of runes removed (inband.Cut: "…[+1234 chars]";
// models parse it). Strings of at most max runes are
// returned unchanged.
func cutString(s string, max int) (string, bool) {
	if max < 0 || len(s) <= max {
		return s, false
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s, false
	}
	i, k := 0, 0
	for k < max {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	return s[:i] + inband.Cut(n-max), true
}

// rules are the generic detail-level rules with per-tool additions.
type rules struct {
	drop     map[string]bool // extra fields Standard drops
	keep     map[string]bool // fields Standard never drops
	identity map[string]bool // fields Minimal keeps (lowercase)
	ids      bool            // Minimal also keeps *_id fields (isIDKey)
	stdCap   int             // Standard: strings longer than this many runes are cut
	minCap   int             // Minimal: same
	minCuts  int             // strings Minimal has cut so far (see cutsAtMinimal)
	threads  bool            // Standard keeps only the first and last note of a thread
}

// lower is strings.ToLower for keys, without allocating when the key has
// no upper-case ASCII letter (the common case).
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' || c >= 0x80 {
			return strings.ToLower(s)
		}
	}
	return s
}

func newRules(o *Options, strategy string, stdCap int) *rules {
	r := &rules{drop: set(o.Drop), keep: set(o.Keep), identity: map[string]bool{}, stdCap: stdCap, minCap: 80,
		threads: strategy == StrategyThreadLevel}
	ids := o.Identity
	if len(ids) == 0 {
		ids, r.ids = DefaultIdentity, true
	}
	for _, k := range ids {
		r.identity[strings.ToLower(k)] = true
	}
	return r
}

func set(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

func isEmpty(v tree.Value) bool {
	switch v.Kind() {
	case tree.KindNull:
		return true
	case tree.KindString:
		return v.Str() == ""
	case tree.KindArray, tree.KindObject:
		return v.Len() == 0
	}
	return false
}

func looksLikeDate(v tree.Value) bool {
	switch v.Kind() {
	case tree.KindNumber:
		return true
	case tree.KindString:
		s := v.Str()
		return len(s) >= 10 && s[4] == '-' && s[7] == '-' && isDigits(s[:4])
	}
	return false
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isTimestampKey reports whether a key names a point in time.
func isTimestampKey(k string) bool {
	l := lower(k)
	return strings.HasSuffix(l, "_at") || strings.HasSuffix(k, "At") || strings.HasSuffix(l, "_on") ||
		strings.HasSuffix(l, "date") || strings.HasSuffix(l, "time") || strings.HasSuffix(l, "timestamp") ||
		l == "created" || l == "updated" || l == "ts"
}

// primaryTimestamp returns the first timestamp member of an object (in
// member order): the one Standard keeps.
func primaryTimestamp(v tree.Value) (string, string) {
	if v.Kind() != tree.KindObject {
		return "", ""
	}
	for _, m := range v.Members() {
		if isTimestampKey(m.Key) && looksLikeDate(m.Value) {
			if m.Value.Kind() == tree.KindString {
				return m.Value.Str(), m.Key
			}
			return m.Value.Num(), m.Key
		}
	}
	return "", ""
}

// lowValue reports whether Standard drops member m of an object whose
// primary timestamp key is primary: URLs and URL templates, avatars, node
// ids, _links, timestamps other than the primary one, empty values.
func (r *rules) lowValue(m tree.Member, primary string) bool {
	if r.keep[m.Key] {
		return false
	}
	if r.drop[m.Key] || isEmpty(m.Value) {
		return true
	}
	l := lower(m.Key)
	switch {
	case l == "_links" || l == "links" && m.Value.Kind() == tree.KindObject:
		return true
	case l == "url" || l == "uri" || l == "href" || strings.HasSuffix(l, "_url") || strings.HasSuffix(m.Key, "Url") ||
		strings.HasSuffix(m.Key, "URL") || strings.HasSuffix(l, "_uri"):
		return true
	case strings.Contains(l, "avatar") || l == "gravatar_id":
		return true
	case l == "node_id" || l == "nodeid" || l == "graphql_id" || l == "global_id":
		return true
	case m.Key != primary && isTimestampKey(m.Key) && looksLikeDate(m.Value):
		return true
	}
	if m.Value.Kind() == tree.KindString {
		s := m.Value.Str()
		if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
			return !strings.ContainsAny(s, " \n") // a bare URL, not prose that starts with one
		}
	}
	return false
}

var threadKeys = map[string]bool{"notes": true, "comments": true, "replies": true, "messages": true}

// standard applies the Standard rules to v, recursively. changed reports
// whether anything was dropped or cut.
func (r *rules) standard(v tree.Value) (tree.Value, bool) {
	switch v.Kind() {
	case tree.KindString:
		s, cut := cutString(v.Str(), r.stdCap)
		if cut {
			return tree.String(s), true
		}
		return v, false
	case tree.KindArray:
		items := v.Items()
		var out []tree.Value
		changed := false
		for i, x := range items {
			y, c := r.standard(x)
			if c && out == nil {
				out = append(make([]tree.Value, 0, len(items)), items[:i]...)
			}
			changed = changed || c
			if out != nil {
				out = append(out, y)
			}
		}
		if !changed {
			return v, false
		}
		return tree.Array(out...), true
	case tree.KindObject:
		_, primary := primaryTimestamp(v)
		mems := v.Members()
		out := make([]tree.Member, 0, len(mems))
		changed := false
		for _, m := range mems {
			if r.lowValue(m, primary) {
				changed = true
				continue
			}
			val := m.Value
			if r.threads && threadKeys[m.Key] && val.Kind() == tree.KindArray && val.Len() > 2 {
				its := val.Items()
				val = tree.Array(its[0], its[len(its)-1])
				changed = true
			}
			y, c := r.standard(val)
			if c {
				changed = true
				if isEmpty(y) {
					continue
				}
			}
			out = append(out, tree.Member{Key: m.Key, Value: y})
		}
		if !changed {
			return v, false
		}
		return tree.Object(out...), true
	}
	return v, false
}

// minimal keeps identity fields (recursing into identity-keyed objects
// such as status: {name: …}) with short strings. An object without any
// identity field keeps its first two non-empty primitive members.
func (r *rules) minimal(v tree.Value) tree.Value {
	switch v.Kind() {
	case tree.KindString:
		s, cut := cutString(v.Str(), r.minCap)
		if cut {
			r.minCuts++
		}
		return tree.String(s)
	case tree.KindArray:
		return tree.Array()
	case tree.KindObject:
		var out []tree.Member
		for _, m := range v.Members() {
			if r.threads && threadKeys[m.Key] && m.Value.Kind() == tree.KindArray && m.Value.Len() > 0 {
				// A thread keeps its first and last note, even at minimal.
				its := m.Value.Items()
				ends := []tree.Value{r.minimal(its[0])}
				if len(its) > 1 {
					ends = append(ends, r.minimal(its[len(its)-1]))
				}
				out = append(out, tree.Member{Key: m.Key, Value: tree.Array(ends...)})
				continue
			}
			if !r.identity[lower(m.Key)] && !(r.ids && isIDKey(m.Key)) || isEmpty(m.Value) {
				continue
			}
			switch m.Value.Kind() {
			case tree.KindArray:
				continue
			case tree.KindObject:
				y := r.minimalInner(m.Value)
				if y.Len() == 0 {
					continue
				}
				out = append(out, tree.Member{Key: m.Key, Value: y})
			default:
				out = append(out, tree.Member{Key: m.Key, Value: r.minimal(m.Value)})
			}
		}
		if !hasAny(v, "title", "name", "summary", "subject") {
			// No headline: a short start of the text says what the item is.
			for _, k := range []string{"body", "text", "message", "content", "description"} {
				if x, ok := v.Get(k); ok && x.Kind() == tree.KindString && x.Str() != "" {
					out = append(out, tree.Member{Key: k, Value: r.minimal(x)})
					break
				}
			}
		}
		if len(out) == 0 {
			for _, m := range v.Members() {
				if m.Value.IsPrimitive() && !isEmpty(m.Value) && !r.lowValue(m, "") {
					out = append(out, tree.Member{Key: m.Key, Value: r.minimal(m.Value)})
					if len(out) == 2 {
						break
					}
				}
			}
		}
		return tree.Object(out...)
	}
	return v
}

// cutsAtMinimal reports whether Minimal cuts a string of v (its level
// line must then say so).
func (r *rules) cutsAtMinimal(v tree.Value) bool {
	before := r.minCuts
	r.minimal(v)
	return r.minCuts > before
}

// isIDKey reports whether a key names an identifier of the item
// (ghsa_id, issue_id, pageId, …), other than the opaque ids Standard
// drops (node_id, gravatar_id, …).
func isIDKey(k string) bool {
	l := lower(k)
	switch l {
	case "node_id", "nodeid", "gravatar_id", "graphql_id", "global_id":
		return false
	case "uuid", "guid", "sha":
		return true
	}
	return strings.HasSuffix(l, "_id") || strings.HasSuffix(k, "Id") || strings.HasSuffix(k, "ID")
}

// minimalInner is minimal for a nested object: identity primitives only.
func (r *rules) minimalInner(v tree.Value) tree.Value {
	var out []tree.Member
	for _, m := range v.Members() {
		l := lower(m.Key)
		if r.identity[l] && l != "type" && l != "kind" && m.Value.IsPrimitive() && !isEmpty(m.Value) {
			out = append(out, tree.Member{Key: m.Key, Value: r.minimal(m.Value)})
		}
	}
	return tree.Object(out...)
}

func hasAny(v tree.Value, keys ...string) bool {
	for _, k := range keys {
		if v.Has(k) {
			return true
		}
	}
	return false
}

// levelCounts returns how many items of sel are at each level: a
// selection is tallied once per draft of the output, and a draft of
// 100,000 lines has as many levels.
func levelCounts(sel []Level) (n [Skip + 1]int) {
	b := unsafe.Slice((*byte)(unsafe.SliceData(sel)), len(sel))
	n[Full] = len(sel)
	for l := Standard; l <= Skip; l++ {
		n[l] = bytes.Count(b, []byte{byte(l)})
		n[Full] -= n[l]
	}
	return n
}
