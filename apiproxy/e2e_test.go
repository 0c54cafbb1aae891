package apiproxy

// End-to-end tests: the official SDKs as clients, through the proxy, to a
// local upstream that replays recorded streams.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go"
	ooption "github.com/openai/openai-go/option"
	"github.com/openai/openai-go/responses"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
)

// recorded is one recorded response stream as SSE events.
type recorded struct {
	name   string
	events [][]byte // each "event: …\ndata: …\n\n" block
	broken bool     // some recorded event is not valid JSON
}

func (r recorded) body() []byte { return bytes.Join(r.events, nil) }

// streams reads the recorded streams of a provider ("anthropic" or
// "openai") whose names contain sub: raw .sse files split at blank lines,
// and .chunks.jsonl files (one event object a line) written as SSE.
func streams(tb testing.TB, provider, sub string) []recorded {
	dir := filepath.Join(corpus.Dir(tb, "corpus"), "llm-api", provider)
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	var out []recorded
	for _, f := range files {
		name := filepath.Base(f)
		if !strings.Contains(name, sub) {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var r recorded
		r.name = name
		switch {
		case strings.HasSuffix(name, ".sse"):
			for len(data) > 0 {
				i := bytes.Index(data, []byte("\n\n"))
				if i < 0 {
					r.events = append(r.events, data)
					break
				}
				r.events = append(r.events, data[:i+2])
				data = data[i+2:]
			}
		case strings.HasSuffix(name, ".chunks.jsonl"):
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				line := sc.Bytes()
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				v, err := tree.Parse(line)
				typ := get(v, "type").Str()
				if err != nil {
					r.broken = true
					_, rest, _ := bytes.Cut(line, []byte(`"type":"`))
					t, _, _ := bytes.Cut(rest, []byte(`"`))
					typ = string(t)
				}
				ev := "event: " + typ + "\ndata: " + string(line) + "\n\n"
				r.events = append(r.events, []byte(ev))
			}
		default:
			continue
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		tb.Skipf("no recorded %s streams matching %q", provider, sub)
	}
	return out
}

// upstream is a local provider: it records each request and answers with
// handle.
type upstream struct {
	*httptest.Server
	mu     sync.Mutex
	seen   []seenRequest
	handle func(w http.ResponseWriter, r *http.Request)
}

type seenRequest struct {
	method, path, query string
	header              http.Header
	body                []byte
	sum                 [32]byte
	size                int64
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		var buf bytes.Buffer
		n, _ := io.Copy(io.MultiWriter(h, &limitedBuffer{&buf, 1 << 20}), r.Body)
		s := seenRequest{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: buf.Bytes(), size: n}
		h.Sum(s.sum[:0])
		u.mu.Lock()
		u.seen = append(u.seen, s)
		handle := u.handle
		u.mu.Unlock()
		handle(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) last(t *testing.T) seenRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.seen) == 0 {
		t.Fatal("upstream saw no request")
	}
	return u.seen[len(u.seen)-1]
}

// limitedBuffer keeps the first n bytes written.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// serveEvents writes events one at a time, flushing each.
func serveEvents(events [][]byte) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Request-Id", "req_test")
		w.WriteHeader(http.StatusOK)
		for _, e := range events {
			w.Write(e)
			w.(http.Flusher).Flush()
		}
	}
}

// newProxy starts the proxy in front of up for both providers.
func newProxy(t *testing.T, up *upstream, mod func(*Config)) (*httptest.Server, *Stats) {
	st := NewStats(nil, nil)
	cfg := Config{Anthropic: up.URL, OpenAI: up.URL, Rewriter: NewRewriter(Options{}), Stats: st}
	if mod != nil {
		mod(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); st.Close() })
	return srv, st
}

// teeClient is an HTTP client that keeps the raw response bytes.
type teeClient struct {
	mu     sync.Mutex
	raw    bytes.Buffer
	header http.Header // of the last response
}

func (c *teeClient) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	resp.Body = &teeBody{rc: resp.Body, c: c}
	c.mu.Lock()
	c.header = resp.Header.Clone()
	c.mu.Unlock()
	return resp, nil
}

