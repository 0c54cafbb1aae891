package apiproxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/telemetry"
)

// telemetryProxy starts the proxy with telemetry into dir and a Profile
// that counts its calls; it returns a function that posts a body and one
// that flushes and closes everything and reads the events back.
func telemetryProxy(t *testing.T, dir string, prof Profile, calls *atomic.Int32) (post func([]byte, ...string), done func() *telemetry.Log) {
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"usage":{"input_tokens":7}}`) }
	rec, err := telemetry.Open(telemetry.Settings{Enabled: true, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rw := NewRewriter(Options{Profile: func(string) Profile { calls.Add(1); return prof }})
	srv, st := newProxy(t, up, func(c *Config) { c.Rewriter, c.Telemetry = rw, rec })
	post = func(body []byte, header ...string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", bytes.NewReader(body))
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	done = func() *telemetry.Log {
		t.Helper()
		srv.Close()
		st.Close() // makes the last events
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		if s := rec.Stats(); s.Dropped != 0 || s.Errors != 0 {
			t.Errorf("recorder %+v", s)
		}
		l, err := telemetry.ReadDir(dir, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Skipped != 0 {
			t.Errorf("%d unreadable telemetry lines", l.Skipped)
		}
		return l
	}
	return post, done
}

// TestTelemetryEvents runs one conversation through the proxy with
// telemetry on: one event per request, read back by telemetry's reader,
// in the conversation's tokenizer, with the saving split by source (JSON
// re-encoded, a repeat, history trimmed in the window the profile gave),
// and an untouched event for a bypassed request.
func TestTelemetryEvents(t *testing.T) {
	dir := t.TempDir()
	var calls atomic.Int32
	post, done := telemetryProxy(t, dir, Profile{Tokenizer: "cl100k_base", Window: 6000}, &calls)
	var c convo
	c.user("Fix the bug in a.go.")
	c.call("Bash", `{"command":"gh api repos/x/y/issues"}`, jsonIssues())
	post(c.request())
	c.call("Read", `{"file_path":"/src/a.go"}`, fileText("a", 40))
	c.call("Read", `{"file_path":"/src/a.go"}`, fileText("a", 40))
	post(c.request())
	for i := range 12 {
		c.call("Read", fmt.Sprintf(`{"file_path":"/src/f%d.go"}`, i), fileText(fmt.Sprintf("f%d", i), 40))
		post(c.request())
	}
	post(c.request(), BypassHeader, "1")
	l := done()

	const requests = 15
	if n := calls.Load(); n != 1 {
		t.Errorf("Profile called %d times for one conversation, want 1", n)
	}
	if len(l.Records) != requests {
		t.Fatalf("%d events for %d requests", len(l.Records), requests)
	}
	sources := map[string]int{}
	sessions := map[string]bool{}
	skips := map[string]int{}
	for _, r := range l.Records {
		if r.Entry != telemetry.EntryAPI || r.Tool != "" || r.V != telemetry.Version {
			t.Errorf("event %+v", r)
		}
		skips[r.Skip]++
		if r.Skip == telemetry.UntouchedExcluded {
			continue // bypassed: not read, no conversation
		}
		sessions[r.Session] = true
		if r.Tokenizer != "cl100k_base" || r.TokensIn == 0 || r.BytesIn == 0 {
			t.Errorf("event %+v: want cl100k_base figures", r)
		}
		sum := 0
		for k, v := range r.Saved {
			sources[k] += v
			sum += v
		}
		if sum != r.TokensIn-r.TokensOut {
			t.Errorf("saved %v sums to %d, want t_in−t_out = %d", r.Saved, sum, r.TokensIn-r.TokensOut)
		}
	}
	if len(sessions) != 1 {
		t.Errorf("sessions %v, want the one conversation's", sessions)
	}
	for _, k := range []string{"encoding", "dedup", "history"} {
		if sources[k] <= 0 {
			t.Errorf("saved by source %v: want %s > 0", sources, k)
		}
	}
	if skips[telemetry.UntouchedExcluded] != 1 {
		t.Errorf("untouched reasons %v, want one excluded (the bypassed request)", skips)
	}
	s := telemetry.Summarize(l)
	if s.Total.Saved <= 0 || s.DedupHits == 0 || s.Hints["ref"] == 0 {
		t.Errorf("summary %+v", s)
	}
}

// TestProfileOncePerConversation: the profile is resolved on a
// conversation's first request and kept, even when a later request names
// another model; its window applies when nothing else sets one.
func TestProfileOncePerConversation(t *testing.T) {
	var models []string
	rw := NewRewriter(Options{Profile: func(m string) Profile {
		models = append(models, m)
		return Profile{Tokenizer: "estimate", Window: 50_000}
	}})
	var c convo
	c.user("hello")
	c.call("Bash", `{"command":"ls"}`, "a\nb\n")
	body := c.request()
	res := rw.Rewrite(body, history.Anthropic)
	if res.Window != 50_000 || res.Tokenizer != "estimate" {
		t.Fatalf("window %d tokenizer %q, want the profile's", res.Window, res.Tokenizer)
	}
	other := bytes.Replace(body, []byte("claude-sonnet-4-5"), []byte("gpt-5"), 1)
	if res := rw.Rewrite(other, history.Anthropic); res.Window != 50_000 || res.Tokenizer != "estimate" {
		t.Fatalf("second request: window %d tokenizer %q", res.Window, res.Tokenizer)
	}
	if len(models) != 1 || models[0] != "claude-sonnet-4-5" {
		t.Fatalf("Profile called with %q, want once with the first request's model", models)
	}
	if res := rw.RewriteWindow(other, history.Anthropic, 1_000_000); res.Window != 1_000_000 {
		t.Fatalf("the request's window: got %d", res.Window)
	}
}

// TestTelemetryPrivacy runs every corpus file through the proxy with
// telemetry on, each as a file read (and read again, and written, so that
// repeats, stale reads and trimming all apply) in a conversation of its
// own, and checks that no string of 12 or more bytes of any request
// appears in any telemetry file.
func TestTelemetryPrivacy(t *testing.T) {
	files := corpus.Files(t, "")
	if testing.Short() {
		t.Skip("runs every corpus file through the proxy")
	}
	dir := t.TempDir()
	var calls atomic.Int32
	post, done := telemetryProxy(t, dir, Profile{Window: 20_000}, &calls)
	var bodies [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(data) || len(data) > 2<<20 {
			continue
		}
		name := corpus.Name(f)
		var c convo
		c.user("Summarise " + name + " for me, please.")
		args := fmt.Sprintf(`{"file_path":%q}`, "/home/someone/project/"+name)
		c.call("Read", args, string(data))
		c.call("Read", args, string(data))
		c.call("Write", fmt.Sprintf(`{"file_path":%q,"content":"x"}`, "/home/someone/project/"+name), "ok")
		body := c.request()
		post(body)
		bodies = append(bodies, body)
	}
	l := done()
	if len(l.Records) != len(bodies) {
		t.Errorf("%d events for %d requests", len(l.Records), len(bodies))
	}

	leaks, nfiles, err := telemetry.Audit(dir, func(yield func(string, []byte) bool) {
		for j, body := range bodies {
			if !yield(fmt.Sprintf("request %d", j), body) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, lk := range leaks {
		if i == 20 {
			break
		}
		t.Errorf("%q from %s is in telemetry file %s", lk.Text, lk.Source, lk.File)
	}
	t.Logf("%d events from %d requests, %d telemetry files", len(l.Records), len(bodies), nfiles)
}

// BenchmarkProxyTelemetry: the 200 KB request through the proxy with
// Stats and telemetry off (a nil recorder) and on, in the same run. Events
// are made where Stats counts tokens, off the request path, so the two
// should take the same time per request.
//
//	go test -run '^$' -bench ProxyTelemetry -benchtime 20x ./apiproxy
func BenchmarkProxyTelemetry(b *testing.B) {
	body := benchRequest(b)
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			st := NewStats(nil, nil)
			defer st.Close()
			cfg := Config{Anthropic: "http://upstream.invalid", Rewriter: NewRewriter(Options{}), Transport: fakeUpstream{emptyBody}, Stats: st}
			if on {
				rec, err := telemetry.Open(telemetry.Settings{Enabled: true, Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				defer rec.Close()
				cfg.Telemetry = rec
			}
			p, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/messages", bytes.NewReader(body)))
			mean, p99 := timeRequests(b, p, body)
			b.ReportMetric(float64(mean.Microseconds())/1000, "mean-ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
		})
	}
}
