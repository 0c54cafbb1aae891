package store

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// Mem is an in-memory [Store]. The zero value is ready to use, with
// [DefaultTTL] and no size bound. Entries do not survive the process.
type Mem struct {
	TTL time.Duration
	Now func() time.Time
	// MaxBytes bounds the bytes of the entries kept: past it, the least
	// recently used go first (and read as expired). 0 means no bound.
	MaxBytes int64

	mu    sync.Mutex
	m     map[string]*list.Element // of *memEntry
	lru   list.List                // most recently used first
	bytes int64
}

type memEntry struct {
	key  string
	data []byte
	used time.Time
}

func (m *Mem) ttl() time.Duration {
	if m.TTL > 0 {
		return m.TTL
	}
	return DefaultTTL
}

func (m *Mem) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Put stores a copy of data under key, and drops expired entries and,
// past MaxBytes, the least recently used ones. An entry larger than
// MaxBytes is not kept.
func (m *Mem) Put(ctx context.Context, key string, data []byte) error {
	if !ValidKey(key) {
		return &KeyError{key}
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]*list.Element{}
	}
	// Expired entries are the least recently used: from the back.
	for el := m.lru.Back(); el != nil && now.Sub(el.Value.(*memEntry).used) > m.ttl(); el = m.lru.Back() {
		m.remove(el)
	}
	if el, ok := m.m[key]; ok {
		m.remove(el)
	}
	if m.MaxBytes > 0 && int64(len(data)) > m.MaxBytes {
		return nil // read as expired, like an entry evicted at once
	}
	e := &memEntry{key, append([]byte(nil), data...), now}
	m.m[key] = m.lru.PushFront(e)
	m.bytes += int64(len(data))
	for m.MaxBytes > 0 && m.bytes > m.MaxBytes {
		m.remove(m.lru.Back())
	}
	return nil
}

func (m *Mem) remove(el *list.Element) {
	e := m.lru.Remove(el).(*memEntry)
	delete(m.m, e.key)
	m.bytes -= int64(len(e.data))
}

// Get returns the data under key and restarts its idle timer.
func (m *Mem) Get(ctx context.Context, key string) ([]byte, error) {
	if !ValidKey(key) {
		return nil, &KeyError{key}
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.m[key]
	if !ok {
		return nil, ErrNotFound
	}
	e := el.Value.(*memEntry)
	if now.Sub(e.used) > m.ttl() {
		m.remove(el)
		return nil, ErrNotFound
	}
	e.used = now
	m.lru.MoveToFront(el)
	return e.data, nil
}

// Bytes returns the bytes of the entries kept.
func (m *Mem) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}
