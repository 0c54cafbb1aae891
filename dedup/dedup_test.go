package dedup_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/internal/corpus"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

var key = dedup.Key{Session: "s1", Partition: "main"}

func body(n int, seed string) []byte {
	return bytes.Repeat([]byte(seed), n/len(seed)+1)[:n]
}

func TestHitAndMiss(t *testing.T) {
	c := dedup.New(dedup.Options{})
	a := dedup.Call{Tool: "Read", Paths: []string{"/x.go"}, Content: body(400, "package x\n")}
	o := c.Process(key, a)
	if o.Kind != dedup.Miss || o.IDLine == "" || !strings.Contains(o.IDLine, o.ID) {
		t.Fatalf("first Process = %+v, want a recorded miss with an id line", o)
	}
	first := o.ID
	o = c.Process(key, a)
	if o.Kind != dedup.Ref || o.ID != first || o.Hint != dedup.RefHint(first) {
		t.Fatalf("second Process = %+v, want ref to %s", o, first)
	}
	// A different body, another partition, another variant: misses.
	if o := c.Process(key, dedup.Call{Tool: "Read", Content: body(400, "package y\n")}); o.Kind != dedup.Miss {
		t.Errorf("other body: %v, want miss", o.Kind)
	}
	if o := c.Process(dedup.Key{Session: "s1", Partition: "agent-2"}, a); o.Kind != dedup.Miss {
		t.Errorf("other partition: %v, want miss", o.Kind)
	}
	if o := c.Process(dedup.Key{Session: "s2", Partition: "main"}, a); o.Kind != dedup.Miss {
		t.Errorf("other session: %v, want miss", o.Kind)
	}
	v := a
	v.Variant = "toon"
	if o := c.Process(key, v); o.Kind != dedup.Miss {
		t.Errorf("other variant: %v, want miss", o.Kind)
	}
}

func TestSmallResultsAreNotReferenced(t *testing.T) {
	c := dedup.New(dedup.Options{})
	small := dedup.Call{Tool: "Bash", Content: []byte("ok\n")}
	for i := 0; i < 2; i++ {
		if o := c.Process(key, small); o.Kind != dedup.Miss || o.IDLine != "" {
			t.Fatalf("Process(small) #%d = %+v, want a miss without id line", i, o)
		}
	}
}

// A result seen only through Check (never recorded as shown) cannot be
// referenced later.
func TestCheckDoesNotRecord(t *testing.T) {
	c := dedup.New(dedup.Options{})
	a := dedup.Call{Tool: "Read", Content: body(400, "abc")}
	c.Check(key, a)
	if o := c.Check(key, a); o.Kind != dedup.Miss {
		t.Fatalf("Check after Check = %v, want miss", o.Kind)
	}
	c.Record(key, a)
	if o := c.Check(key, a); o.Kind != dedup.Ref {
		t.Fatalf("Check after Record = %v, want ref", o.Kind)
	}
}

