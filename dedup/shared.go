package dedup

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Shared keeps a [Cache]'s partitions outside the process, so that several
// processes (gateway replicas behind a load balancer) agree on what each
// partition has been shown. [MemShared] is the in-process implementation;
// package store/redisstore has one on Redis.
//
// Every method is idempotent: recording the same entry twice, or removing
// an entry that is gone, leaves the same state. An implementation bounds
// each partition to maxEntries entries (oldest first out) and lets a
// partition nobody wrote for its TTL expire.
type Shared interface {
	// Lookup returns the id recorded for fingerprint fp in partition k.
	Lookup(ctx context.Context, k Key, fp [16]byte) (id string, ok bool, err error)
	// Add records e in partition k, keeping at most maxEntries entries.
	Add(ctx context.Context, k Key, e SharedEntry, maxEntries int) error
	// Entries returns the entries of partition k.
	Entries(ctx context.Context, k Key) ([]SharedEntry, error)
	// Remove drops the entries with the given ids from partition k.
	Remove(ctx context.Context, k Key, ids ...string) error
	// Drop forgets partition k.
	Drop(ctx context.Context, k Key) error
}

// ErrNotRecorded, returned by a [Shared]'s Add, declines to record an
// entry without failing: the result is shown without an id line, and the
// error is not counted. A Shared returns it for partitions that are never
// read again (a call that is a partition of its own).
var ErrNotRecorded = errors.New("dedup: not recorded")

// SharedEntry is one result a partition was shown, as a [Shared] keeps it.
type SharedEntry struct {
	FP    [16]byte `json:"-"`
	ID    string   `json:"id"`
	Tool  string   `json:"tool,omitempty"`
	Paths []string `json:"paths,omitempty"`
	Size  int      `json:"size"`
}

// SharedTimeout bounds each call of a [Shared] made by a [Cache].
const SharedTimeout = 500 * time.Millisecond

// SetShared makes the cache keep its partitions in s instead of in
// memory (nil goes back to memory). With a Shared store, ids are the
// first 8 hex digits of the fingerprint (the same in every process),
// near-references and the MaxBytes bound are off, and a failing store
// never fails a call: Check finds nothing, Record gives no id line (the
// result is shown without one and cannot be referenced), and onErr, when
// not nil, sees the error. Call it before the cache is used.
func (c *Cache) SetShared(s Shared, onErr func(error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shared, c.onErr = s, onErr
}

// SharedErrors returns how many calls of the Shared store failed.
func (c *Cache) SharedErrors() int64 { return c.sharedErrs.Load() }

func (c *Cache) sharedFailed(err error) {
	c.sharedErrs.Add(1)
	if c.onErr != nil {
		c.onErr(err)
	}
}

func sharedCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), SharedTimeout)
}

// sharedCheck is check on the Shared store.
func (c *Cache) sharedCheck(k Key, call Call, fp [16]byte) Outcome {
	if len(call.Paths) > 0 && c.isMutating(call) {
		c.sharedInvalidate(k, call.Paths)
	}
	if len(call.Content) < c.opts.MinBytes {
		return Outcome{}
	}
	ctx, cancel := sharedCtx()
	defer cancel()
	id, ok, err := c.shared.Lookup(ctx, k, fp)
	if err != nil {
		c.sharedFailed(err)
		return Outcome{}
	}
	if !ok {
		return Outcome{}
	}
	return Outcome{Kind: Ref, ID: id, Hint: RefHint(id)}
}

// sharedRecord is record on the Shared store.
func (c *Cache) sharedRecord(k Key, call Call, fp [16]byte) Outcome {
	if len(call.Content) < c.opts.MinBytes || len(call.Content) > c.opts.MaxBytes {
		return Outcome{}
	}
	e := SharedEntry{FP: fp, ID: hex.EncodeToString(fp[:4]), Tool: call.Tool, Paths: call.Paths, Size: len(call.Content)}
	ctx, cancel := sharedCtx()
	defer cancel()
	if err := c.shared.Add(ctx, k, e, c.opts.MaxEntries); err != nil {
		if !errors.Is(err, ErrNotRecorded) {
			c.sharedFailed(err)
		}
		return Outcome{}
	}
	return Outcome{ID: e.ID, IDLine: IDLine(e.ID)}
}

func (c *Cache) sharedInvalidate(k Key, written []string) {
	ctx, cancel := sharedCtx()
	defer cancel()
	if len(written) == 0 {
		if err := c.shared.Drop(ctx, k); err != nil {
			c.sharedFailed(err)
		}
		return
	}
	es, err := c.shared.Entries(ctx, k)
	if err != nil {
		c.sharedFailed(err)
		return
	}
	var ids []string
	for _, e := range es {
		if touches(written, e.Paths) {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) > 0 {
		if err := c.shared.Remove(ctx, k, ids...); err != nil {
			c.sharedFailed(err)
		}
	}
}

func (c *Cache) sharedDo(f func(context.Context) error) {
	ctx, cancel := sharedCtx()
	defer cancel()
	if err := f(ctx); err != nil {
		c.sharedFailed(err)
	}
}

func (c *Cache) sharedLen(k Key) (entries, bytes int) {
	ctx, cancel := sharedCtx()
	defer cancel()
	es, err := c.shared.Entries(ctx, k)
	if err != nil {
		c.sharedFailed(err)
		return 0, 0
	}
	for _, e := range es {
		bytes += e.Size
	}
	return len(es), bytes
}

// MemShared is a [Shared] in memory, for tests and as the reference of
// the contract. Its partitions do not expire. The zero value is ready.
type MemShared struct {
	mu    sync.Mutex
	parts map[Key][]SharedEntry // oldest first
	ops   atomic.Int64
}

// Ops returns how many calls it served.
func (m *MemShared) Ops() int64 { return m.ops.Load() }

// Lookup implements [Shared].
func (m *MemShared) Lookup(_ context.Context, k Key, fp [16]byte) (string, bool, error) {
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

// Add implements [Shared].
func (m *MemShared) Add(_ context.Context, k Key, e SharedEntry, maxEntries int) error {
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.parts == nil {
		m.parts = map[Key][]SharedEntry{}
	}
	es := slices.DeleteFunc(m.parts[k], func(x SharedEntry) bool { return x.FP == e.FP })
	es = append(es, e)
	if maxEntries > 0 && len(es) > maxEntries {
		es = es[len(es)-maxEntries:]
	}
	m.parts[k] = es
	return nil
}

// Entries implements [Shared].
func (m *MemShared) Entries(_ context.Context, k Key) ([]SharedEntry, error) {
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.parts[k]), nil
}

// Remove implements [Shared].
func (m *MemShared) Remove(_ context.Context, k Key, ids ...string) error {
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.parts[k] = slices.DeleteFunc(m.parts[k], func(x SharedEntry) bool { return slices.Contains(ids, x.ID) })
	return nil
}

// Drop implements [Shared].
func (m *MemShared) Drop(_ context.Context, k Key) error {
	m.ops.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.parts, k)
	return nil
}
