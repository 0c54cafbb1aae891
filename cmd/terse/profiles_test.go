package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/mcpproxy"
	"github.com/terse-dev/terse/tokens"
)

// itemsText is the pretty JSON a list_items(n) call returns.
func itemsText(n int) string {
	items := make([]map[string]any, n)
	for i := range items {
		items[i] = map[string]any{"number": i + 1, "title": fmt.Sprintf("issue %d about the widget", i+1), "state": "open", "labels": []string{"bug", "p1"}}
	}
	b, _ := json.MarshalIndent(items, "", "  ")
	return string(b)
}

// itemsServer is an MCP server over Streamable HTTP with one tool,
// list_items(n).
func itemsServer(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "items", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	s.AddTool(&mcp.Tool{Name: "list_items", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ N int }
		json.Unmarshal(req.Params.Arguments, &a)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: itemsText(a.N)}}}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// proxyClient runs terse proxy's options (mcpOptions) in front of url and
// connects a client named name.
func proxyClient(t *testing.T, url string, opts *mcpproxy.Options, name string) *mcp.ClientSession {
	ctx, cancel := context.WithCancel(context.Background())
	cr, pw := io.Pipe()
	pr, cw := io.Pipe()
	p := mcpproxy.NewProxy(&mcpproxy.HTTP{URL: url}, opts)
	done := make(chan struct{})
	go func() {
		p.Serve(ctx, pr, pw)
		pw.Close()
		close(done)
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cw.Close(); <-done; cancel() })
	return cs
}

func listItems(t *testing.T, cs *mcp.ClientSession, n int) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_items", Arguments: map[string]any{"n": n}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// TestProxyClientProfiles: terse proxy's options give each client its
// profile from the config: alpha clients count with the estimate under
// a budget of 300 and may elide; beta clients have the same budget but
// not the "more" family (their results come whole); other clients get
// the configuration's defaults. References are capped at one per session.
func TestProxyClientProfiles(t *testing.T) {
	src := fmt.Sprintf(`
format = "json"
[store]
dir = %q
[hints.ref]
max_per_session = 1
[hints.more]
applies_to_models = ["alpha*"]
[[profiles.llm_variants]]
name = "alpha"
match = ["alpha*"]
tokenizer = "estimate"
budget = 300
[[profiles.llm_variants]]
name = "beta"
match = ["beta*"]
tokenizer = "o200k_base"
budget = 300
`, t.TempDir())
	cfg, err := config.Parse([]byte(src), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	opts, _, err := mcpOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := opts.Profile("alpha-agent", "list_items"), opts.Profile("beta-agent", "list_items")
	if a.Pipeline.Counter().Name() != "estimate" || b.Pipeline.Counter().Name() != tokens.O200kBaseName || a.Budget != 300 {
		t.Errorf("alpha counts with %s (budget %d), beta with %s", a.Pipeline.Counter().Name(), a.Budget, b.Pipeline.Counter().Name())
	}
	if opts.Profile("beta-2", "list_items").Pipeline != b.Pipeline {
		t.Error("two clients of the same options do not share a pipeline")
	}
	url := itemsServer(t)
	for _, c := range []struct {
		client    string
		elided    bool
		budget    int
		tokenizer tokens.Counter
	}{
		{"alpha-agent", true, 300, tokens.Estimate()},
		{"beta-agent", false, 0, nil},
		{"other-agent", false, 0, nil},
	} {
		t.Run(c.client, func(t *testing.T) {
			// One proxy process per client, as MCP clients start them.
			opts, _, err := mcpOptions(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cs := proxyClient(t, url, opts, c.client)
			small := []string{listItems(t, cs, 3), listItems(t, cs, 3), listItems(t, cs, 3)}
			if n := strings.Count(strings.Join(small, "\n"), "> [ref: "); n != 1 || !strings.HasPrefix(small[1], "> [ref: ") {
				t.Errorf("%d references in %q, want the first repeat's only", n, small)
			}
			big := listItems(t, cs, 60)
			elided := strings.Contains(big, " whole with: ") || strings.Contains(big, "[/chunks] Get chunk N whole: ")
			if elided != c.elided {
				t.Errorf("elided %v, want %v: %.100q", elided, c.elided, big)
			}
			if !elided && !strings.Contains(big, `"number":60,`) {
				t.Errorf("not the whole result: %.100q", big)
			}
			if c.tokenizer != nil {
				if n := c.tokenizer.Count(big); n > c.budget {
					t.Errorf("%d tokens by %s, over the budget of %d", n, c.tokenizer.Name(), c.budget)
				}
			}
		})
	}
}

// TestAPIProfileHints: terse api resolves a conversation's model with
// profile.Resolve: its tokenizer and its "ref" rule.
func TestAPIProfileHints(t *testing.T) {
	cfg, err := config.Parse([]byte(`
[hints.ref]
max_per_session = 3
applies_to_models = ["gpt-*"]
`), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	prof := apiProfile(cfg)
	if p := prof("gpt-4-turbo"); p.NoRefs || p.MaxRefs != 3 || p.Tokenizer != tokens.Cl100kBaseName {
		t.Errorf("gpt-4-turbo: %+v", p)
	}
	if p := prof("claude-sonnet-4-5"); !p.NoRefs || p.Tokenizer != tokens.O200kBaseName {
		t.Errorf("claude-sonnet-4-5: %+v", p)
	}
}
