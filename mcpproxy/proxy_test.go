package mcpproxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// harness is a Proxy serving a go-sdk client over in-memory pipes.
type harness struct {
	p        *Proxy
	cs       *mcp.ClientSession
	progress chan *mcp.ProgressNotificationParams
	conn     *mcp.Connection // the client's connection, for raw notifications
}

// connect starts a proxy in front of up and connects a go-sdk client named
// client to it.
func connect(t testing.TB, up Upstream, opts *Options, client string) *harness {
	t.Helper()
	if opts == nil {
		opts = testOptions()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cr, pw := io.Pipe()
	pr, cw := io.Pipe()
	h := &harness{p: NewProxy(up, opts), progress: make(chan *mcp.ProgressNotificationParams, 100), conn: new(mcp.Connection)}
	done := make(chan error, 1)
	go func() {
		done <- h.p.Serve(ctx, pr, pw)
		pw.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1.0"}, nil)
	cs, err := c.Connect(ctx, connTap{wireTap{&mcp.IOTransport{Reader: cr, Writer: cw}, h.progress}, h.conn}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect through proxy: %v", err)
	}
	h.cs = cs
	t.Cleanup(func() {
		cs.Close()
		cw.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve = %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after the client closed")
		}
		cancel()
	})
	return h
}

// wireTap records progress notifications as they come off the wire: the
// SDK client hands a response to its caller before it runs the
// notification handlers queued ahead of it, so only the wire shows order.
type wireTap struct {
	mcp.Transport
	progress chan *mcp.ProgressNotificationParams
}

func (t wireTap) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return wireTapConn{c, t.progress}, nil
}

type wireTapConn struct {
	mcp.Connection
	progress chan *mcp.ProgressNotificationParams
}

func (c wireTapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && r.Method == "notifications/progress" {
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(r.Params, &p) == nil {
			c.progress <- &p
		}
	}
	return m, err
}

func (h *harness) call(t testing.TB, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s, %v): %v", name, args, err)
	}
	return res
}

func (h *harness) tools(t testing.TB) map[string]*mcp.Tool {
	t.Helper()
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	m := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		m[tl.Name] = tl
	}
	return m
}

func textOf(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// sameJSON reports whether two texts are JSON with equal trees.
func sameJSON(t testing.TB, a, b string) bool {
	t.Helper()
	a = stripIDLine(a)
	va, err := tree.ParseString(a)
	if err != nil {
		t.Fatalf("not JSON: %v: %.200s", err, a)
	}
	vb, err := tree.ParseString(b)
	if err != nil {
		t.Fatalf("not JSON: %v: %.200s", err, b)
	}
	return tree.Equal(va, vb)
}

// stripIDLine removes the dedup stage's leading "> [id: ...]" line.
func stripIDLine(s string) string {
	if strings.HasPrefix(s, "> [id: ") {
		if _, rest, ok := strings.Cut(s, "\n"); ok {
			return rest
		}
	}
	return s
}

func reservedIn(tl *mcp.Tool) []string {
	b, _ := json.Marshal(tl.InputSchema)
	var s struct{ Properties map[string]json.RawMessage }
	json.Unmarshal(b, &s)
	var got []string
	for _, k := range []string{ParamOutputMode, ParamBudget, ParamChunk} {
		if _, ok := s.Properties[k]; ok {
			got = append(got, k)
		}
	}
	return got
}

// toolsTokens counts a tools/list answer (the tools array as JSON) in
// o200k_base tokens: what the model is sent on every turn.
func toolsTokens(t testing.TB, cs *mcp.ClientSession) (int, map[string]*mcp.Tool) {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	b, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		m[tl.Name] = tl
	}
	return tokens.O200kBase().Count(string(b)), m
}

