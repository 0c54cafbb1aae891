// Package storetest holds the behaviour every store.Store shares, as tests
// each implementation runs (Run), and helpers for them.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
)

// Harness is one Store under the contract tests. TTL is the store's idle
// TTL and Wait lets that much time pass: a fake [Clock] for stores that
// take one, real time for a server.
type Harness struct {
	S    store.Store
	TTL  time.Duration
	Wait func(time.Duration)
}

// contract lists the behaviour every Store shares (see the Store doc).
var contract = []struct {
	name string
	run  func(t *testing.T, h Harness)
}{
	{"unknown", func(t *testing.T, h Harness) {
		if got, err := h.S.Get(context.Background(), "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get(unknown) = %q, %v, want store.ErrNotFound", got, err)
		}
	}},
	{"round_trip", func(t *testing.T, h Harness) {
		ctx := context.Background()
		bin := make([]byte, 256)
		for i := range bin {
			bin[i] = byte(i)
		}
		for k, want := range map[string][]byte{
			"c_abc": []byte("hello"),
			"empty": {},
			"bin":   bin,
			"big":   bytes.Repeat([]byte(`{"id":1,"title":"x"},`), 64<<10/21),
		} {
			if err := h.S.Put(ctx, k, want); err != nil {
				t.Fatalf("Put(%q): %v", k, err)
			}
			got, err := h.S.Get(ctx, k)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("Get(%q) = %d bytes, %v, want %d bytes", k, len(got), err, len(want))
			}
		}
	}},
	{"replace", func(t *testing.T, h Harness) {
		ctx := context.Background()
		for _, v := range []string{"one", "two"} {
			if err := h.S.Put(ctx, "k", []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := h.S.Get(ctx, "k"); err != nil || string(got) != "two" {
			t.Fatalf("Get after second Put = %q, %v, want two", got, err)
		}
	}},
	{"put_copies", func(t *testing.T, h Harness) {
		ctx := context.Background()
		b := []byte("abc")
		if err := h.S.Put(ctx, "k", b); err != nil {
			t.Fatal(err)
		}
		b[0] = 'X'
		if got, err := h.S.Get(ctx, "k"); err != nil || string(got) != "abc" {
			t.Fatalf("Get after changing the Put slice = %q, %v, want abc", got, err)
		}
	}},
	{"idle_ttl", func(t *testing.T, h Harness) {
		ctx := context.Background()
		if err := h.S.Put(ctx, "c_abc", []byte("hello")); err != nil {
			t.Fatal(err)
		}
		// Reads within the TTL keep the entry alive (idle, not absolute,
		// TTL): three reads half a TTL apart outlive the TTL.
		for i := range 3 {
			h.Wait(h.TTL / 2)
			got, err := h.S.Get(ctx, "c_abc")
			if err != nil || string(got) != "hello" {
				t.Fatalf("Get %d after TTL/2 idle = %q, %v, want hello", i+1, got, err)
			}
		}
		h.Wait(h.TTL + h.TTL/10)
		if got, err := h.S.Get(ctx, "c_abc"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get after 1.1 TTL idle = %q, %v, want store.ErrNotFound", got, err)
		}
	}},
	{"expiry_without_reads", func(t *testing.T, h Harness) {
		ctx := context.Background()
		if err := h.S.Put(ctx, "a", []byte("x")); err != nil {
			t.Fatal(err)
		}
		h.Wait(h.TTL + h.TTL/10)
		if err := h.S.Put(ctx, "b", []byte("y")); err != nil {
			t.Fatal(err)
		}
		if got, err := h.S.Get(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get(a) after 1.1 TTL = %q, %v, want store.ErrNotFound", got, err)
		}
		if got, err := h.S.Get(ctx, "b"); err != nil || string(got) != "y" {
			t.Fatalf("Get(b) = %q, %v, want y", got, err)
		}
	}},
	{"bad_keys", func(t *testing.T, h Harness) {
		ctx := context.Background()
		for _, k := range []string{"", "../x", "A", "a/b", "a:b", "a b", string(make([]byte, 65))} {
			if err := h.S.Put(ctx, k, nil); !errors.As(err, new(*store.KeyError)) {
				t.Errorf("Put(%q) err = %v, want KeyError", k, err)
			}
			if _, err := h.S.Get(ctx, k); !errors.As(err, new(*store.KeyError)) {
				t.Errorf("Get(%q) err = %v, want KeyError", k, err)
			}
		}
	}},
	{"concurrent", func(t *testing.T, h Harness) {
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 8 {
			wg.Go(func() {
				for i := range 20 {
					own := fmt.Sprintf("g%d-%d", g, i)
					val := []byte(own + "-value")
					if err := h.S.Put(ctx, own, val); err != nil {
						errs <- err
						return
					}
					// A shared key written by everyone: any complete value.
					if err := h.S.Put(ctx, "shared", val); err != nil {
						errs <- err
						return
					}
					if got, err := h.S.Get(ctx, own); err != nil || !bytes.Equal(got, val) {
						errs <- fmt.Errorf("Get(%q) = %q, %v, want %q", own, got, err, val)
						return
					}
					if got, err := h.S.Get(ctx, "shared"); err != nil || !bytes.HasSuffix(got, []byte("-value")) {
						errs <- fmt.Errorf("Get(shared) = %q, %v, want some g*-value", got, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}},
}

// Run runs every contract case on a fresh store from mk.
func Run(t *testing.T, mk func(t *testing.T) Harness) {
	for _, c := range contract {
		t.Run(c.name, func(t *testing.T) { c.run(t, mk(t)) })
	}
}

// RunCase runs the contract case of that name on h.
func RunCase(t *testing.T, name string, h Harness) {
	for _, c := range contract {
		if c.name == name {
			c.run(t, h)
		}
	}
}

// Clock is a fake clock for a store's Now.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at 2026-01-01 UTC.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Payload returns n bytes of real tool output: the largest corpus JSON
// file, repeated or cut to n. Without the corpus it is repeated JSON text.
func Payload(b testing.TB, n int) []byte {
	var src []byte
	if corpus.Shared() != "" {
		for _, f := range corpus.Files(b, ".json") {
			if data, err := os.ReadFile(f); err == nil && len(data) > len(src) {
				src = data
			}
		}
	}
	if len(src) == 0 {
		src = []byte(`{"id":1,"title":"fix the store","labels":["bug"],"state":"open"},`)
	}
	return bytes.Repeat(src, n/len(src)+1)[:n]
}
