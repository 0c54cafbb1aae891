package apiproxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
)

// benchRequest is an Anthropic request of about 200 KB holding 50 tool
// results taken from corpus files (JSON and text) of 1 to 8 KB.
func benchRequest(b *testing.B) []byte { return benchRequestOf(b, ".json", ".txt", ".log", ".md") }

// benchRequestOf builds the request from corpus files with the given
// extensions.
func benchRequestOf(b *testing.B, exts ...string) []byte {
	var c convo
	c.user("Look into the failing pipeline.")
	n := 0
	for _, f := range corpus.Files(b, exts...) {
		if n == 50 {
			break
		}
		data, err := os.ReadFile(f)
		if err != nil || len(data) < 1024 || len(data) > 8192 {
			continue
		}
		n++
		c.call("Bash", fmt.Sprintf(`{"command":"cat %s"}`, corpus.Name(f)), string(data))
	}
	if n < 50 {
		b.Skip("fewer than 50 corpus files of 1-8 KB")
	}
	return c.request()
}

// fakeUpstream answers every request at once, without a network.
type fakeUpstream struct{ body func() io.ReadCloser }

func (f fakeUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: f.body(), Request: r}, nil
}

func emptyBody() io.ReadCloser { return io.NopCloser(strings.NewReader(`{}`)) }

// timeRequests sends body b.N times through h and reports the mean and
// p99 per request.
func timeRequests(b *testing.B, h http.Handler, body []byte) (mean, p99 time.Duration) {
	times := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		req := httptest.NewRequest("POST", "/v1/messages", bytes.NewReader(body))
		req.Header.Set("Anthropic-Version", "2023-06-01")
		w := httptest.NewRecorder()
		t0 := time.Now()
		h.ServeHTTP(w, req)
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(times)
	var sum time.Duration
	for _, t := range times {
		sum += t
	}
	return sum / time.Duration(len(times)), times[min(len(times)-1, len(times)*99/100)]
}

// direct is the baseline: the same upstream reached without the proxy.
func direct(up http.RoundTripper) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, _ := up.RoundTrip(r)
		io.Copy(w, resp.Body)
		resp.Body.Close()
	})
}

func benchProxy(b *testing.B, body []byte) {
	up := fakeUpstream{emptyBody}
	p, err := New(Config{Anthropic: "http://upstream.invalid", Rewriter: NewRewriter(Options{}), Transport: up})
	if err != nil {
		b.Fatal(err)
	}
	// Warm: the conversation's state and the encodings of its results,
	// as on every turn after the first.
	p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/messages", bytes.NewReader(body)))
	n := b.N
	base, baseP99 := timeRequests(b, direct(up), body)
	b.N = n
	mean, p99 := timeRequests(b, p, body)
	b.ReportMetric(float64((mean-base).Microseconds())/1000, "added-ms")
	b.ReportMetric(float64((p99-baseP99).Microseconds())/1000, "added-p99-ms")
	b.ReportMetric(float64(mean)/float64(max(base, 1)), "x-direct")
}

// BenchmarkProxy200KB: the time the proxy adds to a 200 KB request with
// 50 tool results (target p99 ≤ 5 ms).
func BenchmarkProxy200KB(b *testing.B) { benchProxy(b, benchRequest(b)) }

// BenchmarkProxyNoChange: a request with nothing to rewrite (target ≤
// 0.5 ms added).
func BenchmarkProxyNoChange(b *testing.B) {
	var c convo
	c.user("What is the capital of France?")
	c.call("Bash", `{"command":"date"}`, "Mon Nov 23 18:00:00 UTC 2026")
	benchProxy(b, c.request())
}

// BenchmarkProxy200KBNoChange: a 200 KB request of text results (logs,
// Markdown) that needs no change: it is decoded and measured, then the
// original bytes are forwarded. The 50 calls are made at once, in one
// assistant message, so none is old enough for the batched edits.
func BenchmarkProxy200KBNoChange(b *testing.B) {
	var c convo
	c.user("Look into the failing pipeline.")
	n := 0
	for _, f := range corpus.Files(b, ".txt", ".log", ".md", ".yaml") {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// 4 KB pieces, cut after a newline.
		for len(data) > 1024 && n < 50 {
			cut := min(len(data), 4096)
			if i := bytes.LastIndexByte(data[:cut], '\n'); i > 0 {
				cut = i + 1
			}
			n++
			c.call("Bash", fmt.Sprintf(`{"command":"sed -n %d,+80p %s"}`, n, corpus.Name(f)), string(data[:cut]))
			data = data[cut:]
		}
	}
	if n < 50 {
		b.Skip("not enough corpus text")
	}
	c.parallel()
	body := c.request()
	if res := NewRewriter(Options{}).Rewrite(body, history.Anthropic); res.Body != nil {
		b.Fatalf("the request needs changes: %d edits", len(res.Edits))
	}
	benchProxy(b, body)
}

