package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/terse-dev/terse/apiproxy"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tree"
)

func apiConfig(t *testing.T, text string) *config.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "terse.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestAPIProfile: a conversation's tokenizer comes from the profiles, its
// window only when the config's profiles name the model's variant.
func TestAPIProfile(t *testing.T) {
	cfg := apiConfig(t, `
[[profiles.llm_variants]]
name = "mine"
match = ["my-model*"]
tokenizer = "cl100k_base"
context_window = 32000
`)
	for _, tc := range []struct {
		cfg   *config.Config
		model string
		want  apiproxy.Profile
	}{
		{cfg, "my-model-7b", apiproxy.Profile{Tokenizer: "cl100k_base", Window: 32000}},
		{cfg, "claude-sonnet-4-5", apiproxy.Profile{Tokenizer: "o200k_base"}},
		{config.Default(), "gpt-4", apiproxy.Profile{Tokenizer: "cl100k_base"}},
		{config.Default(), "", apiproxy.Profile{Tokenizer: "o200k_base"}},
		{apiConfig(t, "[profiles]\nllm = \"claude\"\n"), "anything", apiproxy.Profile{Tokenizer: "o200k_base", Window: 200_000}},
	} {
		if got := apiProfile(tc.cfg)(tc.model); got != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.model, got, tc.want)
		}
	}
}

// TestAPITelemetry runs terse api with [telemetry] enabled: each request
// gives one event, written when the proxy stops.
func TestAPITelemetry(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"usage":{"input_tokens":3}}`)
	}))
	defer up.Close()
	dir := filepath.Join(t.TempDir(), "tel")
	cfg := apiConfig(t, "[telemetry]\nenabled = true\ndir = \""+filepath.ToSlash(dir)+"\"\n")
	a := cfg.API
	a.AnthropicUpstream = up.URL
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := startAPI(cfg, a, ln, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"hello there"}]}`
	for range 3 {
		resp, err := http.Post("http://"+ln.Addr().String()+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	s.stop()
	l, err := telemetry.ReadDir(dir, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Records) != 3 {
		t.Fatalf("%d events, want 3", len(l.Records))
	}
	for _, r := range l.Records {
		if r.Entry != telemetry.EntryAPI || r.Tokenizer != "o200k_base" || r.TokensIn == 0 {
			t.Errorf("event %+v", r)
		}
	}
}

// TestN10StatsFile: terse api's stats file is created 0600 and rotated
// before a line would take it past its bound, whole lines only, so the
// file and its predecessor hold at most twice the bound.
func TestN10StatsFile(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"usage":{"input_tokens":3}}`)
	}))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "stats.jsonl")
	cfg := config.Default()
	a := cfg.API
	a.AnthropicUpstream, a.StatsFile = up.URL, path
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := startAPI(cfg, a, ln, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s.stop()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
		t.Fatalf("stats file mode %v, size %d", fi.Mode().Perm(), fi.Size())
	}

	// The bound, on a small one.
	small := filepath.Join(t.TempDir(), "small.jsonl")
	f, err := openStatsFile(small, 100)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range 20 {
		line := strings.Repeat("x", 20+i%7) + "\n"
		lines = append(lines, line)
		if _, err := io.WriteString(f, line); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	cur, _ := os.ReadFile(small)
	prev, _ := os.ReadFile(small + ".1")
	for _, b := range [][]byte{cur, prev} {
		if len(b) == 0 || len(b) > 100 || b[len(b)-1] != '\n' {
			t.Fatalf("a file of %d bytes: %q", len(b), b)
		}
	}
	if got, want := string(prev)+string(cur), strings.Join(lines, ""); !strings.HasSuffix(want, got) {
		t.Fatalf("the files are not the latest lines in order:\n%s", got)
	}
	for _, p := range []string{small, small + ".1"} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", p, fi.Mode(), err)
		}
	}
}

// TestN2APIRewindAfterRestart runs terse api with its state in a store
// directory: a trimmed conversation, then a rewind to an early request,
// then a restart and the rewind again. Every request is answered by the
// upstream (none drops the connection) with a body that is JSON.
func TestN2APIRewindAfterRestart(t *testing.T) {
	var got [][]byte
	var mu sync.Mutex
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		io.WriteString(w, `{"id":"msg_1","usage":{"input_tokens":3}}`)
	}))
	defer up.Close()
	cfg := config.Default()
	cfg.Store.Dir = t.TempDir()
	a := cfg.API
	a.AnthropicUpstream, a.Window = up.URL, 8_000
	reqs := make([]string, 40)
	msgs := []string{`{"role":"user","content":"go through the files"}`}
	for i := range reqs {
		var lines strings.Builder
		for j := range 30 {
			fmt.Fprintf(&lines, "%6d\u2192func f%d_%d() { return compute(%d) }\\n", j, i, j, j*7)
		}
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_%02d","name":"Read","input":{"file_path":"/f%d"}}]}`, i, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%02d","content":"%s"}]}`, i, lines.String()))
		reqs[i] = `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[` + strings.Join(msgs, ",") + `]}`
	}
	serve := func() (*apiServer, string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s, err := startAPI(cfg, a, ln, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return s, "http://" + ln.Addr().String()
	}
	post := func(base, body string) {
		t.Helper()
		resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), "msg_1") {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
	}
	s, base := serve()
	for _, r := range reqs {
		post(base, r)
	}
	post(base, reqs[3])
	s.stop()
	s, base = serve()
	post(base, reqs[3])
	post(base, reqs[39])
	s.stop()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 43 {
		t.Fatalf("the upstream got %d requests, want 43", len(got))
	}
	trimmed := false
	for i, b := range got {
		if _, err := tree.Parse(b); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		trimmed = trimmed || strings.Contains(string(b), "[trimmed")
	}
	if !trimmed {
		t.Fatal("nothing was trimmed: the test shows nothing")
	}
}