func TestInvalidateByMutation(t *testing.T) {
	c := dedup.New(dedup.Options{})
	read := dedup.Call{Tool: "Read", Paths: []string{"/a.go"}, Content: body(300, "x := 1\n")}
	other := dedup.Call{Tool: "Read", Paths: []string{"/b.go"}, Content: body(300, "y := 2\n")}
	c.Process(key, read)
	c.Process(key, other)
	c.Process(key, dedup.Call{Tool: "Edit", Paths: []string{"/a.go"}, Content: []byte("ok")})
	if o := c.Process(key, read); o.Kind != dedup.Miss {
		t.Errorf("read after Edit of the same path = %v, want miss", o.Kind)
	}
	if o := c.Process(key, other); o.Kind != dedup.Ref {
		t.Errorf("read of another path = %v, want ref", o.Kind)
	}
	// Configurable tool names.
	c = dedup.New(dedup.Options{MutatingTools: []string{"fs_write"}})
	c.Process(key, read)
	c.Process(key, dedup.Call{Tool: "Edit", Paths: []string{"/a.go"}})
	if o := c.Process(key, read); o.Kind != dedup.Ref {
		t.Errorf("Edit is not mutating here: %v, want ref", o.Kind)
	}
	c.Process(key, dedup.Call{Tool: "fs_write", Paths: []string{"/a.go"}})
	if o := c.Process(key, read); o.Kind != dedup.Miss {
		t.Errorf("after fs_write: %v, want miss", o.Kind)
	}
	// Globs, and a call marked mutating by configuration.
	c = dedup.New(dedup.Options{MutatingTools: []string{"write_*"}})
	c.Process(key, read)
	c.Process(key, dedup.Call{Tool: "write_file", Paths: []string{"/a.go"}})
	if o := c.Process(key, read); o.Kind != dedup.Miss {
		t.Errorf("after write_file with glob write_*: %v, want miss", o.Kind)
	}
	c.Process(key, dedup.Call{Tool: "patch", Paths: []string{"/a.go"}, Mutating: true})
	if o := c.Process(key, read); o.Kind != dedup.Miss {
		t.Errorf("after a call marked Mutating: %v, want miss", o.Kind)
	}
	// By default, the agents' file-writing tools (toolname.WritesFiles),
	// under any MCP prefix; a glob also matches a tool part.
	for _, tool := range []string{"Write", "mcp__fs__write_file", "apply_patch"} {
		c = dedup.New(dedup.Options{})
		c.Process(key, read)
		c.Process(key, dedup.Call{Tool: tool, Paths: []string{"/a.go"}})
		if o := c.Process(key, read); o.Kind != dedup.Miss {
			t.Errorf("after %s: %v, want miss", tool, o.Kind)
		}
	}
	c = dedup.New(dedup.Options{MutatingTools: []string{"write_*"}})
	c.Process(key, read)
	c.Process(key, dedup.Call{Tool: "fs__write_file", Paths: []string{"/a.go"}})
	if o := c.Process(key, read); o.Kind != dedup.Miss {
		t.Errorf("after fs__write_file with glob write_*: %v, want miss", o.Kind)
	}
}

func TestInvalidateByCompactionAndForget(t *testing.T) {
	c := dedup.New(dedup.Options{})
	a := dedup.Call{Tool: "Bash", Content: body(500, "line\n")}
	b := dedup.Call{Tool: "Bash", Content: body(500, "other\n")}
	c.Process(key, a)
	id := c.Process(key, b).ID
	c.Compact(key)
	if o := c.Process(key, a); o.Kind != dedup.Miss {
		t.Errorf("after Compact = %v, want miss", o.Kind)
	}
	c.Process(key, b)
	c.Forget(key, id)
	if o := c.Process(key, b); o.Kind != dedup.Miss {
		t.Errorf("after Forget = %v, want miss", o.Kind)
	}
}

func TestLRUBounds(t *testing.T) {
	c := dedup.New(dedup.Options{MaxEntries: 3, MaxBytes: 10000})
	calls := make([]dedup.Call, 5)
	for i := range calls {
		calls[i] = dedup.Call{Tool: "Read", Content: body(1000, fmt.Sprintf("file %d\n", i))}
		c.Process(key, calls[i])
	}
	if n, b := c.Len(key); n != 3 || b != 3000 {
		t.Fatalf("Len = %d entries, %d bytes; want 3, 3000", n, b)
	}
	if o := c.Check(key, calls[0]); o.Kind != dedup.Miss {
		t.Errorf("oldest entry = %v, want evicted", o.Kind)
	}
	c.Check(key, calls[2]) // promote 2: now 3 is the oldest
	c.Process(key, dedup.Call{Tool: "Read", Content: body(1000, "new\n")})
	if o := c.Check(key, calls[3]); o.Kind != dedup.Miss {
		t.Errorf("entry 3 = %v, want evicted after 2 was promoted", o.Kind)
	}
	if o := c.Check(key, calls[2]); o.Kind != dedup.Ref {
		t.Errorf("entry 2 = %v, want kept", o.Kind)
	}

	c = dedup.New(dedup.Options{MaxBytes: 2500})
	for i := range calls {
		c.Process(key, calls[i])
	}
	if n, b := c.Len(key); n != 2 || b != 2000 {
		t.Fatalf("byte bound: Len = %d entries, %d bytes; want 2, 2000", n, b)
	}

	c = dedup.New(dedup.Options{MaxPartitions: 2})
	for _, p := range []string{"a", "b", "c"} {
		c.Process(dedup.Key{Session: p}, calls[0])
	}
	if n, _ := c.Len(dedup.Key{Session: "a"}); n != 0 {
		t.Errorf("oldest partition kept %d entries, want evicted", n)
	}
}

