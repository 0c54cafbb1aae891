package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/store/storetest"
)

// TestN8StoreBound: with MaxBytes, a Mem or Dir store keeps at most that
// many bytes; the least recently used entries go first and then read as
// expired (ErrNotFound), while one read recently stays.
func TestN8StoreBound(t *testing.T) {
	const entry, max = 10 << 10, 100 << 10
	dir := t.TempDir()
	c := storetest.NewClock()
	for name, st := range map[string]store.Store{
		"mem": &store.Mem{Now: c.Now, MaxBytes: max},
		"dir": &store.Dir{Path: dir, Now: c.Now, MaxBytes: max},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			data := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, entry) }
			for i := range 30 {
				c.Add(time.Second)
				if err := st.Put(ctx, fmt.Sprintf("k%d", i), data(i)); err != nil {
					t.Fatal(err)
				}
				if i >= 1 {
					c.Add(time.Second)
					// k0 is read after every put: the most recently used.
					if _, err := st.Get(ctx, "k0"); err != nil {
						t.Fatalf("after %d puts, k0 (read each time) is gone: %v", i+1, err)
					}
				}
			}
			kept := 0
			for i := range 30 {
				got, err := st.Get(ctx, fmt.Sprintf("k%d", i))
				switch {
				case err == nil && !bytes.Equal(got, data(i)):
					t.Fatalf("k%d: wrong data", i)
				case err == nil:
					kept++
				case !errors.Is(err, store.ErrNotFound):
					t.Fatalf("k%d: %v, want ErrNotFound for an evicted entry", i, err)
				}
			}
			if kept*entry > max || kept < 5 {
				t.Fatalf("%d entries of %d bytes kept under a bound of %d", kept, entry, max)
			}
			if _, err := st.Get(ctx, "k29"); err != nil {
				t.Fatalf("the last entry put was evicted: %v", err)
			}
			if m, ok := st.(*store.Mem); ok && m.Bytes() > max {
				t.Fatalf("Mem holds %d bytes, bound %d", m.Bytes(), max)
			}
		})
	}
	var total int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, _ error) error {
		if info != nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	if total > max {
		t.Fatalf("the directory holds %d bytes, bound %d", total, max)
	}
}

// TestN8SharedContent: entries that hold the same large part (one payload
// put by many sessions, each with its own small head) store it once; each
// entry still reads back whole and as it was put; and when the part is
// evicted, every entry naming it reads as expired.
func TestN8SharedContent(t *testing.T) {
	ctx := context.Background()
	mem := &store.Mem{}
	s := &store.Shared{Store: mem}
	payload := bytes.Repeat([]byte(`{"id":1,"title":"the same file"},`), 100<<10/33)
	for i := range 100 {
		head := fmt.Appendf(nil, `{"scope":"session-%d"}`+"\n", i)
		if err := store.PutParts(ctx, s, fmt.Sprintf("c_%d", i), head, payload); err != nil {
			t.Fatal(err)
		}
	}
	if n := mem.Bytes(); n > int64(len(payload))+100*200 {
		t.Fatalf("100 entries of one %d-byte payload take %d bytes", len(payload), n)
	}
	for i := range 100 {
		got, err := s.Get(ctx, fmt.Sprintf("c_%d", i))
		want := append(fmt.Appendf(nil, `{"scope":"session-%d"}`+"\n", i), payload...)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("c_%d: %d bytes, %v", i, len(got), err)
		}
	}
	// A part is never answered by its own key.
	if _, err := s.Get(ctx, "s_0123456789abcdef0123456789abcdef01234567"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get of a part key: %v, want ErrNotFound", err)
	}
	// Evicted: a bound smaller than the payload keeps the heads only.
	small := &store.Shared{Store: &store.Mem{MaxBytes: int64(len(payload)) / 2}}
	if err := store.PutParts(ctx, small, "c_x", []byte("head\n"), payload); err != nil {
		t.Fatal(err)
	}
	if _, err := small.Get(ctx, "c_x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an entry whose part was evicted: %v, want ErrNotFound", err)
	}
	// What a store holds without Shared's record reads as it is.
	mem.Put(ctx, "plain", []byte(`{"v":2}`+"\nold entry"))
	if got, err := s.Get(ctx, "plain"); err != nil || string(got) != `{"v":2}`+"\nold entry" {
		t.Fatalf("a plain entry: %q, %v", got, err)
	}
}
