package store

import (
	"context"
	"sync"
	"time"
)

// Mem is an in-memory [Store]. The zero value is ready to use, with
// [DefaultTTL]. Entries do not survive the process.
type Mem struct {
	TTL time.Duration
	Now func() time.Time

	mu sync.Mutex
	m  map[string]memEntry
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

// Put stores a copy of data under key and drops expired entries.
func (m *Mem) Put(ctx context.Context, key string, data []byte) error {
	if !ValidKey(key) {
		return &KeyError{key}
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]memEntry{}
	}
	for k, e := range m.m {
		if now.Sub(e.used) > m.ttl() {
			delete(m.m, k)
		}
	}
	m.m[key] = memEntry{append([]byte(nil), data...), now}
	return nil
}

// Get returns the data under key and restarts its idle timer.
func (m *Mem) Get(ctx context.Context, key string) ([]byte, error) {
	if !ValidKey(key) {
		return nil, &KeyError{key}
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok || now.Sub(e.used) > m.ttl() {
		delete(m.m, key)
		return nil, ErrNotFound
	}
	e.used = now
	m.m[key] = e
	return e.data, nil
}
