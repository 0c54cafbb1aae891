package eval

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/tree"
)

// Question kinds. Reports break accuracy down by kind.
const (
	KindLookup   = "lookup"   // a scalar of an item found by its natural key
	KindURL      = "url"      // a full URL of an item found by its natural key
	KindCount    = "count"    // the number of items in a list
	KindFilter   = "filter"   // the number of items with a field equal to a value
	KindPresence = "presence" // null vs empty string vs absent
	KindWrapper  = "wrapper"  // a scalar outside the item list, by its path
	KindPosition = "position" // a scalar of the first or last item
	KindManual   = "manual"   // hand-written (no query)
)

// The kinds of file reads (reads.go) are KindLineText and KindLineNumber.

// Kinds lists the generated kinds in the order reports show them.
var Kinds = []string{KindLookup, KindURL, KindCount, KindFilter, KindPresence, KindWrapper, KindPosition, KindLineText, KindLineNumber, KindManual}

// NotShown is the answer expected when the text a model reads does not show
// what a question asks about. Models are told to reply with exactly this.
const NotShown = "not shown"

// Presence answers.
const (
	PresenceNull   = "null"
	PresenceEmpty  = "empty"
	PresenceAbsent = "absent"
)

// A Question is one question about one document with its gold answer.
type Question struct {
	ID     string `json:"id"`       // unique in a run: document name and number
	Doc    string `json:"document"` // the document's name
	Kind   string `json:"kind"`
	Text   string `json:"question"`
	Answer string `json:"answer"` // gold, from the document
	// Query computes the answer from a document; nil for hand-written
	// questions, which only model readers can answer.
	Query *Query `json:"query,omitempty"`
}

// Query ops.
const (
	OpGet      = "get"      // the scalar at Field
	OpPresence = "presence" // null, empty or absent at Field
	OpCount    = "count"    // items in Array, or those whose Field equals Value
)

// A Query is the machine form of a question: evaluated on the original
// document it gives the gold answer; evaluated on a decoded encoding it gives
// the decode reader's answer.
type Query struct {
	Op string `json:"op"`
	// Array is the pointer of the item list (object members only); empty
	// with Key and Pos empty means Field starts at the root.
	Array tree.Pointer `json:"array,omitempty"`
	// HasArray says Array is set (the root array has an empty pointer).
	HasArray bool `json:"has_array,omitempty"`
	// Key and KeyValue pick the item whose member Key has the text KeyValue
	// (a string's text or a number's literal).
	Key      string `json:"key,omitempty"`
	KeyValue string `json:"key_value,omitempty"`
	// Pos picks the "first" or "last" item instead.
	Pos string `json:"pos,omitempty"`
	// Field is the path of member names from the item (or the root).
	Field []string `json:"field,omitempty"`
	// Value is what Field must equal for OpCount with a filter.
	Value string `json:"value,omitempty"`
}

// Evaluation errors. errNotFound and errAbsent mean the document does not
// show what the query asks about.
var (
	errNotFound  = errors.New("item not found")
	errAmbiguous = errors.New("more than one item matches")
	errAbsent    = errors.New("field absent")
	errNotScalar = errors.New("not a scalar")
)

// Eval returns the query's answer on doc, as answer text: a string's text, a
// number's literal, true, false or null for OpGet; null, empty, absent or
// the value for OpPresence; a decimal count for OpCount.
func (q *Query) Eval(doc tree.Value) (string, error) {
	switch q.Op {
	case OpLine, OpLineOf:
		if doc.Kind() != tree.KindString {
			return "", errNotFound
		}
		return q.evalLine(doc.Str())
	case OpCount:
		arr, err := q.list(doc)
		if err != nil {
			return "", err
		}
		if len(q.Field) == 0 {
			return strconv.Itoa(arr.Len()), nil
		}
		n := 0
		for _, it := range arr.Items() {
			v, err := follow(it, q.Field)
			if err == nil && v.IsPrimitive() && scalarText(v) == q.Value {
				n++
			}
		}
		return strconv.Itoa(n), nil
	case OpGet, OpPresence:
		base, err := q.base(doc)
		if err != nil {
			return "", err
		}
		v, err := follow(base, q.Field)
		if q.Op == OpPresence {
			switch {
			case errors.Is(err, errAbsent):
				return PresenceAbsent, nil
			case err != nil:
				return "", err
			case v.IsNull():
				return PresenceNull, nil
			case v.Kind() == tree.KindString && v.Str() == "":
				return PresenceEmpty, nil
			}
		}
		if err != nil {
			return "", err
		}
		if !v.IsPrimitive() {
			return "", errNotScalar
		}
		return scalarText(v), nil
	}
	return "", fmt.Errorf("unknown query op %q", q.Op)
}

// list returns the item list.
func (q *Query) list(doc tree.Value) (tree.Value, error) {
	arr, err := tree.Lookup(doc, q.Array)
	if err != nil {
		return tree.Value{}, errNotFound
	}
	if arr.Kind() != tree.KindArray {
		return tree.Value{}, errNotFound
	}
	return arr, nil
}

// base returns the value Field starts from: an item or the root.
func (q *Query) base(doc tree.Value) (tree.Value, error) {
	if !q.HasArray {
		return doc, nil
	}
	arr, err := q.list(doc)
	if err != nil {
		return tree.Value{}, err
	}
	items := arr.Items()
	switch q.Pos {
	case "first":
		if len(items) == 0 {
			return tree.Value{}, errNotFound
		}
		return items[0], nil
	case "last":
		if len(items) == 0 {
			return tree.Value{}, errNotFound
		}
		return items[len(items)-1], nil
	}
	var found tree.Value
	n := 0
	for _, it := range items {
		if k, ok := it.Get(q.Key); ok && k.IsPrimitive() && !k.IsNull() && scalarText(k) == q.KeyValue {
			found = it
			n++
		}
	}
	switch n {
	case 0:
		return tree.Value{}, errNotFound
	case 1:
		return found, nil
	}
	return tree.Value{}, errAmbiguous
}

// follow walks member names from v. A missing member is errAbsent; a
// member named twice is ambiguous.
func follow(v tree.Value, path []string) (tree.Value, error) {
	for _, k := range path {
		if v.Kind() != tree.KindObject {
			return tree.Value{}, errAbsent
		}
		n := 0
		var next tree.Value
		for _, m := range v.Members() {
			if m.Key == k {
				next = m.Value
				n++
			}
		}
		switch n {
		case 0:
			return tree.Value{}, errAbsent
		case 1:
			v = next
		default:
			return tree.Value{}, errAmbiguous
		}
	}
	return v, nil
}

// scalarText is the answer text of a primitive value.
func scalarText(v tree.Value) string {
	switch v.Kind() {
	case tree.KindString:
		return v.Str()
	case tree.KindNumber:
		return v.Num()
	case tree.KindBool:
		if v.Bool() {
			return "true"
		}
		return "false"
	}
	return "null"
}

// positional reports whether a query depends on the whole list (a count)
// or on an item's position, which a trimmed list cannot show for sure.
func (q *Query) positional() bool {
	return q.Op == OpCount || q.Pos != ""
}

// fieldName renders a field path for a question: "user.login".
func fieldName(path []string) string {
	return `"` + strings.Join(path, ".") + `"`
}
