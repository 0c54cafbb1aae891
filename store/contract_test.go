package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// harness is one Store under the contract tests. ttl is the store's idle
// TTL and wait lets that much time pass: a fake clock for Mem and Dir,
// real time for Redis.
type harness struct {
	s    Store
	ttl  time.Duration
	wait func(time.Duration)
}

// contract lists the behaviour every Store shares (see the Store doc).
var contract = []struct {
	name string
	run  func(t *testing.T, h harness)
}{
	{"unknown", func(t *testing.T, h harness) {
		if got, err := h.s.Get(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(unknown) = %q, %v, want ErrNotFound", got, err)
		}
	}},
	{"round_trip", func(t *testing.T, h harness) {
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
			if err := h.s.Put(ctx, k, want); err != nil {
				t.Fatalf("Put(%q): %v", k, err)
			}
			got, err := h.s.Get(ctx, k)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("Get(%q) = %d bytes, %v, want %d bytes", k, len(got), err, len(want))
			}
		}
	}},
	{"replace", func(t *testing.T, h harness) {
		ctx := context.Background()
		for _, v := range []string{"one", "two"} {
			if err := h.s.Put(ctx, "k", []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := h.s.Get(ctx, "k"); err != nil || string(got) != "two" {
			t.Fatalf("Get after second Put = %q, %v, want two", got, err)
		}
	}},
	{"put_copies", func(t *testing.T, h harness) {
		ctx := context.Background()
		b := []byte("abc")
		if err := h.s.Put(ctx, "k", b); err != nil {
			t.Fatal(err)
		}
		b[0] = 'X'
		if got, err := h.s.Get(ctx, "k"); err != nil || string(got) != "abc" {
			t.Fatalf("Get after changing the Put slice = %q, %v, want abc", got, err)
		}
	}},
	{"idle_ttl", func(t *testing.T, h harness) {
		ctx := context.Background()
		if err := h.s.Put(ctx, "c_abc", []byte("hello")); err != nil {
			t.Fatal(err)
		}
		// Reads within the TTL keep the entry alive (idle, not absolute,
		// TTL): three reads half a TTL apart outlive the TTL.
		for i := range 3 {
			h.wait(h.ttl / 2)
			got, err := h.s.Get(ctx, "c_abc")
			if err != nil || string(got) != "hello" {
				t.Fatalf("Get %d after TTL/2 idle = %q, %v, want hello", i+1, got, err)
			}
		}
		h.wait(h.ttl + h.ttl/10)
		if got, err := h.s.Get(ctx, "c_abc"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get after 1.1 TTL idle = %q, %v, want ErrNotFound", got, err)
		}
	}},
	{"expiry_without_reads", func(t *testing.T, h harness) {
		ctx := context.Background()
		if err := h.s.Put(ctx, "a", []byte("x")); err != nil {
			t.Fatal(err)
		}
		h.wait(h.ttl + h.ttl/10)
		if err := h.s.Put(ctx, "b", []byte("y")); err != nil {
			t.Fatal(err)
		}
		if got, err := h.s.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(a) after 1.1 TTL = %q, %v, want ErrNotFound", got, err)
		}
		if got, err := h.s.Get(ctx, "b"); err != nil || string(got) != "y" {
			t.Fatalf("Get(b) = %q, %v, want y", got, err)
		}
	}},
	{"bad_keys", func(t *testing.T, h harness) {
		ctx := context.Background()
		for _, k := range []string{"", "../x", "A", "a/b", "a:b", "a b", string(make([]byte, 65))} {
			if err := h.s.Put(ctx, k, nil); !errors.As(err, new(*KeyError)) {
				t.Errorf("Put(%q) err = %v, want KeyError", k, err)
			}
			if _, err := h.s.Get(ctx, k); !errors.As(err, new(*KeyError)) {
				t.Errorf("Get(%q) err = %v, want KeyError", k, err)
			}
		}
	}},
	{"concurrent", func(t *testing.T, h harness) {
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 8 {
			wg.Go(func() {
				for i := range 20 {
					own := fmt.Sprintf("g%d-%d", g, i)
					val := []byte(own + "-value")
					if err := h.s.Put(ctx, own, val); err != nil {
						errs <- err
						return
					}
					// A shared key written by everyone: any complete value.
					if err := h.s.Put(ctx, "shared", val); err != nil {
						errs <- err
						return
					}
					if got, err := h.s.Get(ctx, own); err != nil || !bytes.Equal(got, val) {
						errs <- fmt.Errorf("Get(%q) = %q, %v, want %q", own, got, err, val)
						return
					}
					if got, err := h.s.Get(ctx, "shared"); err != nil || !bytes.HasSuffix(got, []byte("-value")) {
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

// runContract runs every contract case on a fresh store from mk.
func runContract(t *testing.T, mk func(t *testing.T) harness) {
	for _, c := range contract {
		t.Run(c.name, func(t *testing.T) { c.run(t, mk(t)) })
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestContractMem(t *testing.T) {
	runContract(t, func(t *testing.T) harness {
		c := newClock()
		return harness{&Mem{Now: c.now, TTL: time.Minute}, time.Minute, c.add}
	})
}

func TestContractDir(t *testing.T) {
	runContract(t, func(t *testing.T) harness {
		c := newClock()
		return harness{&Dir{Path: t.TempDir(), Now: c.now, TTL: time.Minute}, time.Minute, c.add}
	})
}

// TestContractDefaultTTL checks the zero TTL is DefaultTTL (30 minutes).
func TestContractDefaultTTL(t *testing.T) {
	for name, mk := range map[string]func(*clock) Store{
		"mem": func(c *clock) Store { return &Mem{Now: c.now} },
		"dir": func(c *clock) Store { return &Dir{Path: t.TempDir(), Now: c.now} },
	} {
		t.Run(name, func(t *testing.T) {
			c := newClock()
			for _, cc := range contract {
				if cc.name == "idle_ttl" {
					cc.run(t, harness{mk(c), DefaultTTL, c.add})
				}
			}
		})
	}
}
