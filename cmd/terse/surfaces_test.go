package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/apiproxy"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/hook"
	"github.com/terse-dev/terse/mcpproxy"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tree"
)

// surfaceInputs are the results of the table: a JSON document, a list
// that the budget elides (its tool rule sets a strategy), and a numbered
// file read that shapes losslessly.
func surfaceInputs() []struct{ tool, text string } {
	doc := map[string]any{"id": 4711, "name": "widget-service", "owner": map[string]any{"login": "ada", "id": 7},
		"topics": []string{"go", "mcp", "tokens"}, "stats": map[string]any{"stars": 1234, "forks": 56, "open_issues": 7},
		"description": "a service that makes widgets for the people who need them", "archived": false}
	docJSON, _ := json.MarshalIndent(doc, "", "  ")
	items := make([]map[string]any, 200)
	for i := range items {
		items[i] = map[string]any{"number": i + 1, "title": fmt.Sprintf("issue %d about the widget", i+1), "state": "open",
			"labels": []string{"bug", "p1"}, "url": fmt.Sprintf("https://example.com/issues/%d", i+1)}
	}
	list, _ := json.MarshalIndent(map[string]any{"total": 200, "items": items}, "", "  ")
	var read strings.Builder
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(&read, "%6d\u2192func f%d() { return compute(%d) }\n", i, i, i*7)
	}
	return []struct{ tool, text string }{
		{"get_doc", string(docJSON)},
		{"list_items", string(list)},
		{"read_file", read.String()},
	}
}

// surfaceConfig is the config every surface of the table loads.
const surfaceConfig = `
format = "auto"
tokenizer = "o200k_base"
budget = 400
[dedup]
enabled = false
[store]
dir = %q
[[tools]]
match = "*list_items"
strategy = "element_count"
`

// memSink keeps the events a recorder writes.
type memSink struct {
	mu sync.Mutex
	ev []telemetry.Event
}

func (s *memSink) Write(b []telemetry.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ev = append(s.ev, b...)
	return nil
}
func (s *memSink) Close() error { return nil }

// reportFields are the fields of an event that follow from a Report
// (telemetry.Event.SetReport), whatever the surface.
type reportFields struct {
	Tokenizer, Format, TextShape, ShapeClass string
	TokensIn, TokensOut, BytesIn, BytesOut   int
	Saved                                    [telemetry.NumSources]int
	Hints                                    [telemetry.NumHints]uint16
}

func fieldsOf(e *telemetry.Event) reportFields {
	return reportFields{e.Tokenizer, e.Format, e.TextShape, e.ShapeClass, e.TokensIn, e.TokensOut, e.BytesIn, e.BytesOut, e.Saved, e.Hints}
}

