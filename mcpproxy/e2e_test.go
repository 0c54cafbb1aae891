package mcpproxy

// End-to-end tests against real MCP servers from npm, driven by the go-sdk
// client. scripts/install-mcp-servers.sh installs the servers into
// testdata/npm; without them these tests skip.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// npmServer returns the installed server bin, skipping t when absent.
func npmServer(t testing.TB, bin string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found; the end-to-end tests need Node.js and scripts/install-mcp-servers.sh")
	}
	p, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not installed; run scripts/install-mcp-servers.sh to run the end-to-end tests", bin)
	}
	return p
}

func npmUpstream(t testing.TB, bin string, env []string, args ...string) *Command {
	return &Command{Path: npmServer(t, bin), Args: args, Env: append(os.Environ(), env...)}
}

// direct connects a go-sdk client straight to the same server, for
// comparing what the proxy returns with what the server returns.
func direct(t testing.TB, up *Command) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(up.Path, up.Args...)
	cmd.Env = up.Env
	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("direct connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func resultJSON(t testing.TB, r *mcp.CallToolResult) string {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// killUpstream kills the proxy's current upstream process.
func killUpstream(t testing.TB, p *Proxy) {
	p.mu.Lock()
	c, _ := p.conn.(*cmdConn)
	p.mu.Unlock()
	if c == nil {
		t.Fatal("no upstream process to kill")
	}
	c.cmd.Process.Kill()
}

func TestE2EEverything(t *testing.T) {
	up := npmUpstream(t, "mcp-server-everything", nil, "stdio")
	h := connect(t, up, nil, "generic-client")
	tools := h.tools(t)
	if tools["echo"] == nil {
		t.Fatal("tools/list lacks echo")
	}

	t.Run("progress", func(t *testing.T) {
		params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}}
		params.SetProgressToken(42)
		if _, err := h.cs.CallTool(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 3; i++ {
			select {
			case p := <-h.progress:
				if fmt.Sprint(p.ProgressToken) != "42" {
					t.Errorf("progress token = %v, want the client's 42", p.ProgressToken)
				}
			default:
				t.Fatalf("progress %d of 3 did not arrive before the result", i)
			}
		}
	})

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 30, "steps": 30}})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cancelled call err = %v, want DeadlineExceeded", err)
		}
		if got := textOf(t, h.call(t, "echo", map[string]any{"message": "after"})); !strings.Contains(got, "after") {
			t.Errorf("echo after cancel = %q", got)
		}
	})

	t.Run("raw", func(t *testing.T) {
		d := direct(t, up)
		want, err := d.CallTool(context.Background(), &mcp.CallToolParams{Name: "get-structured-content", Arguments: map[string]any{"location": "Chicago"}})
		if err != nil {
			t.Fatal(err)
		}
		got := h.call(t, "get-structured-content", map[string]any{"location": "Chicago", ParamOutputMode: "raw"})
		if diff := cmp.Diff(resultJSON(t, want), resultJSON(t, got)); diff != "" {
			t.Errorf("raw result differs from the server's (-want +got):\n%s", diff)
		}
	})

	t.Run("crash", func(t *testing.T) {
		errc := make(chan error, 1)
		go func() {
			_, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 30, "steps": 3}})
			errc <- err
		}()
		time.Sleep(300 * time.Millisecond)
		killUpstream(t, h.p)
		select {
		case err := <-errc:
			if err == nil || !strings.Contains(err.Error(), "died") {
				t.Errorf("in-flight call on a killed upstream: err = %v, want an upstream error", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("in-flight call hung after the upstream died")
		}
		if got := textOf(t, h.call(t, "echo", map[string]any{"message": "restarted"})); !strings.Contains(got, "restarted") {
			t.Errorf("echo after restart = %q", got)
		}
	})
}

// TestE2EEverythingPolicies: where get-structured-content's data ends up
// for each kind of client.
func TestE2EEverythingPolicies(t *testing.T) {
	up := npmUpstream(t, "mcp-server-everything", nil, "stdio")
	for _, tc := range []struct {
		client     string
		structured bool
	}{{"generic-client", true}, {"claude-code", false}} {
		t.Run(tc.client, func(t *testing.T) {
			h := connect(t, up, nil, tc.client)
			if os := h.tools(t)["get-structured-content"].OutputSchema; (os != nil) != tc.structured {
				t.Errorf("outputSchema present = %v, want %v", os != nil, tc.structured)
			}
			res := h.call(t, "get-structured-content", map[string]any{"location": "Chicago"})
			if (res.StructuredContent != nil) != tc.structured {
				t.Errorf("structuredContent present = %v, want %v", res.StructuredContent != nil, tc.structured)
			}
			if got := textOf(t, res); !strings.Contains(got, "temperature") {
				t.Errorf("content text lost the data: %q", got)
			}
		})
	}
}

// copyCorpus copies the larger JSON corpus files into a temp folder.
func copyCorpus(t testing.TB, n int) (dir string, files []string) {
	dir = t.TempDir()
	for _, f := range corpus.Files(t, ".json") {
		data, err := os.ReadFile(f)
		if err != nil || len(data) < 20000 || len(data) > 200000 || !strings.Contains(string(data[:100]), "\n ") {
			continue // pretty JSON of a useful size only
		}
		dst := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if files = append(files, dst); len(files) == n {
			break
		}
	}
	if len(files) == 0 {
		t.Skip("no pretty JSON corpus files of 20-200 KB")
	}
	return dir, files
}