// TestToolsListReserved: the catalogue through terse costs no more tokens
// than direct; the reserved parameters are declared on no tool, yet work
// on every one.
func TestToolsListReserved(t *testing.T) {
	h := connect(t, fakeUpstream(t), nil, "generic-client")
	got, tools := toolsTokens(t, h.cs)
	want, _ := toolsTokens(t, directFake(t))
	if got > want {
		t.Errorf("tools/list through terse = %d tokens, direct %d", got, want)
	}
	for _, name := range []string{"rows", "slow", "crash", "fail", "write_note"} {
		tl := tools[name]
		if tl == nil {
			t.Fatalf("tool %s missing from tools/list", name)
		}
		if got := reservedIn(tl); len(got) > 0 {
			t.Errorf("%s declares reserved params %v", name, got)
		}
	}
	if tools["rows"].OutputSchema == nil {
		t.Error("generic client: rows lost its outputSchema")
	}
	if n := tokens.Estimate().Count(textOf(t, h.call(t, "rows", map[string]any{"n": 400, ParamBudget: 500}))); n > 500 {
		t.Errorf("undeclared _budget 500: result is %d tokens", n)
	}
	if tc := h.p.o.Stats.Totals(); tc.CatalogTokensBefore == 0 || tc.CatalogTokensAfter > tc.CatalogTokensBefore {
		t.Errorf("stats catalogue tokens before %d after %d", tc.CatalogTokensBefore, tc.CatalogTokensAfter)
	}
}

// TestToolsListCatalogues: for each catalogue of the corpus, the
// rewritten catalogue is never more tokens than the original, for either
// client policy, and its tools keep their names, descriptions and
// parameters.
func TestToolsListCatalogues(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpus.Dir(t, "corpus"), "mcp", "*tools-list*.json"))
	if len(files) != 6 {
		t.Fatalf("want the six catalogues of corpus/mcp, found %d", len(files))
	}
	o := (&Options{}).withDefaults()
	c := tokens.O200kBase()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, pol := range []Policy{{}, {Reads: ReadsStructured}} {
			res, before, after := rewriteToolList(v, pol, &o, true, map[string]toolInfo{}, c)
			list, _ := res.Get("tools")
			orig, _ := v.Get("tools")
			if n := c.Count(string(tree.AppendJSON(nil, list))); n != after || after > before {
				t.Errorf("%s %s: %d tokens through terse (reported %d), direct %d", filepath.Base(f), pol.Reads, n, after, before)
			}
			for i, tl := range orig.Items() {
				got := list.Index(i)
				for _, k := range []string{"name", "description"} {
					a, _ := tl.Get(k)
					b, _ := got.Get(k)
					if !tree.Equal(a, b) {
						t.Errorf("%s: tool %d %s changed", filepath.Base(f), i, k)
					}
				}
				a, _ := tl.Get("inputSchema")
				b, _ := got.Get("inputSchema")
				pa, _ := a.Get("properties")
				pb, _ := b.Get("properties")
				if pa.Len() != pb.Len() {
					t.Errorf("%s: tool %d parameters %d → %d", filepath.Base(f), i, pa.Len(), pb.Len())
				}
			}
			t.Logf("%s %s: %d → %d tokens, %d tools", filepath.Base(f), pol.Reads, before, after, list.Len())
		}
	}
}

// TestPolicyGeneric: a generic client keeps structuredContent untouched and
// reads compact JSON in content.
func TestPolicyGeneric(t *testing.T) {
	h := connect(t, fakeUpstream(t), nil, "generic-client")
	res := h.call(t, "rows", map[string]any{"n": 50})
	got := textOf(t, res)
	want := rowsText(50)
	if len(got) >= len(want) {
		t.Errorf("content text %d bytes, want fewer than upstream's %d", len(got), len(want))
	}
	if !sameJSON(t, got, want) {
		t.Error("compact content text does not decode to the upstream JSON")
	}
	if res.StructuredContent == nil {
		t.Fatal("generic client: structuredContent dropped, want it untouched")
	}
	var wantSC any
	json.Unmarshal([]byte(want), &wantSC)
	if !cmp.Equal(res.StructuredContent, wantSC) {
		t.Error("generic client: structuredContent changed")
	}
	if f := res.Content[0].(*mcp.TextContent).Meta[MetaFormat]; f != "json" {
		t.Errorf("content _meta[%s] = %v, want json", MetaFormat, f)
	}
}

