package mcpproxy

// Requests with every optional field absent, panics at the request
// boundaries, and state that must not outlive what it describes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/dedup/deduptest"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/store/redisstore"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// rawClient speaks Streamable HTTP to a gateway with the exact bytes a
// client sends, one POST per message.
type rawClient struct {
	t       testing.TB
	url     string
	version string // MCP-Protocol-Version after initialize
	session string
}

// post sends one message and returns the HTTP status and the JSON-RPC
// messages of the answer (JSON or SSE).
func (c *rawClient) post(body string) (int, []tree.Value) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url+"/mcp", strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	if c.version >= protocolStateless {
		// Headers of the stateless protocol, from the message.
		v, _ := tree.ParseString(body)
		m, _ := v.Get("method")
		setHeader(req, "Mcp-Method", m.Str())
		params, _ := v.Get("params")
		if name, ok := params.Get("name"); ok {
			setHeader(req, "Mcp-Name", name.Str())
		}
	}
	if c.session != "" {
		req.Header.Set(sessionHeader, c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get(sessionHeader); sid != "" {
		c.session = sid
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("POST %s: reading the answer: %v", body, err)
	}
	var msgs []tree.Value
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if v, err := tree.ParseString(d); err == nil {
					msgs = append(msgs, v)
				}
			}
		}
	} else if v, err := tree.Parse(bytes.TrimSpace(data)); err == nil && len(bytes.TrimSpace(data)) > 0 {
		msgs = append(msgs, v)
	}
	return resp.StatusCode, msgs
}

// setHeader sets a header a client would send, unless its value cannot
// be one (a control character): such a request goes without it.
func setHeader(req *http.Request, k, v string) {
	if !strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		req.Header.Set(k, v)
	}
}

// answered reports whether msgs hold a response (result or error).
func answered(msgs []tree.Value) (result, errored bool) {
	for _, m := range msgs {
		result = result || m.Has("result")
		errored = errored || m.Has("error")
	}
	return
}

// Exactly what the official TypeScript SDK sends: the request object,
// then jsonrpc and id; listTools() with no argument has no params at all.
const (
	tsInitialize  = `{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.0.0"}},"jsonrpc":"2.0","id":0}`
	tsInitialized = `{"method":"notifications/initialized","jsonrpc":"2.0"}`
	tsListTools   = `{"method":"tools/list","jsonrpc":"2.0","id":1}`
)

// absentFields are requests with every optional field absent (or null),
// each of which must be answered: a result, or an error for the request.
var absentFields = []string{
	tsListTools,
	`{"method":"tools/list","params":null,"jsonrpc":"2.0","id":2}`,
	`{"method":"tools/list","params":{},"jsonrpc":"2.0","id":3}`,
	`{"method":"tools/list","params":{"_meta":null},"jsonrpc":"2.0","id":4}`,
	`{"method":"ping","jsonrpc":"2.0","id":5}`,
	`{"method":"tools/call","params":{"name":"a__rows"},"jsonrpc":"2.0","id":6}`,
	`{"method":"tools/call","params":{"name":"a__rows","arguments":null,"_meta":null},"jsonrpc":"2.0","id":7}`,
	`{"method":"tools/call","params":{"name":"terse_compact"},"jsonrpc":"2.0","id":8}`,
	`{"method":"tools/call","jsonrpc":"2.0","id":9}`,
	`{"method":"tools/call","params":null,"jsonrpc":"2.0","id":10}`,
	`{"method":"tools/call","params":{},"jsonrpc":"2.0","id":11}`,
	`{"method":"tools/call","params":{"name":"a__rows","arguments":{"_chunk":null,"_budget":null,"_output_mode":null}},"jsonrpc":"2.0","id":12}`,
	`{"method":"resources/list","jsonrpc":"2.0","id":13}`,
	`{"method":"prompts/list","jsonrpc":"2.0","id":14}`,
	`{"method":"resources/templates/list","jsonrpc":"2.0","id":15}`,
	`{"method":"completion/complete","jsonrpc":"2.0","id":16}`,
	`{"method":"logging/setLevel","jsonrpc":"2.0","id":17}`,
	`{"method":"notifications/cancelled","jsonrpc":"2.0"}`,
	`{"method":"notifications/progress","jsonrpc":"2.0"}`,
	`{"method":"notifications/roots/list_changed","jsonrpc":"2.0"}`,
	`{"method":"` + CompactNotification + `","jsonrpc":"2.0"}`,
	tsListTools,
}

