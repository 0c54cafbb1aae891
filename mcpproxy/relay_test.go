package mcpproxy

// Regression tests of the relay's edges, each reproducing a finding: calls
// never left unanswered, malformed and oversized upstream lines in both
// modes, one large result never delaying another, one dial per upstream,
// shutdown, max_size_bytes, metrics.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse/tokens"
)

// scriptUpstream is an in-memory MCP server: initialize, ping and
// tools/list are answered like a server's; a tools/call gets the lines
// call returns, sent as they are (malformed, several, or none).
type scriptUpstream struct {
	tools string // tools/list result
	call  func(tool, id string) []string
	dials atomic.Int32
	// dialGate, when set, holds every Dial until it is closed.
	dialGate chan struct{}

	mu   sync.Mutex
	live []*scriptConn
}

func (s *scriptUpstream) String() string { return "script" }

func (s *scriptUpstream) Dial(ctx context.Context) (Conn, error) {
	s.dials.Add(1)
	s.mu.Lock()
	gate := s.dialGate
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	c := &scriptConn{s: s, out: make(chan []byte, 1024), done: make(chan struct{})}
	s.mu.Lock()
	s.live = append(s.live, c)
	s.mu.Unlock()
	return c, nil
}

// kill ends every live connection, as a crash would.
func (s *scriptUpstream) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.live {
		c.Close()
	}
	s.live = nil
}

type scriptConn struct {
	s    *scriptUpstream
	out  chan []byte
	done chan struct{}
	once sync.Once
}

func (c *scriptConn) Read() ([]byte, error) {
	select {
	case m := <-c.out:
		return m, nil
	case <-c.done:
		return nil, errors.New("upstream exited")
	}
}

func (c *scriptConn) send(line string) {
	select {
	case c.out <- []byte(line):
	case <-c.done:
	}
}

func (c *scriptConn) Write(msg []byte) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name            string `json:"name"`
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &m); err != nil || m.ID == nil || m.Method == "" {
		return nil // notifications and responses
	}
	id := string(m.ID)
	result := func(r string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + r + `}` }
	switch m.Method {
	case "initialize":
		c.send(result(`{"protocolVersion":"` + m.Params.ProtocolVersion + `","capabilities":{"tools":{}},"serverInfo":{"name":"script","version":"1"}}`))
	case "tools/list":
		c.send(result(c.s.tools))
	case "tools/call":
		for _, l := range c.s.call(m.Params.Name, id) {
			c.send(l)
		}
	default:
		c.send(result(`{}`))
	}
	return nil
}

func (c *scriptConn) Close() error { c.once.Do(func() { close(c.done) }); return nil }

const scriptTools = `{"tools":[{"name":"big","inputSchema":{"type":"object"}},{"name":"echo","inputSchema":{"type":"object"}},{"name":"bad","inputSchema":{"type":"object"}},{"name":"huge","inputSchema":{"type":"object"}}]}`

// textResult is a tools/call response with one text block.
func textResult(id, text string) string {
	b, _ := json.Marshal(text)
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(b) + `}]}}`
}

// bigJSON is a pretty JSON array of about n bytes.
func bigJSON(n int) string {
	var b strings.Builder
	b.WriteString("[\n")
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `  {"id": %d, "title": "item number %d", "state": "open", "body": "%s"}`, i, i, strings.Repeat("lorem ipsum ", 8))
	}
	b.WriteString("\n]")
	return b.String()
}

func scripted(call func(tool, id string) []string) *scriptUpstream {
	return &scriptUpstream{tools: scriptTools, call: call}
}

