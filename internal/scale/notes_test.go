package scale

import "testing"

// TestNoteReaders reads the notes the cluster test relies on, as the
// gateway writes them.
func TestNoteReaders(t *testing.T) {
	if id, ok := resultID("> [id: 3f2a1c9d]\n{}"); !ok || id != "3f2a1c9d" {
		t.Errorf("resultID = %q, %v", id, ok)
	}
	if id, ok := refID("> [ref: 3f2a1c9d, byte-identical]"); !ok || id != "3f2a1c9d" {
		t.Errorf("refID = %q, %v", id, ok)
	}
	if isID("{}\n> [id: 3f2a1c9d]") || isRef("> [id: 3f2a1c9d]") {
		t.Error("a note not opening the text, or of another family, was read")
	}
	for text, want := range map[string]struct {
		h string
		n int
	}{
		"x\n> [10 of 30 items left out, 20 shortened: get all 30 items whole with: this tool with _chunk \"c_8470188802286595.1\"; a fetch returns up to 20,000 tokens]":                         {"c_8470188802286595", 1},
		"x\n> [3 of 9 items left out: get chunk N of 2 whole with: this tool with _chunk \"c_8470188802286595.N\"; chunk 1: items 1–4, chunk 2: items 5–9; a fetch returns up to 20,000 tokens]": {"c_8470188802286595", 2},
		"x\n[chunks] 25 items at the root array, numbered 1–25, in 2 chunks; this response shows 13 of them (13 full) and leaves out 12:\n" +
			"  chunk 1: items 1–13; in this response: all full\n  chunk 2: items 14–25; in this response: none\n" +
			"[/chunks] Get chunk N whole: this tool with _chunk \"c_0313688008084527.N\" (no other arguments needed: a fetch returns up to 20,000 tokens)\n": {"c_0313688008084527", 2},
		"x\n> [23 of 25 items shortened: not retrievable right now (the chunk store is unavailable); re-run with a larger budget to see more]": {"", 0},
	} {
		if h, n := chunked(text); h != want.h || n != want.n {
			t.Errorf("chunked(%.60q) = %q, %d, want %q, %d", text, h, n, want.h, want.n)
		}
	}
}
