package tree

import (
	"hash/maphash"
	"sync"
)

// RepeatedKey returns the first member of mems, in order, whose key
// repeats an earlier member's key, and whether there is one. It allocates
// nothing: small objects compare keys pairwise, larger ones use a pooled
// hash table sized to the object (cleared at that size, so one huge object
// does not make every later check pay for its size).
func RepeatedKey(mems []Member) (i int, ok bool) {
	if len(mems) <= 8 {
		for i := 1; i < len(mems); i++ {
			for _, m := range mems[:i] {
				if m.Key == mems[i].Key {
					return i, true
				}
			}
		}
		return 0, false
	}
	t := keyTables.Get().(*keyTable)
	defer keyTables.Put(t)
	t.reset(0, len(mems))
	for i, m := range mems {
		if t.add(0, mems, m.Key, i) {
			return i, true
		}
	}
	return 0, false
}

var keyTables = sync.Pool{New: func() any { return new(keyTable) }}

// keySeed is fixed for the process; hashes only ever decide set
// membership, never an order.
var keySeed = maphash.MakeSeed()

// keyTable is an open-addressing set of object keys. Its slots hold
// 1 + the index of a member in a slice of members, 0 for empty. One
// table can hold several sets one after another, as a stack: the parser
// keeps one set per open object with many members, and only the innermost
// open object's set (the last one) ever grows.
type keyTable struct {
	slots []int32
}

// reset makes the slots from start on an empty set with room for n keys,
// dropping any later sets.
func (t *keyTable) reset(start, n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if cap(t.slots) < start+size {
		t.slots = append(t.slots[:cap(t.slots)], make([]int32, start+size-cap(t.slots))...)
	}
	t.slots = t.slots[:start+size]
	clear(t.slots[start:])
}

// add looks key up in the set at start (the last set), whose slots index
// mems, and reports whether it is there; if not, it records that key is
// mems[i] (which the caller may append to mems after this call). The set
// grows to keep at most half its slots full, rehashing mems[:i].
func (t *keyTable) add(start int, mems []Member, key string, i int) bool {
	size := len(t.slots) - start
	if 2*(i+1) > size {
		t.reset(start, 2*(i+1))
		for j, m := range mems[:i] {
			t.add(start, mems, m.Key, j)
		}
		size = len(t.slots) - start
	}
	slots := t.slots[start:]
	mask := uint64(size - 1)
	for h := maphash.String(keySeed, key) & mask; ; h = (h + 1) & mask {
		s := slots[h]
		if s == 0 {
			slots[h] = int32(i + 1)
			return false
		}
		if mems[s-1].Key == key {
			return true
		}
	}
}
