package apiproxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tree"
)

func jsonIssues() string {
	return `[` + strings.Repeat(`{"id": 12345, "name": "widget", "status": "active"},`, 20) + `{"id": 1}]`
}

// TestDryRun: the upstream gets the original body; the stats say what
// rewriting would have saved.
func TestDryRun(t *testing.T) {
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"usage":{"input_tokens":7}}`) }
	srv, st := newProxy(t, up, func(c *Config) { c.DryRun = true })
	var c convo
	c.user("list")
	c.call("Bash", `{"command":"list --json"}`, jsonIssues())
	body := c.request()
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := up.last(t).body; !bytes.Equal(got, body) {
		t.Fatalf("dry run changed the body:\n%s", got)
	}
	srv.Close()
	st.Close()
	tot, _ := st.Snapshot()
	if tot.Rewritten != 0 || tot.Saved["encoding"] <= 0 || tot.TokensAfter >= tot.TokensBefore || tot.Usage.Input != 7 {
		t.Fatalf("stats %+v", tot)
	}
	if s := st.Summary(); !strings.Contains(s, "encoding") {
		t.Fatalf("summary:\n%s", s)
	}
}

func TestMetrics(t *testing.T) {
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) }
	srv, st := newProxy(t, up, nil)
	var c convo
	c.user("list")
	c.call("Bash", `{"command":"list --json"}`, jsonIssues())
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(c.request()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Close()
	st.Close()
	w := httptest.NewRecorder()
	st.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	out := w.Body.String()
	for _, want := range []string{"terse_api_requests_total 1", `terse_api_tokens_saved_total{source="encoding",tokenizer="o200k_base"}`, "terse_api_rewritten_total 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q:\n%s", want, out)
		}
	}
}

// TestResponsesRewrite: a repeated output becomes a reference, a JSON
// output is re-encoded, every other item is untouched.
func TestResponsesRewrite(t *testing.T) {
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf("notes %d: the file was read", i))
	}
	long := strings.Join(lines, "\n")
	body := tree.AppendJSON(nil, obj("model", "gpt-5", "instructions", "x", "input", []tree.Value{
		obj("type", "message", "role", "user", "content", []tree.Value{obj("type", "input_text", "text", "hi")}),
		obj("type", "function_call", "call_id", "c1", "name", "shell", "arguments", `{"command":["ls"]}`),
		obj("type", "function_call_output", "call_id", "c1", "output", long),
		obj("type", "reasoning", "encrypted_content", "opaque"),
		obj("type", "function_call", "call_id", "c2", "name", "shell", "arguments", `{"command":["ls"]}`),
		obj("type", "function_call_output", "call_id", "c2", "output", long),
		obj("type", "function_call", "call_id", "c3", "name", "shell", "arguments", `{"command":["gh","api"]}`),
		obj("type", "function_call_output", "call_id", "c3", "output", jsonIssues()),
	}))
	res := NewRewriter(Options{}).Rewrite(body, history.Responses)
	if res.Body == nil || len(res.Edits) != 2 {
		t.Fatalf("edits %+v", res.Edits)
	}
	for _, v := range checkResponses(body, res.Body, true) {
		t.Error(v)
	}
	if !bytes.Contains(res.Body, []byte(`> [ref: c1 (shell), byte-identical]`)) {
		t.Fatalf("no reference:\n%s", res.Body)
	}
}

// TestToolFilter: a configured filter applies by tool name, its note
// leading the re-encoded result.
func TestToolFilter(t *testing.T) {
	rule, err := filter.Compile(filter.Spec{Select: []filter.Field{{Out: "id", Path: "id"}, {Out: "name", Path: "name"}}})
	if err != nil {
		t.Fatal(err)
	}
	filtered, err := terse.New(&terse.Options{Format: "auto", Filter: rule})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := terse.New(&terse.Options{Format: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	rw := NewRewriter(Options{Pipeline: func(_, name string) *terse.Pipeline {
		if name == "Bash" {
			return filtered
		}
		return plain
	}})
	var c convo
	c.user("list")
	c.call("Bash", `{"command":"list --json"}`, jsonIssues())
	c.call("Other", `{"command":"list --json"}`, jsonIssues()+" ")
	res := rw.Rewrite(c.request(), history.Anthropic)
	if len(res.Edits) != 2 || res.Edits[0].Source != SourceFilter || res.Edits[1].Source != SourceEncoding {
		t.Fatalf("edits %+v", res.Edits)
	}
	if !strings.HasPrefix(res.Edits[0].After, "> [filtered") || strings.Contains(res.Edits[0].After, "active") {
		t.Fatalf("filtered result:\n%s", res.Edits[0].After)
	}
}

// TestStatsFile: one JSON line per request, naming the tokenizer.
func TestStatsFile(t *testing.T) {
	var buf bytes.Buffer
	st := NewStats(nil, &buf)
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"cache_read_input_tokens\":10}}}\n\n")
		io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":5}}\n\n")
	}
	p, err := New(Config{Anthropic: up.URL, Rewriter: NewRewriter(Options{}), Stats: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	var c convo
	c.user("list")
	c.call("Bash", `{"command":"list --json"}`, jsonIssues())
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(c.request()))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	srv.Close()
	st.Close()
	v, err := tree.Parse(bytes.TrimSpace(buf.Bytes()))
	if err != nil {
		t.Fatalf("stats line %q: %v", buf.Bytes(), err)
	}
	u := get(v, "usage")
	if get(v, "tokenizer").Str() != "o200k_base" || !get(v, "rewritten").Bool() ||
		get(u, "input").Num() != "12" || get(u, "cache_read").Num() != "10" || get(u, "output").Num() != "5" {
		t.Fatalf("stats line %s", buf.Bytes())
	}
}

// TestConcurrentConversations sends the turns of several conversations at
// once (run with -race): each upstream body is one a lone rewriter would
// write for that turn.
func TestConcurrentConversations(t *testing.T) {
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) }
	srv, _ := newProxy(t, up, func(c *Config) { c.Rewriter = NewRewriter(Options{Window: 8_000}) })
	const convs, turns = 4, 12
	want := make(map[string]bool)
	reqs := make([][][]byte, convs)
	for k := range convs {
		var c convo
		c.user(fmt.Sprintf("conversation %d", k))
		lone := NewRewriter(Options{Window: 8_000})
		for i := range turns {
			c.call("Read", fmt.Sprintf(`{"file_path":"/f%d"}`, i), fileText(fmt.Sprintf("c%d_%d", k, i), 30))
			body := c.request()
			reqs[k] = append(reqs[k], body)
			res := lone.Rewrite(body, history.Anthropic)
			if res.Body != nil {
				body = res.Body
			}
			want[string(body)] = true
		}
	}
	var wg sync.WaitGroup
	for k := range convs {
		wg.Go(func() {
			for _, body := range reqs[k] {
				resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.seen) != convs*turns {
		t.Fatalf("upstream saw %d requests", len(up.seen))
	}
	for _, s := range up.seen {
		if !want[string(s.body)] {
			t.Fatalf("upstream body differs from a lone rewriter's: %.200s", s.body)
		}
	}
}

// TestIncludeExclude: only included tools' results are re-encoded, and
// never excluded ones.
func TestIncludeExclude(t *testing.T) {
	var c convo
	c.user("list")
	c.call("Bash", `{"command":"a"}`, jsonIssues())
	c.call("mcp__gh__list", `{"q":"b"}`, jsonIssues()+" ")
	c.call("mcp__gh__search", `{"q":"c"}`, jsonIssues()+"  ")
	body := c.request()
	tools := func(o Options) []string {
		var out []string
		for _, e := range NewRewriter(o).Rewrite(body, history.Anthropic).Edits {
			out = append(out, e.Tool)
		}
		return out
	}
	if got := tools(Options{}); len(got) != 3 {
		t.Fatalf("default: %v", got)
	}
	if got := tools(Options{Include: []string{"mcp__*"}, Exclude: []string{"*search"}}); !slices.Equal(got, []string{"mcp__gh__list"}) {
		t.Fatalf("include mcp__*, exclude *search: %v", got)
	}
}

// TestStoreContinues: a rewriter that starts over with the same store
// (a restarted proxy, another replica) writes what the first would have
// written.
func TestStoreContinues(t *testing.T) {
	st := &store.Mem{}
	first := NewRewriter(Options{Window: 8_000, Store: st})
	alone := NewRewriter(Options{Window: 8_000})
	var c convo
	c.user("go through the files")
	moved := false
	for i := range 30 {
		c.call("Read", fmt.Sprintf(`{"file_path":"/f%d"}`, i), fileText(fmt.Sprintf("f%d_", i), 30))
		a := first.Rewrite(c.request(), history.Anthropic)
		alone.Rewrite(c.request(), history.Anthropic)
		moved = moved || a.PrefixChanged
	}
	if !moved {
		t.Fatal("trimming never started")
	}
	c.call("Read", `{"file_path":"/last"}`, fileText("last", 30))
	restarted := NewRewriter(Options{Window: 8_000, Store: st}).Rewrite(c.request(), history.Anthropic)
	want := alone.Rewrite(c.request(), history.Anthropic)
	if !bytes.Equal(restarted.Body, want.Body) {
		t.Fatalf("a restarted rewriter differs:\n%.300s\nwant\n%.300s", restarted.Body, want.Body)
	}
	fresh := NewRewriter(Options{Window: 8_000}).Rewrite(c.request(), history.Anthropic)
	if bytes.Equal(fresh.Body, want.Body) {
		t.Fatal("a rewriter without the state writes the same: the test shows nothing")
	}
}

// TestMetricsCountCostApart: a request whose edit cost tokens (a
// negative part) adds to terse_api_tokens_cost_total; the saved counter
// never goes down, as a Prometheus counter must not.
func TestMetricsCountCostApart(t *testing.T) {
	st := NewStats(nil, nil)
	body := []byte(`{"messages":[{"role":"user","content":"hi"}]}`)
	st.record(&exchange{path: "/v1/messages", status: 200, before: body, after: body, res: Result{Edits: []Edit{
		{Source: SourceEncoding, Before: "a b", After: "a b c d e f g"},
	}}}, Usage{})
	st.Close()
	tot, _ := st.Snapshot()
	n := tot.Saved["encoding"]
	if n >= 0 {
		t.Fatalf("encoding saved %d, want a cost (negative)", n)
	}
	w := httptest.NewRecorder()
	st.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	out := w.Body.String()
	for _, want := range []string{
		`terse_api_tokens_saved_total{source="encoding",tokenizer="o200k_base"} 0`,
		fmt.Sprintf(`terse_api_tokens_cost_total{source="encoding",tokenizer="o200k_base"} %d`, -n),
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, out)
		}
	}
}