type teeBody struct {
	rc io.ReadCloser
	c  *teeClient
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.c.mu.Lock()
	b.c.raw.Write(p[:n])
	b.c.mu.Unlock()
	return n, err
}

func (b *teeBody) Close() error { return b.rc.Close() }

func (c *teeClient) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.raw.Bytes())
}

func anthropicClient(base string, hc aoption.HTTPClient) anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(base), aoption.WithAPIKey("sk-ant-test-key"),
		aoption.WithHTTPClient(hc), aoption.WithMaxRetries(0), aoption.WithHeader("X-Custom", "kept as is"))
}

func openaiClient(base string, hc ooption.HTTPClient) openai.Client {
	return openai.NewClient(ooption.WithBaseURL(base+"/v1/"), ooption.WithAPIKey("sk-test-key"),
		ooption.WithHTTPClient(hc), ooption.WithMaxRetries(0), ooption.WithHeader("X-Custom", "kept as is"))
}

var anthropicParams = anthropic.MessageNewParams{
	Model:     anthropic.ModelClaudeSonnet4_6,
	MaxTokens: 1024,
	Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?"))},
}

func TestAnthropicStreamsThroughSDK(t *testing.T) {
	for _, rec := range streams(t, "anthropic", "") {
		t.Run(rec.name, func(t *testing.T) {
			up := newUpstream(t)
			up.handle = serveEvents(rec.events)
			srv, _ := newProxy(t, up, nil)
			tc := &teeClient{}
			c := anthropicClient(srv.URL, tc)
			stream := c.Messages.NewStreaming(context.Background(), anthropicParams)
			n := 0
			for stream.Next() {
				n++
			}
			if err := stream.Err(); err != nil && !strings.Contains(rec.name, "incomplete") && !strings.Contains(rec.name, "programmatic") {
				t.Fatalf("stream: %v", err)
			}
			if n == 0 {
				t.Fatal("no events")
			}
			if got, want := tc.bytes(), rec.body(); !bytes.Equal(got, want) {
				t.Fatalf("client received %d bytes, upstream sent %d; streams differ", len(got), len(want))
			}
			if h := tc.header; h.Get("Request-Id") != "req_test" || h.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("response headers %v", h)
			}
			s := up.last(t)
			if s.path != "/v1/messages" || s.header.Get("X-Api-Key") != "sk-ant-test-key" ||
				s.header.Get("Anthropic-Version") == "" || s.header.Get("X-Custom") != "kept as is" {
				t.Fatalf("upstream saw %s with headers %v", s.path, s.header)
			}
		})
	}
}

func TestOpenAIChatStreamsThroughSDK(t *testing.T) {
	for _, rec := range streams(t, "openai", "chat-stream") {
		t.Run(rec.name, func(t *testing.T) {
			up := newUpstream(t)
			up.handle = serveEvents(rec.events)
			srv, st := newProxy(t, up, nil)
			tc := &teeClient{}
			c := openaiClient(srv.URL, tc)
			stream := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
				Model:    openai.ChatModelGPT4o,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
			})
			n := 0
			for stream.Next() {
				n++
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if got, want := tc.bytes(), rec.body(); !bytes.Equal(got, want) || n == 0 {
				t.Fatalf("client received %d bytes in %d events, upstream sent %d", len(got), n, len(want))
			}
			s := up.last(t)
			if s.path != "/v1/chat/completions" || s.header.Get("Authorization") != "Bearer sk-test-key" || s.header.Get("X-Custom") != "kept as is" {
				t.Fatalf("upstream saw %s with headers %v", s.path, s.header)
			}
			srv.Close()
			st.Close()
			if tot, _ := st.Snapshot(); tot.Calls != 1 || (bytes.Contains(rec.body(), []byte(`"prompt_tokens"`)) && tot.Usage.Input == 0) {
				t.Fatalf("stats: %+v", tot)
			}
		})
	}
}

