package config

import (
	"strings"
	"testing"
)

func TestGatewayTokens(t *testing.T) {
	c, err := Parse([]byte("[gateway]\ntokens = { team-a = \"aaaaaaaaaaaaaaaa1\", \"team.b\" = \"bbbbbbbbbbbbbbbb2\" }\n"), "t.toml")
	if err != nil || c.Gateway.Tokens["team-a"] != "aaaaaaaaaaaaaaaa1" || len(c.Gateway.Tokens) != 2 {
		t.Fatalf("%v %v", c, err)
	}
	for src, want := range map[string]string{
		"[gateway]\ntokens = { team-a = \"short\" }\n":                                   "at least 16",
		"[gateway]\ntokens = { \"team a\" = \"aaaaaaaaaaaaaaaa1\" }\n":                   "tenant names",
		"[gateway]\ntokens = { a = \"aaaaaaaaaaaaaaaa1\", b = \"aaaaaaaaaaaaaaaa1\" }\n": "same token",
	} {
		if _, err := Parse([]byte(src), "t.toml"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
