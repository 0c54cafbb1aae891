package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/terse-dev/terse/store"
)

// The test binary doubles as a fake upstream MCP server: with
// TERSE_FAKE_UPSTREAM=1 it serves the tools below on stdio.
func TestMain(m *testing.M) {
	if os.Getenv("TERSE_FAKE_UPSTREAM") == "1" {
		serveFake()
		os.Exit(0)
	}
	if os.Getenv("TERSE_TEST_PROXY") == "1" {
		// A stdio proxy in front of the fake upstream, for clients that
		// spawn their server (TestTSClientChunks).
		exe, _ := os.Executable()
		up := &Command{Path: exe, Env: append(os.Environ(), "TERSE_FAKE_UPSTREAM=1"), Stderr: os.Stderr}
		if err := NewProxy(up, chunkOptions(&store.Mem{})).Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeUpstream runs the fake server as a child of the proxy.
func fakeUpstream(t testing.TB) *Command {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &Command{Path: exe, Env: append(os.Environ(), "TERSE_FAKE_UPSTREAM=1"), Stderr: os.Stderr}
}

type row struct {
	ID     int     `json:"id"`
	Name   string  `json:"name"`
	Email  string  `json:"email"`
	Active bool    `json:"active"`
	Score  float64 `json:"score"`
	Tags   []string
}

func rows(n int) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{ID: i, Name: fmt.Sprintf("user%d", i), Email: fmt.Sprintf("user%d@example.com", i), Active: i%3 != 0, Score: float64(i) * 1.25, Tags: []string{"a", "b"}}
	}
	return out
}

// rowsText is the pretty JSON the fake "rows" tool returns for n rows.
func rowsText(n int) string {
	b, _ := json.MarshalIndent(map[string]any{"rows": rows(n)}, "", "  ")
	return string(b)
}

func serveFake() {
	fakeServer().Run(context.Background(), &mcp.StdioTransport{})
}

// fakeServer has the fake upstream's tools.
func fakeServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	argSchema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	s.AddTool(&mcp.Tool{Name: "rows", Description: "rows as pretty JSON with structuredContent", InputSchema: argSchema, OutputSchema: obj,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ N int }
			json.Unmarshal(req.Params.Arguments, &a)
			if a.N == 0 {
				a.N = 10
			}
			text := rowsText(a.N)
			var sc any
			json.Unmarshal([]byte(text), &sc)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: sc}, nil
		})
	s.AddTool(&mcp.Tool{Name: "items", Description: "n items as JSON with structuredContent; item big (1-based) is large", InputSchema: argSchema,
		OutputSchema: itemsSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ N, Big int }
			json.Unmarshal(req.Params.Arguments, &a)
			text := itemsText(a.N, a.Big)
			var sc any
			json.Unmarshal([]byte(text), &sc)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: sc}, nil
		})
	s.AddTool(&mcp.Tool{Name: "read", Description: "the text of the file at path", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Path string }
			json.Unmarshal(req.Params.Arguments, &a)
			b, err := os.ReadFile(a.Path)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "file", Description: "a text file of n bytes (seed s varies it), and structuredContent wrapping it, as a filesystem server sends it",
		InputSchema: argSchema, OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"content": map[string]any{"type": "string"}}},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ N, S int }
			json.Unmarshal(req.Params.Arguments, &a)
			text := fileText(a.N, a.S)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: map[string]any{"content": text}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "line", Description: "one line of n bytes", InputSchema: argSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ N int }
			json.Unmarshal(req.Params.Arguments, &a)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: longLine(a.N)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "text", Description: "n bytes of plain text", InputSchema: argSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ N int }
			json.Unmarshal(req.Params.Arguments, &a)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("log line ok\n", a.N/12+1)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "reports progress 3 times, then waits for n ms or cancellation", InputSchema: argSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ N int }
			json.Unmarshal(req.Params.Arguments, &a)
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 3; i++ {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3})
				}
			}
			select {
			case <-time.After(time.Duration(a.N) * time.Millisecond):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	s.AddTool(&mcp.Tool{Name: "crash", Description: "exits the server", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "an isError result carrying JSON", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: rowsText(3)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "write_note", Description: "a mutating tool", InputSchema: obj,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}}}, nil
		})
	return s
}

// itemsSchema is the outputSchema of the fake "items" tool.
var itemsSchema = map[string]any{"type": "object", "required": []any{"items"}, "properties": map[string]any{
	"items": map[string]any{"type": "array", "items": map[string]any{"type": "object", "required": []any{"id", "name"},
		"properties": map[string]any{"id": map[string]any{"type": "integer"}, "name": map[string]any{"type": "string"},
			"text": map[string]any{"type": "string"}}}},
	"total": map[string]any{"type": "integer"},
}}

// itemsText is the pretty JSON of the fake "items" tool: n items, item
// big (1-based; 0 for none) with a text of about 12 KB.
func itemsText(n, big int) string {
	items := make([]map[string]any, n)
	for i := range items {
		t := fmt.Sprintf("item %d of the list, with a short description that varies: %x", i+1, i*7919)
		if i+1 == big {
			t = longLine(12000)
		}
		items[i] = map[string]any{"id": i + 1, "name": fmt.Sprintf("item-%02d", i+1), "text": t}
	}
	b, _ := json.MarshalIndent(map[string]any{"items": items, "total": n}, "", "  ")
	return string(b)
}

// longLine is one line of n bytes of varied words (no newline).
func longLine(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "word%d-%x ", i, i*2654435761%1000003)
	}
	return b.String()[:n]
}

// fileText is the text of the fake "file" tool: numbered log-like lines,
// n bytes, varied by seed.
func fileText(n, seed int) string {
	var b strings.Builder
	b.Grow(n + 100)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%06d %s request id=%x took %dms status=%d\n", i, []string{"INFO", "WARN", "DEBUG"}[(i+seed)%3], (i+1)*2654435761^seed, (i*37+seed)%900, 200+(i%7)*50)
	}
	return b.String()[:n]
}