func TestOpenAIResponsesStreamsThroughSDK(t *testing.T) {
	for _, rec := range streams(t, "openai", "responses") {
		t.Run(rec.name, func(t *testing.T) {
			up := newUpstream(t)
			up.handle = serveEvents(rec.events)
			srv, _ := newProxy(t, up, nil)
			tc := &teeClient{}
			c := openaiClient(srv.URL, tc)
			stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
				Model: "gpt-5",
				Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")},
			})
			n := 0
			for stream.Next() {
				n++
			}
			if rec.broken {
				// The SDK stops at the first event that is not JSON; a
				// plain client checks the bytes.
				resp, err := http.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader(`{"model":"gpt-5","input":"hello","stream":true}`))
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || !bytes.Equal(got, rec.body()) {
					t.Fatalf("client received %d bytes (%v), upstream sent %d", len(got), err, len(rec.body()))
				}
				return
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if got, want := tc.bytes(), rec.body(); !bytes.Equal(got, want) || n != len(rec.events) {
				t.Fatalf("client received %d bytes in %d events, upstream sent %d in %d", len(got), n, len(want), len(rec.events))
			}
		})
	}
}

// TestFirstEventBeforeUpstreamFinishes: the upstream sends one event and
// then waits until the client has it; a proxy that buffered would never
// let the client see it.
func TestFirstEventBeforeUpstreamFinishes(t *testing.T) {
	rec := streams(t, "anthropic", "tool-use-response")[0]
	release := make(chan struct{})
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(rec.events[0])
		w.(http.Flusher).Flush()
		<-release
		for _, e := range rec.events[1:] {
			w.Write(e)
		}
	}
	srv, _ := newProxy(t, up, nil)
	c := anthropicClient(srv.URL, http.DefaultClient)
	stream := c.Messages.NewStreaming(context.Background(), anthropicParams)
	got := make(chan string, 1)
	go func() {
		if stream.Next() {
			got <- stream.Current().Type
		} else {
			got <- "error: " + errString(stream.Err())
		}
	}()
	select {
	case typ := <-got:
		if typ != "message_start" {
			t.Fatalf("first event %q", typ)
		}
	case <-time.After(30 * time.Second): // a guard against hanging, not a measurement
		close(release)
		t.Fatal("the first event did not arrive while the upstream was still sending")
	}
	close(release)
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
}

func errString(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}

func TestUnknownPathsPassThrough(t *testing.T) {
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Upstream", "yes")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, `{"odd": "body" }`)
	}
	srv, _ := newProxy(t, up, nil)
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/v1/models?limit=3", ""},
		{"POST", "/v1/messages/count_tokens", `{"model":"x",  "messages":[]}`},
		{"PUT", "/some/thing", "raw bytes \x00\x01"},
		{"GET", "/v1/messages", ""},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("X-Api-Key", "secret")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("Authorization", "Bearer abc")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTeapot || string(body) != `{"odd": "body" }` || resp.Header.Get("X-Upstream") != "yes" {
			t.Fatalf("%s %s: %d %q", tc.method, tc.path, resp.StatusCode, body)
		}
		s := up.last(t)
		path, query, _ := strings.Cut(tc.path, "?")
		if s.method != tc.method || s.path != path || s.query != query || string(s.body) != tc.body ||
			s.header.Get("X-Api-Key") != "secret" || s.header.Get("Authorization") != "Bearer abc" {
			t.Fatalf("%s %s: upstream saw %s %s?%s %q", tc.method, tc.path, s.method, s.path, s.query, s.body)
		}
	}
}

func TestUpstreamErrorsReachClient(t *testing.T) {
	for _, code := range []int{400, 401, 429, 500, 529} {
		up := newUpstream(t)
		body := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
		up.handle = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			io.WriteString(w, body)
		}
		srv, _ := newProxy(t, up, nil)
		tc := &teeClient{}
		c := anthropicClient(srv.URL, tc)
		_, err := c.Messages.New(context.Background(), anthropicParams)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != code {
			t.Fatalf("%d: got %v", code, err)
		}
		if got := tc.bytes(); string(got) != body {
			t.Fatalf("%d: body %q", code, got)
		}
	}
}

