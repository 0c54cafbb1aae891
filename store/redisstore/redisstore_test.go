package redisstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/store/storetest"
)

// redisTestTTL is the idle TTL of the Redis contract tests: real time, so
// short, but long enough that half of it dwarfs scheduling noise.
const redisTestTTL = time.Second

// redisURL returns TERSE_REDIS_URL, the scratch Redis server the tests
// use, or skips the test when it is unset. .ci/run starts one.
func redisURL(tb testing.TB) string {
	u := os.Getenv("TERSE_REDIS_URL")
	if u == "" {
		tb.Skip("TERSE_REDIS_URL is not set; set it to a scratch Redis (e.g. redis://127.0.0.1:6399/0) to run the Redis tests")
	}
	return u
}

// rawRedis returns a plain client on the test server, to look at keys.
func rawRedis(tb testing.TB) *redis.Client {
	opt, err := redis.ParseURL(redisURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	c := redis.NewClient(opt)
	tb.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		tb.Fatalf("TERSE_REDIS_URL server does not answer: %v", err)
	}
	return c
}

// newTestRedis returns a Redis store under a prefix of its own, whose keys
// are deleted when the test ends.
func newTestRedis(tb testing.TB, ttl time.Duration) *Redis {
	raw := rawRedis(tb)
	prefix := "test:" + strings.ToLower(rand.Text()) + ":"
	r := &Redis{URL: redisURL(tb), TTL: ttl, Prefix: prefix}
	tb.Cleanup(func() {
		r.Close()
		ctx := context.Background()
		keys, _ := raw.Keys(ctx, Namespace+prefix+"*").Result()
		if len(keys) > 0 {
			raw.Del(ctx, keys...)
		}
	})
	return r
}

func TestContractRedis(t *testing.T) {
	redisURL(t)
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		t.Parallel() // each case has a prefix of its own; the TTL cases sleep
		return storetest.Harness{S: newTestRedis(t, redisTestTTL), TTL: redisTestTTL, Wait: time.Sleep}
	})
}

// TestRedisNamespace checks the default key layout and that Put sets and
// Get re-arms the expiry on the server.
func TestRedisNamespace(t *testing.T) {
	raw := rawRedis(t)
	ctx := context.Background()
	r, err := New(redisURL(t), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	key := "ns-" + strings.ToLower(rand.Text())
	full := "terse:v1:chunk:" + key
	defer raw.Del(ctx, full)
	if err := r.Put(ctx, key, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if got, err := raw.Get(ctx, full).Result(); err != nil || got != "v" {
		t.Fatalf("GET %s = %q, %v, want v", full, got, err)
	}
	// Shorten the expiry behind the store's back; Get must restore it.
	raw.PExpire(ctx, full, time.Second)
	if _, err := r.Get(ctx, key); err != nil {
		t.Fatal(err)
	}
	if pttl, err := raw.PTTL(ctx, full).Result(); err != nil || pttl < 9*time.Second || pttl > 10*time.Second {
		t.Fatalf("PTTL after Get = %v, %v, want 9s..10s", pttl, err)
	}
}

// TestRedisShared checks that two stores on one server (two gateway
// replicas) see each other's entries.
func TestRedisShared(t *testing.T) {
	a := newTestRedis(t, time.Minute)
	b := &Redis{URL: a.URL, Prefix: a.Prefix}
	defer b.Close()
	ctx := context.Background()
	if err := a.Put(ctx, "k1", []byte("from a")); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get(ctx, "k1"); err != nil || string(got) != "from a" {
		t.Fatalf("b.Get = %q, %v, want \"from a\"", got, err)
	}
}

func TestRedisContext(t *testing.T) {
	r := newTestRedis(t, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Put(ctx, "k", []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Put(canceled) err = %v, want context.Canceled", err)
	}
	if _, err := r.Get(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get(canceled) err = %v, want context.Canceled", err)
	}
}

func TestRedisClose(t *testing.T) {
	r := newTestRedis(t, time.Minute)
	ctx := context.Background()
	if err := r.Put(ctx, "k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, "k"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Close err = %v, want a closed-client error", err)
	}
	if err := (&Redis{URL: r.URL}).Close(); err != nil {
		t.Fatalf("Close of an unused store = %v, want nil", err)
	}
}

// TestRedisDown checks that a server that does not answer is an error,
// not store.ErrNotFound (which would tell the agent its data expired).
func TestRedisDown(t *testing.T) {
	r := &Redis{URL: "redis://127.0.0.1:1/0"}
	defer r.Close()
	// The client retries with backoff; a short deadline ends that.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := r.Get(ctx, "k"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get on a closed port err = %v, want a connection error", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := r.Put(ctx, "k", nil); err == nil {
		t.Fatal("Put on a closed port succeeded")
	}
}

func TestRedisURL(t *testing.T) {
	for _, u := range []string{
		"redis://localhost:6379/0",
		"redis://:s3cret@cache.internal:6380/2",
		"rediss://user:s3cret@cache.example.com:6380",
		"redis://127.0.0.1",
		"unix:///run/redis.sock?db=1",
	} {
		if err := CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v, want nil", u, err)
		}
	}
	for _, u := range []string{
		"",
		"localhost:6379",
		"http://localhost:6379",
		"redis://:s3cret@host:6379/x",
		"redis://:s3cret@host:6379/0?bogus=1",
		"redis://:s3cret@host:bad port/0",
		"unix://",
	} {
		err := CheckURL(u)
		if err == nil {
			t.Errorf("CheckURL(%q) = nil, want an error", u)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("CheckURL(%q) = %q, which shows the password", u, err)
		}
		if _, err := New(u, 0); err == nil {
			t.Errorf("New(%q) succeeded, want an error", u)
		}
		if err := (&Redis{URL: u}).Put(context.Background(), "k", nil); err == nil {
			t.Errorf("Redis{URL: %q}.Put succeeded, want an error", u)
		}
	}
}

// BenchmarkPutGet64K stores and reads back a 64 KiB payload (real corpus
// JSON when the corpus is there) in Redis, beside store.Mem (the floor) in
// the same run.
func BenchmarkPutGet64K(b *testing.B) {
	payload := storetest.Payload(b, 64<<10)
	stores := []struct {
		name string
		mk   func(b *testing.B) store.Store
	}{
		{"mem", func(b *testing.B) store.Store { return &store.Mem{} }},
		{"redis", func(b *testing.B) store.Store { return newTestRedis(b, time.Minute) }},
	}
	for _, s := range stores {
		b.Run(s.name, func(b *testing.B) {
			st := s.mk(b)
			ctx := context.Background()
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				key := fmt.Sprintf("bench-%d", i%64)
				if err := st.Put(ctx, key, payload); err != nil {
					b.Fatal(err)
				}
				got, err := st.Get(ctx, key)
				if err != nil || len(got) != len(payload) {
					b.Fatalf("Get = %d bytes, %v, want %d", len(got), err, len(payload))
				}
			}
		})
	}
}
