package dedup_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/dedup/deduptest"
	"github.com/terse-dev/terse/tree"
)

// With a NearShared store, near-references work across caches (two
// processes): what one recorded, the other near-references.
func TestSharedNearRef(t *testing.T) {
	st := &deduptest.MemShared{}
	a, b := dedup.New(dedup.Options{NearRef: true}), dedup.New(dedup.Options{NearRef: true})
	a.SetShared(st, nil)
	b.SetShared(st, nil)
	k := dedup.Key{Session: "s", Partition: "p"}
	body := func(status string, d int) []byte {
		return fmt.Appendf(nil, `{"job":"build","status":%q,"duration":%d,"log":%q}`, status, d, strings.Repeat("line\n", 120))
	}
	first := a.Process(k, dedup.Call{Tool: "job", Content: body("pending", 12)})
	if first.IDLine == "" {
		t.Fatal("first result not recorded")
	}
	o := b.Process(k, dedup.Call{Tool: "job", Content: body("success", 34)})
	want := "> [near-ref: " + first.ID + ", status: pending→success, duration: 12→34]"
	if o.Kind != dedup.NearRef || o.Hint != want {
		t.Fatalf("other process: %+v, want %q", o, want)
	}
	if o := b.Process(k, dedup.Call{Tool: "other", Content: body("success", 34)}); o.Kind == dedup.NearRef {
		t.Fatalf("another tool got a near-ref: %+v", o)
	}
	if o := b.Check(k, dedup.Call{Tool: "job", Content: body("pending", 12)}); o.Kind != dedup.Ref {
		t.Fatalf("exact repeat: %+v", o)
	}
	// Off by default.
	c := dedup.New(dedup.Options{})
	c.SetShared(st, nil)
	if o := c.Check(k, dedup.Call{Tool: "job", Content: body("failed", 5)}); o.Kind != dedup.Miss {
		t.Fatalf("near-ref without NearRef: %+v", o)
	}
}

// Skeleton is equal for results Delta can relate, and differs when the
// structure does.
func TestSkeleton(t *testing.T) {
	p := func(s string) tree.Value {
		v, err := tree.Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, b := p(`{"a":1,"b":["x","y"],"c":{"d":true}}`), p(`{"a":"one","b":["z","y"],"c":{"d":null}}`)
	if dedup.Skeleton("t", a) != dedup.Skeleton("t", b) {
		t.Error("scalar changes changed the skeleton")
	}
	for _, other := range []string{`{"a":1,"b":["x"],"c":{"d":true}}`, `{"b":["x","y"],"a":1,"c":{"d":true}}`, `{"a":1,"b":["x","y"],"c":{"e":true}}`} {
		if dedup.Skeleton("t", a) == dedup.Skeleton("t", p(other)) {
			t.Errorf("%s has the skeleton of %s", other, a)
		}
	}
	if dedup.Skeleton("t", a) == dedup.Skeleton("u", a) {
		t.Error("the tool is not part of the skeleton")
	}
}

// FuzzSkeleton checks what near-references on a NearShared store rest
// on: two results Delta relates have the same Skeleton (else the
// candidate would never be found).
func FuzzSkeleton(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":["x","y"],"c":{"d":true}}`), []byte(`{"a":"one","b":["z","y"],"c":{"d":null}}`))
	f.Add([]byte(`{"a b":{"c":1},"d":[1,[2,3]]}`), []byte(`{"a b":{"c":1},"d":[1,[2,4]]}`))
	f.Add([]byte(`{"status":"pending","n":1.5e3}`), []byte(`{"status":false,"n":-0}`))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		a, err := tree.Parse(x)
		if err != nil {
			return
		}
		b, err := tree.Parse(y)
		if err != nil {
			return
		}
		if _, ok := dedup.Delta(a, b, 1<<20); ok && dedup.Skeleton("t", a) != dedup.Skeleton("t", b) {
			t.Fatalf("Delta relates %s and %s, but their skeletons differ", x, y)
		}
	})
}