// TestMidStreamResetReachesClient: the upstream drops the connection after
// a few events; the client gets those events and then an error, not a
// clean end.
func TestMidStreamResetReachesClient(t *testing.T) {
	rec := streams(t, "anthropic", "tool-use-response")[0]
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range rec.events[:3] {
			w.Write(e)
		}
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drop the connection
	}
	srv, _ := newProxy(t, up, nil)
	tc := &teeClient{}
	c := anthropicClient(srv.URL, tc)
	stream := c.Messages.NewStreaming(context.Background(), anthropicParams)
	n := 0
	for stream.Next() {
		n++
	}
	if stream.Err() == nil {
		t.Fatal("stream ended cleanly after a reset")
	}
	if want := bytes.Join(rec.events[:3], nil); !bytes.Equal(tc.bytes(), want) {
		t.Fatalf("client got %q, want %q", tc.bytes(), want)
	}
}

// TestRewrittenThroughSDK: a long conversation sent with the SDK reaches
// the upstream rewritten (a JSON tool result re-encoded), the response
// comes back byte-identical, and the bypass header forwards the original.
func TestRewrittenThroughSDK(t *testing.T) {
	up := newUpstream(t)
	reply := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":120,"cache_read_input_tokens":100,"output_tokens":2}}`
	up.handle = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}
	srv, st := newProxy(t, up, nil)
	jsonResult := `[` + strings.Repeat(`{"id": 12345, "name": "widget", "status": "active", "owner": {"login": "someone"}},`, 30) + `{"id": 1}]`
	params := anthropicParams
	params.System = []anthropic.TextBlockParam{{Text: "You are terse."}}
	params.Messages = []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("list the widgets")),
		anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("toolu_1", map[string]any{"command": "widgets --json"}, "Bash")),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("toolu_1", jsonResult, false)),
	}
	for _, bypass := range []bool{false, true} {
		tc := &teeClient{}
		c := anthropicClient(srv.URL, tc)
		var opts []aoption.RequestOption
		if bypass {
			opts = append(opts, aoption.WithHeader(BypassHeader, "1"))
		}
		msg, err := c.Messages.New(context.Background(), params, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Content[0].Text != "ok" || string(tc.bytes()) != reply {
			t.Fatalf("response changed: %q", tc.bytes())
		}
		s := up.last(t)
		rewritten := !bytes.Contains(s.body, []byte(`"status": "active"`)) && !bytes.Contains(s.body, []byte(`\"status\": \"active\"`))
		if rewritten == bypass {
			t.Fatalf("bypass %v: upstream body %s", bypass, s.body)
		}
		if !bytes.Contains(s.body, []byte(`"You are terse."`)) || !bytes.Contains(s.body, []byte(`"list the widgets"`)) {
			t.Fatalf("system or user text changed: %s", s.body)
		}
	}
	srv.Close()
	st.Close()
	tot, _ := st.Snapshot()
	if tot.Calls != 2 || tot.Rewritten != 1 || tot.Saved["encoding"] <= 0 || tot.Usage.CacheRead != 200 {
		t.Fatalf("stats %+v", tot)
	}
}

func TestMalformedBodyPassesThrough(t *testing.T) {
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(400) }
	srv, _ := newProxy(t, up, nil)
	for _, body := range []string{"{not json", `{"messages": 3}`, `[]`, "", `{"model":"x","messages":[{"role":"wizard","content":"hi"}]}`} {
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if s := up.last(t); string(s.body) != body || resp.StatusCode != 400 {
			t.Fatalf("body %q reached the upstream as %q (status %d)", body, s.body, resp.StatusCode)
		}
	}
}

