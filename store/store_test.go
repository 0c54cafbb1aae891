package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func testStore(t *testing.T, s Store, c *clock) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(unknown) err = %v, want ErrNotFound", err)
	}
	if err := s.Put(ctx, "c_abc", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	// Reads within the TTL keep the entry alive (idle, not absolute, TTL).
	for range 3 {
		c.t = c.t.Add(20 * time.Minute)
		got, err := s.Get(ctx, "c_abc")
		if err != nil || string(got) != "hello" {
			t.Fatalf("Get after 20m idle = %q, %v, want hello", got, err)
		}
	}
	c.t = c.t.Add(31 * time.Minute)
	if _, err := s.Get(ctx, "c_abc"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after 31m idle err = %v, want ErrNotFound", err)
	}
	for _, k := range []string{"", "../x", "A", "a/b", string(make([]byte, 65))} {
		if err := s.Put(ctx, k, nil); err == nil {
			t.Errorf("Put(%q) succeeded, want KeyError", k)
		}
	}
}

func TestDir(t *testing.T) {
	c := &clock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	testStore(t, &Dir{Path: t.TempDir(), Now: c.now}, c)
}

func TestMem(t *testing.T) {
	c := &clock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	testStore(t, &Mem{Now: c.now}, c)
}

// TestDirShared checks that two Dir values on one path (two processes) see
// each other's entries.
func TestDirShared(t *testing.T) {
	p := t.TempDir()
	ctx := context.Background()
	if err := (&Dir{Path: p}).Put(ctx, "k1", []byte("v")); err != nil {
		t.Fatal(err)
	}
	got, err := (&Dir{Path: p}).Get(ctx, "k1")
	if err != nil || string(got) != "v" {
		t.Fatalf("Get = %q, %v, want v", got, err)
	}
}

func TestDirSweep(t *testing.T) {
	c := &clock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	d := &Dir{Path: t.TempDir(), Now: c.now, TTL: time.Minute}
	ctx := context.Background()
	d.Put(ctx, "old", []byte("x"))
	c.t = c.t.Add(2 * time.Minute)
	d.Put(ctx, "new", []byte("y"))
	if _, err := d.Get(ctx, "old"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old entry err = %v, want ErrNotFound", err)
	}
	if _, err := d.Get(ctx, "new"); err != nil {
		t.Fatal(err)
	}
}