// echoScript answers echo with "pong", big with 4 MB of JSON, bad with a
// line that does not parse but whose id is readable, huge with 64 KiB.
func echoScript() *scriptUpstream {
	big := bigJSON(4 << 20)
	huge := bigJSON(64 << 10)
	return scripted(func(tool, id string) []string {
		switch tool {
		case "big":
			return []string{textResult(id, big)}
		case "huge":
			return []string{textResult(id, huge)}
		case "bad":
			return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"\ud800 ok"}],}}`}
		}
		return []string{textResult(id, "pong")}
	})
}

// TestHeadOfLine: an echo sent while a 4 MB result is being fitted is
// answered first. The fitting of the large result is held until the echo's
// answer arrived, so the test decides by order: a relay that transforms on
// its reader never reads the echo's answer, and the hold gives up.
func TestHeadOfLine(t *testing.T) {
	up := echoScript()
	h := connect(t, up, nil, "generic-client")
	entered := make(chan struct{})
	gate := make(chan struct{})
	var echoFirst atomic.Bool
	h.p.beforeTransform = func(tool string) {
		if tool != "big" {
			return
		}
		close(entered)
		select {
		case <-gate:
			echoFirst.Store(true)
		case <-time.After(20 * time.Second): // a safeguard: order decides
		}
	}
	bigDone := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{ParamBudget: 2000}})
		if err != nil {
			t.Error(err)
		}
		bigDone <- res
	}()
	<-entered
	if got := textOf(t, h.call(t, "echo", nil)); got != "pong" {
		t.Errorf("echo = %q", got)
	}
	close(gate)
	res := <-bigDone
	if !echoFirst.Load() {
		t.Error("the echo was not answered while the large result was being fitted")
	}
	if res != nil {
		if n := tokens.Estimate().Count(textOf(t, res)); n > 2000 {
			t.Errorf("large result is %d tokens, budget 2000", n)
		}
	}
}

// TestRequestIDsAnswered: a client request with a lone surrogate escape
// (valid JSON) is relayed and answered; a request that does not parse but
// whose id is readable is answered with its own id, not null; an upstream
// answer that does not parse, but whose id is readable, answers its call
// with an error; all leave the relay serving.
func TestRequestIDsAnswered(t *testing.T) {
	cr, pw := io.Pipe()
	pr, cw := io.Pipe()
	p := NewProxy(echoScript(), testOptions())
	go func() { p.Serve(context.Background(), pr, pw); pw.Close() }()
	t.Cleanup(func() { cw.Close() })
	w := &wire{in: cw, out: bufio.NewScanner(cr)}
	w.out.Buffer(nil, 1<<24)
	w.send(t, `{"jsonrpc":"2.0","id":"s0","method":"ping","params":{"x":"\ud800"}}`)
	if m := w.recv(t); m["id"] != "s0" || m["result"] == nil {
		t.Errorf("lone surrogate: %v, want a result with id s0", m)
	}
	w.send(t, `{"jsonrpc":"2.0","id":"s1","method":"ping","params":{"x":1,}}`)
	if m := w.recv(t); m["id"] != "s1" || m["error"] == nil {
		t.Errorf("malformed request: %v, want an error with id s1", m)
	}
	w.send(t, `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"bad"}}`)
	if m := w.recv(t); m["id"] != "c1" || m["error"] == nil {
		t.Errorf("malformed upstream answer: %v, want an error with id c1", m)
	}
	w.send(t, `{"jsonrpc":"2.0","id":"c2","method":"tools/call","params":{"name":"echo"}}`)
	if m := w.recv(t); m["id"] != "c2" || m["result"] == nil {
		t.Errorf("next call: %v", m)
	}
	if n := p.Stats().Totals().Rejected; n != 2 {
		t.Errorf("rejected messages = %d, want 2", n)
	}
}

// gatewayOver serves a gateway over in-memory upstreams.
func gatewayOver(t *testing.T, opts *Options, ups map[string]Upstream) (*Gateway, string) {
	t.Helper()
	var specs []ServerSpec
	for name, up := range ups {
		specs = append(specs, ServerSpec{Name: name, upstream: up})
	}
	g, srv := serveGateway(t, specs, opts)
	return g, srv.URL
}

// TestGatewayMalformedAndOversized: in the gateway too, an upstream line
// that does not parse is dropped and counted without ending the upstream's
// session (its call, when its id is readable, gets an error), and the
// message limit is Options.MaxMessageBytes, not the SDK's.
func TestGatewayMalformedAndOversized(t *testing.T) {
	noise := scripted(func(tool, id string) []string {
		switch tool {
		case "bad":
			return []string{`this is not JSON`, `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"\ud800"}],}}`}
		case "huge":
			return []string{textResult(id, bigJSON(20000))}
		}
		return []string{`not JSON either`, textResult(id, "pong")}
	})
	o := testOptions()
	o.MaxMessageBytes = 16 << 10
	g, url := gatewayOver(t, o, map[string]Upstream{"s": noise})
	cs, _ := gatewayClient(t, url, "generic-client")
	ctx := context.Background()
	call := func(name string) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	}
	if res, err := call("s__echo"); err != nil || textOf(t, res) != "pong" {
		t.Fatalf("echo after a non-JSON line: %v %v", res, err)
	}
	if _, err := call("s__bad"); err == nil || !strings.Contains(err.Error(), "not valid JSON-RPC") {
		t.Errorf("malformed answer: err = %v, want an error naming it", err)
	}
	if _, err := call("s__huge"); err == nil || !strings.Contains(err.Error(), "larger than 16384 bytes") {
		t.Errorf("oversized answer: err = %v, want the size error", err)
	}
	if res, err := call("s__echo"); err != nil || textOf(t, res) != "pong" {
		t.Errorf("echo at the end: %v %v", res, err)
	}
	if d := noise.dials.Load(); d != 1 {
		t.Errorf("upstream dialled %d times, want 1 (the session survives)", d)
	}
	if n := g.Stats().Totals().Rejected; n < 4 {
		t.Errorf("rejected = %d, want at least 4", n)
	}
}

// TestGatewayOneDial: calls racing to a dead upstream wait for one dial.
func TestGatewayOneDial(t *testing.T) {
	up := echoScript()
	g, url := gatewayOver(t, testOptions(), map[string]Upstream{"s": up})
	cs, _ := gatewayClient(t, url, "generic-client")
	u := g.ups[0]
	u.mu.Lock()
	dead := u.cs
	u.mu.Unlock()
	gate := make(chan struct{})
	up.mu.Lock()
	up.dialGate = gate
	up.mu.Unlock()
	u.drop(dead)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{}})
			if err != nil || textOf(t, res) != "pong" {
				t.Errorf("call after the upstream died: %v %v", res, err)
			}
		})
	}
	// Every call is under way (the dial is held): let it through.
	eventually(t, "every call under way", func() bool { return up.dials.Load() >= 2 })
	close(gate)
	wg.Wait()
	if d := up.dials.Load(); d != 2 {
		t.Errorf("upstream dialled %d times, want 2 (start, one reconnection)", d)
	}
}

// TestShutdownDrain: answers that arrive while Serve drains are written,
// and none starts work after Serve stopped waiting (run with -race).
func TestShutdownDrain(t *testing.T) {
	hold := make(chan struct{})
	var mu sync.Mutex
	var held []func()
	up := scripted(func(tool, id string) []string { return nil })
	up.call = func(tool, id string) []string {
		mu.Lock()
		c := up.live[len(up.live)-1]
		held = append(held, func() { c.send(textResult(id, bigJSON(2000))) })
		mu.Unlock()
		return nil
	}
	pr, cw := io.Pipe()
	var out bytes.Buffer
	p := NewProxy(up, testOptions())
	done := make(chan error, 1)
	go func() { done <- p.Serve(context.Background(), pr, &out) }()
	for i := range 20 {
		fmt.Fprintf(cw, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}`+"\n", i)
	}
	eventually(t, "20 requests held upstream", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(held) == 20
	})
	cw.Close()
	go func() {
		<-hold
		mu.Lock()
		defer mu.Unlock()
		for _, f := range held {
			f()
		}
	}()
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), `"result"`); n != 20 {
		t.Errorf("%d answers written, want 20", n)
	}
}

