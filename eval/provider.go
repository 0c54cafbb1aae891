package eval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// API shapes HTTPReader speaks.
const (
	APIAnthropic = "anthropic" // Anthropic Messages: POST {base}/v1/messages
	APIOpenAI    = "openai"    // Chat Completions: POST {base}/chat/completions
)

// Default base URLs.
const (
	DefaultAnthropicURL = "https://api.anthropic.com"
	DefaultOpenAIURL    = "https://api.openai.com/v1"
)

// HTTPReader asks a model over HTTP: the Anthropic Messages API or any
// OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM,
// llama.cpp server, LM Studio). Requests use temperature 0.
//
// Responses are cached in CacheDir by a hash of the request (API, URL,
// model and body), so a re-run sends nothing. A 429 or 5xx response, or a
// failed connection, is retried with exponential backoff, honouring
// Retry-After. The zero value is not usable: set API, BaseURL and Model.
// An HTTPReader is safe for concurrent use.
type HTTPReader struct {
	API     string
	BaseURL string
	Model   string
	Key     string
	// MaxTokens bounds each reply. Zero means 128: enough for a 200-character URL or hash, the longest answer generated.
	MaxTokens int
	// Params are extra request body members, set over the defaults; a nil
	// value removes a default. OpenAI's reasoning models, for example,
	// need {"max_tokens": nil, "max_completion_tokens": 2000,
	// "temperature": nil}.
	Params map[string]any
	// PromptCache marks the document part of each Anthropic request as a
	// prompt-cache breakpoint (cache_control ephemeral), so the questions
	// after the first about the same document and encoding read it from
	// Anthropic's cache (at a tenth of the input price, after a write at
	// 1.25 times). OpenAI caches long common prefixes by itself.
	PromptCache bool
	// CacheDir holds cached responses. Empty means no cache.
	CacheDir string
	// Client sends requests. Nil means http.DefaultClient.
	Client *http.Client
	// Retries is how many times a request is retried. Zero means 6.
	Retries int
	// Backoff is the first retry's wait, doubled each time up to a minute.
	// Zero means one second.
	Backoff time.Duration
	// Sleep waits d or until ctx is done. Nil means a real timer; tests
	// replace it so that they never wait.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock Retry-After dates are read against. Nil means
	// time.Now.
	Now func() time.Time

	sent atomic.Int64
}

// Sent reports how many HTTP requests were sent (retries included).
func (h *HTTPReader) Sent() int { return int(h.sent.Load()) }

// Name implements Reader.
func (h *HTTPReader) Name() string { return h.API + ":" + h.Model }

// Answer implements Reader.
func (h *HTTPReader) Answer(ctx context.Context, r *Request) (Reply, error) {
	url, body, err := h.request(r)
	if err != nil {
		return Reply{}, err
	}
	key := h.cacheKey(url, body)
	if data, ok := h.cached(key); ok {
		rep, err := parseResponse(h.API, data)
		if err == nil {
			rep.Cached = true
			return rep, nil
		}
	}
	data, err := h.send(ctx, url, body)
	if err != nil {
		return Reply{}, err
	}
	rep, err := parseResponse(h.API, data)
	if err != nil {
		return Reply{}, err
	}
	h.store(key, data)
	return rep, nil
}

// IsCached reports whether r's response is in the cache.
func (h *HTTPReader) IsCached(r *Request) bool {
	url, body, err := h.request(r)
	if err != nil {
		return false
	}
	_, ok := h.cached(h.cacheKey(url, body))
	return ok
}

func (h *HTTPReader) maxTokens() int {
	if h.MaxTokens > 0 {
		return h.MaxTokens
	}
	return 128
}

// request builds the URL and JSON body.
func (h *HTTPReader) request(r *Request) (string, []byte, error) {
	base := strings.TrimRight(h.BaseURL, "/")
	switch h.API {
	case APIAnthropic:
		var content any = r.Prompt
		if h.PromptCache && r.Context != "" && strings.HasPrefix(r.Prompt, r.Context) {
			content = []map[string]any{
				{"type": "text", "text": r.Context, "cache_control": map[string]string{"type": "ephemeral"}},
				{"type": "text", "text": r.Prompt[len(r.Context):]},
			}
		}
		return base + "/v1/messages", h.body(map[string]any{
			"model":       h.Model,
			"max_tokens":  h.maxTokens(),
			"temperature": 0,
			"system":      r.System,
			"messages":    []map[string]any{{"role": "user", "content": content}},
		}), nil
	case APIOpenAI:
		return base + "/chat/completions", h.body(map[string]any{
			"model":       h.Model,
			"max_tokens":  h.maxTokens(),
			"temperature": 0,
			"messages": []map[string]string{
				{"role": "system", "content": r.System},
				{"role": "user", "content": r.Prompt},
			},
		}), nil
	}
	return "", nil, fmt.Errorf("unknown API %q (want %s or %s)", h.API, APIAnthropic, APIOpenAI)
}

