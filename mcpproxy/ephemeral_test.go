package mcpproxy

import (
	"slices"
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
	if n := e.sessions.Len(); n != 0 {
		t.Errorf("after 40 stateless calls the engine keeps the state of %d sessions; want none", n)
	}
}

// TestEngineSessionsBounded: the engine keeps the state of a bounded
// number of sessions; a session dropped to keep the bound has its
// partitions reset first, so a partition name is never reused with
// what it held.
func TestEngineSessionsBounded(t *testing.T) {
	var hooks resetLog
	e := newEngine(testOptions())
	e.resetHook = hooks.Reset
	e.sessions.Max = 2
	e.compact("s1", "")
	e.partition("s1", "c")
	hooks.take()
	e.compact("s2", "")
	e.compact("s3", "") // drops s1, the least recently used
	if n := e.sessions.Len(); n != 2 {
		t.Fatalf("%d sessions kept, want 2", n)
	}
	if got := hooks.take(); !slices.Contains(got, "s1/1") || !slices.Contains(got, "s1#c/1") {
		t.Errorf("partitions reset = %q, want s1/1 and s1#c/1 among them", got)
	}
	if p := e.partition("s1", ""); p != "s1/0" {
		t.Errorf("partition of a dropped session = %q, want s1/0", p)
	}
}
