package fit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/fit/readtest"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// list30 is a 30-item list of issue-like objects, one of them (item 17)
// far larger than the others.
func list30(t testing.TB) tree.Value {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 30 {
		if i > 0 {
			sb.WriteString(",")
		}
		body := strings.Repeat(fmt.Sprintf("issue %d body text, ", i), 8+i%5)
		if i == 16 {
			body = strings.Repeat("a very long body that no small budget holds, ", 300)
		}
		fmt.Fprintf(&sb, `{"id":%d,"ghsa_id":"GHSA-%04d-xxxx","title":"Issue number %d","state":"open","html_url":"https://example.com/%d","body":%q}`, 1000+i, i, i, i, body)
	}
	sb.WriteString("]")
	v, err := tree.ParseString(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fetchAll fetches every chunk of a response, recursively, as the text
// says, and returns the item texts it got whole, by 1-based number.
func fetchAll(t *testing.T, text string, o *Options) map[int]string {
	t.Helper()
	r, err := readtest.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(h string, n int) (string, error) {
		res, err := FetchChunk(context.Background(), h, n, o)
		if err == nil && o.Counter.Count(res.Text) > max(o.Budget, MinBudget) {
			t.Errorf("chunk %d of %s: %d tokens, budget %d", n, h, o.Counter.Count(res.Text), o.Budget)
		}
		return res.Text, err
	}
	got := map[int]string{}
	for k := 1; k <= r.TotalItems(); k++ {
		s, _, err := r.Retrieve(fetch, k)
		if err != nil {
			t.Fatalf("item %d: %v", k, err)
		}
		got[k] = s
	}
	return got
}

// TestChunksComeBackWhole is the chunk guarantee on a 30-item list: at
// budgets from 10 to 4000, every item comes back whole through the
// handles the text shows, fetching with the same budget; the union is
// the original array.
func TestChunksComeBackWhole(t *testing.T) {
	v := list30(t)
	c := tokens.O200kBase()
	for _, budget := range []int{10, 64, 160, 300, 1000, 4000} {
		o := &Options{Budget: budget, Counter: c, Store: &store.Mem{}, Scope: "s1"}
		res, err := FitJSON(context.Background(), v, o)
		if err != nil {
			t.Fatal(err)
		}
		if n := c.Count(res.Text); n > max(budget, MinBudget) {
			t.Errorf("budget %d: %d tokens", budget, n)
		}
		if !strings.Contains(res.Text, res.Stats.Handle) {
			t.Fatalf("budget %d: no handle in\n%s", budget, res.Text)
		}
		got := fetchAll(t, res.Text, o)
		for k, it := range v.Items() {
			if want := string(tree.AppendJSON(nil, it)); got[k+1] != want {
				t.Errorf("budget %d: item %d = %.80s…, want %.80s…", budget, k+1, got[k+1], want)
			}
		}
	}
}

// TestChunkFetchBudget checks that a chunk fetched with a budget it fits
// comes back whole, in one call, and with a smaller one comes back split,
// with ranges that add up, saying which budget gets it whole.
func TestChunkFetchBudget(t *testing.T) {
	v := list30(t)
	c := tokens.O200kBase()
	o := &Options{Budget: 300, Counter: c, Store: &store.Mem{}}
	res, err := FitJSON(context.Background(), v, o)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= res.Stats.Chunks; n++ {
		big := *o
		big.Budget = 100000
		whole, err := FetchChunk(context.Background(), res.Stats.Handle, n, &big)
		if err != nil || !whole.Whole || whole.Doc.Kind() != tree.KindArray {
			t.Fatalf("chunk %d at 100000: %v %+v", n, err, whole)
		}
		small, err := FetchChunk(context.Background(), res.Stats.Handle, n, o)
		if err != nil {
			t.Fatal(err)
		}
		if whole.Tokens <= 300 {
			if small.Text != whole.Text {
				t.Errorf("chunk %d fits 300 tokens (%d) but came back otherwise", n, whole.Tokens)
			}
			continue
		}
		if small.Whole || !strings.Contains(small.Text, fmt.Sprintf("a budget of at least %s gets it in one piece", inband.Thousands(whole.Tokens))) {
			t.Errorf("chunk %d (%d tokens) at 300:\n%s", n, whole.Tokens, small.Text)
		}
		// The smaller chunks' ranges add up to the chunk's.
		var a0, b0 int
		fmt.Sscanf(whole.Text[strings.Index(whole.Text, ": ")+2:], "items %d–%d", &a0, &b0)
		if b0 == 0 {
			fmt.Sscanf(whole.Text[strings.Index(whole.Text, ": ")+2:], "item %d", &a0)
			b0 = a0
		}
		next := a0
		for _, l := range strings.Split(small.Text, "\n") {
			var k, a, b int
			if _, err := fmt.Sscanf(l, "  chunk %d: items %d–%d,", &k, &a, &b); err != nil {
				if _, err := fmt.Sscanf(l, "  chunk %d: item %d,", &k, &a); err != nil {
					continue
				}
				b = a
			}
			if a != next {
				t.Errorf("chunk %d split: sub-chunk %d starts at item %d, want %d:\n%s", n, k, a, next, small.Text)
			}
			next = b + 1
		}
		if next != b0+1 && !strings.Contains(small.Text, "parts") {
			t.Errorf("chunk %d (items %d–%d) split: sub-chunks end at item %d:\n%s", n, a0, b0, next-1, small.Text)
		}
		exact := *o
		exact.Budget = whole.Tokens
		if r, err := FetchChunk(context.Background(), res.Stats.Handle, n, &exact); err != nil || !r.Whole {
			t.Errorf("chunk %d at the budget it names (%d): whole=%v %v", n, whole.Tokens, r.Whole, err)
		}
	}
}

// TestLongLine checks that a 300 KB single-line text comes back whole
// through its handles at a small budget.
func TestLongLine(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 300<<10; i++ {
		fmt.Fprintf(&sb, "word%d é ", i)
	}
	line := sb.String()
	c := tokens.O200kBase()
	o := &Options{Budget: 2000, Counter: c, Store: &store.Mem{}}
	res, err := FitText(context.Background(), line, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count(res.Text); n > 2000 || !strings.Contains(res.Text, res.Stats.Handle) {
		t.Fatalf("%d tokens:\n%s", n, res.Text)
	}
	got := fetchAll(t, res.Text, o)
	if got[1] != line {
		t.Errorf("line came back as %d bytes, want %d", len(got[1]), len(line))
	}
}

func TestScope(t *testing.T) {
	v := list30(t)
	c := tokens.O200kBase()
	st := &store.Mem{}
	a := &Options{Budget: 300, Counter: c, Store: st, Scope: "session-a", Key: []byte("secret")}
	res, err := FitJSON(context.Background(), v, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Chunk(context.Background(), res.Stats.Handle, 1, a); err != nil {
		t.Fatalf("same scope: %v", err)
	}
	b := *a
	b.Scope = "session-b"
	_, err = Chunk(context.Background(), res.Stats.Handle, 1, &b)
	var se *ScopeError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "belongs to another session") {
		t.Errorf("other scope: %v, want ScopeError", err)
	}
	// The same content in another scope, or under another key, gets
	// another handle.
	rb, _ := FitJSON(context.Background(), v, &b)
	pub := *a
	pub.Key = nil
	rp, _ := FitJSON(context.Background(), v, &pub)
	if rb.Stats.Handle == res.Stats.Handle || rp.Stats.Handle == res.Stats.Handle {
		t.Errorf("handles %s, %s, %s: want all different", res.Stats.Handle, rb.Stats.Handle, rp.Stats.Handle)
	}
}

// failStore fails every Put; hang waits for the context.
type failStore struct {
	store.Mem
	hang bool
}

func (f *failStore) Put(ctx context.Context, key string, data []byte) error {
	if f.hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return errors.New("disk full")
}

// TestStoreDown checks that a failing or hanging store keeps the budget,
// says plainly that the rest is not retrievable and how to get it, and
// reports the failure.
func TestStoreDown(t *testing.T) {
	v := list30(t)
	c := tokens.O200kBase()
	for _, st := range []*failStore{{}, {hang: true}} {
		o := &Options{Budget: 300, Counter: c, Store: st, StoreTimeout: 1, RawHint: `re-run the call with _output_mode: "raw" to get it all`}
		res, err := FitJSON(context.Background(), v, o)
		if err != nil {
			t.Fatal(err)
		}
		var se *StoreError
		if !errors.As(res.StoreErr, &se) || !res.Stats.StoreFailed || res.Stats.Handle != "" {
			t.Errorf("hang=%v: StoreErr %v, stats %+v", st.hang, res.StoreErr, res.Stats)
		}
		if n := c.Count(res.Text); n > 300 || !strings.Contains(res.Text, `not retrievable right now (the chunk store is unavailable); re-run the call with _output_mode: "raw" to get it all`) {
			t.Errorf("hang=%v: %d tokens:\n%s", st.hang, n, res.Text)
		}
		if strings.Contains(res.Text, "c_") {
			t.Errorf("hang=%v: a handle shown although nothing was stored:\n%s", st.hang, res.Text)
		}
	}
	tr, err := FitText(context.Background(), strings.Repeat("log line with some words\n", 500), &Options{Budget: 200, Counter: c, Store: &failStore{}})
	if err != nil || tr.StoreErr == nil || c.Count(tr.Text) > 200 || !strings.Contains(tr.Text, "not retrievable right now") {
		t.Errorf("text: %v %v\n%s", err, tr.StoreErr, tr.Text)
	}
}

// TestMembersComeBackWhole is the chunk guarantee on a document without
// an item array, fitted by its members: every member comes back whole.
func TestMembersComeBackWhole(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"id":7,"title":"A document"`)
	for i := range 12 {
		fmt.Fprintf(&sb, `,"section_%d":%q`, i, strings.Repeat(fmt.Sprintf("text of section %d ", i), 20+i*30))
	}
	sb.WriteString(`,"meta":{"owner":"ann","tags":"a,b"}}`)
	v, err := tree.ParseString(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	c := tokens.O200kBase()
	for _, budget := range []int{200, 600, 3000} {
		o := &Options{Budget: budget, Counter: c, Store: &store.Mem{}}
		res, err := FitJSON(context.Background(), v, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.Unit != "members" || c.Count(res.Text) > budget {
			t.Fatalf("budget %d: %+v\n%s", budget, res.Stats, res.Text)
		}
		r, err := readtest.Parse(res.Text)
		if err != nil {
			t.Fatal(err)
		}
		if r.Handle == "" {
			t.Fatalf("budget %d: no handle:\n%s", budget, res.Text)
		}
		fetch := func(h string, n int) (string, error) { return Chunk(context.Background(), h, n, o) }
		for k, m := range v.Members() {
			got, _, err := r.Retrieve(fetch, k+1)
			if want := string(tree.AppendJSON(nil, tree.Object(m))); err != nil || got != want {
				t.Errorf("budget %d: member %d (%s): %v\n%.100s", budget, k+1, m.Key, err, got)
			}
		}
	}
}

// FuzzChunkRoundTrip checks the chunk guarantee on arbitrary text: at any
// budget, every line comes back whole through the handles the text shows,
// and every response keeps the budget (at least MinBudget).
func FuzzChunkRoundTrip(f *testing.F) {
	f.Add("a\nb\nc\n", 5)
	f.Add(strings.Repeat("ERROR something failed\nok\n", 50), 40)
	f.Add(strings.Repeat("é long line without end ", 400), 10)
	f.Add("\xff\xfe broken utf8 \n🙂🙂\n"+strings.Repeat("x", 3000), 3)
	c := tokens.O200kBase()
	f.Fuzz(func(t *testing.T, s string, budget int) {
		if budget < 1 || budget > 3000 || len(s) > 1<<13 || strings.Contains(s, "\r") {
			return
		}
		o := &Options{Budget: budget, Counter: c, Store: &store.Mem{}}
		res, err := FitText(context.Background(), s, o)
		if err != nil {
			t.Fatal(err)
		}
		if n := c.Count(res.Text); n > max(budget, MinBudget) {
			t.Fatalf("%d tokens, budget %d", n, budget)
		}
		if !res.Stats.Truncated || res.Stats.Kind != "text" {
			return
		}
		r, err := readtest.Parse(res.Text)
		if err != nil {
			t.Fatal(err)
		}
		lines := splitLines(s)
		fetch := func(h string, n int) (string, error) {
			x, err := Chunk(context.Background(), h, n, o)
			if err == nil && c.Count(x) > max(budget, MinBudget) {
				t.Fatalf("chunk %d of %s: %d tokens, budget %d", n, h, c.Count(x), budget)
			}
			return x, err
		}
		for k := 1; k <= len(lines); k += 1 + len(lines)/16 {
			got, _, err := r.Retrieve(fetch, k)
			if err != nil || got != lines[k-1] {
				t.Fatalf("line %d: %v: got %q, want %q\n%s", k, err, got, lines[k-1], res.Text)
			}
		}
	})
}

// collect rebuilds the text of chunk n of handle as the chunk texts say:
// a chunk in full is its body; a split chunk is its smaller chunks,
// joined by newlines (ranges of lines or files) or concatenated (byte
// ranges).
func collect(t *testing.T, o *Options, handle string, n int, depth int) string {
	t.Helper()
	if depth > 30 {
		t.Fatal("too deep")
	}
	res, err := FetchChunk(context.Background(), handle, n, o)
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(res.Text, "\n")
	if res.Whole {
		return body
	}
	sub := reHandleT.FindString(body[strings.LastIndex(body, "[/chunks]"):])
	var parts []string
	k := 0
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "  chunk ") {
			k++
			parts = append(parts, collect(t, o, sub, k, depth+1))
		}
	}
	if strings.Contains(head, "parts to join in order") {
		return strings.Join(parts, "")
	}
	return strings.Join(parts, "\n")
}

// TestDiffComesBackWhole rebuilds a diff from its chunks at small
// budgets: files too large for the budget come back in parts.
func TestDiffComesBackWhole(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("commit 123\nAuthor: a\n\n    message\n\n")
	for f := range 4 {
		fmt.Fprintf(&sb, "diff --git a/f%d.go b/f%d.go\n--- a/f%d.go\n+++ b/f%d.go\n@@ -1,3 +1,%d @@\n", f, f, f, f, 3+f*40)
		for i := range 3 + f*40 {
			fmt.Fprintf(&sb, "+line %d of file %d with some words\n", i, f)
		}
	}
	src := sb.String()
	c := tokens.O200kBase()
	for _, budget := range []int{200, 500, 2000} {
		o := &Options{Budget: budget, Counter: c, Store: &store.Mem{}}
		res, err := FitText(context.Background(), src, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.Kind != "diff" || c.Count(res.Text) > budget {
			t.Fatalf("budget %d: %+v", budget, res.Stats)
		}
		var parts []string
		for n := 1; n <= res.Stats.Chunks; n++ {
			parts = append(parts, collect(t, o, res.Stats.Handle, n, 0))
		}
		if got := strings.Join(parts, "\n") + "\n"; got != src {
			t.Errorf("budget %d: rebuilt %d bytes, want %d", budget, len(got), len(src))
		}
	}
}

// TestDocumentComesBackWhole: a document that is one long string comes
// back whole through its handles.
func TestDocumentComesBackWhole(t *testing.T) {
	doc := strings.Repeat("a long single string value, ", 2000)
	v := tree.String(doc)
	c := tokens.O200kBase()
	o := &Options{Budget: 300, Counter: c, Store: &store.Mem{}}
	res, err := FitJSON(context.Background(), v, o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Count(res.Text) > 300 || !strings.Contains(res.Text, res.Stats.Handle) {
		t.Fatalf("%d tokens:\n%s", c.Count(res.Text), res.Text)
	}
	r, err := readtest.Parse(res.Text)
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(h string, n int) (string, error) { return Chunk(context.Background(), h, n, o) }
	got, _, err := r.Retrieve(fetch, 1)
	if want := string(tree.AppendJSON(nil, v)); err != nil || got != want {
		t.Errorf("%v: got %d bytes, want %d\n%s", err, len(got), len(want), res.Text)
	}
}

// FuzzFetchStored checks that a damaged stored view (any bytes under a
// handle) gives an error, never a panic.
func FuzzFetchStored(f *testing.F) {
	f.Add([]byte(`{"v":2,"scope":"`+scopeTag("")+`","kind":"text","unit":"lines","total":2,"chunks":[{"a":0,"b":2}]}`+"\na\nb"), 1)
	f.Add([]byte(`{"v":2,"scope":"`+scopeTag("")+`","kind":"json","unit":"items","total":2,"chunks":[{"a":0,"b":1,"o":0,"e":5}]}`+"\n[1,2]"), 1)
	f.Add([]byte(`{"v":2,"scope":"`+scopeTag("")+`","kind":"diff","unit":"files","total":1,"files":[[0,9]],"chunks":[{"a":0,"b":1}]}`+"\nx"), 1)
	c := tokens.O200kBase()
	f.Fuzz(func(t *testing.T, blob []byte, n int) {
		st := &store.Mem{}
		if err := st.Put(context.Background(), "c_0123456789abcdef", blob); err != nil {
			return
		}
		o := &Options{Budget: 300, Counter: c, Store: st}
		res, err := FetchChunk(context.Background(), "c_0123456789abcdef", n, o)
		if err == nil && c.Count(res.Text) > 300 {
			t.Fatalf("%d tokens", c.Count(res.Text))
		}
	})
}