// body applies Params and encodes the request body. Keys are sorted, so the
// same request always has the same bytes (and cache key).
func (h *HTTPReader) body(m map[string]any) []byte {
	for k, v := range h.Params {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		// Params come from JSON or code: a value json cannot encode
		// is a programming error.
		panic(fmt.Sprintf("eval: encoding request body: %v", err))
	}
	return b
}

func (h *HTTPReader) cacheKey(url string, body []byte) string {
	s := sha256.New()
	fmt.Fprintf(s, "%s\n%s\n", h.API, url)
	s.Write(body)
	return hex.EncodeToString(s.Sum(nil))
}

func (h *HTTPReader) cachePath(key string) string {
	return filepath.Join(h.CacheDir, key[:2], key+".json")
}

func (h *HTTPReader) cached(key string) ([]byte, bool) {
	if h.CacheDir == "" {
		return nil, false
	}
	data, err := os.ReadFile(h.cachePath(key))
	return data, err == nil
}

// store writes a response atomically (temporary file, then rename), so a
// run interrupted mid-write leaves no torn entry.
func (h *HTTPReader) store(key string, data []byte) {
	if h.CacheDir == "" {
		return
	}
	p := h.cachePath(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}

// StatusError is an HTTP error response from the provider.
type StatusError struct {
	Code int
	Body string // the start of the body
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("provider returned %d: %s", e.Code, e.Body)
}

func retryable(code int) bool { return code == http.StatusTooManyRequests || code >= 500 }

// send posts body, retrying 429, 5xx and connection failures.
func (h *HTTPReader) send(ctx context.Context, url string, body []byte) ([]byte, error) {
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	retries := h.Retries
	if retries <= 0 {
		retries = 6
	}
	wait := h.Backoff
	if wait <= 0 {
		wait = time.Second
	}
	sleep := h.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		switch h.API {
		case APIAnthropic:
			req.Header.Set("anthropic-version", "2023-06-01")
			if h.Key != "" {
				req.Header.Set("x-api-key", h.Key)
			}
		case APIOpenAI:
			if h.Key != "" {
				req.Header.Set("Authorization", "Bearer "+h.Key)
			}
		}
		h.sent.Add(1)
		resp, err := client.Do(req)
		var data []byte
		var after time.Duration
		if err == nil {
			data, err = io.ReadAll(io.LimitReader(resp.Body, 8<<20))
			resp.Body.Close()
			if err == nil && resp.StatusCode/100 != 2 {
				msg := strings.TrimSpace(string(data))
				if len(msg) > 300 {
					msg = msg[:300]
				}
				err = &StatusError{Code: resp.StatusCode, Body: msg}
				now := time.Now
				if h.Now != nil {
					now = h.Now
				}
				after = retryAfter(resp.Header.Get("Retry-After"), now())
			}
		}
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if se, ok := errors.AsType[*StatusError](err); ok && !retryable(se.Code) {
			return nil, err
		}
		if attempt >= retries {
			return nil, fmt.Errorf("after %d attempts: %w", attempt+1, err)
		}
		d := wait
		if after > d {
			d = after
		}
		if err := sleep(ctx, d); err != nil {
			return nil, err
		}
		wait = min(wait*2, time.Minute)
	}
}

// retryAfter parses a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(min(s, 600)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), 10*time.Minute)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// MalformedError is a 2xx response whose body is not the API's reply shape.
type MalformedError struct {
	API string
	Msg string
}

func (e *MalformedError) Error() string { return "malformed " + e.API + " response: " + e.Msg }

// parseResponse extracts the reply text and usage from a response body.
func parseResponse(api string, data []byte) (Reply, error) {
	bad := func(msg string) (Reply, error) { return Reply{}, &MalformedError{API: api, Msg: msg} }
	switch api {
	case APIAnthropic:
		var r struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Usage struct {
				InputTokens              int `json:"input_tokens"`
				OutputTokens             int `json:"output_tokens"`
				CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
				CacheReadInputTokens     int `json:"cache_read_input_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return bad(err.Error())
		}
		var text strings.Builder
		found := false
		for _, c := range r.Content {
			if c.Type == "text" {
				text.WriteString(c.Text)
				found = true
			}
		}
		if !found {
			return bad("no text content")
		}
		// With prompt caching, input_tokens counts only the uncached
		// part; the prompt's size is the sum.
		in := r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens
		return Reply{Text: text.String(), InputTokens: in, OutputTokens: r.Usage.OutputTokens}, nil
	case APIOpenAI:
		var r struct {
			Choices []struct {
				Message struct {
					Content *string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
			Usage struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return bad(err.Error())
		}
		if len(r.Choices) == 0 || r.Choices[0].Message.Content == nil {
			return bad("no message content")
		}
		return Reply{Text: *r.Choices[0].Message.Content, InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens}, nil
	}
	return bad("unknown API")
}