func TestE2EFilesystem(t *testing.T) {
	dir, files := copyCorpus(t, 3)
	up := npmUpstream(t, "mcp-server-filesystem", nil, dir)
	h := connect(t, up, nil, "generic-client")
	d := direct(t, up)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, _ := os.ReadFile(f)
			res := h.call(t, "read_text_file", map[string]any{"path": f})
			got := textOf(t, res)
			if len(got) >= len(want) {
				t.Errorf("proxied text %d bytes, want fewer than the file's %d", len(got), len(want))
			}
			if !sameJSON(t, got, string(want)) {
				t.Error("proxied text does not decode to the file's JSON")
			}

			raw := h.call(t, "read_text_file", map[string]any{"path": f, ParamOutputMode: "raw"})
			dres, err := d.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": f}})
			if err != nil {
				t.Fatal(err)
			}
			if resultJSON(t, raw) != resultJSON(t, dres) {
				t.Error("_output_mode raw differs from the server's own result")
			}
		})
	}

	t.Run("write invalidates reads of the same path", func(t *testing.T) {
		if len(files) < 2 {
			t.Skip("needs two corpus files")
		}
		h.call(t, CompactTool, nil)
		a, b := files[0], files[1]
		data, _ := os.ReadFile(a)
		h.call(t, "read_text_file", map[string]any{"path": a})
		h.call(t, "read_text_file", map[string]any{"path": b})
		h.call(t, "write_file", map[string]any{"path": a, "content": string(data)})
		if got := textOf(t, h.call(t, "read_text_file", map[string]any{"path": a})); strings.HasPrefix(got, "> [ref: ") {
			t.Error("read of the written file answered with a ref hint")
		}
		if got := textOf(t, h.call(t, "read_text_file", map[string]any{"path": b})); !strings.HasPrefix(got, "> [ref: ") {
			t.Errorf("read of another file = %.60q, want a ref hint", got)
		}
	})

	t.Run("claude-code", func(t *testing.T) {
		hc := connect(t, up, nil, "claude-code")
		res := hc.call(t, "read_text_file", map[string]any{"path": files[0]})
		want, _ := os.ReadFile(files[0])
		if res.StructuredContent != nil {
			t.Error("structuredContent kept for claude-code")
		}
		if got := textOf(t, res); !sameJSON(t, got, string(want)) || len(got) >= len(want) {
			t.Error("claude-code does not get the compact text")
		}
	})
}

func TestE2EMemory(t *testing.T) {
	up := npmUpstream(t, "mcp-server-memory", []string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")})
	h := connect(t, up, nil, "generic-client")
	var ents []map[string]any
	for i := range 20 {
		ents = append(ents, map[string]any{"name": fmt.Sprintf("service-%d", i), "entityType": "service", "observations": []string{"runs on port 80", "owned by team a"}})
	}
	h.call(t, "create_entities", map[string]any{"entities": ents})
	first := h.call(t, "read_graph", nil)
	if !strings.Contains(textOf(t, first), "service-19") {
		t.Fatalf("read_graph = %.200s", textOf(t, first))
	}
	if again := textOf(t, h.call(t, "read_graph", nil)); !strings.HasPrefix(again, "> [ref: ") {
		t.Errorf("repeated read_graph = %.80q, want a ref hint", again)
	}
	h.call(t, "add_observations", map[string]any{"observations": []map[string]any{{"entityName": "service-1", "contents": []string{"deprecated"}}}})
	if after := textOf(t, h.call(t, "read_graph", nil)); !strings.Contains(after, "deprecated") {
		t.Errorf("read_graph after a mutating call = %.80q, want the full, new graph", after)
	}
}

// TestE2EFilesystemPipeline runs the terse pipeline on server-filesystem
// results: an over-budget read carries a chunk index, and _chunk returns
// each declared chunk, whose items are the file's.
func TestE2EFilesystemPipeline(t *testing.T) {
	dir, files := copyCorpus(t, 3)
	up := npmUpstream(t, "mcp-server-filesystem", nil, dir)
	opts := testOptions(func(o *terse.Options) { o.Tokenizer = nil })
	h := connect(t, up, opts, "claude-code")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, _ := os.ReadFile(f)
			full := textOf(t, h.call(t, "read_text_file", map[string]any{"path": f, ParamBudget: 100000}))
			if len(full) >= len(want) {
				t.Errorf("under budget: %d bytes, want fewer than the file's %d", len(full), len(want))
			}
			text := textOf(t, h.call(t, "read_text_file", map[string]any{"path": f, "head": 100000, ParamBudget: 1500}))
			if n := tokens.O200kBase().Count(text); n > 1500 {
				t.Errorf("fitted result is %d tokens, budget 1500", n)
			}
			fetch := readChunkFetch(text)
			if !fetch.byN || len(fetch.chunks) == 0 {
				t.Skipf("no chunk index at this budget (the fit stage chose another elision):\n%.400s", text)
			}
			for _, c := range fetch.chunks {
				chunk := h.call(t, "read_text_file", map[string]any{ParamChunk: fmt.Sprintf("%s.%d", fetch.handle, c)})
				head, body, _ := strings.Cut(textOf(t, chunk), "\n")
				body, _, _ = strings.Cut(body, "\n> [") // the JSON before any trailing hints
				if v, _ := inband.Parse(head); chunk.IsError || !isChunk(v, c) {
					t.Errorf("chunk %d: isError %v %.200q", c, chunk.IsError, textOf(t, chunk))
				} else if _, err := tree.ParseString(body); err != nil {
					t.Errorf("chunk %d of a JSON file is not JSON: %v", c, err)
				}
			}
		})
	}
}
