package mcpproxy

// The soak test: many sessions reading multi-MB results through the
// proxy and the gateway, and what the process holds once they ended.
// Opt-in (TERSE_SOAK=1), like the scale harness; CI runs it.

import (
	"context"
	"io"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tree"
)

// soakFile is the result of the soak's upstream for file variant v: a
// text file of size bytes and structuredContent wrapping it, as a
// filesystem server sends a read.
func soakFile(size, v int) []byte {
	text := fileText(size, v)
	return tree.AppendJSON(nil, tree.Object(
		tree.Member{Key: "content", Value: tree.Array(textBlock(text, ""))},
		tree.Member{Key: "structuredContent", Value: tree.Object(tree.Member{Key: "content", Value: tree.String(text)})},
	))
}

// soakServer is an in-memory upstream whose read tool returns one of a
// few multi-MB files (argument v).
type soakServer struct{ files [][]byte }

func (s *soakServer) String() string { return "soak" }
func (s *soakServer) Dial(ctx context.Context) (Conn, error) {
	return &memConn{s: &memServer{}, out: make(chan []byte, 64), done: make(chan struct{}), answer: s.answer}, nil
}

func (s *soakServer) answer(msg []byte) []byte {
	v, err := tree.Parse(msg)
	if err != nil {
		return nil
	}
	id, ok := v.Get("id")
	if !ok {
		return nil
	}
	method, _ := v.Get("method")
	var res []byte
	switch method.Str() {
	case "initialize":
		res = []byte(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"soak","version":"1"}}`)
	case "tools/list":
		res = []byte(`{"tools":[{"name":"read","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`)
	case "tools/call":
		params, _ := v.Get("params")
		args, _ := params.Get("arguments")
		n, _ := args.Get("v")
		i, _ := n.Int()
		res = s.files[int(i)%len(s.files)]
	default:
		res = []byte(`{}`)
	}
	out := append([]byte(`{"jsonrpc":"2.0","id":`), tree.AppendJSON(nil, id)...)
	out = append(out, `,"result":`...)
	out = append(out, res...)
	return append(out, '}')
}

// TestSoak: TERSE_SOAK=1 runs 1,000 sessions (TERSE_SOAK_SESSIONS), half
// through one gateway and half through stdio proxies, each reading a
// 2 MB file (one of 4) fitted to its client's budget (every fourth of
// each kind fetching one of its chunks too), 4 at a time. Once every session ended, the live heap is at
// most what it was after the first 16 sessions, plus the chunk store's
// bytes (one copy of each file: content is shared), plus the pipeline's
// bounded caches (32 counted texts and 8 encodings: at most 40 results),
// plus 32 MB. Before results stopped pinning their upstream responses it
// grew by several MB per session.
func TestSoak(t *testing.T) {
	if os.Getenv("TERSE_SOAK") == "" {
		t.Skip("TERSE_SOAK is not set; TERSE_SOAK=1 runs the soak test (1,000 sessions through the proxy and the gateway)")
	}
	sessions := 1000
	if n, err := strconv.Atoi(os.Getenv("TERSE_SOAK_SESSIONS")); err == nil && n > 0 {
		sessions = n
	}
	const size, variants, workers = 2 << 20, 4, 4
	up := &soakServer{}
	for v := range variants {
		up.files = append(up.files, soakFile(size, v))
	}
	mem := &store.Mem{MaxBytes: 1 << 30}
	opts := testOptions(func(o *terse.Options) { o.Store = &store.Shared{Store: mem} })
	opts.Clients = []ClientRule{{Match: "budgeted", Budget: 2000}}
	opts.Stats = new(Stats) // the gateway's and every proxy's
	g, err := NewGateway([]ServerSpec{{Name: "fs", upstream: up}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan string, sessions+16)
	g.eng.resetHook = func(p string) { ended <- p }
	url := serveStarted(t, g)

	ctx := context.Background()
	// session runs session i: through the gateway when i is even, else
	// through a stdio proxy of its own.
	session := func(i int) {
		var cs *mcp.ClientSession
		tool := "read"
		c := mcp.NewClient(&mcp.Implementation{Name: "budgeted-client", Version: "1"}, nil)
		var done chan error
		var closeProxy func()
		if i%2 == 0 {
			var err error
			cs, err = c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Errorf("session %d: connect: %v", i, err)
				return
			}
			tool = "fs__read"
		} else {
			cr, pw := io.Pipe()
			pr, cw := io.Pipe()
			p := NewProxy(up, opts)
			done = make(chan error, 1)
			go func() { done <- p.Serve(ctx, pr, pw); pw.Close() }()
			var err error
			cs, err = c.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
			if err != nil {
				t.Errorf("session %d: connect through a proxy: %v", i, err)
				cw.Close()
				return
			}
			closeProxy = func() { cw.Close() }
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"v": i % variants}})
		if err != nil || res.IsError {
			t.Errorf("session %d: read: %v", i, err)
		} else if h := handleRE.FindString(textOf(t, res)); h == "" {
			t.Errorf("session %d: the read was not fitted (%d bytes back)", i, len(textOf(t, res)))
		} else if i%8 > 1 {
			// Every fourth session of each kind fetches a chunk too.
		} else if ch, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{ParamChunk: h + ".2"}}); err != nil || ch.IsError {
			t.Errorf("session %d: chunk 2 of %s: %v %v", i, h, err, ch)
		}
		cs.Close()
		if closeProxy != nil {
			closeProxy()
			if err := <-done; err != nil {
				t.Errorf("session %d: the proxy: %v", i, err)
			}
		}
	}
	run := func(from, to int) {
		var wg sync.WaitGroup
		next := make(chan int)
		for range workers {
			wg.Go(func() {
				for i := range next {
					session(i)
				}
			})
		}
		for i := from; i < to; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		for i := from; i < to; i += 2 {
			<-ended // each gateway session's end
		}
	}
	const warm = 16
	start := time.Now()
	run(0, warm)
	base := liveHeap()
	run(warm, sessions)
	after := liveHeap()
	took := time.Since(start)
	if t.Failed() {
		return
	}
	bound := base + uint64(mem.Bytes()) + 40*uint64(len(up.files[0])) + 32<<20
	t.Logf("%d sessions (%d through the gateway, %d through proxies), a %d MB file each, in %s: live heap %d MB after %d sessions, %d MB at the end; the store holds %d MB; bound %d MB",
		sessions, (sessions+1)/2, sessions/2, size>>20, took.Round(time.Second), base>>20, warm, after>>20, mem.Bytes()>>20, bound>>20)
	if after > bound {
		t.Fatalf("live heap %d MB after %d sessions ended, over the bound of %d MB", after>>20, sessions, bound>>20)
	}
	if n := opts.Stats.Totals().Panics; n != 0 {
		t.Fatalf("%d panics recovered", n)
	}
}