// TestPolicyClaudeCode: Claude Code shows structuredContent, so the proxy
// drops it (and the outputSchema) and the compact text is what it shows.
func TestPolicyClaudeCode(t *testing.T) {
	for _, client := range []string{"claude-code", "github-copilot-cli"} {
		t.Run(client, func(t *testing.T) {
			h := connect(t, fakeUpstream(t), nil, client)
			if os := h.tools(t)["rows"].OutputSchema; os != nil {
				t.Errorf("rows outputSchema = %v, want none for %s", os, client)
			}
			res := h.call(t, "rows", map[string]any{"n": 50})
			if res.StructuredContent != nil {
				t.Error("structuredContent still present")
			}
			// One copy, never more tokens than the structuredContent the
			// client would have shown (the fake's is in sorted key order).
			got := stripIDLine(textOf(t, res))
			v, err := tree.ParseString(got)
			want, _ := tree.ParseString(rowsText(50))
			if err != nil || !sameValue(v, want) || len(got) >= len(rowsText(50)) || len(res.Content) != 1 {
				t.Errorf("content is not one compact form of the result: %.100s", got)
			}
		})
	}
}

func TestPolicyFor(t *testing.T) {
	tests := []struct {
		client string
		rules  []ClientRule
		want   Policy
	}{
		{"claude-code", nil, Policy{ReadsStructured, ClaudeCodeBudget, 50000}},
		{"Claude Code", nil, Policy{ReadsStructured, ClaudeCodeBudget, 50000}},
		{"github-copilot-cli", nil, Policy{Reads: ReadsStructured, Budget: ClaudeCodeBudget}},
		{"Copilot CLI", nil, Policy{Reads: ReadsStructured, Budget: ClaudeCodeBudget}},
		{"codex-mcp-client", nil, Policy{Reads: ReadsStructured, Budget: 10000}},
		{"gemini-cli-mcp-client", nil, Policy{}},
		{"Codex", nil, Policy{Reads: ReadsStructured, Budget: 10000}},
		{"Visual Studio Code", nil, Policy{Reads: ReadsStructured}},
		{"Visual Studio Code - Insiders", nil, Policy{Reads: ReadsStructured}},
		{"Code - OSS", nil, Policy{Reads: ReadsStructured}},
		{"VSCodium", nil, Policy{Reads: ReadsStructured}},
		{"Zed", nil, Policy{}},
		// Closed source, not confirmed: the content default.
		{"cursor-vscode", nil, Policy{}},
		{"cursor", nil, Policy{}},
		{"windsurf-client", nil, Policy{}},
		{"claude-code", []ClientRule{{Match: "claude", Reads: ReadsContent, Budget: 5000}}, Policy{ReadsContent, 5000, 50000}},
	}
	for _, tt := range tests {
		if got := PolicyFor(tt.client, tt.rules); got != tt.want {
			t.Errorf("PolicyFor(%q, %v) = %+v, want %+v", tt.client, tt.rules, got, tt.want)
		}
	}
}

// TestPolicyBudgetFromClientTable: every client of the one table of
// client limits (fit.Clients) gets its Budget as the proxy's default
// budget, Codex's 10,000 tokens included; a rule of the caller's keeps
// its own.
func TestPolicyBudgetFromClientTable(t *testing.T) {
	for _, c := range fit.Clients {
		for _, m := range c.Match {
			if got := PolicyFor(m, nil).Budget; got != c.Budget || got == 0 {
				t.Errorf("%s (%q): budget %d, want %d", c.Name, m, got, c.Budget)
			}
		}
	}
	if got := PolicyFor("codex-mcp-client", []ClientRule{{Match: "codex", Budget: 3000}}).Budget; got != 3000 {
		t.Errorf("a rule's budget: %d, want 3000", got)
	}
}

// TestClientTableOnWire: each client name of the table, as sent in
// initialize, gets what its model reads compacted: structured readers lose
// structuredContent (their model reads the compact content), content
// readers keep it for programs.
func TestClientTableOnWire(t *testing.T) {
	for _, tt := range []struct {
		client     string
		structured bool
	}{
		{"claude-code", true},
		{"codex-mcp-client", true},
		{"github-copilot-cli", true},
		{"Visual Studio Code", true},
		{"Code - OSS", true},
		{"gemini-cli-mcp-client", false},
		{"Zed", false},
		{"cursor-vscode", false},
		{"windsurf-client", false},
	} {
		t.Run(tt.client, func(t *testing.T) {
			h := connect(t, fakeUpstream(t), nil, tt.client)
			res := h.call(t, "rows", map[string]any{"n": 50})
			if got := res.StructuredContent == nil; got != tt.structured {
				t.Errorf("structuredContent dropped = %v, want %v", got, tt.structured)
			}
			if textOf(t, res) == "" {
				t.Error("no content text")
			}
		})
	}
}

