package history

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/terse-dev/terse/tokens"
)

// TestRealCounter trims the testdata requests counting with o200k_base and
// checks the report names it and the result fits; it logs how the
// conservative estimate compares.
func TestRealCounter(t *testing.T) {
	c, err := tokens.Get("o200k_base")
	if err != nil {
		t.Skipf("o200k_base not available: %v", err)
	}
	for _, file := range []string{"anthropic-request.json", "openai-request.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		mustTB(t, err)
		r, err := Decode(data, 0)
		mustTB(t, err)
		norm, _ := Normalize(r.Messages, nil)
		exact := Count(c, norm) + ToolOverhead(c, r.Tools)
		est := Estimate(norm) + ToolOverhead(nil, r.Tools)
		t.Logf("%s: o200k_base %d tokens, conservative estimate %d", file, exact, est)
		window := exact * 10 / 9 // threshold 0.8 × window < exact
		out, _, rep := Reduce(r.Messages, window, State{}, &Options{Counter: c, Tools: r.Tools, Target: 0.75})
		if rep.Tokenizer != "o200k_base" || rep.TokensBefore != exact {
			t.Errorf("%s: report %s %d tokens, want o200k_base %d", file, rep.Tokenizer, rep.TokensBefore, exact)
		}
		if rep.Boundary == 0 {
			t.Errorf("%s: nothing trimmed at window %d", file, window)
		}
		if got := Count(c, out) + ToolOverhead(c, r.Tools); got != rep.TokensAfter || (!rep.OverBudget && got > rep.Threshold) {
			t.Errorf("%s: %d tokens after (report %d), threshold %d", file, got, rep.TokensAfter, rep.Threshold)
		}
	}
}
