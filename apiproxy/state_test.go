package apiproxy

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
)

// formats are the three request formats, each with a converter from the
// Anthropic requests convo builds.
var formats = []struct {
	f    history.Format
	conv func(t fataler, body []byte) []byte
}{
	{history.Anthropic, func(_ fataler, b []byte) []byte { return b }},
	{history.OpenAI, toChat},
	{history.Responses, toResponses},
}

// growing returns the requests of a conversation that reads n files one
// by one, in format f, starting from c (which it extends).
func growing(t fataler, c *convo, conv func(fataler, []byte) []byte, from, n int) [][]byte {
	var reqs [][]byte
	for i := from; i < from+n; i++ {
		c.call("Read", fmt.Sprintf(`{"file_path":"/f%d"}`, i), fileText(fmt.Sprintf("f%d_", i), 30))
		reqs = append(reqs, conv(t, c.request()))
	}
	return reqs
}

// rewrite is rw.Rewrite that fails the test on a panic, recovered
// (Result.Err) or not.
func rewrite(t *testing.T, rw *Rewriter, body []byte, f history.Format) (res Result) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	res = rw.Rewrite(body, f)
	if res.Err != nil {
		t.Fatalf("%v\n%s", res.Err, res.Err.(*InternalError).Stack)
	}
	return res
}

// TestN2RewindForkRestart: after a conversation was trimmed, a shorter
// request with the same first messages (a rewind), a request that
// changed an earlier message (an edited prompt, a fork) and the same
// after a restart with the state in the store are each answered, with
// state only from the history it was built from: what a fresh rewriter
// writes when the request does not share the prefix the state covers,
// the earlier prefix when it does. The conversation itself goes on as if
// none of them had been sent.
func TestN2RewindForkRestart(t *testing.T) {
	for _, fm := range formats {
		t.Run(fm.f.String(), func(t *testing.T) {
			o := Options{Window: 8_000, NoShape: true, EditAge: 12, EditBulky: 2048} // the boundary must move late
			so, so2 := o, o
			so.Store, so2.Store = &store.Mem{}, &store.Mem{}
			rw, alone := NewRewriter(so), NewRewriter(o)
			var c convo
			c.user("go through the files")
			reqs := growing(t, &c, fm.conv, 0, 40)
			var outs [][]byte
			lastMove := -1
			for i, r := range reqs {
				res := rewrite(t, rw, r, fm.f)
				if !bytes.Equal(res.Body, alone.Rewrite(r, fm.f).Body) {
					t.Fatalf("request %d: differs from a rewriter alone", i)
				}
				if res.PrefixChanged {
					lastMove = i
				}
				outs = append(outs, res.Body)
			}
			if lastMove < 5 || lastMove > len(reqs)-3 {
				t.Fatalf("the boundary last moved at request %d: the test shows nothing", lastMove)
			}

			fresh := func(body []byte) []byte { return NewRewriter(o).Rewrite(body, fm.f).Body }
			check := func(name string, rw *Rewriter, body []byte, want []byte, wantState string) {
				t.Helper()
				res := rewrite(t, rw, body, fm.f)
				if res.State != wantState {
					t.Errorf("%s: state %q, want %q", name, res.State, wantState)
				}
				if !bytes.Equal(res.Body, want) {
					t.Errorf("%s: body\n%.400s\nwant\n%.400s", name, res.Body, want)
				}
			}
			// Rewinds: before the trimmed prefix, a fresh start; after
			// it, the state applies and the earlier request comes out as
			// it did.
			check("rewind before the prefix", rw, reqs[3], fresh(reqs[3]), StateNew)
			check("rewind after the prefix", rw, reqs[lastMove+1], outs[lastMove+1], StateForked)
			// A fork: the third call differs (an edited prompt, another
			// branch of the conversation).
			var g convo
			g.user("go through the files")
			forked := growing(t, &g, fm.conv, 0, 2)
			g.call("Read", `{"file_path":"/elsewhere"}`, fileText("elsewhere", 30))
			forked = append(forked, growing(t, &g, fm.conv, 3, 37)...)
			check("fork before the prefix", rw, forked[len(forked)-1], fresh(forked[len(forked)-1]), StateNew)

			// A restart: the stored state is found, and checked the same way.
			first := NewRewriter(so2)
			for _, r := range reqs {
				first.Rewrite(r, fm.f)
			}
			again := NewRewriter(so2)
			check("restarted, rewind", again, reqs[3], fresh(reqs[3]), StateNew)
			check("restarted, fork", again, forked[len(forked)-1], fresh(forked[len(forked)-1]), StateNew)

			// The conversation goes on as if nothing else had been sent.
			next := growing(t, &c, fm.conv, 40, 2)
			for i, r := range next {
				want := alone.Rewrite(r, fm.f).Body
				check(fmt.Sprintf("next %d", i), rw, r, want, StateContinued)
				check(fmt.Sprintf("next %d, restarted", i), again, r, want, StateContinued)
			}
		})
	}
}

