package history

import (
	"strings"
	"testing"
)

// TestResultText: a trimmed result carries the text ResultText gives for
// its call, and the plan counts that text, so the result stays in budget.
func TestResultText(t *testing.T) {
	big := strings.Repeat("output line\n", 400)
	var msgs []Message
	msgs = append(msgs, user("go"))
	for i := range 12 {
		id := "call_" + string(rune('a'+i))
		msgs = append(msgs, call("", id, "Read", `{"file_path":"/x"}`), result(id, big))
	}
	msgs = append(msgs, user("next"))
	rt := func(id string) string { return "[trimmed: output of Read call " + id + "; call it again]" }
	out, _, rep := Reduce(msgs, 8000, State{}, &Options{ResultText: rt})
	if rep.Trimmed == 0 {
		t.Fatal("nothing trimmed")
	}
	seen := 0
	for _, m := range out {
		for _, p := range m.Parts {
			if p.Kind == ToolResult && len(p.Content) == 1 && strings.HasPrefix(p.Content[0].Text, "[trimmed: output of Read call "+p.ID) {
				seen++
			}
		}
	}
	if seen == 0 {
		t.Fatal("no trimmed result carries its text")
	}
	if rep.planned != rep.TokensAfter {
		t.Fatalf("planned %d tokens, got %d", rep.planned, rep.TokensAfter)
	}
}
