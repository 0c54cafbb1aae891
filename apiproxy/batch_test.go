package apiproxy

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tree"
)

// TestBatchDecision: the decision on constructed cases, at Sonnet's
// price: a cold cache applies any saving; a warm one only a share at
// least the threshold that pays for itself within the conversation's
// length so far.
func TestBatchDecision(t *testing.T) {
	p, _ := NewPrices(nil).Lookup("claude-sonnet-4-5")
	cases := []struct {
		name string
		c    batchCase
		want bool
	}{
		{"cold idle, small saving", batchCase{Prompt: 100_000, Reclaim: 1_000, Keep: 10_000, Cold: coldIdle, Turns: 5}, true},
		{"cold model change", batchCase{Prompt: 100_000, Reclaim: 1_000, Cold: coldModel, Turns: 5}, true},
		{"cold, 1-hour writes", batchCase{Prompt: 100_000, Reclaim: 1_000, Cold: coldIdle, TTL1h: true, Turns: 5}, true},
		{"cold, nothing to reclaim", batchCase{Prompt: 100_000, Cold: coldIdle, Turns: 5}, false},
		{"warm, share below", batchCase{Prompt: 100_000, Reclaim: 29_000, Keep: 10_000, Turns: 100}, false},
		{"warm, share at threshold", batchCase{Prompt: 100_000, Reclaim: 30_000, Keep: 10_000, Turns: 100}, true},
		{"warm, share above", batchCase{Prompt: 100_000, Reclaim: 60_000, Keep: 10_000, Turns: 100}, true},
		{"warm, share above, too young to pay back", batchCase{Prompt: 100_000, Reclaim: 30_000, Keep: 0, Turns: 3}, false},
	}
	for _, c := range cases {
		d := decideBatch(p, c.c, DefaultEditShare)
		if d.Apply != c.want {
			t.Errorf("%s: apply %v (%+v), want %v", c.name, d.Apply, d, c.want)
		}
	}
	// The figures are the cost function's.
	d := decideBatch(p, batchCase{Prompt: 100_000, Reclaim: 30_000, Keep: 10_000, Turns: 100}, DefaultEditShare)
	if want := p.Cost(Usage{CacheRead: 10_000, CacheCreation: 60_000}); d.Now != want {
		t.Errorf("warm cost with the batch %v, want %v", d.Now, want)
	}
	if want := p.Cost(Usage{CacheRead: 100_000}); d.Without != want {
		t.Errorf("warm cost without %v, want %v", d.Without, want)
	}
	if want := (d.Now - d.Without) / p.Cost(Usage{CacheRead: 30_000}); d.Payback != want {
		t.Errorf("payback %v, want %v", d.Payback, want)
	}
}

// editConvo is a conversation with a file written and edited, an old
// bulky shell result and a stale read, then n small calls.
func editConvo(n int) *convo {
	var c convo
	c.user("Port a.go.")
	c.call("Read", `{"file_path":"/src/a.go"}`, fileText("a", 60))
	c.call("Write", `{"file_path":"/src/a.rs","content":`+string(tree.AppendString(nil, fileText("rs", 30)))+`}`, "File created successfully at: /src/a.rs")
	c.call("Edit", `{"file_path":"/src/a.go","old_string":`+string(tree.AppendString(nil, fileText("x", 3)))+`,"new_string":"// moved"}`, "The file /src/a.go has been updated.")
	c.call("Bash", `{"command":"cargo build"}`, fileText("build", 40))
	for i := 0; i < n; i++ {
		c.call("Bash", fmt.Sprintf(`{"command":"echo %d"}`, i), "ok")
	}
	return &c
}