// TestN1ToolsListWithoutParams: a tools/list without params, exactly as
// the TypeScript SDK's listTools() sends it, and every other request with
// its optional fields absent, is answered by a gateway with shared state
// (Redis when TERSE_REDIS_URL names one, and in memory), with sessions
// held in the process, and statelessly; the gateway serves on afterwards
// and no request reached a recovered panic.
func TestN1ToolsListWithoutParams(t *testing.T) {
	type setup struct {
		name    string
		state   func(t *testing.T) (store.Store, dedup.Shared, GatewayState)
		version string // of a stateless client; "" for a session
	}
	setups := []setup{
		{name: "session", state: func(*testing.T) (store.Store, dedup.Shared, GatewayState) { return &store.Mem{}, nil, nil }},
		{name: "stateless", version: protocolStateless, state: func(*testing.T) (store.Store, dedup.Shared, GatewayState) {
			return &store.Mem{}, nil, nil
		}},
		{name: "shared-memory", state: func(*testing.T) (store.Store, dedup.Shared, GatewayState) {
			return &store.Mem{}, &deduptest.MemShared{}, &memState{}
		}},
	}
	if u := os.Getenv("TERSE_REDIS_URL"); u != "" {
		setups = append(setups, setup{name: "redis", state: func(t *testing.T) (store.Store, dedup.Shared, GatewayState) {
			st, err := redisstore.New(u, 0)
			if err != nil {
				t.Fatal(err)
			}
			gs, err := redisstore.NewState(u, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close(); gs.Close() })
			return st, gs, gs
		}})
	} else {
		t.Log("TERSE_REDIS_URL is not set: the Redis case is skipped")
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			st, dd, gs := s.state(t)
			opts := testOptions(func(o *terse.Options) { o.Store = st })
			if dd != nil {
				opts.Dedup.SetShared(SharedDedup(dd), nil)
			}
			g, err := NewGateway(fakeSpecs(t), opts)
			if err != nil {
				t.Fatal(err)
			}
			if gs != nil {
				g.SetState(gs)
			}
			c := &rawClient{t: t, url: serveStarted(t, g)}
			if s.version == "" {
				if code, msgs := c.post(tsInitialize); code != http.StatusOK || len(msgs) != 1 {
					t.Fatalf("initialize: HTTP %d, %d messages", code, len(msgs))
				}
				c.version = "2025-11-25"
				c.post(tsInitialized)
			} else {
				c.version = s.version
			}
			for _, body := range absentFields {
				code, msgs := c.post(body)
				v, _ := tree.ParseString(body)
				id, hasID := v.Get("id")
				res, errd := answered(msgs)
				switch {
				case !hasID && code >= 500:
					t.Errorf("%s: HTTP %d", body, code)
				case hasID && !res && !errd && code < 400:
					t.Errorf("%s: HTTP %d without an answer for id %s", body, code, tree.AppendJSON(nil, id))
				}
			}
			last := tsListTools
			if s.version != "" {
				last = `{"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + s.version + `","io.modelcontextprotocol/clientCapabilities":{}}},"jsonrpc":"2.0","id":99}`
			}
			code, msgs := c.post(last)
			if res, _ := answered(msgs); code != http.StatusOK || !res {
				t.Fatalf("the gateway stopped serving: HTTP %d, %v", code, msgs)
			}
			if n := g.Stats().Totals().Panics; n != 0 {
				t.Fatalf("%d request(s) reached a recovered panic", n)
			}
		})
	}
}

// boom is a one-shot panic for engine.stageHook: the next time stage
// where starts, it panics.
type boom struct{ where atomic.Value }

