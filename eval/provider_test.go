package eval

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// testdataDocs loads testdata/docs.
func testdataDocs(t testing.TB) []Document {
	t.Helper()
	paths, err := filepath.Glob("testdata/docs/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatal("no testdata documents", err)
	}
	var docs []Document
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			t.Fatal(p, err)
		}
		docs = append(docs, Document{Name: filepath.Base(p), Value: v})
	}
	return docs
}

// fakeProvider is a local model endpoint speaking one API's wire format. It
// answers each question with its gold answer (in the style of answer,
// which may garble it), fails the first request of each question with 429
// or 500 when told to, and replies with a malformed body to questions named
// in malformed.
type fakeProvider struct {
	t         *testing.T
	api       string
	gold      map[string]string // question text → reply
	malformed map[string]bool
	fail429   bool
	fail500   bool

	mu       sync.Mutex
	requests int
	failed   map[string]bool
	headers  http.Header
}

func (f *fakeProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests++
	f.headers = r.Header.Clone()
	f.mu.Unlock()
	var req struct {
		Model    string `json:"model"`
		System   string `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	wantPath := map[string]string{APIAnthropic: "/v1/messages", APIOpenAI: "/chat/completions"}[f.api]
	if r.URL.Path != wantPath {
		http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
		return
	}
	prompt := req.Messages[len(req.Messages)-1].Content
	_, question, _ := strings.Cut(prompt, "\n\nQuestion: ")
	f.mu.Lock()
	first := !f.failed[question]
	f.failed[question] = true
	f.mu.Unlock()
	if first && f.fail429 {
		w.Header().Set("Retry-After", "7")
		http.Error(w, `{"error":{"type":"rate_limit_error"}}`, http.StatusTooManyRequests)
		return
	}
	if first && f.fail500 {
		http.Error(w, `{"error":"overloaded"}`, http.StatusBadGateway)
		return
	}
	if f.malformed[question] {
		io.WriteString(w, `{"id":"x","content":`) // cut short
		return
	}
	answer, ok := f.gold[question]
	if !ok {
		answer = "I don't know"
	}
	w.Header().Set("Content-Type", "application/json")
	switch f.api {
	case APIAnthropic:
		json.NewEncoder(w).Encode(map[string]any{
			"type": "message", "role": "assistant", "model": req.Model,
			"content":     []map[string]string{{"type": "text", "text": answer}},
			"stop_reason": "end_turn",
			"usage":       map[string]int{"input_tokens": len(prompt) / 4, "output_tokens": 3},
		})
	case APIOpenAI:
		json.NewEncoder(w).Encode(map[string]any{
			"object":  "chat.completion",
			"choices": []map[string]any{{"index": 0, "message": map[string]string{"role": "assistant", "content": answer}, "finish_reason": "stop"}},
			"usage":   map[string]int{"prompt_tokens": len(prompt) / 4, "completion_tokens": 3},
		})
	}
}

// e2eQuestions returns questions about the testdata documents and the
// fake model's replies: the gold answer, reworded as a model might.
func e2eQuestions(t *testing.T) ([]Document, []Question, map[string]string) {
	docs := testdataDocs(t)
	var qs []Question
	for _, d := range docs {
		qs = append(qs, Generate(d, 6, 3)...)
	}
	gold := map[string]string{}
	for i, q := range qs {
		switch i % 3 {
		case 0:
			gold[q.Text] = q.Answer
		case 1:
			gold[q.Text] = "Answer: " + q.Answer + "."
		case 2:
			gold[q.Text] = "`" + q.Answer + "`\n\nThat is what the document says."
		}
	}
	return docs, qs, gold
}

func TestHTTPReaderEndToEnd(t *testing.T) {
	for _, api := range []string{APIAnthropic, APIOpenAI} {
		t.Run(api, func(t *testing.T) {
			docs, qs, gold := e2eQuestions(t)
			fake := &fakeProvider{t: t, api: api, gold: gold, fail429: true, failed: map[string]bool{}}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			var slept []time.Duration
			var sleptMu sync.Mutex
			cache := t.TempDir()
			newReader := func() *HTTPReader {
				base := srv.URL
				if api == APIOpenAI {
					base += "/v1/" // trailing slash is trimmed
					base = strings.TrimSuffix(base, "v1/")
				}
				return &HTTPReader{API: api, BaseURL: base, Model: "fake-1", Key: "sk-test", CacheDir: cache,
					Sleep: func(_ context.Context, d time.Duration) error {
						sleptMu.Lock()
						slept = append(slept, d)
						sleptMu.Unlock()
						return nil
					}}
			}
			cfg := Config{Docs: docs, Questions: qs, Encodings: []Encoding{JSONEncoding(), RenderEncoding("auto", tokens.O200kBase())}, Counter: tokens.O200kBase(), Seed: 1}

			// First run: every question is rate-limited once, then answered.
			h := newReader()
			cfg.Reader = h
			plan, err := Prepare(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			est := plan.Estimate()
			items := len(qs) * 2
			if est.Requests != items || est.Cached != 0 || est.InputTokens == 0 {
				t.Errorf("estimate before the first run = %+v, want %d requests", est, items)
			}
			rep, err := plan.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range rep.Encodings {
				if e.Correct != e.Questions || e.Errors != 0 {
					t.Errorf("%s: %d/%d correct, %d errors", e.Name, e.Correct, e.Questions, e.Errors)
				}
			}
			// Each question text is rate-limited once (its first request,
			// whichever encoding that was), with Retry-After: 7.
			if want := len(qs) + items; fake.requests != want || h.Sent() != want {
				t.Errorf("first run sent %d (server saw %d), want %d", h.Sent(), fake.requests, want)
			}
			if len(slept) != len(qs) {
				t.Errorf("slept %d times, want %d", len(slept), len(qs))
			}
			for _, d := range slept {
				if d != 7*time.Second {
					t.Errorf("slept %v, want Retry-After 7s", d)
					break
				}
			}
			switch api {
			case APIAnthropic:
				if fake.headers.Get("x-api-key") != "sk-test" || fake.headers.Get("anthropic-version") == "" {
					t.Errorf("anthropic headers: %v", fake.headers)
				}
			case APIOpenAI:
				if fake.headers.Get("Authorization") != "Bearer sk-test" {
					t.Errorf("openai headers: %v", fake.headers)
				}
			}

			// Second run: everything from the cache, nothing sent.
			before := fake.requests
			h2 := newReader()
			cfg.Reader = h2
			plan2, err := Prepare(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if est := plan2.Estimate(); est.Requests != 0 || est.Cached != items {
				t.Errorf("estimate before the second run = %+v, want all %d cached", est, items)
			}
			rep2, err := plan2.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if fake.requests != before || h2.Sent() != 0 {
				t.Errorf("second run sent %d requests, want 0", fake.requests-before)
			}
			for i, r := range rep2.Results {
				if !r.Cached || r.Correct != rep.Results[i].Correct {
					t.Errorf("second run result %d = %+v", i, r)
					break
				}
			}
		})
	}
}

func TestHTTPReaderMalformedAndServerErrors(t *testing.T) {
	for _, api := range []string{APIAnthropic, APIOpenAI} {
		t.Run(api, func(t *testing.T) {
			docs, qs, gold := e2eQuestions(t)
			bad := qs[1].Text
			fake := &fakeProvider{t: t, api: api, gold: gold, fail500: true, malformed: map[string]bool{bad: true}, failed: map[string]bool{}}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			cache := t.TempDir()
			h := &HTTPReader{API: api, BaseURL: srv.URL, Model: "fake-1", CacheDir: cache, Sleep: func(context.Context, time.Duration) error { return nil }}
			plan, err := Prepare(context.Background(), Config{Docs: docs, Questions: qs, Encodings: []Encoding{JSONEncoding()}, Reader: h, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := plan.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			e := rep.Encodings[0]
			if e.Errors != 1 || e.Correct != e.Questions-1 {
				t.Errorf("%d/%d correct with %d errors; want one malformed reply graded wrong", e.Correct, e.Questions, e.Errors)
			}
			for _, r := range rep.Results {
				if r.Question == qs[1].ID && (r.Correct || !strings.Contains(r.Error, "malformed")) {
					t.Errorf("malformed reply result = %+v", r)
				}
			}
			var md strings.Builder
			rep.WriteMarkdown(&md)
			if !strings.Contains(md.String(), "## Errors") {
				t.Errorf("report does not list the error:\n%s", md.String())
			}
			// The malformed reply was not cached: a second run asks again.
			h2 := &HTTPReader{API: api, BaseURL: srv.URL, Model: "fake-1", CacheDir: cache}
			plan2, _ := Prepare(context.Background(), Config{Docs: docs, Questions: qs, Encodings: []Encoding{JSONEncoding()}, Reader: h2})
			if est := plan2.Estimate(); est.Requests != 1 {
				t.Errorf("after a malformed reply, estimate = %+v, want 1 request", est)
			}
		})
	}
}

func TestHTTPReaderGivesUp(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	var waits []time.Duration
	h := &HTTPReader{API: APIOpenAI, BaseURL: srv.URL, Model: "m", Retries: 3, Backoff: time.Second,
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	q := &Question{Text: "q", Query: &Query{Op: OpCount}}
	_, err := h.Answer(context.Background(), NewRequest(q, "json", &Encoded{Text: "[]"}))
	if err == nil || n != 4 {
		t.Fatalf("err = %v after %d requests, want an error after 4", err, n)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	if len(waits) != len(want) || waits[0] != want[0] || waits[1] != want[1] || waits[2] != want[2] {
		t.Errorf("backoff waits = %v, want %v", waits, want)
	}
	// A 400 is not retried.
	n = 0
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	defer srv2.Close()
	h.BaseURL = srv2.URL
	if _, err := h.Answer(context.Background(), NewRequest(q, "json", &Encoded{Text: "[]"})); err == nil || n != 1 {
		t.Errorf("400: err = %v after %d requests, want one request", err, n)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{"  12 ", 12 * time.Second},
		{"-1", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"999999", 10 * time.Minute},
	} {
		if got := retryAfter(c.in, now); got != c.want {
			t.Errorf("retryAfter(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestHTTPReaderParams(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, `{"choices":[{"message":{"content":"2"}}]}`)
	}))
	defer srv.Close()
	h := &HTTPReader{API: APIOpenAI, BaseURL: srv.URL, Model: "o-mini",
		Params: map[string]any{"max_tokens": nil, "temperature": nil, "max_completion_tokens": 2000.0, "reasoning_effort": "low"}}
	q := &Question{Text: "q", Query: &Query{Op: OpCount}}
	rep, err := h.Answer(context.Background(), NewRequest(q, "json", &Encoded{Text: "[1,2]"}))
	if err != nil || rep.Text != "2" {
		t.Fatalf("Answer = %+v, %v", rep, err)
	}
	if _, ok := got["max_tokens"]; ok {
		t.Error("max_tokens sent although removed")
	}
	if _, ok := got["temperature"]; ok {
		t.Error("temperature sent although removed")
	}
	if got["max_completion_tokens"] != 2000.0 || got["reasoning_effort"] != "low" || got["model"] != "o-mini" {
		t.Errorf("body = %v", got)
	}
}

func TestAnthropicPromptCache(t *testing.T) {
	var got struct {
		Messages []struct {
			Content []struct {
				Type         string            `json:"type"`
				Text         string            `json:"text"`
				CacheControl map[string]string `json:"cache_control"`
			} `json:"content"`
		} `json:"messages"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		io.WriteString(w, `{"content":[{"type":"text","text":"2"}],"usage":{"input_tokens":5,"cache_read_input_tokens":1200,"output_tokens":1}}`)
	}))
	defer srv.Close()
	h := &HTTPReader{API: APIAnthropic, BaseURL: srv.URL, Model: "m", PromptCache: true}
	q := &Question{Text: "How many?", Query: &Query{Op: OpCount}}
	rep, err := h.Answer(context.Background(), NewRequest(q, "json", &Encoded{Text: "[1,2]"}))
	if err != nil {
		t.Fatal(err)
	}
	if rep.InputTokens != 1205 {
		t.Errorf("input tokens = %d, want 1205 (uncached + cache reads)", rep.InputTokens)
	}
	c := got.Messages[0].Content
	if len(c) != 2 || c[0].Text != "Document:\n\n[1,2]\n\n" || c[0].CacheControl["type"] != "ephemeral" ||
		c[1].Text != "Question: How many?" || c[1].CacheControl != nil {
		t.Errorf("content blocks = %+v", c)
	}
}