// TestAPIPipelines: terse api shapes results with the pipelines the MCP
// side resolves from the same config: a tool rule's JSON filter applies
// (its note leads), a Read result is shaped losslessly even under
// [shape] class "elide", and a text filter, which would leave lines out
// with no way back, is not used.
func TestAPIPipelines(t *testing.T) {
	cfg := apiConfig(t, `
[shape]
class = "elide"

[[tools]]
match = "Bash"
select = ["number", "title"]

[[tools]]
match = "*_logs"
text = { include = ["ERROR"] }
`)
	pipes, err := apiPipelines(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var issues, read, logs strings.Builder
	issues.WriteString("[")
	for i := range 20 {
		if i > 0 {
			issues.WriteString(",")
		}
		fmt.Fprintf(&issues, `{"number":%d,"title":"issue %d","state":"open","body":"a body of the issue that is long enough"}`, i, i)
	}
	issues.WriteString("]")
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&read, "%6d\u2192func f%d() { return compute(%d) }\n", i, i, i*7)
		fmt.Fprintf(&logs, "INFO step %d done\n", i)
	}
	logs.WriteString("ERROR the last step failed\n")
	result := func(id, text string) tree.Value {
		return tree.Object(tree.Member{Key: "type", Value: tree.String("tool_result")}, tree.Member{Key: "tool_use_id", Value: tree.String(id)},
			tree.Member{Key: "content", Value: tree.String(text)})
	}
	use := func(id, name, input string) tree.Value {
		in, _ := tree.ParseString(input)
		return tree.Object(tree.Member{Key: "type", Value: tree.String("tool_use")}, tree.Member{Key: "id", Value: tree.String(id)},
			tree.Member{Key: "name", Value: tree.String(name)}, tree.Member{Key: "input", Value: in})
	}
	msg := func(role string, parts ...tree.Value) tree.Value {
		return tree.Object(tree.Member{Key: "role", Value: tree.String(role)}, tree.Member{Key: "content", Value: tree.Array(parts...)})
	}
	body := tree.AppendJSON(nil, tree.Object(tree.Member{Key: "model", Value: tree.String("claude-sonnet-4-5")},
		tree.Member{Key: "messages", Value: tree.Array(
			tree.Object(tree.Member{Key: "role", Value: tree.String("user")}, tree.Member{Key: "content", Value: tree.String("go")}),
			msg("assistant", use("t1", "Bash", `{"command":"gh issue list --json number,title"}`), use("t2", "Read", `{"file_path":"/a.go"}`), use("t3", "ci_logs", `{}`)),
			msg("user", result("t1", issues.String()), result("t2", read.String()), result("t3", logs.String())),
		)}))
	res := apiproxy.NewRewriter(apiproxy.Options{NoTrim: true, Pipeline: pipes}).Rewrite(body, 0)
	got := map[string]apiproxy.Edit{}
	for _, e := range res.Edits {
		got[e.CallID] = e
	}
	if e, ok := got["t1"]; !ok || e.Source.String() != "filter" || !strings.HasPrefix(e.After, "> [filtered") || strings.Contains(e.After, "a body") {
		t.Errorf("Bash JSON: %+v", e)
	}
	if e, ok := got["t2"]; !ok || !strings.HasPrefix(e.After, "> [lossless: ") {
		t.Errorf("Read: %+v", e)
	}
	if e, ok := got["t3"]; ok {
		t.Errorf("the text filter was used:\n%s", e.After)
	}
}