// clock is a settable clock for the idle time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestBatchWhen: on a conversation whose reclaimable share stays below
// the threshold (a large fixed first message), a batch is made only when
// the cache is cold anyway: idle longer than 5 minutes (an hour when the
// request's cache_control asks for 1-hour writes), or another model;
// afterwards every request carries the same edited prefix.
func TestBatchWhen(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	o := Options{Window: 200_000, EditAge: 3, ChunkStore: &store.Mem{}, Now: clk.now}
	c := editConvo(0)
	// A large first message keeps the share under the threshold.
	c.msgs[0] = obj("role", "user", "content", strings.Repeat("Context line for the port.\n", 2000))
	rw := NewRewriter(o)
	step := func(d time.Duration, body []byte) Result {
		t.Helper()
		clk.t = clk.t.Add(d)
		return rewrite(t, rw, body, history.Anthropic)
	}
	var outs [][]byte
	for i := 0; i < 4; i++ {
		c.call("Bash", fmt.Sprintf(`{"command":"echo %d"}`, i), "ok")
		res := step(time.Minute, c.request())
		if res.Batch != "" {
			t.Fatalf("request %d: a batch (%s) while warm and under the share", i, res.Batch)
		}
		outs = append(outs, res.Body)
	}
	// 1-hour cache writes: ten idle minutes keep it warm.
	c.call("Bash", `{"command":"echo ttl"}`, "ok")
	c.msgs[len(c.msgs)-1] = obj("role", "user", "content", []tree.Value{obj("type", "tool_result", "tool_use_id", fmt.Sprintf("toolu_%02d", c.n),
		"content", "ok", "cache_control", obj("type", "ephemeral", "ttl", "1h"))})
	if res := step(10*time.Minute, c.request()); res.Batch != "" {
		t.Fatalf("a batch (%s) within the 1-hour lifetime", res.Batch)
	}
	c.call("Bash", `{"command":"echo idle"}`, "ok")
	res := step(6*time.Minute, c.request())
	if res.Batch != "" {
		t.Fatalf("a batch (%s) after 6 minutes while the request asks for 1-hour writes", res.Batch)
	}
	c.call("Bash", `{"command":"echo later"}`, "ok")
	res = step(61*time.Minute, c.request())
	if res.Batch != coldIdle || !res.PrefixChanged {
		t.Fatalf("after an idle hour: batch %q", res.Batch)
	}
	srcs := map[Source]int{}
	for _, e := range res.Edits {
		srcs[e.Source]++
	}
	if srcs[SourceStale] != 1 || srcs[SourceApplied] != 2 || srcs[SourceElided] != 1 {
		t.Fatalf("edits by source %v", srcs)
	}
	// Sticky: the next requests keep the edited prefix byte for byte.
	prev := res.Body
	for i := 0; i < 3; i++ {
		c.call("Bash", fmt.Sprintf(`{"command":"echo after %d"}`, i), "ok")
		res := step(time.Minute, c.request())
		if res.Batch != "" || res.PrefixChanged {
			t.Fatalf("request %d after the batch: batch %q", i, res.Batch)
		}
		if !keepsPrefix(t, prev, res.Body) {
			t.Fatalf("request %d after the batch does not keep the edited prefix", i)
		}
		prev = res.Body
	}
	// Another model: its cache is another one. (A new bulky result, old
	// enough by then, is what the batch has to reclaim.)
	c.call("Bash", `{"command":"cargo test"}`, fileText("test", 40))
	for i := 0; i < 3; i++ {
		c.call("Bash", fmt.Sprintf(`{"command":"echo more %d"}`, i), "ok")
		if res := step(time.Minute, c.request()); res.Batch != "" {
			t.Fatalf("a batch (%s) while warm and under the share", res.Batch)
		}
	}
	body := bytes.Replace(c.request(), []byte(`"claude-sonnet-4-5"`), []byte(`"claude-opus-4-5"`), 1)
	if res := step(time.Minute, body); res.Batch != coldModel {
		t.Fatalf("after a model change: batch %q", res.Batch)
	}
}

// keepsPrefix reports whether b's messages start with a's.
func keepsPrefix(t *testing.T, a, b []byte) bool {
	t.Helper()
	am, bm := get(mustParse(t, a), "messages").Items(), get(mustParse(t, b), "messages").Items()
	if len(bm) < len(am) {
		return false
	}
	for i := range am {
		if !tree.Equal(am[i], bm[i]) {
			return false
		}
	}
	return true
}

// TestBatchShare: while warm, a batch is made as soon as the reclaimable
// share reaches the threshold; every changed block is declared.
func TestBatchShare(t *testing.T) {
	for _, fm := range []struct {
		f     history.Format
		conv  func(fataler, []byte) []byte
		check func(st store.Store) func(d, o []byte) []string
	}{
		{history.Anthropic, formats[0].conv, func(st store.Store) func(d, o []byte) []string {
			return func(d, o []byte) []string { return checkRequest(d, o, true, st) }
		}},
		{history.Responses, toResponses, func(store.Store) func(d, o []byte) []string {
			return func(d, o []byte) []string { return checkResponses(d, o, true) }
		}},
	} {
		t.Run(fm.f.String(), func(t *testing.T) {
			st := &store.Mem{}
			rw := NewRewriter(Options{Window: 200_000, EditAge: 3, ChunkStore: st})
			c := editConvo(0)
			batched := -1
			for i := 0; i < 6; i++ {
				c.call("Bash", fmt.Sprintf(`{"command":"echo %d"}`, i), "ok")
				body := fm.conv(t, c.request())
				res := rewrite(t, rw, body, fm.f)
				if res.Batch != "" {
					if res.Batch != "share" {
						t.Fatalf("batch %q", res.Batch)
					}
					srcs := map[Source]int{}
					for _, e := range res.Edits {
						srcs[e.Source]++
					}
					if srcs[SourceStale] != 1 || srcs[SourceApplied] != 2 || srcs[SourceElided] != 1 {
						t.Fatalf("edits by source %v", srcs)
					}
					batched = i
				}
				if res.Body != nil {
					for _, v := range fm.check(st)(body, res.Body) {
						t.Errorf("request %d: %s", i, v)
					}
				}
			}
			if batched < 0 {
				t.Fatal("no batch")
			}
		})
	}
}