func (b *boom) arm(stage string) { b.where.Store(stage) }

func (b *boom) hook(stage string) {
	if w, _ := b.where.Load().(string); w == stage && b.where.CompareAndSwap(w, "") {
		panic("injected at " + stage)
	}
}

// TestPanicRecovered: a panic at a request boundary of the proxy and of
// the gateway (injected where a call's reserved parameters are read,
// where its result is transformed, where a catalogue is rewritten) is
// recovered: the call gets the upstream's original result when there is
// one, else an error; the process serves the next call; the panic is
// logged with its stack and counted in the stats (and the gateway's
// terse_gateway_panics_total).
func TestPanicRecovered(t *testing.T) {
	want := rowsText(40) // the fake upstream's text of rows(40)
	for _, name := range []string{"proxy", "gateway"} {
		t.Run(name, func(t *testing.T) {
			var logs syncBuffer
			opts := testOptions()
			opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			var b boom
			var cs *mcp.ClientSession
			var stats *Stats
			tool := "rows"
			metrics := func() string { return "" }
			if name == "proxy" {
				h := connect(t, fakeUpstream(t), opts, "generic-client")
				h.p.eng.stageHook = b.hook
				cs, stats = h.cs, h.p.Stats()
			} else {
				g, err := NewGateway(fakeSpecs(t), opts)
				if err != nil {
					t.Fatal(err)
				}
				g.eng.stageHook = b.hook
				url := serveStarted(t, g)
				cs, stats, tool = mustConnect(t, url, "2025-11-25", ""), g.Stats(), "a__rows"
				metrics = func() string {
					resp, err := http.Get(url + "/metrics")
					if err != nil {
						t.Fatal(err)
					}
					defer resp.Body.Close()
					data, _ := io.ReadAll(resp.Body)
					return string(data)
				}
			}
			ctx := context.Background()
			call := func() (*mcp.CallToolResult, error) {
				return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"n": 40}})
			}
			// Transforming the result: the original result.
			b.arm("finish")
			res, err := call()
			if err != nil || res.IsError || textOf(t, res) != want || res.StructuredContent == nil {
				t.Fatalf("panic in the transform: err %v, result %.200q; want the upstream's result", err, textOf(t, res))
			}
			// Reading the reserved parameters: an error for the call.
			b.arm("begin")
			if res, err := call(); err == nil && !res.IsError {
				t.Fatalf("panic before forwarding: got a result %.100q, want an error", textOf(t, res))
			}
			// Rewriting the catalogue: the proxy relays the upstream's,
			// the gateway answers with an error; either way the next
			// tools/list is whole.
			b.arm("list")
			if lt, err := cs.ListTools(ctx, nil); err == nil && len(lt.Tools) == 0 {
				t.Fatal("panic in tools/list: an empty catalogue")
			}
			lt, err := cs.ListTools(ctx, nil)
			if err != nil || len(lt.Tools) < 5 {
				t.Fatalf("tools/list after the panics: %v", err)
			}
			res, err = call()
			if err != nil || res.IsError || len(textOf(t, res)) >= len(want) {
				t.Fatalf("a call after the panics: err %v, %d bytes (want fewer than %d)", err, len(textOf(t, res)), len(want))
			}
			if n := stats.Totals().Panics; n != 3 {
				t.Errorf("Panics = %d, want 3", n)
			}
			l := logs.String()
			for _, s := range []string{"recovered from a panic", "injected at finish", "injected at begin", "injected at list", "goroutine "} {
				if !strings.Contains(l, s) {
					t.Errorf("the log lacks %q", s)
				}
			}
			if name == "gateway" {
				m := metrics()
				for _, s := range []string{`terse_gateway_panics_total{where="call"} 1`, `terse_gateway_panics_total{where="method"} 2`} {
					if !strings.Contains(m, s) {
						t.Errorf("/metrics lacks %s", s)
					}
				}
			}
		})
	}
}

// switchState is a GatewayState that can be taken down and brought back.
type switchState struct {
	GatewayState
	down atomic.Bool
}

