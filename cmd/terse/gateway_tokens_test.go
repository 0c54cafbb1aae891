package main

import "testing"

func TestGatewayTokens(t *testing.T) {
	got, err := gatewayTokens(map[string]string{"team-a": "aaaaaaaaaaaaaaaa1"}, " team-b=bbbbbbbbbbbbbbbb2 ,")
	if err != nil || got["aaaaaaaaaaaaaaaa1"] != "team-a" || got["bbbbbbbbbbbbbbbb2"] != "team-b" || len(got) != 2 {
		t.Fatalf("%v %v", got, err)
	}
	for _, env := range []string{"team-b", "team b=bbbbbbbbbbbbbbbb2", "team-b=short", "team-b=aaaaaaaaaaaaaaaa1"} {
		if _, err := gatewayTokens(map[string]string{"team-a": "aaaaaaaaaaaaaaaa1"}, env); err == nil {
			t.Errorf("%q accepted", env)
		}
	}
}

func FuzzGatewayTokens(f *testing.F) {
	f.Add("team-a=aaaaaaaaaaaaaaaa1,team-b=bbbbbbbbbbbbbbbb2")
	f.Add(" ,=,x==")
	f.Fuzz(func(t *testing.T, env string) {
		got, err := gatewayTokens(map[string]string{"base": "cccccccccccccccc3"}, env)
		if err != nil {
			return
		}
		for tok, tenant := range got {
			if len(tok) < 16 || tenant == "" {
				t.Fatalf("%q: accepted token %q of %q", env, tok, tenant)
			}
		}
	})
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7801": true, "localhost:7801": true, "[::1]:7801": true, "127.0.0.2:1": true,
		":7801": false, "0.0.0.0:7801": false, "[::]:7801": false, "192.168.1.2:7801": false, "nonsense": false,
	} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