// panicStore fails every call with a panic.
type panicStore struct{}

func (panicStore) Put(context.Context, string, []byte) error   { panic("store bug") }
func (panicStore) Get(context.Context, string) ([]byte, error) { panic("store bug") }

// TestBatchPanicFailsOpen: a panic in the batched edits (here, storing an
// elided original) forwards the original request and forgets the
// branch's state; the conversation then goes on as a fresh one.
func TestBatchPanicFailsOpen(t *testing.T) {
	rw := NewRewriter(Options{Window: 200_000, EditAge: 3, ChunkStore: panicStore{}})
	c := editConvo(4)
	res := rw.Rewrite(c.request(), history.Anthropic)
	if res.Err == nil || res.Body != nil || !strings.Contains(res.Err.Error(), "store bug") {
		t.Fatalf("a panic in the edits: %+v", res)
	}
}

// TestN2EditStateRewind: with a batch of edits made, a rewind to before
// the edit boundary, a fork of an earlier message and a restart with the
// state in the store are each answered; the rewound and forked requests
// get what a fresh rewriter gives them (the edit state is never applied
// to a history it was not built from), and the restarted proxy carries
// the same edited prefix.
func TestN2EditStateRewind(t *testing.T) {
	for _, fm := range formats {
		t.Run(fm.f.String(), func(t *testing.T) {
			chunks := &store.Mem{}
			o := Options{Window: 200_000, EditAge: 3, ChunkStore: chunks, NoShape: true}
			so := o
			so.Store = &store.Mem{}
			rw := NewRewriter(so)
			c := editConvo(0)
			var reqs [][]byte
			var outs []Result
			for i := 0; i < 8; i++ {
				c.call("Bash", fmt.Sprintf(`{"command":"echo %d"}`, i), "ok")
				reqs = append(reqs, fm.conv(t, c.request()))
				outs = append(outs, rewrite(t, rw, reqs[i], fm.f))
			}
			at := -1
			for i, r := range outs {
				if r.Batch != "" {
					at = i
				}
			}
			if at < 1 {
				t.Fatalf("batch at %d", at)
			}
			// A rewind to before the batch: no edit state applies.
			back := reqs[at-1]
			got := rewrite(t, rw, back, fm.f)
			want := rewrite(t, NewRewriter(o), back, fm.f)
			if got.State == StateContinued || !bytes.Equal(got.Body, want.Body) {
				t.Fatalf("rewind: state %s; differs from a fresh rewriter: %v", got.State, !bytes.Equal(got.Body, want.Body))
			}
			// A fork: the first prompt edited keeps the key's second
			// message, so another branch of the same key.
			fork := bytes.Replace(reqs[len(reqs)-1], []byte("echo 0"), []byte("echo zero"), 1)
			gf := rewrite(t, rw, fork, fm.f)
			wf := rewrite(t, NewRewriter(o), fork, fm.f)
			if gf.State == StateContinued || !bytes.Equal(gf.Body, wf.Body) {
				t.Fatalf("fork: state %s; differs from a fresh rewriter: %v", gf.State, !bytes.Equal(gf.Body, wf.Body))
			}
			// A restart: the stored state carries the edit boundary.
			rs := NewRewriter(so)
			last := reqs[len(reqs)-1]
			a := rewrite(t, rw, last, fm.f)
			b := rewrite(t, rs, last, fm.f)
			if !bytes.Equal(a.Body, b.Body) {
				t.Fatal("after a restart the edited prefix differs")
			}
		})
	}
}

