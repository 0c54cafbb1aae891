// Package deduptest holds test support for package dedup: MemShared, a
// dedup.NearShared in memory and the reference of the Shared contract.
package deduptest

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/terse-dev/terse/dedup"
)

// MemShared is a [dedup.NearShared] in memory, for tests and as the reference
// of the contract. Its partitions do not expire. The zero value is ready.
type MemShared struct {
	mu    sync.Mutex
	parts map[dedup.Key][]dedup.SharedEntry // oldest first
	vals  map[dedup.Key]map[[16]byte][]byte
	ops   atomic.Int64
}

// LookupNear implements [dedup.NearShared].
func (m *MemShared) LookupNear(_ context.Context, k dedup.Key, fp [16]byte, skel string) (string, bool, *dedup.SharedEntry, []byte, error) {
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	es := m.parts[k]
	for _, e := range es {
		if e.FP == fp {
			return e.ID, true, nil, nil, nil
		}
	}
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].Skel == skel {
			e := es[i]
			return "", false, &e, m.vals[k][e.FP], nil
		}
	}
	return "", false, nil, nil, nil
}

// AddNear implements [dedup.NearShared].
func (m *MemShared) AddNear(ctx context.Context, k dedup.Key, e dedup.SharedEntry, content []byte, maxEntries int) error {
	m.Add(ctx, k, e, maxEntries)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.vals == nil {
		m.vals = map[dedup.Key]map[[16]byte][]byte{}
	}
	if m.vals[k] == nil {
		m.vals[k] = map[[16]byte][]byte{}
	}
	m.vals[k][e.FP] = bytes.Clone(content)
	for fp := range m.vals[k] { // only the entries kept keep their content
		if !slices.ContainsFunc(m.parts[k], func(x dedup.SharedEntry) bool { return x.FP == fp }) {
			delete(m.vals[k], fp)
		}
	}
	return nil
}

// Ops returns how many calls it served.
func (m *MemShared) Ops() int64 { return m.ops.Load() }

// Lookup implements [dedup.Shared].
func (m *MemShared) Lookup(_ context.Context, k dedup.Key, fp [16]byte) (string, bool, error) {
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.parts[k] {
		if e.FP == fp {
			return e.ID, true, nil
		}
	}
	return "", false, nil
}

// Add implements [dedup.Shared].
func (m *MemShared) Add(_ context.Context, k dedup.Key, e dedup.SharedEntry, maxEntries int) error {
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.parts == nil {
		m.parts = map[dedup.Key][]dedup.SharedEntry{}
	}
	es := slices.DeleteFunc(m.parts[k], func(x dedup.SharedEntry) bool { return x.FP == e.FP })
	es = append(es, e)
	if maxEntries > 0 && len(es) > maxEntries {
		es = es[len(es)-maxEntries:]
	}
	m.parts[k] = es
	return nil
}

// Entries implements [dedup.Shared].
func (m *MemShared) Entries(_ context.Context, k dedup.Key) ([]dedup.SharedEntry, error) {
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.parts[k]), nil
}

// Remove implements [dedup.Shared].
func (m *MemShared) Remove(_ context.Context, k dedup.Key, ids ...string) error {
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.parts[k] = slices.DeleteFunc(m.parts[k], func(x dedup.SharedEntry) bool { return slices.Contains(ids, x.ID) })
	return nil
}

// Drop implements [dedup.Shared].
func (m *MemShared) Drop(_ context.Context, k dedup.Key) error {
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.parts, k)
	return nil
}
