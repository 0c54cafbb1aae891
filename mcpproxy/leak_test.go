package mcpproxy

// What a result leaves behind once its session ended: live heap bytes,
// counted after a garbage collection.

import (
	"context"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/store"
)

// discardStore accepts every chunk and keeps none: what stays live after
// a result is then only what the proxy or gateway itself kept.
type discardStore struct{}

func (discardStore) Put(context.Context, string, []byte) error { return nil }
func (discardStore) Get(context.Context, string) ([]byte, error) {
	return nil, store.ErrNotFound
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// budgetedGateway serves a gateway over the fake upstream where a client
// named "budgeted…" gets a budget, with chunks in st, and returns it with
// its URL and a channel that receives each partition the gateway drops
// (once per session that ended, here).
func budgetedGateway(t testing.TB, st store.Store, budget int) (*Gateway, string, chan string) {
	opts := testOptions(func(o *terse.Options) { o.Store = st })
	opts.Clients = []ClientRule{{Match: "budgeted", Budget: budget}}
	g, err := NewGateway(fakeSpecs(t.(*testing.T)), opts)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan string, 1<<16)
	g.eng.resetHook = func(p string) { ended <- p }
	return g, serveStarted(t.(*testing.T), g), ended
}

// readFileSession opens a session of client name, reads fake__file (n
// bytes, seed s) in it, checks it was fitted, and ends the session.
func readFileSession(t testing.TB, url, name string, n, s int) {
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "a__file", Arguments: map[string]any{"n": n, "s": s}})
	if err != nil || res.IsError {
		t.Fatalf("a__file: %v %v", err, res)
	}
	if text := textOf(t, res); len(text) >= n/10 || !handleRE.MatchString(text) {
		t.Fatalf("a__file (%d bytes) was not fitted: %d bytes back", n, len(text))
	}
	cs.Close()
}

// TestN3FittedResultsDoNotPinUpstream: the fitted results of a tool whose
// structuredContent wraps its text (a filesystem read) do not keep the
// upstream's parsed response alive once their session ended: where each
// session used to pin its own (the remembered structuredContent key was a
// substring of it, up to 4,096 handles), the live heap after 40 more
// sessions, each reading a different 256 KB file through the gateway,
// grew by less than one such response; so did a proxy's after 40 more
// reads in one session. (The pipeline's caches, shared by
// every session, keep at most their bound: 32 counted texts and 8
// encodings; the first 40 sessions fill them.)
func TestN3FittedResultsDoNotPinUpstream(t *testing.T) {
	const size, n = 256 << 10, 40
	// check compares the live heap after n reads and after n more.
	check := func(t *testing.T, what string, read func(i int)) {
		before := liveHeapAfter(func() {
			for i := range n {
				read(i)
			}
		})
		after := liveHeapAfter(func() {
			for i := range n {
				read(n + i)
			}
		})
		grew := int64(after) - int64(before)
		t.Logf("live heap: %d KB after %d %s (a %d KB file each), %d KB after %d more (grew %d KB)", before>>10, n, what, size>>10, after>>10, n, grew>>10)
		if grew > size {
			t.Fatalf("live heap grew by %d KB over %d %s: more than one %d KB response is still held", grew>>10, n, what, size>>10)
		}
	}
	t.Run("gateway", func(t *testing.T) {
		_, url, ended := budgetedGateway(t, discardStore{}, 2000)
		check(t, "sessions that ended", func(i int) {
			readFileSession(t, url, "budgeted-client", size, i)
			<-ended
		})
	})
	t.Run("proxy", func(t *testing.T) {
		opts := testOptions(func(o *terse.Options) { o.Store = discardStore{} })
		opts.Clients = []ClientRule{{Match: "budgeted", Budget: 2000}}
		h := connect(t, fakeUpstream(t), opts, "budgeted-client")
		check(t, "reads in one session", func(i int) {
			if text := textOf(t, h.call(t, "file", map[string]any{"n": size, "s": i})); !handleRE.MatchString(text) {
				t.Fatalf("file was not fitted: %d bytes back", len(text))
			}
		})
	})
}

// liveHeapAfter runs f and returns the live heap then.
func liveHeapAfter(f func()) uint64 {
	f()
	return liveHeap()
}