func (s *switchState) err() error {
	if s.down.Load() {
		return errStateDown
	}
	return nil
}

func (s *switchState) Generations(ctx context.Context, scopes ...string) ([]int, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	return s.GatewayState.Generations(ctx, scopes...)
}

func (s *switchState) Advance(ctx context.Context, scope string, seen int) error {
	if err := s.err(); err != nil {
		return err
	}
	return s.GatewayState.Advance(ctx, scope, seen)
}

func (s *switchState) Own(ctx context.Context, owner string, handles ...string) error {
	if err := s.err(); err != nil {
		return err
	}
	return s.GatewayState.Own(ctx, owner, handles...)
}

func (s *switchState) Owns(ctx context.Context, h, owner string) (bool, bool, error) {
	if err := s.err(); err != nil {
		return false, false, err
	}
	return s.GatewayState.Owns(ctx, h, owner)
}

func (s *switchState) PutRecord(ctx context.Context, k, v string) error {
	if err := s.err(); err != nil {
		return err
	}
	return s.GatewayState.PutRecord(ctx, k, v)
}

func (s *switchState) Record(ctx context.Context, k string) (string, bool, error) {
	if err := s.err(); err != nil {
		return "", false, err
	}
	return s.GatewayState.Record(ctx, k)
}

func (s *switchState) DropRecord(ctx context.Context, k string) error {
	if err := s.err(); err != nil {
		return err
	}
	return s.GatewayState.DropRecord(ctx, k)
}

