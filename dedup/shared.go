package dedup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/terse-dev/terse/tree"
)

// Shared keeps a [Cache]'s partitions outside the process, so that several
// processes (gateway replicas behind a load balancer) agree on what each
// partition has been shown. Package dedup/deduptest has one in memory,
// the reference of the contract; package store/redisstore has one on Redis.
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
	// Skel is the result's [Skeleton] when it is kept for
	// near-references (NearShared.AddNear), else "".
	Skel string `json:"skel,omitempty"`
}

// NearShared is a [Shared] that also keeps near-reference candidates: with
// [Options.NearRef], a [Cache] on one finds near-references as a cache in
// memory does, in the same one round trip per Check and Record. A
// candidate is found by the result's [Skeleton] (its JSON structure with
// the scalar leaves left out, which a near-reference never changes): the
// partition keeps, per skeleton, the most recent result that had it,
// whose JSON the Cache then compares with the new one ([Delta]). Unlike
// the in-memory cache, which tries every entry of the partition, only
// that most recent one is tried.
type NearShared interface {
	Shared
	// LookupNear is Lookup that, when fp is not recorded, also returns
	// the entry last recorded with skeleton skel and its content (near,
	// nil when there is none).
	LookupNear(ctx context.Context, k Key, fp [16]byte, skel string) (id string, ok bool, near *SharedEntry, content []byte, err error)
	// AddNear is Add that also keeps content as the candidate of
	// e.Skel.
	AddNear(ctx context.Context, k Key, e SharedEntry, content []byte, maxEntries int) error
}

// NearMaxStored bounds the content a [NearShared] keeps per entry: larger
// results are recorded for exact references only.
const NearMaxStored = 64 << 10

// Skeleton returns the near-reference skeleton of a result of tool with
// JSON v: equal for two results only if [Delta] can relate them (the
// converse does not hold).
func Skeleton(tool string, v tree.Value) string {
	var b []byte
	var walk func(v tree.Value)
	walk = func(v tree.Value) {
		switch v.Kind() {
		case tree.KindObject:
			b = append(b, '{')
			for _, m := range v.Members() {
				b = strconv.AppendQuote(b, m.Key)
				b = append(b, ':')
				walk(m.Value)
			}
			b = append(b, '}')
		case tree.KindArray:
			b = append(b, '[')
			for _, it := range v.Items() {
				walk(it)
				b = append(b, ',')
			}
			b = append(b, ']')
		default:
			b = append(b, '_')
		}
	}
	walk(v)
	h := sha256.Sum256(append([]byte(tool+"\x00"), b...))
	return hex.EncodeToString(h[:8])
}

// nearOf returns the JSON object of a call eligible for a
// near-reference on a NearShared store, and that store.
func (c *Cache) nearOf(call Call) (NearShared, tree.Value, bool) {
	ns, ok := c.shared.(NearShared)
	if !ok || !c.opts.NearRef || len(call.Content) < c.opts.NearMinBytes || len(call.Content) > NearMaxStored {
		return nil, tree.Value{}, false
	}
	v, err := tree.Parse(call.Content)
	if err != nil || v.Kind() != tree.KindObject {
		return nil, tree.Value{}, false
	}
	return ns, v, true
}

// SharedTimeout bounds each call of a [Shared] made by a [Cache].
const SharedTimeout = 500 * time.Millisecond

// SetShared makes the cache keep its partitions in s instead of in
// memory (nil goes back to memory). With a Shared store, ids are the
// first 8 hex digits of the fingerprint (the same in every process),
// near-references need a [NearShared] store (and try only the last result
// of the same skeleton), the MaxBytes bound is off, and a failing store
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
	if ns, v, ok := c.nearOf(call); ok {
		id, ok, near, content, err := ns.LookupNear(ctx, k, fp, Skeleton(call.Tool, v))
		switch {
		case err != nil:
			c.sharedFailed(err)
			return Outcome{}
		case ok:
			return Outcome{Kind: Ref, ID: id, Hint: RefHint(id)}
		case near == nil || near.Tool != call.Tool:
			return Outcome{}
		}
		old, err := tree.Parse(content)
		if err != nil {
			return Outcome{}
		}
		if d, ok := Delta(old, v, c.opts.NearMaxDelta); ok {
			return Outcome{Kind: NearRef, ID: near.ID, Hint: NearRefHint(near.ID, d)}
		}
		return Outcome{}
	}
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
	add := func() error { return c.shared.Add(ctx, k, e, c.opts.MaxEntries) }
	if ns, v, ok := c.nearOf(call); ok {
		e.Skel = Skeleton(call.Tool, v)
		add = func() error { return ns.AddNear(ctx, k, e, call.Content, c.opts.MaxEntries) }
	}
	if err := add(); err != nil {
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
