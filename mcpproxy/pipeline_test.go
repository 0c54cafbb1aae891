package mcpproxy

import (
	"strings"
	"testing"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
)

// testOptions run the terse pipeline as the CLI does: a store for chunks
// and the dedup stage, with o(terse options) adjusting the pipeline.
func testOptions(adjust ...func(*terse.Options)) *Options {
	cache := dedup.New(dedup.Options{})
	o := terse.Options{Store: &store.Mem{}, Tokenizer: tokens.Estimate(), Fetch: FetchTemplate, Dedup: cache}
	for _, f := range adjust {
		f(&o)
	}
	p, err := terse.New(&o)
	if err != nil {
		panic(err)
	}
	return &Options{Pipeline: p, Dedup: cache}
}

func pipelineOptions() *Options { return testOptions() }

// TestPipelineTransformer runs the terse pipeline in the proxy: a result
// under budget comes back as compact JSON; an over-budget one carries a
// chunk index whose declared chunks _chunk returns.
func TestPipelineInProxy(t *testing.T) {
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
	fetch := readChunkFetch(text)
	if fetch.handle == "" {
		t.Fatalf("over-budget result has no chunk fetch instruction:\n%s", text)
	}
	chunk := h.call(t, "rows", map[string]any{ParamChunk: fetch.handle + ".1"})
	if chunk.IsError || !strings.Contains(textOf(t, chunk), "user") {
		t.Errorf("chunk 1 = %v %.200q", chunk.IsError, textOf(t, chunk))
	}
	bad := h.call(t, "rows", map[string]any{ParamChunk: "c_0000000000000000.1"})
	if !bad.IsError {
		t.Errorf("unknown handle: %q, want an isError result", textOf(t, bad))
	}
}

// TestPipelineDedupCache wires the dedup stage: a result shown in full
// carries its id line, a repeat becomes a ref to it, and compaction or a
// write of the same path ends that.
func TestPipelineDedupCache(t *testing.T) {
	h := connect(t, fakeUpstream(t), testOptions(), "generic-client")
	first := textOf(t, h.call(t, "rows", map[string]any{"n": 30}))
	id, body, ok := strings.Cut(first, "\n")
	if !ok || !strings.HasPrefix(id, "> [id: ") || !sameJSON(t, body, rowsText(30)) {
		t.Fatalf("first result = %.100q, want an id line and the compact JSON", first)
	}
	ref := textOf(t, h.call(t, "rows", map[string]any{"n": 30}))
	if want := "> [ref: " + strings.TrimSuffix(strings.TrimPrefix(id, "> [id: "), "]"); !strings.HasPrefix(ref, want) {
		t.Errorf("repeat = %q, want a ref to %s", ref, id)
	}
	h.call(t, CompactTool, nil)
	if again := textOf(t, h.call(t, "rows", map[string]any{"n": 30})); strings.HasPrefix(again, "> [ref: ") {
		t.Errorf("after compaction: %.60q, want the result in full", again)
	}
}
