package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/store/storetest"
)

// TestDirShared checks that two store.Dir values on one path (two processes) see
// each other's entries.
func TestDirShared(t *testing.T) {
	p := t.TempDir()
	ctx := context.Background()
	if err := (&store.Dir{Path: p}).Put(ctx, "k1", []byte("v")); err != nil {
		t.Fatal(err)
	}
	got, err := (&store.Dir{Path: p}).Get(ctx, "k1")
	if err != nil || string(got) != "v" {
		t.Fatalf("Get = %q, %v, want v", got, err)
	}
}

func TestDirSweep(t *testing.T) {
	c := storetest.NewClock()
	d := &store.Dir{Path: t.TempDir(), Now: c.Now, TTL: time.Minute}
	ctx := context.Background()
	d.Put(ctx, "old", []byte("x"))
	c.Add(2 * time.Minute)
	d.Put(ctx, "new", []byte("y"))
	if _, err := d.Get(ctx, "old"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("old entry err = %v, want store.ErrNotFound", err)
	}
	if _, err := d.Get(ctx, "new"); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkPutGet64K stores and reads back a 64 KiB payload (real corpus
// JSON when the corpus is there) in each embedded store, in one run so
// they can be compared: Mem is the floor, Dir the embedded default
// (store/redisstore has the Redis one).
func BenchmarkPutGet64K(b *testing.B) {
	payload := storetest.Payload(b, 64<<10)
	for name, mk := range map[string]func(b *testing.B) store.Store{
		"mem": func(b *testing.B) store.Store { return &store.Mem{} },
		"dir": func(b *testing.B) store.Store { return &store.Dir{Path: b.TempDir()} },
	} {
		b.Run(name, func(b *testing.B) {
			st := mk(b)
			ctx := context.Background()
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				key := "bench-" + string(rune('a'+i%26))
				if err := st.Put(ctx, key, payload); err != nil {
					b.Fatal(err)
				}
				if got, err := st.Get(ctx, key); err != nil || len(got) != len(payload) {
					b.Fatalf("Get = %d bytes, %v, want %d", len(got), err, len(payload))
				}
			}
		})
	}
}
