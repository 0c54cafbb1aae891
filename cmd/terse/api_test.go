package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/terse-dev/terse/apiproxy"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/telemetry"
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
