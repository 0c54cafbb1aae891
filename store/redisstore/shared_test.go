package redisstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/terse-dev/terse/dedup"
)

func newTestState(tb testing.TB) *State {
	tb.Helper()
	s, err := NewState(redisURL(tb), time.Minute)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	if err := s.Ping(context.Background()); err != nil {
		tb.Fatalf("TERSE_REDIS_URL server does not answer: %v", err)
	}
	return s
}

// Two caches on one State behave as one: what one process recorded, the
// other references; compaction, invalidation and the bound are shared.
func TestSharedDedupAcrossProcesses(t *testing.T) {
	st := newTestState(t)
	a, b := dedup.New(dedup.Options{MaxEntries: 2}), dedup.New(dedup.Options{MaxEntries: 2})
	a.SetShared(st, nil)
	b.SetShared(st, nil)
	k := dedup.Key{Session: "t1:" + t.Name() + time.Now().String(), Partition: "p/0"}
	body := []byte(strings.Repeat("x", 300))
	rec := a.Record(k, dedup.Call{Tool: "read", Paths: []string{"/a/f"}, Content: body})
	if rec.IDLine == "" {
		t.Fatal("no id line")
	}
	if again := a.Record(k, dedup.Call{Tool: "read", Content: body}); again.ID != rec.ID {
		t.Fatalf("record not idempotent: %q then %q", rec.ID, again.ID)
	}
	if o := b.Check(k, dedup.Call{Tool: "read", Content: body}); o.Kind != dedup.Ref || o.ID != rec.ID {
		t.Fatalf("other process: %+v, want ref %s", o, rec.ID)
	}
	if o := b.Check(dedup.Key{Session: "t2:" + k.Session, Partition: k.Partition}, dedup.Call{Tool: "read", Content: body}); o.Kind != dedup.Miss {
		t.Fatalf("another session got %+v", o)
	}
	// A write of the directory drops the read.
	b.Invalidate(k, "/a")
	if o := a.Check(k, dedup.Call{Tool: "read", Content: body}); o.Kind != dedup.Miss {
		t.Fatalf("after invalidation: %+v", o)
	}
	// The bound: 3 records, 2 kept, the oldest gone.
	for i := range 3 {
		a.Record(k, dedup.Call{Tool: "read", Content: []byte(strings.Repeat(string(rune('a'+i)), 300))})
	}
	if n, _ := b.Len(k); n != 2 {
		t.Fatalf("partition holds %d entries, want 2", n)
	}
	if o := b.Check(k, dedup.Call{Tool: "read", Content: []byte(strings.Repeat("a", 300))}); o.Kind != dedup.Miss {
		t.Fatalf("oldest entry kept: %+v", o)
	}
	id := a.Record(k, dedup.Call{Tool: "read", Content: []byte(strings.Repeat("c", 300))}).ID
	b.Forget(k, id)
	b.Compact(k)
	if n, _ := a.Len(k); n != 0 {
		t.Fatalf("after compaction %d entries", n)
	}
}

