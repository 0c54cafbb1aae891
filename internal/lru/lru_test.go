package lru

import (
	"slices"
	"testing"
)

func TestBoundAndOrder(t *testing.T) {
	var evicted []int
	c := Cache[int, string]{Max: 2, OnEvict: func(k int, _ string) { evicted = append(evicted, k) }}
	c.Set(1, "a")
	c.Set(2, "b")
	c.Get(1) // 2 is now the least recently used
	c.Set(3, "c")
	if _, ok := c.Peek(2); ok || c.Len() != 2 || !slices.Equal(evicted, []int{2}) {
		t.Fatalf("after a third entry: len %d, evicted %v", c.Len(), evicted)
	}
	c.Peek(1) // does not mark 1 used
	c.Set(4, "d")
	if _, ok := c.Get(1); ok {
		t.Error("1 kept though it was the least recently used")
	}
	if v, ok := c.Get(3); !ok || v != "c" {
		t.Errorf("Get(3) = %q, %v", v, ok)
	}
	c.Set(3, "C")
	if v, _ := c.Get(3); v != "C" || c.Len() != 2 {
		t.Errorf("replace: %q, len %d", v, c.Len())
	}
	if k, v, ok := c.Oldest(); !ok || k != 4 || v != "d" {
		t.Errorf("Oldest() = %d, %q, %v; want 4, d", k, v, ok)
	}
	c.Delete(3)
	c.Delete(9)
	if c.Len() != 1 {
		t.Errorf("after Delete: len %d", c.Len())
	}
}

func TestZeroValueUnbounded(t *testing.T) {
	var c Cache[string, int]
	for i := range 1000 {
		c.Set(string(rune('a'+i%26))+string(rune(i)), i)
	}
	if c.Len() != 1000 {
		t.Errorf("len %d", c.Len())
	}
	if _, ok := c.Get("nope"); ok {
		t.Error("Get of a missing key")
	}
	var empty Cache[int, int]
	if _, _, ok := empty.Oldest(); ok {
		t.Error("Oldest of an empty cache")
	}
	if _, ok := empty.Get(1); ok || empty.Len() != 0 {
		t.Error("zero cache")
	}
	empty.Delete(1)
}

func TestAll(t *testing.T) {
	var c Cache[int, int]
	for i := range 5 {
		c.Set(i, i*10)
	}
	c.Get(2)
	var keys []int
	for k, v := range c.All() {
		if v != k*10 {
			t.Errorf("All yields %d: %d", k, v)
		}
		keys = append(keys, k)
		if k%2 == 1 {
			c.Delete(k) // the entry given may be deleted
		}
	}
	if !slices.Equal(keys, []int{2, 4, 3, 1, 0}) || c.Len() != 3 {
		t.Errorf("All yielded %v, %d left", keys, c.Len())
	}
	for k := range c.All() {
		if k != 2 {
			t.Errorf("first yielded %d, want 2", k)
		}
		break
	}
}
