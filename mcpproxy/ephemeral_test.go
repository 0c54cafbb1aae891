package mcpproxy

import (
	"testing"
)

// TestGatewayStatelessKeepsNothing: a stateless client (2026-07-28)
// without a conversation id makes every call a scope of its own; the
// gateway must keep nothing per such call. 40 calls once left 40 hint
// counters behind, never freed.
func TestGatewayStatelessKeepsNothing(t *testing.T) {
	g, srv := serveGateway(t, fakeSpecs(t), profileOptions(t, profileConfig))
	cs := mustConnect(t, srv.URL, "", "")
	for range 40 {
		callRows(t, cs, "", map[string]any{"n": 3})
	}
	e := g.eng
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.hints) + len(e.brakes) + len(e.gens) + len(e.convs); n != 0 {
		t.Errorf("after 40 stateless calls the engine keeps %d hint counters, %d brake states, %d generations, %d conversation lists; want none",
			len(e.hints), len(e.brakes), len(e.gens), len(e.convs))
	}
}
