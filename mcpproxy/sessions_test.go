package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/inband"
)

// connTap keeps the client's connection, so that a test can send what the
// go-sdk client has no method for (a custom notification) over the same
// transport, as a real client would.
type connTap struct {
	mcp.Transport
	conn *mcp.Connection
}

func (t connTap) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	*t.conn = c
	return c, err
}

// notifyCompact sends notifications/terse/compact on conn, naming a
// conversation in params._meta when conv is not empty.
func notifyCompact(t testing.TB, conn mcp.Connection, conv string) {
	t.Helper()
	params := `{}`
	if conv != "" {
		params = `{"_meta":{"` + MetaConversation + `":` + strconv.Quote(conv) + `}}`
	}
	if err := conn.Write(context.Background(), &jsonrpc.Request{Method: CompactNotification, Params: json.RawMessage(params)}); err != nil {
		t.Fatalf("sending %s: %v", CompactNotification, err)
	}
}

// dedupOptions run the pipeline with its dedup stage, as the CLI does.
func dedupOptions() *Options { return testOptions() }

// client is one MCP session, through the stdio proxy or the gateway.
type client struct {
	cs   *mcp.ClientSession
	conn *mcp.Connection
	rows string // name of the fake's rows tool
}

// call returns the text of rows(n) called in conversation conv ("" for
// none).
func (c *client) call(t testing.TB, conv string, n int) string {
	t.Helper()
	p := &mcp.CallToolParams{Name: c.rows, Arguments: map[string]any{"n": n}}
	if conv != "" {
		p.Meta = mcp.Meta{MetaConversation: conv}
	}
	res, err := c.cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s(%d) in %q: %v", c.rows, n, conv, err)
	}
	return textOf(t, res)
}

// compactTool calls terse_compact in conversation conv.
func (c *client) compactTool(t testing.TB, conv string) {
	t.Helper()
	p := &mcp.CallToolParams{Name: CompactTool, Arguments: map[string]any{}}
	if conv != "" {
		p.Meta = mcp.Meta{MetaConversation: conv}
	}
	if _, err := c.cs.CallTool(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// idLine reads the id line a recorded result opens with (inband.ID),
// as a regexp's submatches: the line and the id.
var idLine idLineReader

type idLineReader struct{}

func (idLineReader) FindStringSubmatch(text string) []string {
	first, _, ok := strings.Cut(text, "\n")
	if !ok {
		return nil
	}
	v, err := inband.Parse(first)
	if x, is := v.(inband.ID); err == nil && is {
		return []string{first + "\n", x.ID}
	}
	return nil
}

func (r idLineReader) MatchString(text string) bool { return r.FindStringSubmatch(text) != nil }

// ReplaceAllString drops the id line text opens with.
func (r idLineReader) ReplaceAllString(text, with string) string {
	if m := r.FindStringSubmatch(text); m != nil {
		return with + text[len(m[0]):]
	}
	return text
}

// full checks that text is rows(n) shown in full with its id line, and
// returns the id.
func full(t testing.TB, what, text string, n int) string {
	t.Helper()
	m := idLine.FindStringSubmatch(text)
	if m == nil || !sameJSON(t, text[len(m[0]):], rowsText(n)) {
		t.Fatalf("%s = %.80q, want rows(%d) in full after an id line", what, text, n)
	}
	return m[1]
}

// ref checks that text is a reference to id.
func ref(t testing.TB, what, text, id string) {
	t.Helper()
	if !strings.HasPrefix(text, "> [ref: "+id) {
		t.Fatalf("%s = %.80q, want a ref to %s", what, text, id)
	}
}

// compaction: after the notification or terse_compact, a repeat comes back
// in full with its id line, the one the agent can now see, and the next
// repeat refers to that one.
func compaction(t *testing.T, c *client) {
	ways := []struct {
		name    string
		compact func(t *testing.T)
	}{
		{"notification", func(t *testing.T) { notifyCompact(t, *c.conn, "") }},
		{"tool", func(t *testing.T) { c.compactTool(t, "") }},
	}
	for i, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			n := 30 + i
			id := full(t, "first call", c.call(t, "", n), n)
			ref(t, "repeat", c.call(t, "", n), id)
			w.compact(t)
			again := full(t, "repeat after compaction", c.call(t, "", n), n)
			ref(t, "repeat after the full one", c.call(t, "", n), again)
		})
	}
}

