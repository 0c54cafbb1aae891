package mcpproxy

// What the model reads through terse against what it reads directly, for
// every tool of the real npm servers, through the stdio proxy and the
// gateway, for a client that shows structuredContent (Claude Code) and a
// generic one; the tool catalogue; raw mode byte for byte.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// rawTap keeps the raw JSON of the last result a client received.
type rawTap struct {
	mcp.Transport
	mu   *sync.Mutex
	last *[]byte
}

func newRawTap(t mcp.Transport) rawTap { return rawTap{t, new(sync.Mutex), new([]byte)} }

func (t rawTap) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	return rawTapConn{c, t}, err
}

func (t rawTap) result() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return *t.last
}

type rawTapConn struct {
	mcp.Connection
	t rawTap
}

func (c rawTapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && r.Result != nil {
		c.t.mu.Lock()
		*c.t.last = append([]byte(nil), r.Result...)
		c.t.mu.Unlock()
	}
	return m, err
}

// viewSession is one client session, direct or through terse.
type viewSession struct {
	cs     *mcp.ClientSession
	tap    rawTap
	prefix string // "s__" through the gateway
}

// call returns the raw JSON of the result of a call.
func (s *viewSession) call(t *testing.T, tool string, args map[string]any) []byte {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: s.prefix + tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s%s: %v", s.prefix, tool, err)
	}
	_ = res
	return s.tap.result()
}

// catalogue returns the raw tools array of tools/list, names unprefixed.
func (s *viewSession) catalogue(t *testing.T) tree.Value {
	t.Helper()
	if _, err := s.cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	v, err := tree.Parse(s.tap.result())
	if err != nil {
		t.Fatal(err)
	}
	list, _ := v.Get("tools")
	return list
}

func viewClient(t *testing.T, tr mcp.Transport, client string) (*mcp.ClientSession, rawTap) {
	t.Helper()
	tap := newRawTap(tr)
	c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), tap, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, tap
}

// viewOptions run the pipeline as the CLI's defaults do: auto format,
// o200k_base, dedup, a store for chunks.
func viewOptions() *Options {
	cache := dedup.New(dedup.Options{})
	p, err := terse.New(&terse.Options{Format: "auto", Store: &store.Mem{}, Fetch: FetchTemplate, Dedup: cache})
	if err != nil {
		panic(err)
	}
	return &Options{Pipeline: p, Dedup: cache}
}

