package tree_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/terse-dev/terse/tree"
)

// firstRepeat returns the first key, in source order, that repeats an
// earlier key of its object.
func firstRepeat(v tree.Value) (string, bool) {
	switch v.Kind() {
	case tree.KindArray:
		for _, x := range v.Items() {
			if k, ok := firstRepeat(x); ok {
				return k, true
			}
		}
	case tree.KindObject:
		mems := v.Members()
		for i, m := range mems {
			for _, e := range mems[:i] {
				if e.Key == m.Key {
					return m.Key, true
				}
			}
			if k, ok := firstRepeat(m.Value); ok {
				return k, true
			}
		}
	}
	return "", false
}

// genKeyed draws nested objects around the size where the parser stops
// scanning keys and keeps them in a set, with nested objects sharing
// their parent's keys and repeats placed before, inside and after them.
func genKeyed(t *rapid.T, depth int, serial *int) tree.Value {
	if depth <= 0 || rapid.IntRange(0, 3).Draw(t, "leaf") == 0 {
		return tree.Int(1)
	}
	if rapid.IntRange(0, 4).Draw(t, "array") == 0 {
		return tree.Array(genKeyed(t, depth-1, serial), genKeyed(t, depth-1, serial))
	}
	*serial++
	// Keys are the same in every object unless tagged with the object's
	// serial: both kinds, so inner objects share their parent's keys.
	tag := ""
	if rapid.Bool().Draw(t, "tagged") {
		tag = "o" + strconv.Itoa(*serial) + "_"
	}
	n := rapid.SampledFrom([]int{0, 1, 2, 14, 15, 16, 17, 40}).Draw(t, "members")
	repeatAt := -1
	if rapid.IntRange(0, 3).Draw(t, "repeat") == 0 && n > 1 {
		repeatAt = rapid.IntRange(1, n-1).Draw(t, "repeatAt")
	}
	mems := make([]tree.Member, n)
	for i := range mems {
		key := tag + "k" + strconv.Itoa(i)
		if i == repeatAt {
			key = mems[rapid.IntRange(0, i-1).Draw(t, "of")].Key
		}
		var v tree.Value = tree.Int(int64(i))
		if rapid.IntRange(0, n/3+1).Draw(t, "nested") == 0 {
			v = genKeyed(t, depth-1, serial)
		}
		mems[i] = tree.Member{Key: key, Value: v}
	}
	return tree.Object(mems...)
}

// TestNoDuplicateKeys: with NoDuplicateKeys, a parse fails exactly when
// some object repeats a key, at the first repeat in source order, for
// objects small and large and nested in each other.
func TestNoDuplicateKeys(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		serial := 0
		v := genKeyed(t, 4, &serial)
		src := string(tree.AppendJSON(nil, v))
		_, err := tree.ParseOptions{NoDuplicateKeys: true}.ParseString(src)
		key, repeats := firstRepeat(v)
		if !repeats {
			if err != nil {
				t.Fatalf("parse of %s: %v, want no error", src, err)
			}
			return
		}
		se, ok := errors.AsType[*tree.SyntaxError](err)
		if !ok || se.Msg != "duplicate key "+strconv.Quote(key)+" in object" {
			t.Fatalf("parse of %s: %v, want duplicate key %q", src, err, key)
		}
		if at := src[se.Offset:]; !strings.HasPrefix(at, strconv.Quote(key)+":") {
			t.Fatalf("parse of %s: error at %q, want at key %q", src, at, key)
		}
	})
}

// TestRepeatedKey checks RepeatedKey against a pairwise scan, on objects
// of every size up to past where it switches to a hash table.
func TestRepeatedKey(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.OneOf(rapid.StringMatching(`[ab]{0,6}`), rapid.StringMatching(`[a-z_]{1,12}`))
		keys := rapid.SliceOfN(key, 0, 100).Draw(t, "keys")
		mems := make([]tree.Member, len(keys))
		for i, k := range keys {
			mems[i] = tree.Member{Key: k}
		}
		wantI, wantOK := 0, false
	scan:
		for i := range mems {
			for j := range i {
				if mems[j].Key == mems[i].Key {
					wantI, wantOK = i, true
					break scan
				}
			}
		}
		if i, ok := tree.RepeatedKey(mems); i != wantI || ok != wantOK {
			t.Fatalf("RepeatedKey(%q) = %d, %v, want %d, %v", keys, i, ok, wantI, wantOK)
		}
	})
}

func TestRepeatedKeyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	mems := make([]tree.Member, 100)
	for i := range mems {
		mems[i].Key = "k" + strconv.Itoa(i)
	}
	tree.RepeatedKey(mems) // fills the pool
	if n := testing.AllocsPerRun(100, func() { tree.RepeatedKey(mems) }); n != 0 {
		t.Errorf("RepeatedKey allocates %v times per call, want 0", n)
	}
}
