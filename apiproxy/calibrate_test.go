package apiproxy

import (
	"fmt"
	"testing"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/tree"
)

func TestFamily(t *testing.T) {
	for in, want := range map[string]string{
		"claude-sonnet-4-5-20250929": "claude-sonnet-4-5",
		"claude-opus-4-7":            "claude-opus-4-7",
		"gpt-4o-2024-08-06":          "gpt-4o",
		"GPT-5":                      "gpt-5",
		"gpt-5.1-codex":              "gpt-5.1-codex",
	} {
		if got := Family(in); got != want {
			t.Errorf("Family(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCalibrate: the ratio of provider prompt tokens (input, cache
// writes and reads) to terse's count of the body sent, per family, from
// the requests that can tell it only.
func TestCalibrate(t *testing.T) {
	ok := func(model string, before, after int, rewritten bool, u Usage) Record {
		u.Reported = 1
		return Record{Path: "/v1/messages", Model: model, Status: 200, Tokenizer: "o200k_base", TokensBefore: before, TokensAfter: after, Rewritten: rewritten, Usage: u}
	}
	recs := []Record{
		ok("claude-opus-4-7-20260101", 1000, 1000, false, Usage{Input: 10, CacheRead: 1190}),
		ok("claude-opus-4-7", 2000, 1000, true, Usage{Input: 10, CacheCreation: 1090, Output: 99}), // counts the sent 1000
		ok("claude-opus-4-7", 1000, 500, false, Usage{Input: 600}),                                 // a dry run: the original was sent
		ok("gpt-5", 1000, 1000, false, Usage{Input: 900}),
	}
	noUsage := ok("gpt-5", 1000, 1000, false, Usage{})
	noUsage.Usage.Reported = 0
	failed := ok("gpt-5", 1000, 1000, false, Usage{Input: 5})
	failed.Status = 529
	other := ok("gpt-4", 1000, 1000, false, Usage{Input: 5})
	other.Tokenizer = "cl100k_base"
	recs = append(recs, noUsage, failed, other)
	got := Calibrate(recs)
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	if c := got["claude-opus-4-7"]; c.Requests != 3 || c.Provider != 2900 || c.Terse != 3000 || !near(c.Ratio, 2900.0/3000) {
		t.Errorf("opus: %+v", c)
	}
	if c := got["gpt-5"]; c.Requests != 1 || !near(c.Ratio, 0.9) {
		t.Errorf("gpt-5: %+v", c)
	}
}

func TestNewTokenizer(t *testing.T) {
	for in, want := range map[string]bool{
		"claude-opus-4-7":                   true,
		"claude-opus-4-7[1m]":               true,
		"claude-opus-4-8-20261001":          true,
		"claude-sonnet-5":                   true,
		"us.anthropic.claude-opus-4-7-v1:0": true,
		"claude-opus-4-6":                   false,
		"claude-opus-4-5-20251101":          false,
		"claude-opus-4-20250514":            false,
		"claude-sonnet-4-5-20250929":        false,
		"claude-haiku-4-5":                  false,
		"claude-3-5-sonnet-20241022":        false,
		"claude-3-opus":                     false,
		"gpt-5":                             false,
		"":                                  false,
	} {
		if got := NewTokenizer(in); got != want {
			t.Errorf("NewTokenizer(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestWindowRatio: a learnt ratio once it rests on enough requests,
// bounded to 1–MaxWindowRatio; before that 1.35 for the new tokenizer
// and 1 for the others.
func TestWindowRatio(t *testing.T) {
	learnt := map[string]CalibrationRow{
		"claude-opus-4-7":   {Requests: MinCalibrationRequests, Ratio: 1.12},
		"claude-opus-4-8":   {Requests: MinCalibrationRequests - 1, Ratio: 1.12},
		"claude-sonnet-4-5": {Requests: 50, Ratio: 0.93},
		"claude-sonnet-5":   {Requests: 50, Ratio: 3.5},
		"gpt-5":             {Requests: 50, Ratio: 1.04},
	}
	for _, tc := range []struct {
		model, src string
		want       float64
	}{
		{"claude-opus-4-7-20260101", "learnt", 1.12},
		{"claude-opus-4-8", "default", NewTokenizerRatio}, // too few requests yet
		{"claude-opus-4-9", "default", NewTokenizerRatio},
		{"claude-sonnet-4-5-20250929", "learnt", 1}, // never below 1
		{"claude-sonnet-5", "learnt", MaxWindowRatio},
		{"gpt-5", "learnt", 1.04},
		{"gpt-4o", "default", 1},
	} {
		got, src := WindowRatio(tc.model, learnt)
		if !near(got, tc.want) || src != tc.src {
			t.Errorf("WindowRatio(%q) = %v (%s), want %v (%s)", tc.model, got, src, tc.want, tc.src)
		}
	}
}

func calibRequest(model, first string, results int) []byte {
	var c convo
	c.user(first)
	for i := 0; i < results; i++ {
		c.call("Grep", fmt.Sprintf(`{"pattern":"p%d"}`, i), fileText(fmt.Sprintf("g%d_", i), 40))
	}
	return tree.AppendJSON(nil, obj("model", model, "system", "You are a coding agent.", "messages", c.msgs))
}

// TestCalibratedWindow: the window arithmetic of a conversation of a
// new-tokenizer model holds o200k tokens × ratio against the window
// (1.35 before anything is learnt); the ratio is frozen per
// conversation, so one learnt later changes neither the window nor the
// bytes of a conversation already under way, and applies to
// conversations that start later.
func TestCalibratedWindow(t *testing.T) {
	st := NewStats(nil, nil)
	defer st.Close()
	rw := NewRewriter(Options{Window: 20_000, Profile: Calibrated(nil, st)})

	a1 := rw.Rewrite(calibRequest("claude-opus-4-7", "Fix a.", 2), history.Anthropic)
	if a1.Window != 14_814 || !near(a1.Ratio, NewTokenizerRatio) {
		t.Fatalf("opus 4.7 before calibration: window %d ratio %v", a1.Window, a1.Ratio)
	}
	s1 := rw.Rewrite(calibRequest("claude-sonnet-4-5", "Fix s.", 2), history.Anthropic)
	if s1.Window != 20_000 || s1.Ratio != 0 {
		t.Fatalf("sonnet 4.5: window %d ratio %v", s1.Window, s1.Ratio)
	}

	st.SeedCalibration(map[string]CalibrationRow{"claude-opus-4-7": {Requests: 20, Provider: 22_000, Terse: 20_000}})
	a2 := rw.Rewrite(calibRequest("claude-opus-4-7", "Fix a.", 3), history.Anthropic)
	if a2.State != StateContinued {
		t.Fatalf("the second request is %q, want a continuation", a2.State)
	}
	if a2.Window != a1.Window || a2.Ratio != a1.Ratio {
		t.Errorf("the ratio changed mid-conversation: window %d → %d", a1.Window, a2.Window)
	}
	b1 := rw.Rewrite(calibRequest("claude-opus-4-7", "Fix b.", 2), history.Anthropic)
	if b1.Window != 18_181 || !near(b1.Ratio, 1.1) {
		t.Errorf("a conversation started after calibration: window %d ratio %v", b1.Window, b1.Ratio)
	}

	// The arithmetic: a conversation that fits the window by o200k
	// count but not by o200k × 1.35 is trimmed only with the ratio.
	n := 1
	for ; n < 200; n++ {
		est := history.Estimate(mustNorm(t, calibRequest("claude-opus-4-7", "Grow.", n)))
		if float64(est)*NewTokenizerRatio > 20_000*history.DefaultThreshold*1.05 {
			break
		}
	}
	body := calibRequest("claude-opus-4-7", "Grow.", n)
	// Without batched edits, which would take out old results first.
	plain := NewRewriter(Options{Window: 20_000, NoEdit: true}).Rewrite(body, history.Anthropic)
	calib := NewRewriter(Options{Window: 20_000, NoEdit: true, Profile: Calibrated(nil, nil)}).Rewrite(body, history.Anthropic)
	if plain.Report.Trimmed != 0 || calib.Report.Trimmed == 0 {
		t.Errorf("%d results: trimmed %d without the ratio, %d with it", n, plain.Report.Trimmed, calib.Report.Trimmed)
	}
}

func mustNorm(t *testing.T, body []byte) []history.Message {
	req, err := history.Decode(body, history.Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	norm, _ := history.Normalize(req.Messages, []string{})
	return norm
}

// TestSeedCalibration: rows learnt earlier add to what the stats learn.
func TestSeedCalibration(t *testing.T) {
	st := NewStats(nil, nil)
	defer st.Close()
	st.SeedCalibration(map[string]CalibrationRow{"gpt-5": {Requests: 2, Provider: 900, Terse: 1000, Ratio: 0.9}})
	st.SeedCalibration(map[string]CalibrationRow{"gpt-5": {Requests: 1, Provider: 1200, Terse: 1000, Ratio: 1.2}})
	if c := st.Calibration()["gpt-5"]; c.Requests != 3 || !near(c.Ratio, 2100.0/2000) {
		t.Errorf("%+v", c)
	}
}