func pipeline(status, duration string) []byte {
	return []byte(`{"id":4711,"status":"` + status + `","duration":` + duration + `,"ref":"main","sha":"8d3a9b0c41f2e7d6a5b4c3d2e1f0a9b8c7d6e5f4","web_url":"https://gitlab.example.com/group/project/-/pipelines/4711","user":{"name":"Ada","username":"ada"},"detailed_status":{"icon":"status_running","text":"running","group":"running"},"coverage":null,"padding":"` + strings.Repeat("x", 300) + `"}`)
}

func TestNearRef(t *testing.T) {
	c := dedup.New(dedup.Options{NearRef: true})
	first := c.Process(key, dedup.Call{Tool: "get_pipeline", Content: pipeline("pending", "12")})
	o := c.Process(key, dedup.Call{Tool: "get_pipeline", Content: pipeline("success", "34")})
	if o.Kind != dedup.NearRef || o.ID != first.ID {
		t.Fatalf("Process = %+v, want near-ref to %s", o, first.ID)
	}
	want := "> [near-ref: " + first.ID + ", status: pending→success, duration: 12→34]"
	if o.Hint != want {
		t.Errorf("hint = %q, want %q", o.Hint, want)
	}
	// The near-ref'd body was not shown: it is not recorded, so an exact
	// repeat of it is still a near-ref to the first result, never a ref.
	o = c.Process(key, dedup.Call{Tool: "get_pipeline", Content: pipeline("success", "34")})
	if o.Kind != dedup.NearRef || o.ID != first.ID {
		t.Errorf("repeat of near-ref'd body = %+v, want near-ref to %s", o, first.ID)
	}
	// Another tool, or off by default: no near-ref.
	if o := c.Process(key, dedup.Call{Tool: "other", Content: pipeline("failed", "34")}); o.Kind != dedup.Miss {
		t.Errorf("other tool = %v, want miss", o.Kind)
	}
	c = dedup.New(dedup.Options{})
	c.Process(key, dedup.Call{Tool: "get_pipeline", Content: pipeline("pending", "12")})
	if o := c.Process(key, dedup.Call{Tool: "get_pipeline", Content: pipeline("success", "34")}); o.Kind != dedup.Miss {
		t.Errorf("near-ref off by default: %v, want miss", o.Kind)
	}
}

func TestDelta(t *testing.T) {
	tests := []struct {
		old, new string
		want     string // "" means not eligible
	}{
		{`{"a":1,"b":"x"}`, `{"a":2,"b":"x"}`, "a: 1→2"},
		{`{"a":{"s":"pending"}}`, `{"a":{"s":"running"}}`, "a.s: pending→running"},
		{`{"a":[1,2]}`, `{"a":[1,3]}`, "a.1: 2→3"},
		{`{"a":"1"}`, `{"a":1}`, `a: "1"→1`},
		{`{"a":"x, y"}`, `{"a":null}`, `a: "x, y"→null`},
		{`{"a":1}`, `{"a":1}`, ""},
		{`{"a":1}`, `{"b":1}`, ""},
		{`{"a":1}`, `{"a":{"b":1}}`, ""},
		{`{"a":[1]}`, `{"a":[1,2]}`, ""},
		{`{"a b":1}`, `{"a b":2}`, ""},
		{`{"a":"` + strings.Repeat("x", 60) + `"}`, `{"a":"y"}`, ""},
	}
	for _, tt := range tests {
		old, new := parse(t, tt.old), parse(t, tt.new)
		d, ok := dedup.Delta(old, new, dedup.DefaultNearMaxDelta)
		got := ""
		if ok {
			got = strings.TrimSuffix(strings.TrimPrefix(dedup.NearRefHint("id", d), "> [near-ref: id, "), "]")
		}
		if got != tt.want {
			t.Errorf("Delta(%s, %s) = %q, want %q", tt.old, tt.new, got, tt.want)
		}
	}
}

// TestHintsGolden pins every hint text.
func TestHintsGolden(t *testing.T) {
	const path = "testdata/hints.txtar"
	id := "3f2a1c9d"
	got := map[string]string{
		"id-line":         dedup.IDLine(id),
		"ref":             dedup.RefHint(id),
		"near-ref":        mustNear(t, id, `{"status":"pending","duration":12}`, `{"status":"success","duration":34}`),
		"near-ref-nested": mustNear(t, id, `{"pipeline":{"status":"running"},"jobs":[{"status":"running"}]}`, `{"pipeline":{"status":"failed"},"jobs":[{"status":"failed"}]}`),
		"near-ref-quoted": mustNear(t, id, `{"note":"a, b","count":"7"}`, `{"note":"a→b","count":7}`),
	}
	names := []string{"id-line", "ref", "near-ref", "near-ref-nested", "near-ref-quoted"}
	if *update {
		ar := &txtar.Archive{Comment: []byte("Hint texts models read. Regenerate with go test ./dedup -run TestHintsGolden -update\n")}
		for _, n := range names {
			ar.Files = append(ar.Files, txtar.File{Name: n, Data: []byte(got[n] + "\n")})
		}
		if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ar.Files) != len(names) {
		t.Fatalf("%s has %d sections, want %d", path, len(ar.Files), len(names))
	}
	for _, f := range ar.Files {
		if g := got[f.Name] + "\n"; g != string(f.Data) {
			t.Errorf("%s = %q, want %q", f.Name, g, f.Data)
		}
	}
}