// surfaceServer is an MCP server over Streamable HTTP whose tools return
// the inputs as they are.
func surfaceServer(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "srv", Version: "1"}, nil)
	for _, in := range surfaceInputs() {
		text := in.text
		s.AddTool(&mcp.Tool{Name: in.tool, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// surfaceCall is what one surface gave one input: the text the model
// reads and the Report's fields (as telemetry records them).
type surfaceCall struct {
	text   string
	fields reportFields
	rep    *terse.Report // compact only
}

// TestSurfacesAgree: the same config and input through compact, the MCP
// proxy, the gateway, terse api and the hook give the same text and the
// same Report fields, since every surface resolves its options with
// profile.Resolve and Effective.Options and runs terse.Pipeline. What
// differs by design: the elided list's chunk fetch (a command for
// compact, "_chunk" through MCP, with handles keyed per process), so its
// Report fields are compared and its text up to the chunk index; terse
// api elides nothing (its results are carried by every later request), so
// it shows the list whole; the hook leaves alone a result it would not
// shorten. The hook measures against compact JSON of the field as every
// surface does (meter.Baseline), so its event matches compact's, pretty
// JSON (get_doc) included.
func TestSurfacesAgree(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "terse.toml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, surfaceConfig, filepath.Join(dir, "store")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	inputs := surfaceInputs()
	ctx := context.Background()

	// compact: one run per input, the Report written as JSON; and once
	// more with a budget nothing reaches (what terse api shows).
	compact := map[string]surfaceCall{}
	whole := map[string]string{}
	for _, in := range inputs {
		var out bytes.Buffer
		file := filepath.Join(dir, in.tool+".txt")
		os.WriteFile(file, []byte(in.text), 0o644)
		if err := run(ctx, []string{"compact", "--config", cfgPath, "--tool", in.tool, "--budget", "1000000", "--report", "-", file}, strings.NewReader(""), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		text, _, _ := strings.Cut(out.String(), "\n{\n") // the text, then the Report
		whole[in.tool] = strings.TrimSuffix(text, "\n")
	}
	for _, in := range inputs {
		file := filepath.Join(dir, in.tool+".txt")
		rep := filepath.Join(dir, in.tool+".report.json")
		os.WriteFile(file, []byte(in.text), 0o644)
		var out, errb bytes.Buffer
		if err := run(ctx, []string{"compact", "--config", cfgPath, "--tool", in.tool, "--report", rep, file}, strings.NewReader(""), &out, &errb); err != nil {
			t.Fatalf("compact %s: %v\n%s", in.tool, err, errb.String())
		}
		var r terse.Report
		data, _ := os.ReadFile(rep)
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		var ev telemetry.Event
		ev.SetReport(&r)
		// The text without the newline compact may add (Report.OutputChars).
		compact[in.tool] = surfaceCall{text: out.String()[:r.OutputChars], fields: fieldsOf(&ev), rep: &r}
	}

	// The proxy and the gateway, over an in-process upstream, with a
	// recorder whose events are kept.
	url := surfaceServer(t)
	mcpCalls := func(name string, call func(tool string) string, opts *mcpproxy.Options, sink *memSink) map[string]surfaceCall {
		got := map[string]surfaceCall{}
		for _, in := range inputs {
			text := call(in.tool)
			opts.Telemetry.Flush()
			sink.mu.Lock()
			if len(sink.ev) != 1 {
				t.Fatalf("%s %s: %d events", name, in.tool, len(sink.ev))
			}
			got[in.tool] = surfaceCall{text: text, fields: fieldsOf(&sink.ev[0])}
			sink.ev = nil
			sink.mu.Unlock()
		}
		return got
	}
	newOpts := func() (*mcpproxy.Options, *memSink) {
		opts, _, err := mcpOptions(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sink := &memSink{}
		opts.Telemetry = telemetry.New(sink, telemetry.Options{})
		t.Cleanup(func() { opts.Telemetry.Close() })
		return opts, sink
	}
	callText := func(cs *mcp.ClientSession, tool string) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	popts, psink := newOpts()
	pcs := proxyClient(t, url, popts, "table-client")
	proxy := mcpCalls("proxy", func(tool string) string { return callText(pcs, tool) }, popts, psink)

	gopts, gsink := newOpts()
	g, err := mcpproxy.NewGateway([]mcpproxy.ServerSpec{{Name: "srv", URL: url}}, gopts)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	gsrv := httptest.NewServer(g.Handler())
	t.Cleanup(func() { gsrv.Close(); g.Close() })
	gcs, err := mcp.NewClient(&mcp.Implementation{Name: "table-client", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: gsrv.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gcs.Close() })
	gateway := mcpCalls("gateway", func(tool string) string { return callText(gcs, "srv__"+tool) }, gopts, gsink)

	// terse api: the results in one request, through the rewriter and
	// the pipelines apiPipelines resolves from the same config.
	pipes, err := apiPipelines(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var uses, results []tree.Value
	for i, in := range inputs {
		id := fmt.Sprintf("t%d", i)
		uses = append(uses, tree.Object(tree.Member{Key: "type", Value: tree.String("tool_use")}, tree.Member{Key: "id", Value: tree.String(id)},
			tree.Member{Key: "name", Value: tree.String(in.tool)}, tree.Member{Key: "input", Value: tree.Object()}))
		results = append(results, tree.Object(tree.Member{Key: "type", Value: tree.String("tool_result")}, tree.Member{Key: "tool_use_id", Value: tree.String(id)},
			tree.Member{Key: "content", Value: tree.String(in.text)}))
	}
	msg := func(role string, parts []tree.Value) tree.Value {
		return tree.Object(tree.Member{Key: "role", Value: tree.String(role)}, tree.Member{Key: "content", Value: tree.Array(parts...)})
	}
	body := tree.AppendJSON(nil, tree.Object(tree.Member{Key: "model", Value: tree.String("claude-sonnet-4-5")},
		tree.Member{Key: "messages", Value: tree.Array(
			tree.Object(tree.Member{Key: "role", Value: tree.String("user")}, tree.Member{Key: "content", Value: tree.String("go")}),
			msg("assistant", uses), msg("user", results))}))
	api := map[string]string{}
	for _, e := range apiproxy.NewRewriter(apiproxy.Options{NoTrim: true, Pipeline: pipes}).Rewrite(body, 0).Edits {
		for i, in := range inputs {
			if e.CallID == fmt.Sprintf("t%d", i) {
				api[in.tool] = e.After
			}
		}
	}

	// The hook: each input as the result of an MCP tool of Claude Code.
	cfg.Telemetry.Enabled = false
	h := &hookRunner{storeDir: filepath.Join(dir, "store")}
	hookCall := func(tool, text string) (string, *telemetry.Event) {
		data, _ := json.Marshal(map[string]any{"hook_event_name": "PostToolUse", "session_id": "s1", "tool_name": "mcp__srv__" + tool,
			"tool_use_id": "toolu_1", "tool_input": map[string]any{}, "tool_response": []any{map[string]any{"type": "text", "text": text}}})
		ev, err := hook.ParseEvent(data)
		if err != nil {
			t.Fatal(err)
		}
		out, tev, err := h.handle(ctx, cfg, ev)
		if err != nil {
			t.Fatal(err)
		}
		if out == nil {
			return text, &tev
		}
		r, err := tree.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		hso, _ := r.Get("hookSpecificOutput")
		upd, _ := hso.Get("updatedMCPToolOutput")
		txt, _ := upd.Index(0).Get("text")
		return txt.Str(), &tev
	}

	for _, in := range inputs {
		c := compact[in.tool]
		elided := c.rep.Truncated
		for _, s := range []struct {
			name string
			got  surfaceCall
		}{{"proxy", proxy[in.tool]}, {"gateway", gateway[in.tool]}} {
			got, want := s.got.fields, c.fields
			if elided {
				// The fetch instruction (its length) is the surface's.
				got.TokensOut, got.BytesOut, got.Saved[telemetry.SrcFit] = 0, 0, 0
				want.TokensOut, want.BytesOut, want.Saved[telemetry.SrcFit] = 0, 0, 0
			}
			if got != want {
				t.Errorf("%s: %s Report fields differ from compact's:\n%s %+v\ncompact %+v", in.tool, s.name, s.name, s.got.fields, c.fields)
			}
			if !elided && s.got.text != c.text {
				t.Errorf("%s: %s text differs from compact's:\n%s\n--- compact:\n%s", in.tool, s.name, s.got.text, c.text)
			}
		}
		if elided {
			// The list: the rule's strategy, as configuration (the proxy
			// once reported "option" for it); the proxy and the gateway
			// show the same items; terse api leaves it whole.
			if c.rep.Strategy != "element_count" || c.rep.StrategySource != "config" {
				t.Errorf("%s: strategy %s from %q", in.tool, c.rep.Strategy, c.rep.StrategySource)
			}
			for _, tool := range []string{in.tool, "srv__" + in.tool} {
				r, err := popts.Profile("table-client", tool).Pipeline.ProcessString(ctx, in.text, &terse.Request{Tool: tool})
				if err != nil || r.Report.Strategy != c.rep.Strategy || r.Report.StrategySource != c.rep.StrategySource {
					t.Errorf("%s: the proxy's pipeline: strategy %s from %q (err %v)", tool, r.Report.Strategy, r.Report.StrategySource, err)
				}
			}
			if a, b := beforeChunks(proxy[in.tool].text), beforeChunks(gateway[in.tool].text); a != b {
				t.Errorf("%s: proxy and gateway differ:\n%s\n--- gateway:\n%s", in.tool, a, b)
			}
			if a := api[in.tool]; a != whole[in.tool] {
				t.Errorf("%s: terse api gives\n%.300s\n--- compact with no budget to speak of:\n%.300s", in.tool, a, whole[in.tool])
			}
			continue
		}
		if a, ok := api[in.tool]; !ok || a != c.text {
			t.Errorf("%s: terse api gives\n%s\n--- compact:\n%s", in.tool, a, c.text)
		}
		text, tev := hookCall(in.tool, in.text)
		if text != c.text {
			t.Errorf("%s: the hook gives\n%s\n--- compact:\n%s", in.tool, text, c.text)
		}
		if got := fieldsOf(tev); got != c.fields {
			t.Errorf("%s: the hook's event %+v, compact's %+v", in.tool, got, c.fields)
		}
	}
}

// beforeChunks is text up to its chunk index or fetch hint (what names
// the surface's way of fetching, and its handles).
func beforeChunks(text string) string {
	for _, mark := range []string{"\n[chunks]", "\n> [levels:", "\n> [left out"} {
		if i := strings.Index(text, mark); i >= 0 {
			text = text[:i]
		}
	}
	return text
}

// TestSurfacesAgreeOnRepeats: with the dedup cache on, a result shown
// again in a session is a reference, the same text and Report fields
// through the proxy and the gateway; terse api refers to the earlier
// call in the same dialect, naming the call (compact runs are one result
// each, and the hook finds repeats in the transcript: neither is here).
func TestSurfacesAgreeOnRepeats(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "terse.toml")
	src := strings.Replace(fmt.Sprintf(surfaceConfig, filepath.Join(dir, "store")), "enabled = false", "enabled = true", 1)
	if err := os.WriteFile(cfgPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url := surfaceServer(t)
	type call struct {
		text   string
		fields reportFields
	}
	twice := func(cs *mcp.ClientSession, tool string, opts *mcpproxy.Options, sink *memSink) []call {
		var out []call
		for range 2 {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			opts.Telemetry.Flush()
			sink.mu.Lock()
			out = append(out, call{res.Content[0].(*mcp.TextContent).Text, fieldsOf(&sink.ev[len(sink.ev)-1])})
			sink.mu.Unlock()
		}
		return out
	}
	newOpts := func() (*mcpproxy.Options, *memSink) {
		opts, _, err := mcpOptions(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sink := &memSink{}
		opts.Telemetry = telemetry.New(sink, telemetry.Options{})
		t.Cleanup(func() { opts.Telemetry.Close() })
		return opts, sink
	}
	popts, psink := newOpts()
	proxy := twice(proxyClient(t, url, popts, "table-client"), "get_doc", popts, psink)

	gopts, gsink := newOpts()
	g, err := mcpproxy.NewGateway([]mcpproxy.ServerSpec{{Name: "srv", URL: url}}, gopts)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	gsrv := httptest.NewServer(g.Handler())
	t.Cleanup(func() { gsrv.Close(); g.Close() })
	gcs, err := mcp.NewClient(&mcp.Implementation{Name: "table-client", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: gsrv.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gcs.Close() })
	gateway := twice(gcs, "srv__get_doc", gopts, gsink)

	if !strings.HasPrefix(proxy[1].text, "> [ref: ") || proxy[1].fields.Hints[telemetry.HintRef] != 1 || !strings.HasPrefix(proxy[0].text, "> [id: ") {
		t.Fatalf("no reference through the proxy:\n%s\n%s", proxy[0].text, proxy[1].text)
	}
	for i := range proxy {
		if proxy[i] != gateway[i] {
			t.Errorf("call %d: proxy %+v\ngateway %+v", i+1, proxy[i], gateway[i])
		}
	}

	pipes, err := apiPipelines(cfg)
	if err != nil {
		t.Fatal(err)
	}
	doc := surfaceInputs()[0]
	var parts []string
	for _, id := range []string{"t1", "t2"} {
		parts = append(parts, fmt.Sprintf(`{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":{}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q}]}`, id, doc.tool, id, doc.text))
	}
	body := `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"go"},` + strings.Join(parts, ",") + `]}`
	var ref *apiproxy.Edit
	res := apiproxy.NewRewriter(apiproxy.Options{NoTrim: true, Pipeline: pipes}).Rewrite([]byte(body), 0)
	for i := range res.Edits {
		if res.Edits[i].CallID == "t2" {
			ref = &res.Edits[i]
		}
	}
	if ref == nil || ref.Source != apiproxy.SourceRepeat || !strings.HasPrefix(ref.After, "> [ref: t1 ") || !strings.HasSuffix(ref.After, ", byte-identical]") {
		t.Errorf("terse api: %+v", ref)
	}
}