func TestRawMode(t *testing.T) {
	h := connect(t, fakeUpstream(t), nil, "claude-code")
	res := h.call(t, "rows", map[string]any{"n": 20, ParamOutputMode: "raw"})
	if got := textOf(t, res); got != rowsText(20) {
		t.Errorf("raw text differs from upstream text")
	}
	if res.StructuredContent == nil {
		t.Error("raw mode dropped structuredContent")
	}
}

func TestClaudeCodeBudget(t *testing.T) {
	h := connect(t, fakeUpstream(t), nil, "claude-code")
	res := h.call(t, "rows", map[string]any{"n": 2000})
	got := textOf(t, res)
	if n := tokens.Estimate().Count(got); n > ClaudeCodeBudget {
		t.Errorf("result is %d tokens, want at most %d", n, ClaudeCodeBudget)
	}
	if !strings.Contains(got, `_chunk "`) {
		t.Error("over-budget result carries no chunk hint")
	}
}

func TestIsErrorPassed(t *testing.T) {
	h := connect(t, fakeUpstream(t), nil, "generic-client")
	res := h.call(t, "fail", nil)
	if !res.IsError {
		t.Error("isError lost")
	}
	if !sameJSON(t, textOf(t, res), rowsText(3)) {
		t.Error("isError text changed meaning")
	}
}

func TestDedupPartitions(t *testing.T) {
	h := connect(t, fakeUpstream(t), nil, "generic-client")
	args := map[string]any{"n": 30}
	first := textOf(t, h.call(t, "rows", args))
	second := textOf(t, h.call(t, "rows", args))
	if !strings.HasPrefix(second, "> [ref: ") {
		t.Fatalf("repeat call = %.80q, want a ref hint", second)
	}
	h.call(t, CompactTool, nil)
	if third := textOf(t, h.call(t, "rows", args)); third != first {
		t.Errorf("after %s: %.80q, want the full result again", CompactTool, third)
	}
	h.call(t, "write_note", nil)
	if fourth := textOf(t, h.call(t, "rows", args)); fourth != first {
		t.Errorf("after a mutating call: %.80q, want the full result again", fourth)
	}
}

func TestProgressAndCancel(t *testing.T) {
	h := connect(t, fakeUpstream(t), nil, "generic-client")
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"n": 10}}
	params.SetProgressToken("client-token-1")
	if _, err := h.cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		select {
		case p := <-h.progress:
			if p.ProgressToken != "client-token-1" || p.Progress != float64(i) {
				t.Errorf("progress %d = token %v progress %v, want client-token-1 %d", i, p.ProgressToken, p.Progress, i)
			}
		default:
			t.Fatalf("progress %d did not arrive before the result", i)
		}
	}

	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	slow := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"n": 60000}}
	slow.SetProgressToken("client-token-2")
	go func() {
		_, err := h.cs.CallTool(cctx, slow)
		errc <- err
	}()
	// The call is under way once the upstream reports progress on it.
	select {
	case <-h.progress:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow call reported no progress")
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled call did not return")
	}
	if got := textOf(t, h.call(t, "slow", map[string]any{"n": 1})); got != "done" {
		t.Errorf("call after cancellation = %q", got)
	}
}

func TestUpstreamCrash(t *testing.T) {
	h := connect(t, fakeUpstream(t), nil, "generic-client")
	_, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "crash"})
	if err == nil || !strings.Contains(err.Error(), "died") {
		t.Fatalf("call that crashes the upstream: err = %v, want an upstream error", err)
	}
	res := h.call(t, "rows", map[string]any{"n": 5})
	if !sameJSON(t, textOf(t, res), rowsText(5)) {
		t.Error("call after restart returned the wrong result")
	}
	if got := h.p.Stats().Totals().Restarts; got != 1 {
		t.Errorf("restarts = %d, want 1", got)
	}
	// Restarts are bounded.
	for range 3 {
		h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "crash"})
	}
	_, err = h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "rows"})
	if err == nil || !strings.Contains(err.Error(), "not restarting") {
		t.Errorf("after too many crashes: err = %v, want a not-restarting error", err)
	}
}

