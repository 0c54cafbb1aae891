package mcpproxy

import (
	"regexp"
	"strings"
	"testing"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
)

func pipelineOptions() *Options {
	return &Options{Transformer: &Pipeline{Options: terse.Options{Store: &store.Mem{}, Tokenizer: tokens.Estimate()}}}
}

// TestPipelineTransformer runs the terse pipeline in the proxy: a result
// under budget comes back as compact JSON; an over-budget one carries a
// chunk index whose declared chunks _chunk returns.
func TestPipelineTransformer(t *testing.T) {
	h := connect(t, fakeUpstream(t), pipelineOptions(), "generic-client")
	got := textOf(t, h.call(t, "rows", map[string]any{"n": 50}))
	if len(got) >= len(rowsText(50)) || !sameJSON(t, got, rowsText(50)) {
		t.Errorf("under budget: %.120q, want the compact JSON", got)
	}
	if again := textOf(t, h.call(t, "rows", map[string]any{"n": 50})); !strings.HasPrefix(again, "> [ref: ") {
		t.Errorf("repeat = %.80q, want a ref hint", again)
	}

	res := h.call(t, "rows", map[string]any{"n": 400, ParamBudget: 2000})
	text := textOf(t, res)
	if n := tokens.Estimate().Count(text); n > 2000 {
		t.Errorf("fitted result is %d tokens, budget 2000", n)
	}
	m := regexp.MustCompile(`_chunk "([^"]+)\.N"`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("over-budget result has no chunk fetch instruction:\n%s", text)
	}
	chunk := h.call(t, "rows", map[string]any{ParamChunk: m[1] + ".2"})
	if chunk.IsError || !strings.Contains(textOf(t, chunk), "user") {
		t.Errorf("chunk 2 = %v %.200q", chunk.IsError, textOf(t, chunk))
	}
	bad := h.call(t, "rows", map[string]any{ParamChunk: "c_0000000000000000.1"})
	if !bad.IsError {
		t.Errorf("unknown handle: %q, want an isError result", textOf(t, bad))
	}
}
