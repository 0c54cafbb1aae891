package mcpproxy

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tree"
)

// completenessOf decodes the MetaCompleteness fact of a result as the
// official Go SDK client received it (nil when absent).
func completenessOf(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	v, ok := res.Meta[MetaCompleteness]
	if !ok {
		return nil
	}
	b, _ := json.Marshal(v)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", MetaCompleteness, err)
	}
	return m
}

// TestCompletenessMeta: every result terse fits, and every chunk reply,
// states in _meta whether the model was shown everything, the same from
// the proxy and the gateway, and the Go SDK client reads it.
func TestCompletenessMeta(t *testing.T) {
	for _, f := range fronts(t, func() *Options { return chunkOptions(&store.Mem{}) }) {
		t.Run(f.name, func(t *testing.T) {
			res := f.call(t, "items", map[string]any{"n": 30, "_budget": 300})
			h := handleOf(t, textOf(t, res))
			got := completenessOf(t, res)
			if got == nil {
				t.Fatalf("fitted result without %s: %v", MetaCompleteness, res.Meta)
			}
			shown, _ := got["shown"].(float64)
			if shown < 1 || shown >= 30 {
				t.Errorf("shown = %v, want some of 30", got["shown"])
			}
			want := map[string]any{"complete": false, "shown": shown, "total": 30.0, "unit": "items", "handle": h, "budget": 300.0}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("fitted result's %s (-want +got):\n%s", MetaCompleteness, d)
			}
			// A chunk fetched whole is complete.
			res = f.call(t, "items", map[string]any{"_chunk": h + ".1", "_budget": 100000})
			if d := cmp.Diff(map[string]any{"complete": true}, completenessOf(t, res)); d != "" {
				t.Errorf("whole chunk (-want +got):\n%s", d)
			}
			// A chunk over the fetch's budget comes back split: incomplete.
			res = f.call(t, "items", map[string]any{"_chunk": h + ".1", "_budget": 300})
			if d := cmp.Diff(map[string]any{"complete": false, "handle": h, "chunk": 1.0, "budget": 300.0}, completenessOf(t, res)); d != "" {
				t.Errorf("split chunk (-want +got):\n%s", d)
			}
			// A result shown whole says it is complete, and nothing in-band.
			res = f.call(t, "items", map[string]any{"n": 3})
			if got := completenessOf(t, res); got != nil && got["complete"] != true {
				t.Errorf("whole result: %s = %v", MetaCompleteness, got)
			}
			if txt := textOf(t, res); !sameJSON(t, txt, itemsText(3, 0)) {
				t.Errorf("whole result's text is not the original:\n%s", txt)
			}
		})
	}
}

// TestSpillMeta: for Claude Code, which writes results over 50,000
// characters to a file, every tool terse fits declares terse's own cap
// in _meta, so that a result terse paginates is read, not spilled; a
// larger value of the server's stays; other clients and tools terse
// does not fit get nothing; the catalogue's token counts leave it out.
func TestSpillMeta(t *testing.T) {
	list, err := tree.ParseString(`{"tools":[{"name":"a","inputSchema":{"type":"object"}},` +
		`{"name":"b","inputSchema":{"type":"object"},"_meta":{"x":1,"anthropic/maxResultSizeChars":900000}},` +
		`{"name":"skip","inputSchema":{"type":"object"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	meta := func(res tree.Value, i int) string {
		tools, _ := res.Get("tools")
		m, _ := tools.Index(i).Get("_meta")
		return string(tree.AppendJSON(nil, m))
	}
	o := (&Options{ExcludeTools: []string{"skip"}}).withDefaults()
	cc := PolicyFor("claude-code", nil)
	res, _, after := rewriteToolList(list, cc, &o, false, map[string]toolInfo{}, o.Counter)
	if got, want := meta(res, 0), `{"anthropic/maxResultSizeChars":500000}`; got != want {
		t.Errorf("tool a: _meta %s, want %s", got, want)
	}
	if got, want := meta(res, 1), `{"x":1,"anthropic/maxResultSizeChars":900000}`; got != want {
		t.Errorf("tool b: _meta %s, want %s", got, want)
	}
	if got := meta(res, 2); got != "null" {
		t.Errorf("excluded tool: _meta %s, want none", got)
	}
	_, _, afterCodex := rewriteToolList(list, PolicyFor("codex", nil), &o, false, map[string]toolInfo{}, o.Counter)
	if after != afterCodex {
		t.Errorf("catalogue tokens %d for Claude Code, %d for Codex: the spill _meta must not count", after, afterCodex)
	}
	res, _, _ = rewriteToolList(list, PolicyFor("codex", nil), &o, false, map[string]toolInfo{}, o.Counter)
	if got := meta(res, 0); got != "null" {
		t.Errorf("codex: _meta %s, want none", got)
	}
	if c := resultCharCap(cc); c < 25*ClaudeCodeBudget && c != maxSpillChars {
		t.Errorf("cap %d", c)
	}
}
