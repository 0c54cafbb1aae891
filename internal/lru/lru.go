// Package lru is a small generic least-recently-used cache: a map bounded
// by its number of entries, which drops the entry used longest ago when
// a new one would exceed the bound.
//
// A Cache is not safe for concurrent use: its owner holds its own lock.
package lru

import "iter"

// Cache maps keys to values, keeping at most Max entries. The zero value
// is ready to use and unbounded until Max is set; Max ≤ 0 means no bound.
type Cache[K comparable, V any] struct {
	// Max bounds the entries: adding one more drops the least recently
	// used.
	Max int
	// OnEvict, when set, sees every entry dropped to keep the bound (not
	// those removed by Delete).
	OnEvict func(K, V)

	m    map[K]*entry[K, V]
	head entry[K, V] // sentinel: head.next is the most recently used
}

type entry[K comparable, V any] struct {
	key        K
	val        V
	prev, next *entry[K, V]
}

func (c *Cache[K, V]) init() {
	if c.m == nil {
		c.m = map[K]*entry[K, V]{}
		c.head.next, c.head.prev = &c.head, &c.head
	}
}

func (c *Cache[K, V]) unlink(e *entry[K, V]) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (c *Cache[K, V]) front(e *entry[K, V]) {
	e.prev, e.next = &c.head, c.head.next
	c.head.next.prev = e
	c.head.next = e
}

// Get returns the value of key and marks it the most recently used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	e, ok := c.m[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.unlink(e)
	c.front(e)
	return e.val, true
}

// Peek returns the value of key without marking it used.
func (c *Cache[K, V]) Peek(key K) (V, bool) {
	if e, ok := c.m[key]; ok {
		return e.val, true
	}
	var zero V
	return zero, false
}

// Set stores the value of key, the most recently used, dropping the
// least recently used entry when the cache is full.
func (c *Cache[K, V]) Set(key K, val V) {
	c.init()
	if e, ok := c.m[key]; ok {
		e.val = val
		c.unlink(e)
		c.front(e)
		return
	}
	e := &entry[K, V]{key: key, val: val}
	c.m[key] = e
	c.front(e)
	for c.Max > 0 && len(c.m) > c.Max {
		old := c.head.prev
		c.unlink(old)
		delete(c.m, old.key)
		if c.OnEvict != nil {
			c.OnEvict(old.key, old.val)
		}
	}
}

// Oldest returns the least recently used entry, without marking it
// used.
func (c *Cache[K, V]) Oldest() (K, V, bool) {
	if len(c.m) == 0 {
		var k K
		var v V
		return k, v, false
	}
	e := c.head.prev
	return e.key, e.val, true
}

// All yields the entries from the most to the least recently used,
// without marking them used. The loop may delete the entry it was given,
// and no other.
func (c *Cache[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if c.m == nil {
			return
		}
		for e := c.head.next; e != &c.head; {
			next := e.next
			if !yield(e.key, e.val) {
				return
			}
			e = next
		}
	}
}

// Delete removes key.
func (c *Cache[K, V]) Delete(key K) {
	if e, ok := c.m[key]; ok {
		c.unlink(e)
		delete(c.m, key)
	}
}

// Len is the number of entries.
func (c *Cache[K, V]) Len() int { return len(c.m) }