// TestN4SessionPolicyStateDown: with the shared state (Redis) down, a
// session keeps its client's policy on the replica that serves it: a
// budgeted client's large read is still fitted to its budget, whether the
// state went down during the session or was down when it opened; and a
// session opened while it was down is known to the shared state once it
// is back.
func TestN4SessionPolicyStateDown(t *testing.T) {
	gs := &switchState{GatewayState: &memState{}}
	opts := testOptions()
	opts.Clients = []ClientRule{{Match: "budgeted", Budget: 300}}
	g, err := NewGateway(fakeSpecs(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	g.SetState(gs)
	url := serveStarted(t, g)
	open := func() *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "budgeted-client", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp"},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	whole := len(rowsText(400))
	fitted := func(what string, cs *mcp.ClientSession) {
		t.Helper()
		got := textOf(t, callRows(t, cs, "", map[string]any{"n": 400}))
		if len(got) >= whole/4 || !handleRE.MatchString(got) {
			t.Fatalf("%s: %d bytes of %d, want the result fitted to the client's budget", what, len(got), whole)
		}
	}
	s1 := open()
	fitted("state up", s1)
	gs.down.Store(true)
	fitted("state down during the session", s1)
	s2 := open()
	if s2.ID() == "" {
		t.Fatal("a session opened with the state down has no id")
	}
	fitted("session opened with the state down", s2)
	gs.down.Store(false)
	fitted("state back", s2)
	if _, ok, _ := gs.Record(context.Background(), sessionKey("", s2.ID())); !ok {
		t.Error("the session opened with the state down is not in the shared state once it is back")
	}
}

// scriptServer is an upstream in memory that answers initialize, a
// tools/list of one tool ("read") and every tools/call with result, the
// raw JSON of a result as bytes: what a server that does not check its
// output's encoding sends.
type scriptServer struct{ result []byte }

func (s *scriptServer) String() string { return "script" }
func (s *scriptServer) Dial(ctx context.Context) (Conn, error) {
	return &memConn{s: &memServer{}, out: make(chan []byte, 64), done: make(chan struct{}), answer: s.answer}, nil
}

func (s *scriptServer) answer(msg []byte) []byte {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.ID == nil {
		return nil
	}
	var res []byte
	switch m.Method {
	case "initialize":
		res = []byte(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"script","version":"1"}}`)
	case "tools/list":
		res = []byte(`{"tools":[{"name":"read","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		res = s.result
	default:
		res = []byte(`{}`)
	}
	return slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), m.ID, []byte(`,"result":`), res, []byte(`}`))
}

// TestN7InvalidUTF8 : a result with one byte that is not UTF-8 (a Latin-1
// é in a text, and in a string of a JSON text the pipeline compacts)
// reaches the client through the proxy and the gateway as a direct
// client reads it, with U+FFFD in its place, instead of failing the call.
func TestN7InvalidUTF8(t *testing.T) {
	pretty, _ := json.MarshalIndent(map[string]any{"rows": rows(30)}, "", "  ")
	bad := bytes.Replace(pretty, []byte("user7@example.com"), []byte("user7@exampl\xe9.com"), 1)
	for _, tc := range []struct {
		name string
		text []byte
	}{
		{"short text", []byte("caf\xe9 ok")},
		{"json", bad},
	} {
		raw := slices.Concat([]byte(`{"content":[{"type":"text","text":`), jsonQuoteRaw(tc.text), []byte(`}]}`))
		want := strings.ToValidUTF8(string(tc.text), "\uFFFD") // one byte: one U+FFFD, as decoders read it
		up := &scriptServer{result: raw}
		h := connect(t, up, testOptions(), "generic-client")
		_, srv := serveGateway(t, []ServerSpec{{Name: "s", upstream: up}}, testOptions())
		gw, _ := gatewayClient(t, srv.URL, "generic-client")
		for _, f := range []struct {
			name string
			cs   *mcp.ClientSession
			tool string
		}{{"proxy", h.cs, "read"}, {"gateway", gw, "s__read"}} {
			res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: f.tool, Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("%s, %s: the call failed: %v %v", tc.name, f.name, err, res)
			}
			got := textOf(t, res)
			if !strings.Contains(got, "\uFFFD") || !utf8.ValidString(got) {
				t.Fatalf("%s, %s: %.200q, want U+FFFD where the byte was", tc.name, f.name, got)
			}
			if len(tc.text) < 100 && got != want {
				t.Fatalf("%s, %s: %q, want %q as a direct client reads it", tc.name, f.name, got, want)
			}
			if len(tc.text) >= 100 && !strings.Contains(got, "exampl\uFFFD.com") {
				t.Fatalf("%s, %s: the value with the byte is not there as read directly: %.300q", tc.name, f.name, got)
			}
		}
	}
}

// jsonQuoteRaw quotes b as a JSON string, leaving bytes that are not
// UTF-8 as they are (as a careless server writes them).
func jsonQuoteRaw(b []byte) []byte {
	out := []byte{'"'}
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\n':
			out = append(out, '\\', 'n')
		case c < 0x20:
			out = append(out, fmt.Sprintf("\\u%04x", c)...)
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

// TestN8ChunksSharedAcrossSessions: a file read in 30 sessions through
// the gateway is stored once (content-addressed, store.Shared) while each
// session's handle stays its own: another session's handle is refused.
// Under a store bound smaller than the file, the handle reads as expired,
// a terminal answer that says to re-run the call, the same on every try.
func TestN8ChunksSharedAcrossSessions(t *testing.T) {
	const size = 512 << 10
	mem := &store.Mem{}
	_, url, _ := budgetedGateway(t, &store.Shared{Store: mem}, 2000)
	open := func() *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "budgeted-client", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp"},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	read := func(cs *mcp.ClientSession, args map[string]any) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "a__file", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return textOf(t, res)
	}
	var handles []string
	var sessions []*mcp.ClientSession
	for range 30 {
		cs := open()
		h := handleRE.FindString(read(cs, map[string]any{"n": size}))
		if h == "" {
			t.Fatal("the file was not fitted")
		}
		handles, sessions = append(handles, h), append(sessions, cs)
	}
	if n := mem.Bytes(); n > 2*size {
		t.Fatalf("30 sessions reading one %d KB file: the store holds %d KB", size>>10, n>>10)
	}
	t.Logf("30 sessions reading one %d KB file: the store holds %d KB", size>>10, mem.Bytes()>>10)
	if got := read(sessions[1], map[string]any{ParamChunk: handles[1] + ".1"}); strings.Contains(got, "unknown or expired") || strings.Contains(got, "another session") {
		t.Fatalf("own chunk: %.200q", got)
	}
	if got := read(sessions[1], map[string]any{ParamChunk: handles[0] + ".1"}); !strings.Contains(got, "belongs to another session") {
		t.Fatalf("another session's handle: %.200q, want a refusal", got)
	}

	// A bound smaller than the file: the payload is not kept.
	_, url2, _ := budgetedGateway(t, &store.Shared{Store: &store.Mem{MaxBytes: size / 2}}, 2000)
	url = url2
	cs := open()
	h := handleRE.FindString(read(cs, map[string]any{"n": size}))
	for try := range 2 {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "a__file", Arguments: map[string]any{ParamChunk: h + ".2"}})
		if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "re-run the original call") {
			t.Fatalf("try %d: an evicted handle: %v %.200q, want a terminal error saying to re-run the call", try+1, err, textOf(t, res))
		}
	}
}

