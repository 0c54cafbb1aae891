package mcpproxy

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/terse-dev/terse/store"
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
