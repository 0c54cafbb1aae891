package fit

import (
	"strconv"

	"github.com/terse-dev/terse/tree"
)

// maxItemDepth bounds how deep [FindItems] looks for the item array.
const maxItemDepth = 3

// FindItems returns the pointer of the item array of a JSON document: the
// root itself when it is a non-empty array, else the largest array of
// objects (by compact JSON size) reachable through object members within
// depth 3 that holds at least two items and at least half the document's
// bytes. An array inside an array element, or a small array field of a
// single object (an issue's assignees), is never chosen. ok is false when
// there is no such array; the caller then treats the document as one item.
func FindItems(root tree.Value) (p tree.Pointer, ok bool) {
	if root.Kind() == tree.KindArray && root.Len() > 0 {
		return "", true // a root array is the item list, whatever it holds
	}
	if root.Kind() != tree.KindObject {
		return "", false
	}
	var buf []byte
	total := len(tree.AppendJSON(buf[:0], root))
	best := -1
	var walk func(v tree.Value, at tree.Pointer, depth int)
	walk = func(v tree.Value, at tree.Pointer, depth int) {
		for _, m := range v.Members() {
			q := at.Key(m.Key)
			switch m.Value.Kind() {
			case tree.KindArray:
				if m.Value.Len() >= 2 && isObjectArray(m.Value) {
					buf = tree.AppendJSON(buf[:0], m.Value)
					if size := len(buf); size*2 >= total && size > best {
						best, p, ok = size, q, true
					}
				}
			case tree.KindObject:
				if depth < maxItemDepth {
					walk(m.Value, q, depth+1)
				}
			}
		}
	}
	walk(root, "", 1)
	return p, ok
}

func isObjectArray(v tree.Value) bool {
	if v.Kind() != tree.KindArray || v.Len() == 0 {
		return false
	}
	for _, x := range v.Items() {
		if x.Kind() != tree.KindObject {
			return false
		}
	}
	return true
}

// setAt returns root with the value at the pointer tokens toks replaced by
// val, rebuilding only the path (values are immutable and shared).
func setAt(root tree.Value, toks []string, val tree.Value) tree.Value {
	if len(toks) == 0 {
		return val
	}
	switch root.Kind() {
	case tree.KindObject:
		mems := root.Members()
		out := make([]tree.Member, len(mems))
		copy(out, mems)
		for i := range out {
			if out[i].Key == toks[0] {
				out[i].Value = setAt(out[i].Value, toks[1:], val)
				break
			}
		}
		return tree.Object(out...)
	case tree.KindArray:
		i, err := strconv.Atoi(toks[0])
		items := root.Items()
		if err != nil || i < 0 || i >= len(items) {
			return root
		}
		out := make([]tree.Value, len(items))
		copy(out, items)
		out[i] = setAt(out[i], toks[1:], val)
		return tree.Array(out...)
	}
	return root
}
