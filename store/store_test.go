package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

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
	c := newClock()
	d := &Dir{Path: t.TempDir(), Now: c.now, TTL: time.Minute}
	ctx := context.Background()
	d.Put(ctx, "old", []byte("x"))
	c.add(2 * time.Minute)
	d.Put(ctx, "new", []byte("y"))
	if _, err := d.Get(ctx, "old"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old entry err = %v, want ErrNotFound", err)
	}
	if _, err := d.Get(ctx, "new"); err != nil {
		t.Fatal(err)
	}
}
