package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/dedup/deduptest"
	"github.com/terse-dev/terse/store"
)

// replica is one gateway of a group that shares a chunk store, dedup
// partitions and compaction counters, as replicas on Redis do.
func replica(t *testing.T, st store.Store, dd dedup.Shared, gs GatewayState, tokens map[string]string) string {
	t.Helper()
	opts := testOptions(func(o *terse.Options) { o.Store = st })
	opts.Dedup.SetShared(SharedDedup(dd), nil)
	g, err := NewGateway(fakeSpecs(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if gs != nil {
		g.SetState(gs)
	}
	g.SetTokens(tokens)
	return serveStarted(t, g)
}

func fakeSpecs(t *testing.T) []ServerSpec {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []ServerSpec{{Name: "a", Command: exe, Env: []string{"TERSE_FAKE_UPSTREAM=1"}}}
}

func serveStarted(t *testing.T, g *Gateway) string {
	t.Helper()
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(func() { srv.Close(); g.Close() })
	return srv.URL
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connectAs opens a client of protocol version (the SDK's latest, the
// stateless 2026-07-28, when "") with a bearer token ("" for none).
func connectAs(t *testing.T, url, version, token string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "generic-client", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearer{token}}}
	var o *mcp.ClientSessionOptions
	if version != "" {
		o = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(context.Background(), tr, o)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func mustConnect(t *testing.T, url, version, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := connectAs(t, url, version, token)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

// callRows calls a__rows(n) in conversation conv with extra arguments.
func callRows(t *testing.T, cs *mcp.ClientSession, conv string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: "a__rows", Arguments: args}
	if conv != "" {
		p.Meta = mcp.Meta{MetaConversation: conv}
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("a__rows(%v): %v", args, err)
	}
	return res
}

// handleIn returns the first chunk handle of a result.
func handleIn(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	h := handleRE.FindString(textOf(t, res))
	if h == "" {
		t.Fatalf("no chunk handle in %.300q", textOf(t, res))
	}
	return h
}

// TestGatewayStatelessReplicas: a 2026-07-28 client is served without a
// session; one conversation whose calls go to two replicas gets a
// reference from the second to what the first showed, and fetches on the
// second a chunk the first issued. Another conversation gets neither.
func TestGatewayStatelessReplicas(t *testing.T) {
	st, dd, gs := &store.Mem{}, &deduptest.MemShared{}, &memState{}
	r1, r2 := replica(t, st, dd, gs, nil), replica(t, st, dd, gs, nil)
	c1, c2 := mustConnect(t, r1, "", ""), mustConnect(t, r2, "", "")
	if v := c1.InitializeResult().ProtocolVersion; v != protocolStateless {
		t.Fatalf("negotiated %q, want %s", v, protocolStateless)
	}
	if c1.ID() != "" {
		t.Fatalf("a stateless client got session %q", c1.ID())
	}
	lt, err := c2.ListTools(context.Background(), nil)
	if err != nil || !slices.ContainsFunc(lt.Tools, func(tl *mcp.Tool) bool { return tl.Name == "a__rows" }) {
		t.Fatalf("stateless tools/list: %v %v", lt, err)
	}
	first := textOf(t, callRows(t, c1, "conv1", map[string]any{"n": 30}))
	m := idLine.FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("first read has no id line: %.100q", first)
	}
	ref(t, "same conversation on the other replica", textOf(t, callRows(t, c2, "conv1", map[string]any{"n": 30})), m[1])
	if got := textOf(t, callRows(t, c2, "conv2", map[string]any{"n": 30})); strings.HasPrefix(got, "> [ref") {
		t.Fatalf("another conversation got a reference: %.100q", got)
	}
	// Without a conversation, nothing is referenced, nor recorded.
	ops := dd.Ops()
	if got := textOf(t, callRows(t, c1, "", map[string]any{"n": 30})); strings.HasPrefix(got, ">") {
		t.Fatalf("a stateless call without a conversation got an id line: %.100q", got)
	}
	if dd.Ops() != ops {
		t.Fatalf("a call without a conversation used the shared dedup store %d times", dd.Ops()-ops)
	}
	if got := textOf(t, callRows(t, c2, "", map[string]any{"n": 30})); strings.HasPrefix(got, "> [ref") {
		t.Fatalf("a stateless call without a conversation got a reference: %.100q", got)
	}

	h := handleIn(t, callRows(t, c1, "conv1", map[string]any{"n": 400, ParamBudget: 300}))
	res := callRows(t, c2, "conv1", map[string]any{ParamChunk: h + ".1"})
	if res.IsError {
		t.Fatalf("chunk issued on replica 1, fetched on replica 2: %s", textOf(t, res))
	}
	res = callRows(t, c2, "conv2", map[string]any{ParamChunk: h + ".1"})
	if !res.IsError || !strings.Contains(textOf(t, res), "belongs to another session") {
		t.Fatalf("chunk of conv1 fetched from conv2: %v %.200q", res.IsError, textOf(t, res))
	}

	// Compacting the conversation on one replica is seen by the other.
	if _, err := c2.CallTool(context.Background(), &mcp.CallToolParams{Name: CompactTool, Arguments: map[string]any{},
		Meta: mcp.Meta{MetaConversation: "conv1"}}); err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, callRows(t, c1, "conv1", map[string]any{"n": 30})); !idLine.MatchString(got) {
		t.Fatalf("after compaction on the other replica: %.100q, want the whole result", got)
	}
	// The notification does the same for a stateless client: it names the
	// conversation, and there is no session header.
	if got := textOf(t, callRows(t, c1, "conv9", map[string]any{"n": 30})); !idLine.MatchString(got) {
		t.Fatalf("conv9's first read: %.100q", got)
	}
	post := func(body string) int {
		req, _ := http.NewRequest(http.MethodPost, r1+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", protocolStateless)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(`{"jsonrpc":"2.0","method":"` + CompactNotification + `"}`); code != http.StatusBadRequest {
		t.Fatalf("stateless compaction without a conversation: HTTP %d, want 400", code)
	}
	if code := post(`{"jsonrpc":"2.0","method":"` + CompactNotification + `","params":{"_meta":{"` + MetaConversation + `":"conv9"}}}`); code != http.StatusAccepted {
		t.Fatalf("stateless compaction: HTTP %d, want 202", code)
	}
	if got := textOf(t, callRows(t, c2, "conv9", map[string]any{"n": 30})); !idLine.MatchString(got) {
		t.Fatalf("after %s of conv9: %.100q, want the whole result", CompactNotification, got)
	}
}

// TestGatewaySessionVersions: 2025-11-25 and 2025-06-18 clients keep
// their sessions next to stateless ones.
func TestGatewaySessionVersions(t *testing.T) {
	url := replica(t, &store.Mem{}, &deduptest.MemShared{}, nil, nil)
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		cs := mustConnect(t, url, v, "")
		if got := cs.InitializeResult().ProtocolVersion; got != v || cs.ID() == "" {
			t.Errorf("%s: negotiated %q, session %q", v, got, cs.ID())
		}
	}
}

// TestGatewayCrossSessionChunk: a chunk handle issued in one session is
// refused in another, with a clear error.
func TestGatewayCrossSessionChunk(t *testing.T) {
	url := replica(t, &store.Mem{}, &deduptest.MemShared{}, nil, nil)
	s1, s2 := mustConnect(t, url, "2025-11-25", ""), mustConnect(t, url, "2025-11-25", "")
	h := handleIn(t, callRows(t, s1, "", map[string]any{"n": 400, ParamBudget: 300}))
	if res := callRows(t, s1, "", map[string]any{ParamChunk: h + ".1"}); res.IsError {
		t.Fatalf("own chunk refused: %s", textOf(t, res))
	}
	res := callRows(t, s2, "", map[string]any{ParamChunk: h + ".1"})
	if !res.IsError || !strings.Contains(textOf(t, res), "belongs to another session") {
		t.Fatalf("chunk of session 1 fetched in session 2: %v %.200q", res.IsError, textOf(t, res))
	}
	// The same result in session 2 is session 2's to fetch too (its
	// handle may be the same: handles are minted from the content).
	h2 := handleIn(t, callRows(t, s2, "", map[string]any{"n": 400, ParamBudget: 300}))
	if res := callRows(t, s2, "", map[string]any{ParamChunk: h2 + ".1"}); res.IsError {
		t.Fatalf("session 2's own chunk refused: %s", textOf(t, res))
	}
	res = callRows(t, s2, "", map[string]any{ParamChunk: "c_0123456789abcdef.1"})
	if !res.IsError || strings.Contains(textOf(t, res), "belongs to another session") {
		t.Fatalf("unknown handle: %v %.200q", res.IsError, textOf(t, res))
	}
}

// TestGatewayTenants: with tokens, a request without a known token is
// refused (401); each token's tenant has its own dedup and chunks, even
// in a conversation of the same name.
func TestGatewayTenants(t *testing.T) {
	st, dd, gs := &store.Mem{}, &deduptest.MemShared{}, &memState{}
	tokens := map[string]string{"tok-a": "team-a", "tok-b": "team-b"}
	r1, r2 := replica(t, st, dd, gs, tokens), replica(t, st, dd, gs, tokens)
	for _, tok := range []string{"", "wrong"} {
		if _, err := connectAs(t, r1, "", tok); err == nil {
			t.Fatalf("token %q accepted", tok)
		}
		resp, err := http.Post(r1+"/mcp", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("no token: HTTP %d, want 401", resp.StatusCode)
		}
	}
	a, b := mustConnect(t, r1, "", "tok-a"), mustConnect(t, r2, "", "tok-b")
	a2 := mustConnect(t, r2, "2025-11-25", "tok-a")
	first := textOf(t, callRows(t, a, "shared-name", map[string]any{"n": 30}))
	if !idLine.MatchString(first) {
		t.Fatalf("first read: %.100q", first)
	}
	if got := textOf(t, callRows(t, b, "shared-name", map[string]any{"n": 30})); !idLine.MatchString(got) {
		t.Fatalf("the other tenant got %.100q, want the whole result", got)
	}
	h := handleIn(t, callRows(t, a, "shared-name", map[string]any{"n": 400, ParamBudget: 300}))
	if res := callRows(t, a, "shared-name", map[string]any{ParamChunk: h + ".1"}); res.IsError {
		t.Fatalf("own chunk on the other replica: %s", textOf(t, res))
	}
	for _, who := range []*mcp.ClientSession{b, a2} {
		res := callRows(t, who, "shared-name", map[string]any{ParamChunk: h + ".1"})
		if !res.IsError || !strings.Contains(textOf(t, res), "belongs to another session") {
			t.Fatalf("chunk of team-a fetched by another tenant or session: %.200q", textOf(t, res))
		}
	}
}

// downState is a GatewayState whose backend is unreachable.
type downState struct{}

var errStateDown = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

func (downState) Generations(context.Context, ...string) ([]int, error) { return nil, errStateDown }
func (downState) Advance(context.Context, string, int) error            { return errStateDown }
func (downState) Own(context.Context, string, ...string) error          { return errStateDown }
func (downState) Owns(context.Context, string, string) (bool, bool, error) {
	return false, false, errStateDown
}
func (downState) PutRecord(context.Context, string, string) error { return errStateDown }
func (downState) Record(context.Context, string) (string, bool, error) {
	return "", false, errStateDown
}
func (downState) DropRecord(context.Context, string) error { return errStateDown }

// downShared is a dedup.Shared whose backend is unreachable.
type downShared struct{}

func (downShared) Lookup(context.Context, dedup.Key, [16]byte) (string, bool, error) {
	return "", false, errStateDown
}
func (downShared) Add(context.Context, dedup.Key, dedup.SharedEntry, int) error { return errStateDown }
func (downShared) Entries(context.Context, dedup.Key) ([]dedup.SharedEntry, error) {
	return nil, errStateDown
}
func (downShared) Remove(context.Context, dedup.Key, ...string) error { return errStateDown }
func (downShared) Drop(context.Context, dedup.Key) error              { return errStateDown }

// TestGatewaySharedStateDown: with the shared state unreachable, calls
// succeed without references, chunk fetches say why they cannot be
// served, and /metrics counts it.
func TestGatewaySharedStateDown(t *testing.T) {
	opts := testOptions()
	g, err := NewGateway(fakeSpecs(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Dedup.SetShared(downShared{}, g.SharedError)
	g.SetState(downState{})
	url := serveStarted(t, g)
	c := mustConnect(t, url, "", "")
	for range 2 {
		if got := textOf(t, callRows(t, c, "conv", map[string]any{"n": 30})); strings.HasPrefix(got, ">") {
			t.Fatalf("with the state down: %.100q, want the result without id line or reference", got)
		}
	}
	// The owner check cannot answer: the engine does (here, an unknown
	// handle).
	res := callRows(t, c, "conv", map[string]any{ParamChunk: "c_0123456789abcdef.1"})
	if !res.IsError || strings.Contains(textOf(t, res), "belongs to another session") {
		t.Fatalf("chunk with the state down: %.200q", textOf(t, res))
	}
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"shared_state":"down"`) {
		t.Errorf("/healthz with the state down: HTTP %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"terse_gateway_shared_state_up 0", `terse_gateway_shared_state_errors_total{op="dedup"}`,
		`terse_gateway_shared_state_errors_total{op="owner"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestGatewayOwnsOnlyWhatItIssued: a handle the upstream's own bytes
// already carry (data quoting one, perhaps to claim another session's
// chunks) gives no ownership; one terse added does.
func TestGatewayOwnsOnlyWhatItIssued(t *testing.T) {
	g, err := NewGateway(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const minted, quoted = "c_1111111111111111", "c_2222222222222222"
	g.own(ctx, identity{who: Scope{Tenant: "t", Session: "s"}}, []byte(`{"text":"`+quoted+` ... _chunk \"`+minted+`.1\""}`), []byte(`{"text":"`+quoted+`"}`))
	if owns, _, _ := g.scale.state.Owns(ctx, minted, "t:s"); !owns {
		t.Error("the handle terse issued is not owned")
	}
	if owns, known, _ := g.scale.state.Owns(ctx, quoted, "t:s"); owns || known {
		t.Error("a handle quoted by the upstream was recorded")
	}
}

// roundRobin sends each request to the next of urls (a balancer without
// stickiness), with a bearer token when set.
type roundRobin struct {
	urls  []string
	token string
	n     atomic.Int64
	hosts []string // where each request went
	mu    sync.Mutex
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	u, _ := url.Parse(rr.urls[int(rr.n.Add(1))%len(rr.urls)])
	r.URL.Host, r.Host = u.Host, u.Host
	if rr.token != "" {
		r.Header.Set("Authorization", "Bearer "+rr.token)
	}
	rr.mu.Lock()
	rr.hosts = append(rr.hosts, u.Host)
	rr.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestGatewaySharedSessions: with shared state, a session-based client
// (2025-11-25, 2025-06-18) needs no stickiness: its session lives in the
// shared state, so requests alternating between two replicas are served
// as one session, dedup and chunk fetches included, with the client
// policy chosen from the name its initialize gave (here a budget) on
// both. Another session and another tenant cannot fetch its chunks; a
// deleted or unknown session is 404.
func TestGatewaySharedSessions(t *testing.T) {
	urls := budgetedReplicas(t, map[string]string{"tok-a": "team-a", "tok-b": "team-b"})
	open := func(name, version, token string) (*mcp.ClientSession, *roundRobin) {
		rr := &roundRobin{urls: urls, token: token}
		c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: urls[0] + "/mcp",
			HTTPClient: &http.Client{Transport: rr}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect %s %s: %v", name, version, err)
		}
		t.Cleanup(func() { cs.Close() })
		if cs.ID() == "" || cs.InitializeResult().ProtocolVersion != version {
			t.Fatalf("%s: session %q, version %q", version, cs.ID(), cs.InitializeResult().ProtocolVersion)
		}
		return cs, rr
	}
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		s1, rr := open("budgeted-client", v, "tok-a")
		first := textOf(t, callRows(t, s1, "", map[string]any{"n": 5}))
		m := idLine.FindStringSubmatch(first)
		if m == nil {
			t.Fatalf("%s: first read has no id line: %.100q", v, first)
		}
		for i := range 3 {
			ref(t, fmt.Sprintf("%s: repeat %d", v, i+1), textOf(t, callRows(t, s1, "", map[string]any{"n": 5})), m[1])
		}
		// The budget of the client's policy, on each replica: no _budget.
		var h string
		for i := range 2 {
			h = handleIn(t, callRows(t, s1, "", map[string]any{"n": 400 + i}))
		}
		for k := 1; k <= 2; k++ {
			if res := callRows(t, s1, "", map[string]any{ParamChunk: h + ".1"}); res.IsError {
				t.Fatalf("%s: own chunk %d: %s", v, k, textOf(t, res))
			}
		}
		rr.mu.Lock()
		hosts := map[string]bool{}
		for _, hst := range rr.hosts {
			hosts[hst] = true
		}
		rr.mu.Unlock()
		if len(hosts) != 2 {
			t.Fatalf("%s: the session's requests reached %d replica(s)", v, len(hosts))
		}
		// Another session of the tenant, and another tenant's.
		s2, _ := open("generic-client", v, "tok-a")
		s3, _ := open("generic-client", v, "tok-b")
		for _, other := range []*mcp.ClientSession{s2, s3} {
			res := callRows(t, other, "", map[string]any{ParamChunk: h + ".1"})
			if !res.IsError || !strings.Contains(textOf(t, res), "belongs to another session") {
				t.Fatalf("%s: chunk fetched by another session: %.200q", v, textOf(t, res))
			}
		}
		// The other client has no budget: its read is whole.
		if got := textOf(t, callRows(t, s2, "", map[string]any{"n": 400})); handleRE.MatchString(got) {
			t.Fatalf("%s: a client without a budget got a trimmed result", v)
		}
		// The session is its tenant's: team-b naming it is 404.
		if code := postSession(t, urls[1], "tok-b", s1.ID()); code != http.StatusNotFound {
			t.Fatalf("%s: another tenant's request in the session: HTTP %d, want 404", v, code)
		}
		if code := postSession(t, urls[1], "tok-a", "NOSUCHSESSION"); code != http.StatusNotFound {
			t.Fatalf("%s: unknown session: HTTP %d, want 404", v, code)
		}
		id := s1.ID()
		s1.Close() // DELETE, on whichever replica
		if code := postSession(t, urls[0], "tok-a", id); code != http.StatusNotFound {
			t.Fatalf("%s: request in a deleted session: HTTP %d, want 404", v, code)
		}
	}
}

// budgetedReplicas serves two gateway replicas sharing a store, dedup and
// state, where a client named "budgeted…" gets a 300-token budget, and
// returns their URLs. tokens, when not nil, name the tenants.
func budgetedReplicas(t *testing.T, tokens map[string]string) []string {
	t.Helper()
	st, dd, gs := &store.Mem{}, &deduptest.MemShared{}, &memState{}
	var urls []string
	for range 2 {
		opts := testOptions(func(o *terse.Options) { o.Store = st })
		opts.Dedup.SetShared(SharedDedup(dd), nil)
		opts.Clients = []ClientRule{{Match: "budgeted", Budget: 300}}
		g, err := NewGateway(fakeSpecs(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		g.SetState(gs)
		if tokens != nil {
			g.SetTokens(tokens)
		}
		urls = append(urls, serveStarted(t, g))
	}
	return urls
}

// postSession POSTs a tools/list in session sid and returns the status.
func postSession(t *testing.T, base, token, sid string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestGatewayConversationClient: a stateless request (2026-07-28) that
// carries no clientInfo gets the policy of the client an earlier request
// of its conversation named, on another replica.
func TestGatewayConversationClient(t *testing.T) {
	urls := budgetedReplicas(t, nil)
	c := mcp.NewClient(&mcp.Implementation{Name: "budgeted-client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: urls[0] + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	handleIn(t, callRows(t, cs, "conv-named", map[string]any{"n": 400}))
	// No clientInfo, on the other replica: in conv-named, the recorded
	// client's budget; in another conversation, none.
	nameless := func(conv string) string {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a__rows","arguments":{"n":401},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
			`"` + MetaConversation + `":"` + conv + `"}}}`
		req, _ := http.NewRequest(http.MethodPost, urls[1]+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", protocolStateless)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "a__rows")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d %s", resp.StatusCode, b)
		}
		return string(b)
	}
	if got := nameless("conv-named"); !handleRE.MatchString(got) {
		t.Fatalf("a nameless request in the conversation was not given its client's budget: %.300q", got)
	}
	if got := nameless("conv-other"); handleRE.MatchString(got) || !strings.Contains(got, "user400") {
		t.Fatalf("a nameless request in another conversation: %.300q, want the whole result", got)
	}
}

// TestGatewaySharedShapes: the structuredContent of a chunk reply
// follows the shape of the result its handle was minted from (here the
// filesystem server's read_text_file, {content: TEXT}), on a replica
// that did not mint it too: the shape is in the shared state.
func TestGatewaySharedShapes(t *testing.T) {
	bin := npmServer(t, "mcp-server-filesystem")
	dir := t.TempDir()
	line := filepath.Join(dir, "line.txt")
	os.WriteFile(line, []byte(longLine(20<<10)), 0o644)
	st, gs := &store.Mem{}, &memState{}
	var cs []*mcp.ClientSession
	for range 2 {
		g, err := NewGateway([]ServerSpec{{Name: "fs", Command: bin, Args: []string{dir}}}, chunkOptions(st))
		if err != nil {
			t.Fatal(err)
		}
		g.SetState(gs)
		cs = append(cs, mustConnect(t, serveStarted(t, g), "", ""))
	}
	call := func(c *mcp.ClientSession, args map[string]any) *mcp.CallToolResult {
		res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs__read_text_file", Arguments: args,
			Meta: mcp.Meta{MetaConversation: "conv-shape"}})
		if err != nil || res.IsError {
			t.Fatalf("read_text_file %v: %v %v", args, err, res)
		}
		return res
	}
	h := handleIn(t, call(cs[0], map[string]any{"path": line, ParamBudget: 200}))
	for i, c := range cs {
		res := call(c, map[string]any{ParamChunk: h + ".1", ParamBudget: 20000})
		sc, ok := res.StructuredContent.(map[string]any)
		if !ok || sc["content"] != textOf(t, res) {
			t.Fatalf("replica %d: chunk reply's structuredContent %.200v, want {content: its text}", i+1, res.StructuredContent)
		}
	}
}

// FuzzInitializeOf: the body of a POST without a session opens one only
// when it is an initialize request, and never panics the gateway.
func FuzzInitializeOf(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"claude-code","version":"1"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"initialize"}}`))
	f.Add([]byte(`[{"method":"initialize"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rec, ok := initializeOf(body)
		if !ok {
			return
		}
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &m) != nil || m.Method != "initialize" {
			t.Fatalf("%q opened a session (%+v)", body, rec)
		}
	})
}