// TestLargeBodyBoundedMemory sends a 50 MB request: it reaches the
// upstream whole and identical while the proxy allocates far less than
// its size.
func TestLargeBodyBoundedMemory(t *testing.T) {
	const size = 50 << 20
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") }
	srv, _ := newProxy(t, up, func(c *Config) { c.MaxBody = 1 << 20 })
	gen := func() io.Reader {
		return io.MultiReader(strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"`),
			io.LimitReader(repeatReader('a'), size), strings.NewReader(`"}]}`))
	}
	h := sha256.New()
	io.Copy(h, gen())
	var want [32]byte
	h.Sum(want[:0])
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", gen())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	runtime.ReadMemStats(&after)
	s := up.last(t)
	if s.sum != want || s.size != size+int64(len(`{"model":"m","messages":[{"role":"user","content":"`)+len(`"}]}`)) {
		t.Fatalf("upstream got %d bytes, not the request", s.size)
	}
	// The upstream keeps 1 MB of what it saw; the proxy at most about
	// twice its 1 MB limit; transport buffers are small.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("allocated %d MB for a 50 MB request", alloc>>20)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestOpenAIChatRewrittenThroughSDK: a Chat Completions conversation sent
// with the OpenAI SDK reaches the upstream with its JSON tool result
// re-encoded and everything else as sent; the stream comes back whole.
func TestOpenAIChatRewrittenThroughSDK(t *testing.T) {
	rec := streams(t, "openai", "chat-stream")[0]
	up := newUpstream(t)
	up.handle = serveEvents(rec.events)
	srv, _ := newProxy(t, up, nil)
	tc := &teeClient{}
	c := openaiClient(srv.URL, tc)
	call := openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallParam{{
		ID: "call_1", Function: openai.ChatCompletionMessageToolCallFunctionParam{Name: "list_widgets", Arguments: `{"owner":"someone"}`},
	}}}
	jsonResult := `[` + strings.Repeat(`{"id": 12345, "name": "widget", "status": "active"},`, 30) + `{"id": 1}]`
	stream := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: openai.ChatModelGPT4o,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are terse."),
			openai.UserMessage("list the widgets"),
			{OfAssistant: &call},
			openai.ToolMessage(jsonResult, "call_1"),
		},
	})
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tc.bytes(), rec.body()) {
		t.Fatal("stream changed")
	}
	s := up.last(t)
	if bytes.Contains(s.body, []byte(`"status": "active"`)) || bytes.Contains(s.body, []byte(`\"status\": \"active\"`)) {
		t.Fatalf("tool result not re-encoded: %s", s.body)
	}
	for _, want := range []string{`"You are terse."`, `"list the widgets"`, `"tool_call_id":"call_1"`, `"arguments":"{\"owner\":\"someone\"}"`} {
		if !bytes.Contains(s.body, []byte(want)) {
			t.Fatalf("upstream body lacks %s: %s", want, s.body)
		}
	}
}

// TestOpenAIResponsesRewrittenThroughSDK: a Responses API request with
// tool items, sent with the OpenAI SDK, reaches the upstream with its JSON
// output re-encoded and its other items as sent.
func TestOpenAIResponsesRewrittenThroughSDK(t *testing.T) {
	rec := streams(t, "openai", "responses-programmatic")[0]
	up := newUpstream(t)
	up.handle = serveEvents(rec.events)
	srv, _ := newProxy(t, up, nil)
	c := openaiClient(srv.URL, http.DefaultClient)
	jsonResult := `[` + strings.Repeat(`{"id": 12345, "name": "widget", "status": "active"},`, 30) + `{"id": 1}]`
	items := []map[string]any{
		{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": "list the widgets"}}},
		{"type": "reasoning", "id": "rs_1", "summary": []any{}, "encrypted_content": "gAAAA-opaque"},
		{"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": `{"command":["widgets","--json"]}`},
		{"type": "function_call_output", "call_id": "call_1", "output": jsonResult},
	}
	stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: "gpt-5"},
		ooption.WithJSONSet("input", items), ooption.WithJSONSet("instructions", "You are terse."))
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	s := up.last(t)
	if s.path != "/v1/responses" || bytes.Contains(s.body, []byte(`\"status\": \"active\"`)) {
		t.Fatalf("output not re-encoded: %s", s.body)
	}
	for _, want := range []string{`"You are terse."`, `"list the widgets"`, `"encrypted_content":"gAAAA-opaque"`, `"call_id":"call_1"`} {
		if !bytes.Contains(s.body, []byte(want)) {
			t.Fatalf("upstream body lacks %s: %s", want, s.body)
		}
	}
}
