package toon_test

import (
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// modelEqual is the JSON-model equality of the spec (§2): ordered keys,
// and numbers compared by mathematical value ("1.5000" equals "1.5", "-0"
// equals "0").
func modelEqual(a, b tree.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case tree.KindNumber:
		return toon.CanonicalNumber(a.Num()) == toon.CanonicalNumber(b.Num())
	case tree.KindArray:
		ai, bi := a.Items(), b.Items()
		if len(ai) != len(bi) {
			return false
		}
		for i := range ai {
			if !modelEqual(ai[i], bi[i]) {
				return false
			}
		}
		return true
	case tree.KindObject:
		am, bm := a.Members(), b.Members()
		if len(am) != len(bm) {
			return false
		}
		for i := range am {
			if am[i].Key != bm[i].Key || !modelEqual(am[i].Value, bm[i].Value) {
				return false
			}
		}
		return true
	}
	return tree.Equal(a, b)
}
