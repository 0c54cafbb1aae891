package toon_test

import (
	"errors"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// representableByWalk is Representable written the plain way, over
// tree.Walk with a pointer for every value: the reference the faster walk
// must agree with.
func representableByWalk(v tree.Value) *toon.UnrepresentableError {
	var err *toon.UnrepresentableError
	tree.Walk(v, func(p tree.Pointer, v tree.Value) bool {
		if err != nil {
			return false
		}
		switch v.Kind() {
		case tree.KindString:
			if v.Escaped() {
				err = &toon.UnrepresentableError{Pointer: p, Msg: "string holds a lone UTF-16 surrogate escape, which TOON cannot carry"}
			}
		case tree.KindObject:
			seen := map[string]bool{}
			for _, m := range v.Members() {
				if seen[m.Key] {
					err = &toon.UnrepresentableError{Pointer: p, Key: m.Key,
						Msg: "duplicate key " + strconv.Quote(m.Key) + ", which TOON cannot carry"}
					break
				}
				seen[m.Key] = true
			}
		}
		return err == nil
	})
	return err
}

// loneSurrogate is a string value holding a lone surrogate escape.
var loneSurrogate = func() tree.Value {
	v, err := tree.ParseString(`"cut \ud83d"`)
	if err != nil || !v.Escaped() {
		panic("no lone surrogate value")
	}
	return v
}()

// genUnrepresentable draws trees where repeated keys (in small objects
// and in objects over the pairwise-compare size), lone surrogates and
// keys needing pointer escapes ("~", "/") all occur.
func genUnrepresentable(t *rapid.T, depth int) tree.Value {
	kind := rapid.IntRange(0, 4).Draw(t, "kind")
	if depth <= 0 {
		kind = min(kind, 1)
	}
	switch kind {
	case 0:
		return tree.Number(strconv.Itoa(rapid.IntRange(0, 9).Draw(t, "n")))
	case 1:
		if rapid.IntRange(0, 30).Draw(t, "lone") == 0 {
			return loneSurrogate
		}
		return tree.String("s")
	case 2:
		items := make([]tree.Value, rapid.IntRange(0, 4).Draw(t, "items"))
		for i := range items {
			items[i] = genUnrepresentable(t, depth-1)
		}
		return tree.Array(items...)
	default:
		n := rapid.SampledFrom([]int{0, 1, 3, 6, 32, 33, 40}).Draw(t, "members")
		dup := rapid.IntRange(0, 6).Draw(t, "dup") == 0
		mems := make([]tree.Member, n)
		for i := range mems {
			key := rapid.SampledFrom([]string{"a", "a/b", "~x", ""}).Draw(t, "key") + strconv.Itoa(i)
			if dup && i > 0 && rapid.IntRange(0, n).Draw(t, "repeat") == 0 {
				key = mems[rapid.IntRange(0, i-1).Draw(t, "of")].Key
			}
			v := tree.Value(tree.Null())
			if rapid.IntRange(0, n/4).Draw(t, "deep") == 0 {
				v = genUnrepresentable(t, depth-1)
			}
			mems[i] = tree.Member{Key: key, Value: v}
		}
		return tree.Object(mems...)
	}
}

// TestRepresentableAgreesWithWalk: the pointer-free walk finds the same
// first problem, at the same pointer, as a walk over every pointer.
func TestRepresentableAgreesWithWalk(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := genUnrepresentable(t, 4)
		want := representableByWalk(v)
		err := toon.Representable(v)
		if want == nil {
			if err != nil {
				t.Fatalf("Representable(%s) = %v, want nil", v, err)
			}
			return
		}
		got, ok := errors.AsType[*toon.UnrepresentableError](err)
		if !ok || *got != *want {
			t.Fatalf("Representable(%s) = %#v, want %#v", v, err, want)
		}
	})
}