// TestAPIElidedChunkCommand: an old bulky result of a call that may have
// side effects is elided with a terse chunk command, and that command,
// run as the agent would run it from its shell, prints the original.
func TestAPIElidedChunkCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := apiConfig(t, fmt.Sprintf("[store]\ndir = %q\n", dir))
	st, err := configStore(cfg.Store.Dir, cfg.Store.Redis, cfg.Store.TTL.Duration, 0)
	if err != nil {
		t.Fatal(err)
	}
	chunks, fetch := apiChunkStore(cfg, st)
	rw := apiproxy.NewRewriter(apiproxy.Options{Window: 200_000, EditAge: 2, ChunkStore: chunks, ChunkFetch: fetch})
	var orig strings.Builder
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&orig, "   Compiling crate%d v0.1.%d (/src/crate%d)\n", i, i, i)
	}
	use := func(id, cmd string) tree.Value {
		return tree.Object(tree.Member{Key: "type", Value: tree.String("tool_use")}, tree.Member{Key: "id", Value: tree.String(id)},
			tree.Member{Key: "name", Value: tree.String("Bash")}, tree.Member{Key: "input", Value: tree.Object(tree.Member{Key: "command", Value: tree.String(cmd)})})
	}
	result := func(id, text string) tree.Value {
		return tree.Object(tree.Member{Key: "type", Value: tree.String("tool_result")}, tree.Member{Key: "tool_use_id", Value: tree.String(id)},
			tree.Member{Key: "content", Value: tree.String(text)})
	}
	msg := func(role string, blocks ...tree.Value) tree.Value {
		return tree.Object(tree.Member{Key: "role", Value: tree.String(role)}, tree.Member{Key: "content", Value: tree.Array(blocks...)})
	}
	msgs := []tree.Value{msg("user", tree.Object(tree.Member{Key: "type", Value: tree.String("text")}, tree.Member{Key: "text", Value: tree.String("build it")})),
		msg("assistant", use("toolu_1", "cargo build")), msg("user", result("toolu_1", orig.String()))}
	for i := 2; i <= 5; i++ {
		id := fmt.Sprintf("toolu_%d", i)
		msgs = append(msgs, msg("assistant", use(id, "echo ok")), msg("user", result(id, "ok")))
	}
	body := tree.AppendJSON(nil, tree.Object(tree.Member{Key: "model", Value: tree.String("claude-sonnet-4-5")},
		tree.Member{Key: "messages", Value: tree.Array(msgs...)}))
	res := rw.Rewrite(body, 0)
	if res.Batch == "" || res.Body == nil {
		t.Fatalf("no batch: %+v", res.Skipped)
	}
	var line string
	for _, e := range res.Edits {
		if e.CallID == "toolu_1" && e.Source == apiproxy.SourceElided {
			line = e.After
		}
	}
	_, cmd, ok := strings.Cut(line, "`")
	cmd, _, ok2 := strings.Cut(cmd, "`")
	if !ok || !ok2 || !strings.HasPrefix(cmd, "terse chunk --session api-") {
		t.Fatalf("elided line %q names no terse chunk command", line)
	}
	// The command names the store (not the default directory) itself.
	args := strings.Fields(strings.TrimPrefix(cmd, "terse "))
	var out, errb strings.Builder
	if err := run(t.Context(), args, strings.NewReader(""), &out, &errb); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, errb.String())
	}
	if _, got, _ := strings.Cut(out.String(), "\n"); got != orig.String() {
		t.Fatalf("%s printed\n%s", cmd, out.String())
	}
}