// conversations: two conversations of one session keep separate dedup
// state, and compacting one leaves the other alone.
func conversations(t *testing.T, c *client) {
	const n = 40
	a := full(t, "a: first", c.call(t, "a", n), n)
	b := full(t, "b: same call", c.call(t, "b", n), n)
	ref(t, "a: repeat", c.call(t, "a", n), a)
	ref(t, "b: repeat", c.call(t, "b", n), b)
	full(t, "no conversation: same call", c.call(t, "", n), n)

	notifyCompact(t, *c.conn, "a")
	a = full(t, "a: after compacting a", c.call(t, "a", n), n)
	ref(t, "b: after compacting a", c.call(t, "b", n), b)

	c.compactTool(t, "b")
	b = full(t, "b: after terse_compact in b", c.call(t, "b", n), n)
	ref(t, "a: after terse_compact in b", c.call(t, "a", n), a)

	notifyCompact(t, *c.conn, "") // the whole session
	full(t, "a: after compacting the session", c.call(t, "a", n), n)
	full(t, "b: after compacting the session", c.call(t, "b", n), n)
	full(t, "no conversation: after compacting the session", c.call(t, "", n), n)
}

func proxyClient(t *testing.T) *client {
	h := connect(t, fakeUpstream(t), dedupOptions(), "generic-client")
	return &client{cs: h.cs, conn: h.conn, rows: "rows"}
}

func TestProxyCompaction(t *testing.T)    { compaction(t, proxyClient(t)) }
func TestProxyConversations(t *testing.T) { conversations(t, proxyClient(t)) }

// startGatewayWith serves a gateway over the fake upstream as server "a".
func startGatewayWith(t *testing.T, opts *Options) (*Gateway, *httptest.Server) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return serveGateway(t, []ServerSpec{{Name: "a", Command: exe, Env: []string{"TERSE_FAKE_UPSTREAM=1"}}}, opts)
}

func gatewaySession(t *testing.T, url string) *client {
	t.Helper()
	c := &client{conn: new(mcp.Connection), rows: "a__rows"}
	cl := mcp.NewClient(&mcp.Implementation{Name: "generic-client", Version: "1"}, nil)
	// A session-based protocol: these tests are about sessions (see
	// gateway_scale_test.go for the stateless 2026-07-28).
	cs, err := cl.Connect(context.Background(), connTap{&mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, c.conn},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect to gateway: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	c.cs = cs
	return c
}

func TestGatewayCompaction(t *testing.T) {
	_, srv := startGatewayWith(t, dedupOptions())
	compaction(t, gatewaySession(t, srv.URL))
}

func TestGatewayConversations(t *testing.T) {
	_, srv := startGatewayWith(t, dedupOptions())
	conversations(t, gatewaySession(t, srv.URL))
}

// TestGatewayCompactPOST sends the notification as a plain HTTP client
// would: one JSON-RPC message POSTed with the session header. It compacts
// only that session; a missing header or an unknown session is refused,
// and other messages mentioning the method pass to the MCP server.
func TestGatewayCompactPOST(t *testing.T) {
	_, srv := startGatewayWith(t, dedupOptions())
	c, other := gatewaySession(t, srv.URL), gatewaySession(t, srv.URL)
	post := func(session, body string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", c.cs.InitializeResult().ProtocolVersion)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	const n = 50
	id := full(t, "first call", c.call(t, "", n), n)
	otherID := full(t, "other session: first call", other.call(t, "", n), n)
	ref(t, "repeat", c.call(t, "", n), id)

	const note = `{"jsonrpc":"2.0","method":"notifications/terse/compact"}`
	for _, tt := range []struct {
		session string
		want    int
	}{
		{"", http.StatusBadRequest},
		{"no-such-session", http.StatusNotFound},
	} {
		if got := post(tt.session, note); got != tt.want {
			t.Errorf("POST %s with session %q = %d, want %d", CompactNotification, tt.session, got, tt.want)
		}
	}
	ref(t, "repeat after refused notifications", c.call(t, "", n), id)

	if got := post(c.cs.ID(), note); got != http.StatusAccepted {
		t.Fatalf("POST %s = %d, want %d", CompactNotification, got, http.StatusAccepted)
	}
	full(t, "repeat after the notification", c.call(t, "", n), n)
	ref(t, "other session after the notification", other.call(t, "", n), otherID)

	// A call whose arguments mention the method is still a call.
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "a__rows", Arguments: map[string]any{"n": 3, "note": CompactNotification}})
	if err != nil || res.IsError || !sameJSON(t, idLine.ReplaceAllString(textOf(t, res), ""), rowsText(3)) {
		t.Errorf("call mentioning %s: %v %v", CompactNotification, err, res)
	}
	// As a request (with an id) it is not ours to answer.
	if got := post(c.cs.ID(), `{"jsonrpc":"2.0","id":9,"method":"notifications/terse/compact"}`); got == http.StatusAccepted {
		t.Errorf("a request named %s was accepted as the notification", CompactNotification)
	}
	// A large body passes through whole.
	big := map[string]any{"n": 3, "pad": strings.Repeat("x", 3*compactPeek)}
	if res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "a__rows", Arguments: big}); err != nil || res.IsError {
		t.Errorf("call with a large body: %v %v", err, res)
	}
}

