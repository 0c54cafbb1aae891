package mcpproxy

import (
	"strings"
	"testing"
)

// TestScopeStrings pins every key derived from a Scope: they name state
// shared by replicas (GatewayState, chunk handles), so they do not change.
func TestScopeStrings(t *testing.T) {
	for _, c := range []struct {
		s                     Scope
		str, counter, gen, rk string
	}{
		{Scope{"t", "s1", ""}, "t:s1", "t:s1", "t:s1@3", "s:t:s1"},
		{Scope{"", "s1", "c"}, "s1", "s1#c", "s1#c@3.1", "s:s1"},
		{Scope{"t", "", "c"}, "t:~#c", "t:~#c", "t:~#c@3", "s:t:"},
		{Scope{"t", "", ""}, "t:~", "", "", "s:t:"},
	} {
		gens := []int{3}
		if c.s.Session != "" && c.s.Conversation != "" {
			gens = append(gens, 1)
		}
		if got := c.s.String(); got != c.str {
			t.Errorf("%+v.String() = %q, want %q", c.s, got, c.str)
		}
		if got := c.s.Counter(); got != c.counter {
			t.Errorf("%+v.Counter() = %q, want %q", c.s, got, c.counter)
		}
		if c.s.Ephemeral() {
			if e := c.s.ephemeralSession(); !strings.HasPrefix(e, "t:"+ephemeral) || !isEphemeralScope(e) || e == c.s.ephemeralSession() {
				t.Errorf("ephemeral session %q", e)
			}
		} else if got := c.s.Generation(gens); got != c.gen {
			t.Errorf("%+v.Generation = %q, want %q", c.s, got, c.gen)
		}
		if got := c.s.recordKey(); got != c.rk {
			t.Errorf("%+v.recordKey() = %q, want %q", c.s, got, c.rk)
		}
		if got := c.s.chunkScope(); got != "gw\x00"+c.str+"\x00"+c.s.Conversation {
			t.Errorf("chunkScope %q", got)
		}
	}
}