// modelView is the text the model reads of a result: structuredContent
// when the client shows it and the result has it, else the content
// blocks (text as text, other blocks as their JSON).
func modelView(t *testing.T, raw []byte, structured bool) string {
	t.Helper()
	v, err := tree.Parse(raw)
	if err != nil {
		t.Fatalf("result is not JSON: %v", err)
	}
	if sc, ok := v.Get("structuredContent"); ok && structured {
		return string(tree.AppendJSON(nil, sc))
	}
	var b strings.Builder
	content, _ := v.Get("content")
	for _, c := range content.Items() {
		if isText(c) {
			s, _ := c.Get("text")
			b.WriteString(s.Str())
		} else {
			b.Write(tree.AppendJSON(nil, c))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// viewCase is one npm server and the calls that exercise every tool.
type viewCase struct {
	bin   string
	setup func(t *testing.T, dir string) (args []string, env []string)
	calls func(root string) []viewCall
	raw   viewCall // a deterministic call compared byte for byte in raw mode
}

type viewCall struct {
	tool string
	args map[string]any
}

func viewCases() map[string]viewCase {
	return map[string]viewCase{
		"memory": {
			bin: "mcp-server-memory",
			setup: func(t *testing.T, dir string) ([]string, []string) {
				return nil, []string{"MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl")}
			},
			calls: func(string) []viewCall {
				var ents []map[string]any
				for i := range 12 {
					ents = append(ents, map[string]any{"name": fmt.Sprintf("service-%d", i), "entityType": "service",
						"observations": []string{"runs on port 80", fmt.Sprintf("owned by team %d", i%3)}})
				}
				rel := []map[string]any{{"from": "service-1", "to": "service-2", "relationType": "calls"},
					{"from": "service-2", "to": "service-3", "relationType": "calls"}}
				return []viewCall{
					{"create_entities", map[string]any{"entities": ents}},
					{"create_relations", map[string]any{"relations": rel}},
					{"add_observations", map[string]any{"observations": []map[string]any{{"entityName": "service-1", "contents": []string{"deprecated"}}}}},
					{"read_graph", nil},
					{"search_nodes", map[string]any{"query": "team 1"}},
					{"open_nodes", map[string]any{"names": []string{"service-1", "service-2"}}},
					{"delete_observations", map[string]any{"deletions": []map[string]any{{"entityName": "service-1", "observations": []string{"deprecated"}}}}},
					{"delete_relations", map[string]any{"relations": rel[:1]}},
					{"delete_entities", map[string]any{"entityNames": []string{"service-11"}}},
					{"read_graph", nil},
				}
			},
			raw: viewCall{"read_graph", nil},
		},
		"filesystem": {
			bin: "mcp-server-filesystem",
			setup: func(t *testing.T, dir string) ([]string, []string) {
				root := filepath.Join(dir, "root")
				os.MkdirAll(filepath.Join(root, "sub"), 0o755)
				for i, f := range []string{"github/pygithub__repo-issues-page2.json", "gitlab/danger__getMergeRequestInfo.json"} {
					data, err := os.ReadFile(filepath.Join(corpus.Dir(t, "corpus"), f))
					if err != nil {
						t.Skipf("corpus file %s: %v", f, err)
					}
					os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.json", i)), data, 0o644)
				}
				os.WriteFile(filepath.Join(root, "sub", "notes.txt"), []byte(strings.Repeat("a note line\n", 40)), 0o644)
				os.WriteFile(filepath.Join(root, "pixel.png"), []byte("\x89PNG\r\n\x1a\n0000"), 0o644)
				return []string{root}, nil
			},
			calls: func(root string) []viewCall {
				p := func(s string) string { return filepath.Join(root, s) }
				return []viewCall{
					{"list_allowed_directories", nil},
					{"list_directory", map[string]any{"path": root}},
					{"list_directory_with_sizes", map[string]any{"path": root}},
					{"directory_tree", map[string]any{"path": root}},
					{"read_text_file", map[string]any{"path": p("f0.json")}},
					{"read_file", map[string]any{"path": p("f1.json")}},
					{"read_multiple_files", map[string]any{"paths": []string{p("f0.json"), p("sub/notes.txt")}}},
					{"read_media_file", map[string]any{"path": p("pixel.png")}},
					{"get_file_info", map[string]any{"path": p("sub/notes.txt")}},
					{"search_files", map[string]any{"path": root, "pattern": "*.json"}},
					{"create_directory", map[string]any{"path": p("new")}},
					{"write_file", map[string]any{"path": p("new/n.txt"), "content": "hello"}},
					{"edit_file", map[string]any{"path": p("new/n.txt"), "edits": []map[string]any{{"oldText": "hello", "newText": "hi"}}}},
					{"move_file", map[string]any{"source": p("new/n.txt"), "destination": p("new/m.txt")}},
					{"read_text_file", map[string]any{"path": p("f0.json")}},
				}
			},
			raw: viewCall{"read_text_file", map[string]any{"path": "f1.json"}},
		},
		"everything": {
			bin:   "mcp-server-everything",
			setup: func(*testing.T, string) ([]string, []string) { return []string{"stdio"}, nil },
			calls: func(string) []viewCall {
				return []viewCall{
					{"echo", map[string]any{"message": "hello through terse"}},
					{"get-sum", map[string]any{"a": 2, "b": 3}},
					{"get-annotated-message", map[string]any{"messageType": "success", "includeImage": true}},
					{"get-resource-links", map[string]any{"count": 5}},
					{"get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 2}},
					{"get-structured-content", map[string]any{"location": "Chicago"}},
					{"get-tiny-image", nil},
					{"trigger-long-running-operation", map[string]any{"duration": 0.1, "steps": 1}},
				}
			},
			raw: viewCall{"get-structured-content", map[string]any{"location": "New York"}},
		},
	}
}

// TestE2EModelView: for every tool of server-memory and server-filesystem
// and the server-everything tools that return content, through `terse
// proxy` and `terse gateway`, for a Claude-Code-like and a generic client,
// the model reads no more o200k_base tokens through terse than directly;
// the tool catalogue costs no more; _output_mode "raw" is byte-identical
// to the server's result.
func TestE2EModelView(t *testing.T) {
	c := tokens.O200kBase()
	for name, vc := range viewCases() {
		for _, mode := range []string{"proxy", "gateway"} {
			for _, client := range []string{"claude-code", "generic-client"} {
				t.Run(name+"/"+mode+"/"+client, func(t *testing.T) {
					bin := npmServer(t, vc.bin)
					// The same state on both sides: two directories whose
					// paths have the same length.
					base := t.TempDir()
					da, db := filepath.Join(base, "d"), filepath.Join(base, "t")
					os.Mkdir(da, 0o755)
					os.Mkdir(db, 0o755)
					argsA, envA := vc.setup(t, da)
					argsB, envB := vc.setup(t, db)
					cmd := exec.Command(bin, argsA...)
					cmd.Env = append(os.Environ(), envA...)
					dcs, dtap := viewClient(t, &mcp.CommandTransport{Command: cmd}, client)
					d := &viewSession{cs: dcs, tap: dtap}
					var tr *viewSession
					if mode == "proxy" {
						up := &Command{Path: bin, Args: argsB, Env: append(os.Environ(), envB...)}
						p := NewProxy(up, viewOptions())
						cr, pw := io.Pipe()
						pr, cw := io.Pipe()
						go func() { p.Serve(context.Background(), pr, pw); pw.Close() }()
						t.Cleanup(func() { cw.Close() })
						cs, tap := viewClient(t, &mcp.IOTransport{Reader: cr, Writer: cw}, client)
						tr = &viewSession{cs: cs, tap: tap}
					} else {
						_, srv := serveGateway(t, []ServerSpec{{Name: "s", Command: bin, Args: argsB, Env: envB}}, viewOptions())
						cs, tap := viewClient(t, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, client)
						tr = &viewSession{cs: cs, tap: tap, prefix: "s__"}
					}
					structured := client == "claude-code"

					// The catalogue, with the gateway's names as the
					// server's.
					dl, tl := d.catalogue(t), tr.catalogue(t)
					var items []tree.Value
					for _, x := range tl.Items() {
						n, _ := x.Get("name")
						items = append(items, setMember(x, "name", tree.String(strings.TrimPrefix(n.Str(), tr.prefix))))
					}
					dn, tn := c.Count(string(tree.AppendJSON(nil, dl))), c.Count(string(tree.AppendJSON(nil, tree.Array(items...))))
					if tn > dn {
						t.Errorf("tools/list: %d tokens through terse, %d direct", tn, dn)
					}
					if tl.Len() < dl.Len() {
						t.Errorf("tools/list: %d tools through terse, %d direct", tl.Len(), dl.Len())
					}

					var sumD, sumT int
					callsA, callsB := vc.calls(filepath.Join(da, "root")), vc.calls(filepath.Join(db, "root"))
					for i := range callsA {
						a, b := callsA[i], callsB[i]
						vd := modelView(t, d.call(t, a.tool, a.args), structured)
						vt := modelView(t, tr.call(t, b.tool, b.args), structured)
						nd, nt := c.Count(vd), c.Count(vt)
						sumD += nd
						sumT += nt
						if nt > nd {
							t.Errorf("%s: the model reads %d tokens through terse, %d directly:\nterse: %.300s\ndirect: %.300s", a.tool, nt, nd, vt, vd)
						}
					}
					t.Logf("tools/list %d → %d tokens; %d calls: %d → %d tokens", dn, tn, len(callsA), sumD, sumT)

					// Raw mode, byte for byte.
					ra := viewCall{vc.raw.tool, map[string]any{}}
					rb := viewCall{vc.raw.tool, map[string]any{ParamOutputMode: "raw"}}
					for k, v := range vc.raw.args {
						ra.args[k], rb.args[k] = v, v
						if s, ok := v.(string); ok && strings.HasSuffix(s, ".json") {
							ra.args[k], rb.args[k] = filepath.Join(da, "root", s), filepath.Join(db, "root", s)
						}
					}
					want := d.call(t, ra.tool, ra.args)
					got := tr.call(t, rb.tool, rb.args)
					if name == "filesystem" {
						want = []byte(strings.ReplaceAll(string(want), da, db))
					}
					if string(got) != string(want) {
						t.Errorf("raw %s differs from the server's result:\ngot  %.300s\nwant %.300s", ra.tool, got, want)
					}
					if !json.Valid(got) {
						t.Error("raw result is not JSON")
					}
				})
			}
		}
	}
}