// TestGatewayCompactE2E: a real filesystem server behind the gateway; a
// repeated read is a ref until the client compacts, then comes back whole.
func TestGatewayCompactE2E(t *testing.T) {
	dir, files := copyCorpus(t, 1)
	if len(files) == 0 {
		t.Skip("no corpus file of a useful size")
	}
	bin := npmServer(t, "mcp-server-filesystem")
	_, srv := serveGateway(t, []ServerSpec{{Name: "fs", Command: bin, Args: []string{dir}}}, dedupOptions())
	c := gatewaySession(t, srv.URL)
	readE2E(t, c, "fs__read_text_file", files[0])
}

// TestProxyCompactE2E is TestGatewayCompactE2E through the stdio proxy.
func TestProxyCompactE2E(t *testing.T) {
	dir, files := copyCorpus(t, 1)
	if len(files) == 0 {
		t.Skip("no corpus file of a useful size")
	}
	h := connect(t, npmUpstream(t, "mcp-server-filesystem", nil, dir), dedupOptions(), "generic-client")
	readE2E(t, &client{cs: h.cs, conn: h.conn}, "read_text_file", files[0])
}

func readE2E(t *testing.T, c *client, tool, file string) {
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	read := func() string {
		t.Helper()
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"path": file}})
		if err != nil {
			t.Fatal(err)
		}
		return textOf(t, res)
	}
	whole := func(what, text string) string {
		t.Helper()
		m := idLine.FindStringSubmatch(text)
		if m == nil || !sameJSON(t, text[len(m[0]):], string(want)) {
			t.Fatalf("%s = %.80q, want the file after an id line", what, text)
		}
		return m[1]
	}
	id := whole("first read", read())
	ref(t, "repeated read", read(), id)
	notifyCompact(t, *c.conn, "")
	id = whole("read after "+CompactNotification, read())
	ref(t, "repeat of that", read(), id)
	c.compactTool(t, "")
	whole("read after "+CompactTool, read())
}

