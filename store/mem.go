package store

import (
	"context"
	"sync"
	"time"

	"github.com/terse-dev/terse/internal/lru"
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
	lru   lru.Cache[string, *memEntry] // bounded here by bytes and TTL
	bytes int64
}

type memEntry struct {
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
	// Expired entries are the least recently used: the oldest first.
	for k, e, ok := m.lru.Oldest(); ok && now.Sub(e.used) > m.ttl(); k, e, ok = m.lru.Oldest() {
		m.remove(k, e)
	}
	if e, ok := m.lru.Peek(key); ok {
		m.remove(key, e)
	}
	if m.MaxBytes > 0 && int64(len(data)) > m.MaxBytes {
		return nil // read as expired, like an entry evicted at once
	}
	m.lru.Set(key, &memEntry{append([]byte(nil), data...), now})
	m.bytes += int64(len(data))
	for m.MaxBytes > 0 && m.bytes > m.MaxBytes {
		k, e, _ := m.lru.Oldest()
		m.remove(k, e)
	}
	return nil
}

func (m *Mem) remove(key string, e *memEntry) {
	m.lru.Delete(key)
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
	e, ok := m.lru.Get(key)
	if !ok {
		return nil, ErrNotFound
	}
	if now.Sub(e.used) > m.ttl() {
		m.remove(key, e)
		return nil, ErrNotFound
	}
	e.used = now
	return e.data, nil
}

// Bytes returns the bytes of the entries kept.
func (m *Mem) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}