// wire drives a proxy with raw JSON-RPC lines.
type wire struct {
	in  *io.PipeWriter
	out *bufio.Scanner
}

func rawConnect(t *testing.T, opts *Options) *wire {
	cr, pw := io.Pipe()
	pr, cw := io.Pipe()
	p := NewProxy(fakeUpstream(t), opts)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { p.Serve(ctx, pr, pw); pw.Close() })
	t.Cleanup(func() { cw.Close(); cancel(); wg.Wait() })
	sc := bufio.NewScanner(cr)
	sc.Buffer(nil, 1<<24)
	return &wire{in: cw, out: sc}
}

func (w *wire) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(w.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (w *wire) recv(t *testing.T) map[string]any {
	t.Helper()
	if !w.out.Scan() {
		t.Fatalf("no message from proxy: %v", w.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(w.out.Bytes(), &m); err != nil {
		t.Fatalf("proxy wrote invalid JSON %q: %v", w.out.Text(), err)
	}
	return m
}

// TestRawWire: malformed and oversized messages are rejected with JSON-RPC
// errors and the relay keeps serving.
func TestRawWire(t *testing.T) {
	w := rawConnect(t, &Options{MaxMessageBytes: 4096})
	tests := []struct {
		line string
		code float64
	}{
		{`{"jsonrpc":"2.0","id":1,"method":`, codeParseError},
		{`[1,2]`, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`, codeInvalidRequest},
	}
	for _, tt := range tests {
		w.send(t, tt.line)
		m := w.recv(t)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tt.code {
			t.Errorf("%.40s... -> %v, want error code %v", tt.line, m, tt.code)
		}
	}
	w.send(t, `{"jsonrpc":"2.0","method":"notifications/terse/compact"}`)
	w.send(t, `{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := w.recv(t); m["id"] != "a" || m["result"] == nil {
		t.Errorf("initialize after bad messages = %v", m)
	}
}

// TestHTTPUpstream: --upstream URL relays to a Streamable-HTTP server.
func TestHTTPUpstream(t *testing.T) {
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fakeServer() }, nil))
	t.Cleanup(srv.Close)
	h := connect(t, &HTTP{URL: srv.URL}, nil, "generic-client")
	got := textOf(t, h.call(t, "rows", map[string]any{"n": 30}))
	if len(got) >= len(rowsText(30)) || !sameJSON(t, got, rowsText(30)) {
		t.Errorf("rows over HTTP = %.100q, want the compact JSON", got)
	}
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"n": 1}}
	params.SetProgressToken("t")
	if _, err := h.cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	if len(h.progress) != 3 {
		t.Errorf("%d progress notifications before the result, want 3", len(h.progress))
	}
}

// TestOversizedUpstreamMessage: a response over the limit becomes an error
// for its request, and the relay goes on.
func TestOversizedUpstreamMessage(t *testing.T) {
	h := connect(t, fakeUpstream(t), &Options{MaxMessageBytes: 8192}, "generic-client")
	_, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "rows", Arguments: map[string]any{"n": 200}})
	if err == nil || !strings.Contains(err.Error(), "larger than 8192 bytes") {
		t.Errorf("oversized response: err = %v, want a size error", err)
	}
	if got := textOf(t, h.call(t, "rows", map[string]any{"n": 2})); !sameJSON(t, got, rowsText(2)) {
		t.Errorf("next call = %q", got)
	}
}

func TestOverlaps(t *testing.T) {
	tests := []struct {
		w, r string
		want bool
	}{
		{"/a/b.json", "/a/b.json", true},
		{"/a", "/a/b.json", true},     // a directory write reaches files under it
		{"/a/b.json", "/a/", true},    // a listing of the parent changes
		{"/a/b.json", "/a/bc", false}, // not a path prefix
		{"/x", "/a", false},
	}
	for _, tt := range tests {
		if got := dedup.Overlaps(tt.w, tt.r); got != tt.want {
			t.Errorf("overlaps(%q, %q) = %v, want %v", tt.w, tt.r, got, tt.want)
		}
	}
}
