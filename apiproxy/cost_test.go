package apiproxy

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestPriceCost: each usage class at its price, 1 h writes apart.
func TestPriceCost(t *testing.T) {
	p, label := NewPrices(nil).Lookup("claude-sonnet-4-5-20250929")
	if label != "claude-sonnet-4-5" || p != (Price{3, 3.75, 6, 0.30, 15}) {
		t.Fatalf("sonnet 4.5: %v %q", p, label)
	}
	u := Usage{Input: 1_000_000, CacheCreation: 3_000_000, CacheCreation1h: 1_000_000, CacheRead: 10_000_000, Output: 100_000, Reported: 1}
	// 3 + 2×3.75 + 1×6 + 10×0.30 + 0.1×15
	if got := p.Cost(u); !near(got, 3+7.5+6+3+1.5) {
		t.Errorf("cost %v", got)
	}
	// OpenAI: cached input at its price, no write premium.
	p, _ = NewPrices(nil).Lookup("gpt-5-2025-08-07")
	if got := p.Cost(Usage{Input: 232, CacheRead: 768, Output: 7}); !near(got, (232*1.25+768*0.125+7*10)/1e6) {
		t.Errorf("gpt-5 cost %v", got)
	}
}

// TestPriceLookup: dated ids match their row, another model never does,
// configured rows come first, and an unknown model gets its family's
// default, labelled as such.
func TestPriceLookup(t *testing.T) {
	ps := NewPrices([]PriceRow{{Model: "my-local-*", Price: Price{Input: 0.5}}, {Model: "claude-sonnet-4-5", Price: Price{Input: 2}}})
	for _, c := range []struct {
		model, label string
		input        float64
	}{
		{"claude-opus-4-1-20250805", "claude-opus-4-1", 15},
		{"claude-opus-4-20250514", "claude-opus-4", 15},
		{"claude-opus-4-7", "claude-opus-4-7", 5},
		{"claude-opus-4-9", "default for claude-opus models", 5}, // not claude-opus-4's $15
		{"claude-sonnet-4-5", "claude-sonnet-4-5", 2},            // the config's row
		{"claude-sonnet-5", "default for claude models", 3},
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5", 1},
		{"gpt-5-mini-2025-08-07", "gpt-5-mini", 0.25},
		{"gpt-5.3-codex", "default for gpt models", 1.25},
		{"gpt-4o-2024-08-06", "gpt-4o", 2.50},
		{"my-local-model", "my-local-*", 0.5},
		{"llama-3", "default for unknown models", 3},
	} {
		p, label := ps.Lookup(c.model)
		if label != c.label || p.Input != c.input {
			t.Errorf("%s: %q at %v, want %q at %v", c.model, label, p.Input, c.label, c.input)
		}
		if strings.HasPrefix(c.label, "default") != strings.HasPrefix(label, "default") {
			t.Errorf("%s: a default must be labelled as one: %q", c.model, label)
		}
	}
}

