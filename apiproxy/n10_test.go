package apiproxy

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/terse-dev/terse/tree"
)

// TestN10Bypass: "1", "true" and "yes", in any case, forward the request
// untouched; other values do not; the header never reaches the provider.
func TestN10Bypass(t *testing.T) {
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) }
	srv, _ := newProxy(t, up, nil)
	var c convo
	c.user("list")
	c.call("Bash", `{"command":"list --json"}`, jsonIssues())
	body := c.request()
	for _, tc := range []struct {
		value  string
		bypass bool
	}{{"1", true}, {"true", true}, {"TRUE", true}, {"Yes", true}, {" yes ", true}, {"0", false}, {"false", false}, {"no", false}, {"", false}} {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", bytes.NewReader(body))
		if tc.value != "" {
			req.Header.Set(BypassHeader, tc.value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		seen := up.last(t)
		if untouched := bytes.Equal(seen.body, body); untouched != tc.bypass {
			t.Errorf("%q: forwarded untouched %v, want %v", tc.value, untouched, tc.bypass)
		}
		if v, ok := seen.header[http.CanonicalHeaderKey(BypassHeader)]; ok {
			t.Errorf("%q: the provider got %s: %q", tc.value, BypassHeader, v)
		}
	}
	// Paths that are never rewritten do not forward it either.
	req, _ := http.NewRequest("GET", srv.URL+"/v1/models", nil)
	req.Header.Set(BypassHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, ok := up.last(t).header[http.CanonicalHeaderKey(BypassHeader)]; ok {
		t.Error("GET /v1/models: the provider got the bypass header")
	}
}

// TestN10RefusedUpstream: a refused upstream gets the client a 502 with an
// error body in its provider's shape that names the upstream, never the
// request's query.
func TestN10RefusedUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	var lines bytes.Buffer
	st := NewStats(nil, &lines)
	p, err := New(Config{Anthropic: dead, OpenAI: dead + "/v1base", Rewriter: NewRewriter(Options{}), Stats: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	for _, tc := range []struct {
		path, body, want string
		header           map[string]string
	}{
		{"/v1/messages?key=secret", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "anthropic", map[string]string{"Anthropic-Version": "2023-06-01"}},
		{"/v1/chat/completions?key=secret", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "openai", nil},
		{"/v1/models?key=secret", ``, "openai", nil},
	} {
		req, _ := http.NewRequest("POST", srv.URL+tc.path, strings.NewReader(tc.body))
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		v, err := tree.Parse(b)
		if err != nil {
			t.Fatalf("%s: body %q: %v", tc.path, b, err)
		}
		var msg string
		if tc.want == "anthropic" {
			if get(v, "type").Str() != "error" || get(get(v, "error"), "type").Str() != "api_error" {
				t.Errorf("%s: not an Anthropic error: %s", tc.path, b)
			}
			msg = get(get(v, "error"), "message").Str()
		} else {
			if get(get(v, "error"), "type").Str() != "api_error" {
				t.Errorf("%s: not an OpenAI error: %s", tc.path, b)
			}
			msg = get(get(v, "error"), "message").Str()
		}
		if !strings.Contains(msg, "upstream "+dead) || strings.Contains(msg, "secret") || !strings.Contains(msg, "refused") {
			t.Errorf("%s: message %q", tc.path, msg)
		}
	}
	srv.Close()
	st.Close()
	if n := strings.Count(lines.String(), `"status":502`); n != 2 {
		t.Errorf("%d stats lines with status 502, want 2 (the rewritable requests):\n%s", n, lines.String())
	}
}