// TestN2StoredOldState: a state stored by an earlier version (no prefix
// fingerprint, stale index past the end of a rewound request) is not used.
func TestN2StoredOldState(t *testing.T) {
	var c convo
	c.user("go through the files")
	reqs := growing(t, &c, formats[0].conv, 0, 6)
	req, _ := history.Decode(reqs[2], history.Anthropic)
	norm, _ := history.Normalize(req.Messages, []string{})
	key := convKey(history.Anthropic, norm)
	st := &store.Mem{}
	st.Put(t.Context(), "api-"+key, []byte(`{"state":{"version":1,"boundary":9,"dropped":0,"calls":12},"stale":12,"sizes":[1,2,3,4]}`))
	rw := NewRewriter(Options{Window: 8_000, Store: st})
	res := rewrite(t, rw, reqs[2], history.Anthropic)
	if want := NewRewriter(Options{Window: 8_000}).Rewrite(reqs[2], history.Anthropic); !bytes.Equal(res.Body, want.Body) || res.State != StateNew {
		t.Fatalf("an old stored state was used (%s)", res.State)
	}
}

// TestN2EqualFirstMessages: two conversations with the same first
// messages (the same first request, even), sent interleaved, are each
// rewritten exactly as they would be alone.
func TestN2EqualFirstMessages(t *testing.T) {
	for _, fm := range formats {
		t.Run(fm.f.String(), func(t *testing.T) {
			o := Options{Window: 8_000}
			var a, b convo
			a.user("go through the files")
			b.user("go through the files")
			ra := growing(t, &a, fm.conv, 0, 30)
			b.call("Read", `{"file_path":"/f0"}`, fileText("f0_", 30))
			rb := [][]byte{fm.conv(t, b.request())}
			rb = append(rb, growing(t, &b, fm.conv, 100, 29)...)
			if !bytes.Equal(ra[0], rb[0]) {
				t.Fatal("the first requests differ")
			}
			rw, aloneA, aloneB := NewRewriter(o), NewRewriter(o), NewRewriter(o)
			moved := 0
			for i := range ra {
				for _, x := range []struct {
					body  []byte
					alone *Rewriter
				}{{ra[i], aloneA}, {rb[i], aloneB}} {
					res := rewrite(t, rw, x.body, fm.f)
					if want := x.alone.Rewrite(x.body, fm.f); !bytes.Equal(res.Body, want.Body) {
						t.Fatalf("request %d: differs from the conversation alone", i)
					}
					if res.PrefixChanged {
						moved++
					}
				}
			}
			if moved < 4 {
				t.Fatalf("the boundaries moved %d times: the test shows nothing", moved)
			}
		})
	}
}

// TestN2ReplayRewinds replays real Claude Code sessions with a tight
// window and, after every fifth request, rewinds to one from half as far
// in: every request is answered and valid, and the session's own
// requests come out as they do without the rewinds.
func TestN2ReplayRewinds(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t, "corpus"), "agent-sessions")
	files, _ := filepath.Glob(filepath.Join(dir, "claude", "*.jsonl"))
	long, _ := filepath.Glob(filepath.Join(dir, "claude-long", "theogbrand__*.jsonl")) // the smaller long ones
	files = append(files, long...)
	if len(files) == 0 {
		t.Skip("no Claude Code transcripts in " + dir)
	}
	answered, requests := 0, 0
	for _, f := range files {
		reqs := claudeRequests(t, f)
		o := Options{Window: 20_000}
		rw, alone := NewRewriter(o), NewRewriter(o)
		requests += len(reqs)
		for i, r := range reqs {
			res := rewrite(t, rw, r, history.Anthropic)
			if !bytes.Equal(res.Body, alone.Rewrite(r, history.Anthropic).Body) {
				t.Fatalf("%s: request %d differs from the session without rewinds", filepath.Base(f), i)
			}
			if i%5 == 4 {
				back := reqs[i/2]
				res := rewrite(t, rw, back, history.Anthropic)
				out := back
				if res.Body != nil {
					out = res.Body
				}
				for _, v := range checkRequest(back, out, false) {
					t.Errorf("%s: rewind from %d to %d: %s", filepath.Base(f), i, i/2, v)
				}
				answered++
			}
		}
	}
	t.Logf("%d requests, %d rewinds answered", requests, answered)
}