func mustNear(t *testing.T, id, old, new string) string {
	d, ok := dedup.Delta(parse(t, old), parse(t, new), 200)
	if !ok {
		t.Fatalf("Delta(%s, %s) not eligible", old, new)
	}
	return dedup.NearRefHint(id, d)
}

func TestConcurrent(t *testing.T) {
	c := dedup.New(dedup.Options{MaxEntries: 8, NearRef: true})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := dedup.Key{Session: fmt.Sprint(g % 2)}
			for i := 0; i < 200; i++ {
				c.Process(k, dedup.Call{Tool: "get_pipeline", Paths: []string{"/p"}, Content: pipeline(fmt.Sprint(i%5), "1")})
				if i%50 == 0 {
					c.Compact(k)
				}
				if i%30 == 0 {
					c.Process(k, dedup.Call{Tool: "Write", Paths: []string{"/p"}})
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkCheckInsert is Process on a 4 KiB result taken from the corpus
// (a miss that records it, then a hit), against hashing alone.
func BenchmarkCheckInsert(b *testing.B) {
	var data []byte
	for _, p := range corpus.Files(b, ".json") {
		d, err := os.ReadFile(p)
		if err == nil && len(d) >= 4096 {
			data = d[:4096]
			break
		}
	}
	b.Run("sha256-only", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			dedup.Fingerprint("", data)
		}
	})
	b.Run("miss+record", func(b *testing.B) {
		c := dedup.New(dedup.Options{})
		buf := append([]byte(nil), data...)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			buf[0], buf[1], buf[2] = byte(i), byte(i>>8), byte(i>>16)
			c.Process(key, dedup.Call{Tool: "Read", Content: buf})
		}
	})
	b.Run("hit", func(b *testing.B) {
		c := dedup.New(dedup.Options{})
		c.Process(key, dedup.Call{Tool: "Read", Content: data})
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			c.Process(key, dedup.Call{Tool: "Read", Content: data})
		}
	})
}

// A write invalidates reads of the same path, of paths under it and of the
// directories above it; Invalidate without paths clears the partition.
func TestInvalidatePrefix(t *testing.T) {
	c := dedup.New(dedup.Options{})
	file := dedup.Call{Tool: "read_file", Paths: []string{"/r/src/a.go"}, Content: body(300, "x := 1\n")}
	dir := dedup.Call{Tool: "list_directory", Paths: []string{"/r/src/"}, Content: body(300, "a.go\n")}
	sibling := dedup.Call{Tool: "read_file", Paths: []string{"/r/srcx/b.go"}, Content: body(300, "y := 2\n")}
	for _, tc := range []struct {
		written      string
		file, dir, s dedup.Kind
	}{
		{"/r/src/a.go", dedup.Miss, dedup.Miss, dedup.Ref},
		{"/r/src", dedup.Miss, dedup.Miss, dedup.Ref},
		{"/r/src/new.go", dedup.Ref, dedup.Miss, dedup.Ref},
		{"/other", dedup.Ref, dedup.Ref, dedup.Ref},
	} {
		c.Compact(key)
		c.Process(key, file)
		c.Process(key, dir)
		c.Process(key, sibling)
		c.Invalidate(key, tc.written)
		for _, x := range []struct {
			call dedup.Call
			want dedup.Kind
		}{{file, tc.file}, {dir, tc.dir}, {sibling, tc.s}} {
			if o := c.Check(key, x.call); o.Kind != x.want {
				t.Errorf("write %s, then read %v: %v, want %v", tc.written, x.call.Paths, o.Kind, x.want)
			}
		}
	}
	c.Invalidate(key)
	if n, _ := c.Len(key); n != 0 {
		t.Errorf("Invalidate without paths left %d entries", n)
	}
}
