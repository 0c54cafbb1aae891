package mcpproxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func startGateway(t *testing.T) (*Gateway, *httptest.Server) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fake := func(name string) ServerSpec {
		return ServerSpec{Name: name, Command: exe, Env: []string{"TERSE_FAKE_UPSTREAM=1"}}
	}
	return serveGateway(t, []ServerSpec{fake("a"), fake("b")}, nil)
}

// serveGateway starts a gateway over specs and serves it over HTTP until
// the test ends.
func serveGateway(t *testing.T, specs []ServerSpec, opts *Options) (*Gateway, *httptest.Server) {
	t.Helper()
	g, err := NewGateway(specs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(func() { srv.Close(); g.Close() })
	return g, srv
}

func gatewayClient(t *testing.T, url, name string) (*mcp.ClientSession, chan *mcp.ProgressNotificationParams) {
	t.Helper()
	progress := make(chan *mcp.ProgressNotificationParams, 10)
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	// A session-based protocol: these tests are about sessions (see
	// gateway_scale_test.go for the stateless 2026-07-28).
	cs, err := c.Connect(context.Background(), wireTap{&mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, progress},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect to gateway: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, progress
}

func TestGateway(t *testing.T) {
	g, srv := startGateway(t)
	cs, progress := gatewayClient(t, srv.URL, "generic-client")
	ctx := context.Background()

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range lt.Tools {
		tools[tl.Name] = tl
	}
	for _, n := range []string{"a__rows", "b__rows", "a__slow"} {
		if tools[n] == nil {
			t.Fatalf("gateway tools/list lacks %s", n)
		}
	}
	if got := reservedIn(tools["b__rows"]); len(got) != 0 {
		t.Errorf("b__rows declares reserved params %v", got)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a__rows", Arguments: map[string]any{"n": 40}})
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); len(got) >= len(rowsText(40)) || !sameJSON(t, got, rowsText(40)) {
		t.Errorf("a__rows text is not the compact form: %.100s", got)
	}
	if res.StructuredContent == nil {
		t.Error("generic client lost structuredContent")
	}

	p := &mcp.CallToolParams{Name: "a__slow", Arguments: map[string]any{"n": 1}}
	p.SetProgressToken(1)
	if _, err := cs.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		select {
		case pr := <-progress:
			if pr.ProgressToken != float64(1) && pr.ProgressToken != 1 {
				t.Errorf("progress token = %v (%T), want the client's 1", pr.ProgressToken, pr.ProgressToken)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("progress %d of 3 missing", i)
		}
	}

	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "b__crash", Arguments: map[string]any{}}); err == nil {
		t.Error("b__crash: no error")
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "b__rows", Arguments: map[string]any{"n": 3}})
	if err != nil || !sameJSON(t, textOf(t, res), rowsText(3)) {
		t.Errorf("b__rows after b crashed: %v", err)
	}

	t.Run("claude-code", func(t *testing.T) {
		cc, _ := gatewayClient(t, srv.URL, "claude-code")
		lt, err := cc.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range lt.Tools {
			if tl.Name == "a__rows" && tl.OutputSchema != nil {
				t.Error("claude-code: a__rows keeps its outputSchema")
			}
		}
		res, err := cc.CallTool(ctx, &mcp.CallToolParams{Name: "a__rows", Arguments: map[string]any{"n": 40}})
		if err != nil {
			t.Fatal(err)
		}
		if res.StructuredContent != nil {
			t.Error("claude-code: structuredContent kept")
		}
		if !sameJSON(t, textOf(t, res), rowsText(40)) {
			t.Error("claude-code: text is not the result")
		}
	})

	get := func(path string) (int, string) {
		r, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	code, body := get("/healthz")
	var hz struct{ OK bool }
	if json.Unmarshal([]byte(body), &hz); code != 200 || !hz.OK {
		t.Errorf("/healthz = %d %s", code, body)
	}
	_, body = get("/metrics")
	for _, m := range []string{`terse_gateway_calls_total{outcome="transformed",server="a",tool="rows"}`, "terse_gateway_call_duration_seconds", "terse_gateway_tokens_saved_total", "terse_gateway_errors_total"} {
		if !strings.Contains(body, m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	if g.Stats().Totals().Transformed < 2 {
		t.Errorf("stats = %+v", g.Stats().Totals())
	}
}

// TestGatewayNPM aggregates a real stdio server from npm next to the fake.
func TestGatewayNPM(t *testing.T) {
	bin := npmServer(t, "mcp-server-memory")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, srv := serveGateway(t, []ServerSpec{
		{Name: "fake", Command: exe, Env: []string{"TERSE_FAKE_UPSTREAM=1"}},
		{Name: "mem", Command: bin, Env: []string{"MEMORY_FILE_PATH=" + t.TempDir() + "/m.jsonl"}},
	}, nil)
	cs, _ := gatewayClient(t, srv.URL, "claude-code")
	ctx := context.Background()
	var ents []map[string]any
	for i := range 15 {
		ents = append(ents, map[string]any{"name": "svc" + strings.Repeat("x", i), "entityType": "service", "observations": []string{"up"}})
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mem__create_entities", Arguments: map[string]any{"entities": ents}}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mem__read_graph", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StructuredContent != nil || !strings.Contains(textOf(t, res), "svcxxx") {
		t.Errorf("mem__read_graph for claude-code: structured %v, text %.100q", res.StructuredContent != nil, textOf(t, res))
	}
}

func TestStatsFile(t *testing.T) {
	var s Stats
	s.Add(CallRecord{Tool: "a", Outcome: "transformed", TokensBefore: 100, TokensAfter: 40, Saved: map[string]int{"encoding": 60}})
	s.Add(CallRecord{Tool: "a", Outcome: "skipped_error"})
	path := t.TempDir() + "/stats.json"
	if err := s.WriteFile(path, "o200k_base"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var got StatsTotals
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Calls != 2 || got.Transformed != 1 || got.Errors != 1 || got.TokensBefore != 100 || got.TokensAfter != 40 || got.Saved["encoding"] != 60 || got.Tokenizer != "o200k_base" {
		t.Errorf("stats file = %s", data)
	}
}
