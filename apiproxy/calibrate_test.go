package apiproxy

import "testing"

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
