package apiproxy

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/terse-dev/terse/history"
)

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// injectedPanic is the test hook that fails rewriting.
func injectedPanic([]byte) { panic("injected failure") }

// TestPanicForwardsOriginal: a panic while rewriting forwards the
// client's original request untouched, the client gets the upstream's
// answer, one log line carries the stack, the panic is counted, and the
// proxy goes on serving (the conversation starting again from nothing).
func TestPanicForwardsOriginal(t *testing.T) {
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","usage":{"input_tokens":7,"output_tokens":2}}`)
	}
	rw := NewRewriter(Options{})
	var logs syncBuffer
	srv, st := newProxy(t, up, func(c *Config) {
		c.Rewriter = rw
		c.ErrorLog = log.New(&logs, "terse api: ", 0)
	})
	var c convo
	c.user("list")
	c.call("Bash", `{"command":"list --json"}`, jsonIssues())
	body := c.request()
	if NewRewriter(Options{}).Rewrite(body, history.Anthropic).Body == nil {
		t.Fatal("the request needs no change: the test shows nothing")
	}
	post := func() (int, string) {
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	rw.hook = injectedPanic
	code, answer := post()
	if code != 200 || !strings.Contains(answer, `"msg_1"`) {
		t.Fatalf("client got %d %s", code, answer)
	}
	if got := up.last(t).body; !bytes.Equal(got, body) {
		t.Fatalf("upstream got a changed body:\n%.300s", got)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "panic: injected failure") ||
		!strings.Contains(lines[0], "injectedPanic") || !strings.Contains(lines[0], "forwarded unchanged") {
		t.Fatalf("log:\n%s", logs.String())
	}

	rw.hook = nil
	if code, _ := post(); code != 200 {
		t.Fatalf("second request: %d", code)
	}
	if got := up.last(t).body; bytes.Equal(got, body) {
		t.Fatal("the proxy stopped rewriting after the panic")
	}
	st.Close()
	total, _ := st.Snapshot()
	if total.InternalErrors != 1 || total.Calls != 2 || total.Rewritten != 1 {
		t.Fatalf("totals %+v", total)
	}
	if !strings.Contains(st.Summary(), "internal errors: 1 ") {
		t.Fatalf("summary:\n%s", st.Summary())
	}
}

// TestPanicForgetsBranch: a panic on a conversation's request drops the
// state that request may have half updated; the next request starts the
// conversation again, as a fresh rewriter would.
func TestPanicForgetsBranch(t *testing.T) {
	o := Options{Window: 8_000}
	rw := NewRewriter(o)
	var c convo
	c.user("go through the files")
	reqs := growing(t, &c, formats[0].conv, 0, 30)
	for _, r := range reqs[:29] {
		rw.Rewrite(r, history.Anthropic)
	}
	rw.hook = injectedPanic
	res := rw.Rewrite(reqs[29], history.Anthropic)
	if res.Err == nil || res.Body != nil || res.Skipped != "internal error" {
		t.Fatalf("after a panic: %+v", res)
	}
	rw.hook = nil
	got := rw.Rewrite(reqs[29], history.Anthropic)
	if want := NewRewriter(o).Rewrite(reqs[29], history.Anthropic); got.State != StateNew || !bytes.Equal(got.Body, want.Body) {
		t.Fatalf("after a panic the state was kept (%s)", got.State)
	}
}