// TestMaxSizeBytes: a text block over max_size_bytes is not re-encoded,
// only fitted to the budget, as text.
func TestMaxSizeBytes(t *testing.T) {
	o := testOptions()
	o.MaxSizeBytes = 4096
	h := connect(t, echoScript(), o, "generic-client")
	want := bigJSON(64 << 10)
	res := h.call(t, "huge", nil)
	if got := textOf(t, res); got != want {
		t.Errorf("under budget: the block changed (%d bytes, want the %d as sent)", len(got), len(want))
	}
	res = h.call(t, "huge", map[string]any{ParamBudget: 500})
	got := textOf(t, res)
	if n := tokens.Estimate().Count(got); n > 500 {
		t.Errorf("fitted block is %d tokens, budget 500", n)
	}
	b, _ := json.Marshal(res.Content[0])
	if !strings.Contains(string(b), `"terse/format":"text"`) || !strings.HasPrefix(got, "[\n  {") {
		t.Errorf("over max_size_bytes: %s, want pretty text fitted as text", b)
	}
}

// TestGatewayMetrics: /metrics has the Go and process collectors and every
// terse counter from the start; savings are labelled by server and tool;
// an upstream death is logged, counted as down and its reconnection as a
// restart; calls of unknown tools are counted.
func TestGatewayMetrics(t *testing.T) {
	var logs syncBuffer
	o := testOptions()
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	up := echoScript()
	g, url := gatewayOver(t, o, map[string]Upstream{"s": up})
	metrics := func() string {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	start := metrics()
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes",
		`terse_gateway_upstream_up{server="s"} 1`, `terse_gateway_upstream_restarts_total{server="s"} 0`,
		`terse_gateway_errors_total{outcome="error",server="s"} 0`, "terse_gateway_unknown_tool_calls_total 0",
		`terse_gateway_rejected_messages_total{from="upstream"} 0`, "terse_gateway_catalog_tokens_in_total"} {
		if !strings.Contains(start, name) {
			t.Errorf("/metrics at start lacks %s", name)
		}
	}
	cs, _ := gatewayClient(t, url, "generic-client")
	ctx := context.Background()
	cs.ListTools(ctx, nil)
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__huge", Arguments: map[string]any{}})
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope__x", Arguments: map[string]any{}})
	up.kill()
	eventually(t, "the upstream's death logged", func() bool { return strings.Contains(logs.String(), "upstream died") })
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{}})
	end := metrics()
	for _, re := range []string{`terse_gateway_tokens_saved_total\{server="s",source="encoding",tool="huge"\} [1-9]`,
		`terse_gateway_tokens_in_total\{server="s",tool="huge"\} [1-9]`, `terse_gateway_unknown_tool_calls_total 1`,
		`terse_gateway_upstream_restarts_total\{server="s"\} 1`, `terse_gateway_upstream_up\{server="s"\} 1`,
		`terse_gateway_catalog_tokens_in_total [1-9]`} {
		if !regexp.MustCompile(re).MatchString(end) {
			t.Errorf("/metrics lacks %s", re)
		}
	}
	if g.Stats().Totals().UnknownTools != 1 {
		t.Error("stats: unknown tool call not counted")
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
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

// TestGatewayIdleSessions: a session no request used for IdleTimeout ends,
// and its state is dropped.
func TestGatewayIdleSessions(t *testing.T) {
	o := testOptions()
	o.IdleTimeout = 50 * time.Millisecond
	g, url := gatewayOver(t, o, map[string]Upstream{"s": echoScript()})
	cs, _ := gatewayClient(t, url, "generic-client")
	id := cs.ID()
	cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "s__echo", Arguments: map[string]any{}, Meta: mcp.Meta{MetaConversation: "c"}})
	for deadline := time.Now().Add(10 * time.Second); g.hasSession(id) || engineState(g.eng, id) > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("an idle session outlived IdleTimeout by 10 s")
		}
	}
}

