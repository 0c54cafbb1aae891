package main

import (
	"testing"

	"github.com/terse-dev/terse/apiproxy"
	"github.com/terse-dev/terse/config"
)

// TestAPIPrices: [[api.prices]] rows come before the shipped table, and
// unset cache prices default as documented.
func TestAPIPrices(t *testing.T) {
	half := 0.5
	ps := apiPrices([]config.APIPrice{
		{Model: "Claude-Sonnet-4-5", Input: 2, Output: 10, CacheRead: &half},
	})
	p, label := ps.Lookup("claude-sonnet-4-5-20250929")
	if label != "claude-sonnet-4-5" || p != (apiproxy.Price{Input: 2, CacheWrite5m: 2, CacheWrite1h: 2, CacheRead: 0.5, Output: 10}) {
		t.Fatalf("%q %+v", label, p)
	}
	if _, label := ps.Lookup("claude-haiku-4-5"); label != "claude-haiku-4-5" {
		t.Fatalf("shipped row: %q", label)
	}
}