// BenchmarkRewrite200KB: Rewrite alone, first turn of a conversation
// (nothing remembered) against a warm one.
func BenchmarkRewrite200KB(b *testing.B) {
	body := benchRequest(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for range b.N {
		NewRewriter(Options{}).Rewrite(body, history.Anthropic)
	}
}

// eventsBody yields n SSE events, one per Read.
type eventsBody struct {
	n   int
	ev  []byte
	pos int
}

func (e *eventsBody) Read(p []byte) (int, error) {
	if e.n == 0 {
		return 0, io.EOF
	}
	e.n--
	return copy(p, e.ev), nil
}

func (e *eventsBody) Close() error { return nil }

// BenchmarkStreamEvent: the delay the proxy adds per streamed event
// (target ≤ 50 µs), against reading the same stream directly.
func BenchmarkStreamEvent(b *testing.B) {
	const events = 200
	ev := []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello, world. This is one streamed chunk of text.\"}}\n\n")
	up := fakeUpstream{func() io.ReadCloser { return &eventsBody{n: events, ev: ev} }}
	st := NewStats(nil, nil)
	defer st.Close()
	p, err := New(Config{Anthropic: "http://upstream.invalid", Rewriter: NewRewriter(Options{}), Transport: up, Stats: st})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	n := b.N
	base, _ := timeRequests(b, direct(up), body)
	b.N = n
	mean, _ := timeRequests(b, p, body)
	per := float64(mean-base) / events
	b.ReportMetric(per/1000, "added-µs/event")
	b.ReportMetric(float64(mean)/float64(max(base, 1)), "x-direct")
}

// BenchmarkRewriteWarm200KB: Rewrite alone on a turn of a conversation it
// has seen (state and encodings remembered), against parsing the body.
func BenchmarkRewriteWarm200KB(b *testing.B) {
	body := benchRequest(b)
	rw := NewRewriter(Options{})
	rw.Rewrite(body, history.Anthropic)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for range b.N {
			tree.Parse(body)
		}
	})
	b.Run("rewrite", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for range b.N {
			rw.Rewrite(body, history.Anthropic)
		}
	})
}

// BenchmarkPrefixChain200KB: fingerprinting every prefix of a 200 KB
// request (done on every request to match it with its conversation's
// state), against parsing the body.
func BenchmarkPrefixChain200KB(b *testing.B) {
	body := benchRequest(b)
	req, err := history.Decode(body, history.Anthropic)
	if err != nil {
		b.Fatal(err)
	}
	norm, _ := history.Normalize(req.Messages, []string{})
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for range b.N {
			tree.Parse(body)
		}
	})
	b.Run("chain", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for range b.N {
			prefixChain(norm)
		}
	})
}

// benchEditRequest is benchRequest with its results read by Read calls
// of files that later Edit and Write calls change: stale reads, applied
// payloads and old bulky results for the batched edits to weigh.
func benchEditRequest(b *testing.B) []byte {
	var c convo
	c.user("Look into the failing pipeline.")
	n := 0
	for _, f := range corpus.Files(b, ".json", ".txt", ".log", ".md") {
		if n == 50 {
			break
		}
		data, err := os.ReadFile(f)
		if err != nil || len(data) < 1024 || len(data) > 8192 {
			continue
		}
		n++
		name := "/src/" + corpus.Name(f)
		c.call("Read", fmt.Sprintf(`{"file_path":%q}`, name), string(data))
		if n%5 == 0 {
			c.call("Edit", fmt.Sprintf(`{"file_path":%q,"old_string":%s,"new_string":"x"}`, name, tree.AppendString(nil, string(data[:512]))), "The file "+name+" has been updated.")
		}
	}
	if n < 50 {
		b.Skip("fewer than 50 corpus files of 1-8 KB")
	}
	return c.request()
}

// BenchmarkProxy200KBEdits: the time the proxy adds to a 200 KB request
// with 50 results, stale reads, edits and old results, on the path every
// turn takes between batches: the edits are made to the boundary and the
// batch that would move it is weighed (and declined: the share is set
// out of reach). Target p99 ≤ 5 ms, as BenchmarkProxy200KB.
func BenchmarkProxy200KBEdits(b *testing.B) {
	body := benchEditRequest(b)
	if res := NewRewriter(Options{EditShare: 1}).Rewrite(body, history.Anthropic); res.Batch != "" || len(res.Edits) == 0 {
		b.Fatalf("batch %q, %d edits", res.Batch, len(res.Edits))
	}
	up := fakeUpstream{emptyBody}
	p, err := New(Config{Anthropic: "http://upstream.invalid", Rewriter: NewRewriter(Options{EditShare: 1}), Transport: up})
	if err != nil {
		b.Fatal(err)
	}
	p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/messages", bytes.NewReader(body)))
	n := b.N
	base, baseP99 := timeRequests(b, direct(up), body)
	b.N = n
	mean, p99 := timeRequests(b, p, body)
	b.ReportMetric(float64((mean-base).Microseconds())/1000, "added-ms")
	b.ReportMetric(float64((p99-baseP99).Microseconds())/1000, "added-p99-ms")
	b.ReportMetric(float64(mean)/float64(max(base, 1)), "x-direct")
}

// parallel joins the calls after the first message into one assistant
// message and their results into one user message, as an agent's
// parallel tool calls are sent.
func (c *convo) parallel() {
	var uses, results []tree.Value
	for _, m := range c.msgs[1:] {
		for _, b := range get(m, "content").Items() {
			switch get(b, "type").Str() {
			case "tool_use":
				uses = append(uses, b)
			case "tool_result":
				results = append(results, b)
			}
		}
	}
	c.msgs = append(c.msgs[:1], obj("role", "assistant", "content", uses), obj("role", "user", "content", results))
}

// BenchmarkRewriteEdits200KB: Rewrite alone on a turn between batches of
// benchEditRequest (the edits made to the boundary, the next batch
// weighed and declined), against parsing the body.
func BenchmarkRewriteEdits200KB(b *testing.B) {
	body := benchEditRequest(b)
	rw := NewRewriter(Options{EditShare: 1})
	rw.Rewrite(body, history.Anthropic)
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for range b.N {
			tree.Parse(body)
		}
	})
	b.Run("rewrite", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for range b.N {
			rw.Rewrite(body, history.Anthropic)
		}
	})
}