// TestShutdownGrace: once the client closed its input, Serve waits for an
// unanswered request at most ShutdownGrace, on the bubble's fake clock.
func TestShutdownGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := scripted(func(tool, id string) []string { return nil }) // never answers
		pr, pw := io.Pipe()
		p := NewProxy(up, &Options{ShutdownGrace: time.Minute})
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- p.Serve(context.Background(), pr, io.Discard) }()
		io.WriteString(pw, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`+"\n")
		pw.Close()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Serve returned before the grace period")
		default:
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != time.Minute {
			t.Errorf("Serve waited %v, want the grace period, 1m", d)
		}
		up.kill()
	})
}

// TestRestartLimiter: at most max restarts within a minute, then again
// once the oldest is a minute old.
func TestRestartLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := restartLimiter{max: 2, now: func() time.Time { return now }}
	for i := range 2 {
		if ok, _ := l.allow(); !ok {
			t.Fatalf("restart %d refused", i+1)
		}
		now = now.Add(10 * time.Second)
	}
	ok, until := l.allow()
	if ok || !until.Equal(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)) {
		t.Errorf("third restart: ok %v until %v, want refused until 00:01", ok, until)
	}
	now = now.Add(41 * time.Second)
	if ok, _ := l.allow(); !ok {
		t.Error("restart a minute after the first refused")
	}
}

// TestBudgetSplit: the text blocks of one result share the effective
// budget by size, after the blocks left as they are: their sum never
// exceeds it.
func TestBudgetSplit(t *testing.T) {
	if got := effectiveBudget(0, 0, 25000); got != 25000 {
		t.Errorf("no call or client budget: %d, want the pipeline's", got)
	}
	if got := effectiveBudget(3000, 20000, 25000); got != 3000 {
		t.Errorf("_budget 3000: %d", got)
	}
	if got := effectiveBudget(30000, 20000, 25000); got != 20000 {
		t.Errorf("_budget over the client's: %d, want the client's 20000", got)
	}
	shares := split(1000, 100, []int{3000, 1000, 0})
	if sum := shares[0] + shares[1] + shares[2]; sum > 903 || shares[0] != 675 || shares[1] != 225 {
		t.Errorf("split = %v", shares)
	}
	a, b := bigJSON(40000), bigJSON(10000)
	up := scripted(func(tool, id string) []string {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(ja) +
			`},{"type":"text","text":"a short note that is left as it is"},{"type":"text","text":` + string(jb) + `}]}}`}
	})
	h := connect(t, up, nil, "generic-client")
	res := h.call(t, "echo", map[string]any{ParamBudget: 1500})
	total := 0
	for _, c := range res.Content {
		total += tokens.Estimate().Count(c.(*mcp.TextContent).Text)
	}
	if total > 1500 || len(res.Content) != 3 {
		t.Errorf("%d blocks, %d tokens in all, budget 1500", len(res.Content), total)
	}
}

// TestCallLog: with a DEBUG logger each call is one slog record (no plain
// lines beside the logger's).
func TestCallLog(t *testing.T) {
	var logs syncBuffer
	o := testOptions()
	o.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := connect(t, echoScript(), o, "generic-client")
	h.call(t, "huge", nil)
	h.call(t, "echo", nil)
	// A call is recorded once its answer was written: wait for both.
	eventually(t, "both calls logged", func() bool { return strings.Count(logs.String(), `"msg":"call"`) >= 2 })
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not a JSON record: %q", line)
		}
		if m["msg"] == "call" {
			n++
			if m["tool"] == "huge" && (m["outcome"] != "transformed" || m["saved_encoding"] == nil) {
				t.Errorf("call record %v", m)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d call records, want 2", n)
	}
}

// TestGatewayLargeResult: a result over the go-sdk's 16 MiB line limit,
// under the documented 64 MiB, comes from a real upstream process through
// the gateway (raw, byte for byte), and the session goes on.
func TestGatewayLargeResult(t *testing.T) {
	if testing.Short() {
		t.Skip("17 MiB through a process and HTTP")
	}
	g, srv := startGateway(t)
	cs, _ := gatewayClient(t, srv.URL, "generic-client")
	ctx := context.Background()
	const n = 17 << 20
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__text", Arguments: map[string]any{"n": n, ParamOutputMode: "raw"}})
	if err != nil {
		t.Fatalf("17 MiB result: %v", err)
	}
	if got := textOf(t, res); len(got) < n || !strings.HasPrefix(got, "log line ok\n") {
		t.Errorf("17 MiB result: %d bytes", len(got))
	}
	if got := textOf(t, callOK(t, cs, "a__rows", map[string]any{"n": 2})); !sameJSON(t, got, rowsText(2)) {
		t.Errorf("next call = %q", got)
	}
	if n := g.Stats().Totals().Restarts; n != 0 {
		t.Errorf("%d upstream restarts, want none", n)
	}
}

func callOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// eventually waits until cond holds, failing the test when it does not
// within 10 seconds: for what another goroutine does after the event
// the test can see (a log line, a count).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("waited 10s for %s", what)
		}
	}
}