// TestDirectUsage: the counterfactual original request on constructed
// cases: warm cache, cold cache, a prefix break terse caused, and
// requests sent as they were.
func TestDirectUsage(t *testing.T) {
	for _, c := range []struct {
		name          string
		sent          Usage
		before, after int
		changed       bool
		prev          int
		want          Usage
	}{
		{"sent as it was", Usage{Input: 10, CacheRead: 990, Output: 5, Reported: 1}, 1000, 1000, false, 0,
			Usage{Input: 10, CacheRead: 990, Output: 5, Reported: 1}},
		{"no usage reported", Usage{}, 2000, 1000, false, 0, Usage{}},
		{"warm cache: the removed tokens would have been cache reads", Usage{Input: 10, CacheCreation: 90, CacheRead: 900, Output: 5, Reported: 1}, 2000, 1000, false, 0,
			Usage{Input: 10, CacheCreation: 90, CacheRead: 1900, Output: 5, Reported: 1}},
		{"cold cache: they would have been written, 1 h share kept", Usage{Input: 10, CacheCreation: 990, CacheCreation1h: 495, Output: 5, Reported: 1}, 2000, 1000, false, 0,
			Usage{Input: 10, CacheCreation: 1990, CacheCreation1h: 995, Output: 5, Reported: 1}},
		{"no caching: uncached input", Usage{Input: 1000, Output: 5, Reported: 1}, 1500, 1000, false, 0,
			Usage{Input: 1500, Output: 5, Reported: 1}},
		{"prefix break: the original reads all but its growth", Usage{Input: 10, CacheCreation: 800, CacheRead: 190, Output: 5, Reported: 1}, 2000, 1000, true, 1900,
			Usage{Input: 10, CacheCreation: 100, CacheRead: 1890, Output: 5, Reported: 1}},
		{"prefix break, previous request unknown: no credit for the break", Usage{Input: 10, CacheCreation: 800, CacheRead: 190, Output: 5, Reported: 1}, 2000, 1000, true, 0,
			Usage{Input: 10, CacheCreation: 800, CacheRead: 1190, Output: 5, Reported: 1}},
		{"the original smaller (never by design)", Usage{Input: 10, CacheCreation: 100, CacheRead: 890, Output: 5, Reported: 1}, 500, 1000, false, 0,
			Usage{Input: 10, CacheCreation: 100, CacheRead: 390, Output: 5, Reported: 1}},
	} {
		got := directUsage(c.sent, c.before, c.after, c.changed, c.prev)
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if c.sent.Reported == 1 && c.before >= c.after && got.Prompt() < c.sent.Prompt() {
			t.Errorf("%s: the original's prompt is smaller than the sent one", c.name)
		}
	}
}

// TestStatsCost: a rewritten request's record holds the billed cost of
// the provider's usage and the modeled cost of the original; the totals
// per conversation and per model add them up.
func TestStatsCost(t *testing.T) {
	up := newUpstream(t)
	up.handle = func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":10,"cache_read_input_tokens":200,"cache_creation_input_tokens":20,"output_tokens":30}}`)
	}
	var buf bytes.Buffer
	st := NewStats(nil, &buf)
	srv, _ := newProxy(t, up, func(c *Config) { c.Stats = st })
	var c convo
	c.user("list")
	c.call("Bash", `{"command":"list --json"}`, jsonIssues())
	body := c.request()
	body = bytes.Replace(body, []byte(`{`), []byte(`{"model":"claude-sonnet-4-5-20250929",`), 1)
	resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Close()
	st.Close()
	var r Record
	if err := json.Unmarshal(buf.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	if !r.Rewritten || r.Price != "claude-sonnet-4-5" || r.Direct == nil {
		t.Fatalf("record %s", buf.Bytes())
	}
	if want := (10*3 + 200*0.30 + 20*3.75 + 30*15) / 1e6; !near(r.Cost, want) {
		t.Errorf("cost %v, want %v", r.Cost, want)
	}
	// Warm cache: the tokens the rewriting removed are cache reads.
	extra := r.Direct.CacheRead - 200
	if extra <= 0 || r.Direct.Input != 10 || r.Direct.CacheCreation != 20 || !near(r.DirectCost-r.Cost, float64(extra)*0.30/1e6) {
		t.Errorf("direct %+v at %v", r.Direct, r.DirectCost)
	}
	tot, sess := st.Snapshot()
	models := st.Models()
	if !near(tot.Cost, r.Cost) || !near(sess[r.Conversation].DirectCost, r.DirectCost) || !near(models[r.Model].Cost, r.Cost) {
		t.Errorf("totals %+v, models %+v", tot, models)
	}
	if s := st.Summary(); !strings.Contains(s, "billed $") || !strings.Contains(s, "price: claude-sonnet-4-5") {
		t.Errorf("summary:\n%s", s)
	}
	rec := httptest.NewRecorder()
	st.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, kind := range []string{"billed", "direct_modeled"} {
		if !strings.Contains(rec.Body.String(), `terse_api_cost_usd_total{kind="`+kind+`"}`) {
			t.Errorf("metrics lack the %s cost:\n%s", kind, rec.Body.String())
		}
	}
}