// TestBatchFetchedBack: what the agent fetched back after a batch
// elided it is never elided again: a re-read identical to an elided read
// (even when a later write makes it stale), a re-run of an elided call,
// a chunk fetch.
func TestBatchFetchedBack(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	rw := NewRewriter(Options{Window: 200_000, EditAge: 2, ChunkStore: &store.Mem{}, NoShape: true, EditShare: 1, Now: clk.now})
	step := func(c *convo, idle time.Duration) Result {
		t.Helper()
		clk.t = clk.t.Add(idle)
		return rewrite(t, rw, c.request(), history.Anthropic)
	}
	var c convo
	c.user("Look at a.go.")
	big := fileText("a", 60)
	read := c.call("Read", `{"file_path":"/src/a.go"}`, big)
	build := c.call("Bash", `{"command":"cargo build"}`, fileText("build", 40))
	for i := 0; i < 3; i++ {
		c.call("Bash", fmt.Sprintf(`{"command":"echo %d"}`, i), "ok")
		step(&c, time.Minute)
	}
	if res := step(&c, 10*time.Minute); res.Batch != coldIdle {
		t.Fatalf("first batch %q", res.Batch)
	}
	// The agent fetches both back, then edits the file.
	reread := c.call("Read", `{"file_path":"/src/a.go"}`, big)
	rerun := c.call("Bash", `{"command":"cargo build"}`, fileText("build", 40))
	chunk := c.call("Bash", `{"command":"terse chunk --session api-x c_0123456789012345 1"}`,
		"> [chunk 1 of 1 of c_0123456789012345: lines 1–40, in full]\n"+fileText("build", 40))
	c.call("Edit", `{"file_path":"/src/a.go","old_string":"compute(7)","new_string":"compute(8)"}`, "The file /src/a.go has been updated.")
	c.call("Bash", `{"command":"cargo test"}`, fileText("test", 40)) // something new to elide
	for i := 0; i < 4; i++ {
		c.call("Bash", fmt.Sprintf(`{"command":"echo more %d"}`, i), "ok")
		step(&c, time.Minute)
	}
	res := step(&c, 10*time.Minute)
	if res.Batch != coldIdle {
		t.Fatalf("second batch %q", res.Batch)
	}
	edited := map[string]Source{}
	for _, e := range res.Edits {
		edited[e.CallID] = e.Source
	}
	if s := edited[read]; s != SourceStale && s != SourceElided || edited[build] != SourceElided {
		t.Fatalf("the first read or build are not left out: %v", edited)
	}
	for _, id := range []string{reread, rerun, chunk} {
		if s, ok := edited[id]; ok {
			t.Errorf("%s (fetched back) edited: %s", id, s)
		}
	}
}

// TestBatchKeepsWording: a result elided by one batch keeps that batch's
// words at every later batch: its age stays the one it was left out at,
// and a later write of the file it read does not re-word it as stale
// (a line already sent never changes, so a batch breaks the cached
// prefix only where it adds an edit).
func TestBatchKeepsWording(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	o := Options{Window: 200_000, EditAge: 3, ChunkStore: &store.Mem{}, Now: clk.now}
	var c convo
	c.user("Fix b.go.")
	read := c.call("Read", `{"file_path":"/src/b.go"}`, fileText("b", 80))
	build := c.call("Bash", `{"command":"go build ./..."}`, fileText("build", 60))
	rw := NewRewriter(o)
	sent := map[string]string{} // call id → its elided form, first sent
	batches, after := 0, 0
	step := func(d time.Duration) {
		t.Helper()
		clk.t = clk.t.Add(d)
		res := rewrite(t, rw, c.request(), history.Anthropic)
		if res.Batch != "" {
			batches++
			if len(sent) > 0 {
				after++
			}
		}
		if res.Body == nil {
			return
		}
		now := results(mustParse(t, res.Body))
		for _, id := range []string{read, build} {
			text := joinedText(now[id])
			if was, ok := sent[id]; ok && was != text {
				t.Errorf("request %d: the result of %s was re-worded:\n%s\n%s", len(c.msgs), id, was, text)
			} else if !ok && strings.HasPrefix(text, inband.ElidedResultHead) {
				sent[id] = text
			}
		}
	}
	for i := 0; i < 5; i++ {
		c.call("Bash", fmt.Sprintf(`{"command":"echo %d"}`, i), "ok")
		step(time.Minute)
	}
	c.call("Bash", `{"command":"echo idle"}`, "ok")
	step(10 * time.Minute)
	if len(sent) != 2 {
		t.Fatalf("elided after the first batches: %v", sent)
	}
	c.call("Edit", `{"file_path":"/src/b.go","old_string":"b line 3","new_string":"b line three"}`, "The file /src/b.go has been updated.")
	c.call("Bash", `{"command":"go test ./..."}`, fileText("test", 60))
	for i := 0; i < 5; i++ {
		c.call("Bash", fmt.Sprintf(`{"command":"echo again %d"}`, i), "ok")
		step(time.Minute)
	}
	c.call("Bash", `{"command":"echo idle again"}`, "ok")
	step(10 * time.Minute)
	if after == 0 {
		t.Fatalf("no batch after the elisions (%d batches)", batches)
	}
}
