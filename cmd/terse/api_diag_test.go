package main

import (
	"encoding/json"
	"flag"
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

	"github.com/terse-dev/terse/apiproxy"
)

// seen is what a local Anthropic endpoint got: bodies and beta headers.
type seen struct {
	mu    sync.Mutex
	body  []string
	betas []string
}

func (s *seen) server(t *testing.T) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.body = append(s.body, string(b))
		s.betas = append(s.betas, r.Header.Get("Anthropic-Beta"))
		n := len(s.body)
		s.mu.Unlock()
		fmt.Fprintf(w, `{"id":"msg_%d","type":"message","usage":{"input_tokens":3},"diagnostics":null}`, n)
	}))
	t.Cleanup(up.Close)
	return up
}

// runAPIWith starts terse api with args over cfgText and sends body n
// times.
func runAPIWith(t *testing.T, cfgText string, args []string, upURL, statsFile, body string, n int) {
	t.Helper()
	fs := flag.NewFlagSet("api", flag.ContinueOnError)
	af := addAPIFlags(fs)
	p := filepath.Join(t.TempDir(), "terse.toml")
	if err := os.WriteFile(p, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse(append([]string{"--config", p, "--anthropic-upstream", upURL}, args...)); err != nil {
		t.Fatal(err)
	}
	if statsFile != "" {
		*af.statsFile = statsFile
	}
	cfg, a, err := af.settings()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := startAPI(cfg, a, ln, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		resp, err := http.Post("http://"+ln.Addr().String()+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	s.stop()
}

// TestAPICacheDiagnosticsFlag: --cache-diagnostics and [api]
// cache_diagnostics attach the field and the beta; without them neither
// reaches the provider.
func TestAPICacheDiagnosticsFlag(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"hello there"}]}`
	for _, tc := range []struct {
		name, cfg string
		args      []string
		on        bool
	}{
		{"off", "", nil, false},
		{"flag", "", []string{"--cache-diagnostics"}, true},
		{"config", "[api]\ncache_diagnostics = true\n", nil, true},
	} {
		var s seen
		up := s.server(t)
		runAPIWith(t, tc.cfg, tc.args, up.URL, "", body, 2)
		for i := range s.body {
			has := strings.Contains(s.body[i], `"diagnostics"`)
			beta := strings.Contains(s.betas[i], apiproxy.DiagnosticsBeta)
			if has != tc.on || beta != tc.on {
				t.Errorf("%s: request %d: diagnostics %v, beta %v: %s", tc.name, i, has, beta, s.body[i])
			}
		}
		if tc.on && (!strings.HasPrefix(s.body[0], `{"diagnostics":{"previous_message_id":null},`) || !strings.HasPrefix(s.body[1], `{"diagnostics":{"previous_message_id":"msg_1"},`)) {
			t.Errorf("%s: %q", tc.name, s.body)
		}
	}
}

// TestAPICalibrationFromStatsFile: a restarted terse api starts from the
// calibration of its stats file: a Claude Opus 4.7 conversation is held
// to the learnt ratio, not the 1.35 default, and its stats line says so.
func TestAPICalibrationFromStatsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stats.jsonl")
	var lines strings.Builder
	for range apiproxy.MinCalibrationRequests {
		r := apiproxy.Record{Path: "/v1/messages", Model: "claude-opus-4-7", Status: 200, Tokenizer: "o200k_base",
			TokensBefore: 1000, TokensAfter: 1000, Usage: apiproxy.Usage{Input: 1100, Reported: 1}}
		b, _ := json.Marshal(r)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var s seen
	up := s.server(t)
	body := `{"model":"claude-opus-4-7","max_tokens":100,"messages":[{"role":"user","content":"hello there"}]}`
	runAPIWith(t, "", nil, up.URL, path, body, 1)
	recs, _, _, err := readAPIStats(path)
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if last.WindowRatio < 1.09 || last.WindowRatio > 1.11 || last.Window != int(float64(200_000-100)/last.WindowRatio) {
		t.Errorf("window %d ratio %v, want the learnt 1.1", last.Window, last.WindowRatio)
	}
}