// Redis down: no reference, no id line, the error counted, and no wait
// beyond the timeout.
func TestSharedDedupRedisDown(t *testing.T) {
	st, err := NewState("redis://127.0.0.1:1/0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := dedup.New(dedup.Options{})
	var seen []error
	c.SetShared(st, func(err error) { seen = append(seen, err) })
	k := dedup.Key{Session: "s", Partition: "p"}
	body := []byte(strings.Repeat("x", 300))
	if o := c.Record(k, dedup.Call{Content: body}); o.IDLine != "" {
		t.Fatalf("id line without a store: %+v", o)
	}
	if o := c.Check(k, dedup.Call{Content: body}); o.Kind != dedup.Miss {
		t.Fatalf("%+v", o)
	}
	if c.SharedErrors() != 2 || len(seen) != 2 {
		t.Fatalf("errors %d, seen %v", c.SharedErrors(), seen)
	}
}

func TestStateGenerationsOwners(t *testing.T) {
	st := newTestState(t)
	ctx := context.Background()
	sc := "gen-" + time.Now().Format(time.RFC3339Nano)
	g, err := st.Generations(ctx, sc, sc+"#c")
	if err != nil || g[0] != 0 || g[1] != 0 {
		t.Fatalf("%v %v", g, err)
	}
	// Two replicas compacting what they both read as 0 advance it once.
	st.Advance(ctx, sc, 0)
	st.Advance(ctx, sc, 0)
	if g, _ := st.Generations(ctx, sc); g[0] != 1 {
		t.Fatalf("generation %d, want 1", g[0])
	}
	st.Own(ctx, "t1:s1", "c_00"+sc)
	st.Own(ctx, "t1:s1", "c_00"+sc)
	st.Own(ctx, "t2:s2", "c_00"+sc)
	for _, o := range []string{"t1:s1", "t2:s2"} {
		if owns, known, err := st.Owns(ctx, "c_00"+sc, o); !owns || !known || err != nil {
			t.Fatalf("%s: %v %v %v", o, owns, known, err)
		}
	}
	if owns, known, _ := st.Owns(ctx, "c_00"+sc, "t3:s3"); owns || !known {
		t.Fatalf("a third session: owns %v known %v", owns, known)
	}
	if owns, known, _ := st.Owns(ctx, "c_none"+sc, "t1:s1"); owns || known {
		t.Fatalf("unknown handle: owns %v known %v", owns, known)
	}
}

func TestStateRecords(t *testing.T) {
	st := newTestState(t)
	ctx := context.Background()
	k := "s:t1:" + strings.ToUpper(rand.Text())
	if _, ok, err := st.Record(ctx, k); ok || err != nil {
		t.Fatalf("unknown record: %v %v", ok, err)
	}
	st.PutRecord(ctx, k, `{"client":"a"}`)
	st.PutRecord(ctx, k, `{"client":"a"}`)
	if v, ok, err := st.Record(ctx, k); !ok || err != nil || v != `{"client":"a"}` {
		t.Fatalf("record: %q %v %v", v, ok, err)
	}
	st.DropRecord(ctx, k)
	if _, ok, _ := st.Record(ctx, k); ok {
		t.Fatal("dropped record still there")
	}
}

// TestNamespace: every key that chunks and shared state write is under
// Namespace. The keys of this run are told apart by a marker in their
// names, so that other tests on the same server do not matter.
func TestNamespace(t *testing.T) {
	st := newTestState(t)
	raw := rawRedis(t)
	ctx := context.Background()
	mark := "nsmark" + strings.ToLower(rand.Text())
	r, err := New(redisURL(t), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Put(ctx, "c_"+mark, []byte("chunk")); err != nil {
		t.Fatal(err)
	}
	c := dedup.New(dedup.Options{})
	c.SetShared(st, func(err error) { t.Error(err) })
	k := dedup.Key{Session: "t:" + mark, Partition: "p/0"}
	c.Record(k, dedup.Call{Tool: "read", Content: []byte(strings.Repeat("x", 300))})
	st.Advance(ctx, "t:"+mark, 0)
	st.Own(ctx, "t:s", "c_"+mark)
	st.PutRecord(ctx, "s:t:"+mark, "{}")
	var keys []string
	iter := raw.Scan(ctx, 0, "*"+mark+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 6 { // chunk, dedup hash and zset, counter, owner, record
		t.Errorf("%d keys of this run, want 6: %q", len(keys), keys)
	}
	for _, key := range keys {
		if !strings.HasPrefix(key, Namespace) {
			t.Errorf("key %q is outside %q", key, Namespace)
		}
		raw.Del(ctx, key)
	}
}

// cmdCounter counts the commands a client sends (a pipeline or script is
// one command per command in it).
type cmdCounter struct{ n atomic.Int64 }

func (c *cmdCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *cmdCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *cmdCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// Near-references on Redis: what one process recorded, another
// near-references, in one command per Check and per Record like exact
// references; an evicted or invalidated entry takes its candidate along.
func TestSharedNearRef(t *testing.T) {
	st := newTestState(t)
	var cnt cmdCounter
	st.client.AddHook(&cnt)
	a, b := dedup.New(dedup.Options{NearRef: true, MaxEntries: 2}), dedup.New(dedup.Options{NearRef: true, MaxEntries: 2})
	a.SetShared(st, nil)
	b.SetShared(st, nil)
	k := dedup.Key{Session: "near:" + strings.ToLower(rand.Text()), Partition: "p/0"}
	body := func(status string, d int) []byte {
		return fmt.Appendf(nil, `{"job":"build","status":%q,"duration":%d,"log":%q}`, status, d, strings.Repeat("line\n", 120))
	}
	// Load the scripts (the first use of each is EVALSHA, then EVAL).
	warm := dedup.Key{Session: k.Session + ":warm", Partition: "p/0"}
	a.Process(warm, dedup.Call{Tool: "job", Content: body("x", 0)})
	a.Process(warm, dedup.Call{Tool: "job", Content: body("y", 0)})
	cnt.n.Store(0)
	first := a.Process(k, dedup.Call{Tool: "job", Paths: []string{"/w/job"}, Content: body("pending", 12)})
	if first.IDLine == "" {
		t.Fatal("not recorded")
	}
	o := b.Process(k, dedup.Call{Tool: "job", Content: body("success", 34)})
	if o.Kind != dedup.NearRef || o.Hint != "> [near-ref: "+first.ID+", status: pending→success, duration: 12→34]" {
		t.Fatalf("other process: %+v", o)
	}
	if o := b.Check(k, dedup.Call{Tool: "job", Content: body("pending", 12)}); o.Kind != dedup.Ref {
		t.Fatalf("exact repeat: %+v", o)
	}
	// Process (miss, record) + Process (near) + Check (ref): 4 commands.
	if n := cnt.n.Load(); n != 4 {
		t.Errorf("%d Redis commands for a record, a near-reference and a reference, want 4", n)
	}
	// Invalidation drops the candidate with the entry.
	b.Invalidate(k, "/w/job")
	if o := a.Check(k, dedup.Call{Tool: "job", Content: body("success", 34)}); o.Kind != dedup.Miss {
		t.Fatalf("after invalidation: %+v", o)
	}
	// So does eviction (MaxEntries 2).
	a.Process(k, dedup.Call{Tool: "job", Content: body("queued", 1)})
	for i := range 2 {
		a.Process(k, dedup.Call{Tool: "other", Content: []byte(strings.Repeat(string(rune('a'+i)), 600))})
	}
	if o := b.Check(k, dedup.Call{Tool: "job", Content: body("done", 2)}); o.Kind != dedup.Miss {
		t.Fatalf("after eviction: %+v", o)
	}
	h, _ := ddKeys(k)
	fields, _ := rawRedis(t).HKeys(context.Background(), h).Result()
	for _, f := range fields {
		if strings.HasPrefix(f, "n:") || strings.HasPrefix(f, "v:") {
			t.Errorf("field %s left after its entry went", f)
		}
	}
}