// TestGatewaySavingsMetrics: the Prometheus metrics split the tokens saved
// by source (filter, dedup, encoding, fit), and what a stage cost (an id
// line, a filter note) is counted apart, so saved minus cost per source
// equals the stats file's saved_by_source.
func TestGatewaySavingsMetrics(t *testing.T) {
	rule, err := filter.Compile(filter.Spec{Exclude: []string{"email"}})
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(func(o *terse.Options) { o.Format, o.Filter = "auto", rule })
	g, srv := startGatewayWith(t, opts)
	c := gatewaySession(t, srv.URL)
	c.call(t, "", 30)
	c.call(t, "", 30) // a ref: dedup
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "a__rows", Arguments: map[string]any{"n": 400, ParamBudget: 1000}})
	if err != nil || res.IsError {
		t.Fatalf("budgeted call: %v %v", err, res)
	}

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	metric := func(name, source string) float64 {
		m := regexp.MustCompile(`(?m)^` + name + `\{server="a",source="` + source + `",tool="rows"\} (\S+)$`).FindSubmatch(body)
		if m == nil {
			return 0
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	totals := g.Stats().Totals()
	for _, source := range []string{"filter", "dedup", "encoding", "fit"} {
		saved := metric("terse_gateway_tokens_saved_total", source)
		cost := metric("terse_gateway_tokens_cost_total", source)
		if saved <= 0 {
			t.Errorf("terse_gateway_tokens_saved_total{source=%q} = %v, want > 0", source, saved)
		}
		if got, want := saved-cost, float64(totals.Saved[source]); got != want {
			t.Errorf("%s: saved %v - cost %v = %v, want the stats' %v", source, saved, cost, got, want)
		}
	}
	if !bytes.Contains(body, []byte("terse_gateway_tokens_in_total")) {
		t.Error("/metrics lacks terse_gateway_tokens_in_total")
	}
}

// TestEngineCompactResets: compacting a session resets the partitions of
// the session and of each conversation it named; compacting one
// conversation resets only that one. Partition names are never reused.
func TestEngineCompactResets(t *testing.T) {
	var hooks resetLog
	e := newEngine(nil)
	e.resetHook = hooks.Reset
	seen := map[string]bool{}
	use := func(conv string) string {
		p := e.partition("s", conv)
		seen[p] = true
		return p
	}
	s0, a0, b0 := use(""), use("a"), use("b")
	e.compact("s", "a")
	if got := hooks.take(); !equalStrings(got, []string{a0}) {
		t.Errorf("compact(s, a) reset %q, want %q", got, a0)
	}
	if use("b") != b0 || use("") != s0 {
		t.Error("compacting conversation a moved another partition")
	}
	a1 := use("a")
	if a1 == a0 {
		t.Errorf("conversation a kept partition %q after compaction", a0)
	}
	e.compact("s", "")
	if got, want := hooks.take(), []string{s0, a1, b0}; !equalStrings(got, want) {
		t.Errorf("compact(s) reset %q, want %q", got, want)
	}
	n := len(seen)
	use("")
	use("a")
	use("b")
	if len(seen) != n+3 {
		t.Errorf("after compacting the session, partitions %v reuse names", seen)
	}
}

// resetLog records the partitions an engine resets.
type resetLog struct {
	rmu    sync.Mutex
	resets []string
}

func (r *resetLog) Reset(session string) {
	r.rmu.Lock()
	r.resets = append(r.resets, session)
	r.rmu.Unlock()
}

func (r *resetLog) take() []string {
	r.rmu.Lock()
	defer r.rmu.Unlock()
	out := r.resets
	r.resets = nil
	return out
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

// TestGatewayForgetsEndedSessions: when a client ends its session, the
// gateway drops that session's partitions and counters.
func TestGatewayForgetsEndedSessions(t *testing.T) {
	var hooks resetLog
	g, srv := startGatewayWith(t, testOptions())
	g.eng.resetHook = hooks.Reset
	c := gatewaySession(t, srv.URL)
	id := c.cs.ID()
	c.call(t, "x", 5)
	c.compactTool(t, "x")
	if st := engineState(g.eng, id); st == 0 {
		t.Fatalf("no state kept for session %s", id)
	}
	if err := c.cs.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); engineState(g.eng, id) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("session %s ended 5s ago; its state is still kept", id)
		}
	}
	if got := hooks.take(); !slices.Contains(got, id+"#x/0.1") || !slices.Contains(got, id+"/0") {
		t.Errorf("partitions reset when the session ended = %q, want %s/0 and %s#x/0.1 among them", got, id, id)
	}
}

// engineState counts the engine's entries for a session.
func engineState(e *engine, session string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	st, ok := e.sessions.Peek(session)
	if !ok {
		return 0
	}
	return 1 + len(st.convs)
}