// codexView is what Codex shows its model of a result: the JSON of
// structuredContent when it is there and not null, else the texts of the
// content (codex-rs/protocol/src/models.rs, From<&CallToolResult> for
// FunctionCallOutputPayload).
func codexView(t testing.TB, res *mcp.CallToolResult) string {
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return textOf(t, res)
}

// TestCodexClientSaves: a Codex-like client (clientInfo
// "codex-mcp-client", which shows its model structuredContent) through
// the proxy and the gateway reads no more tokens than directly (far fewer with a
// _budget), and the stats report exactly what its model was shown: tokens
// before as it reads structuredContent directly, after as it reads the
// result through terse.
func TestCodexClientSaves(t *testing.T) {
	dc := direct(t, fakeUpstream(t))
	counter := tokens.Estimate() // testOptions' tokenizer
	recs := make(chan CallRecord, 8)
	mk := func() *Options {
		opts := testOptions()
		opts.Stats = &Stats{OnCall: func(r CallRecord) { recs <- r }}
		return opts
	}
	h := connect(t, fakeUpstream(t), mk(), "codex-mcp-client")
	h.tools(t)
	_, srv := serveGateway(t, fakeSpecs(t), mk())
	gw, _ := gatewayClient(t, srv.URL, "codex-mcp-client")
	for _, f := range []struct {
		name, prefix string
		cs           *mcp.ClientSession
	}{{"proxy", "", h.cs}, {"gateway", "a__", gw}} {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"rows", map[string]any{"n": 300}},
			{"items", map[string]any{"n": 40, "big": 3}},
			{"rows", map[string]any{"n": 300, ParamBudget: 2000}},
		} {
			plain := map[string]any{}
			for k, v := range c.args {
				if k != ParamBudget {
					plain[k] = v
				}
			}
			dres, err := dc.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: plain})
			if err != nil {
				t.Fatal(err)
			}
			res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: f.prefix + c.tool, Arguments: c.args})
			if err != nil || res.IsError {
				t.Fatalf("%s %s: %v %v", f.name, c.tool, err, res)
			}
			dv, tv := codexView(t, dres), codexView(t, res)
			dn, tn := counter.Count(dv), counter.Count(tv)
			rec := <-recs // recorded once the result was written
			t.Logf("%s, %s %v: the model reads %d tokens directly, %d through terse; stats %d -> %d", f.name, c.tool, c.args, dn, tn,
				rec.TokensBefore, rec.TokensAfter)
			if tn > dn {
				t.Errorf("%s, %s %v: %d tokens through terse, %d directly", f.name, c.tool, c.args, tn, dn)
			}
			if got := rec.TokensBefore; got != dn {
				t.Errorf("%s, %s %v: stats say %d tokens before, the model would have read %d", f.name, c.tool, c.args, got, dn)
			}
			if got := rec.TokensAfter; got != tn {
				t.Errorf("%s, %s %v: stats say %d tokens after, the model read %d", f.name, c.tool, c.args, got, tn)
			}
		}
	}
}
