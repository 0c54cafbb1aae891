package history

import (
	"fmt"
	"strings"
	"testing"
)

// TestN10PlaceholderNeverLarger: trimming never replaces a text or a tool
// result by something larger than it: a short assistant text or result
// ("ok", "Done.") stays as it is past the boundary, a long one becomes
// its placeholder or the result text given.
func TestN10PlaceholderNeverLarger(t *testing.T) {
	var msgs []Message
	msgs = append(msgs, user("start"))
	for i := range 20 {
		id := fmt.Sprintf("c%d", i)
		text, result := "ok", "done"
		if i%2 == 0 {
			text, result = strings.Repeat("thinking aloud ", 20), strings.Repeat("a long line of output\n", 40)
		}
		msgs = append(msgs, call(text, id, "Bash", `{"command":"make"}`),
			Message{Role: RoleTool, Parts: []Part{{Kind: ToolResult, ID: id, Content: []Part{{Kind: Text, Text: result}}}}})
	}
	msgs = append(msgs, assistant("Done."))
	o := &Options{ResultText: func(id string) string { return "> [trimmed: result of Bash call " + id + "; call it again to see it]" }}
	out, _, rep := Reduce(msgs, 3_000, State{}, o)
	if rep.Boundary < 30 {
		t.Fatalf("boundary %d: the test shows nothing", rep.Boundary)
	}
	if len(out) != len(msgs) {
		t.Fatalf("%d messages out of %d (boundary %d, dropped %d)", len(out), len(msgs), rep.Boundary, rep.Dropped)
	}
	short, long := 0, 0
	for i := range out[:rep.Boundary] {
		for j, p := range out[i].Parts {
			q := msgs[i].Parts[j]
			switch p.Kind {
			case Text:
				if p.Text != q.Text && len(p.Text) >= len(q.Text) {
					t.Errorf("message %d: %q became %q", i, q.Text, p.Text)
				}
			case ToolResult:
				before, after := q.Content[0].Text, p.Content[0].Text
				switch {
				case before == after:
					short++
				case len(after) >= len(before):
					t.Errorf("message %d: %q became %q", i, before, after)
				default:
					long++
				}
			}
		}
	}
	if short == 0 || long == 0 {
		t.Fatalf("%d results kept, %d replaced: the test shows nothing", short, long)
	}
	// The estimate Reduce plans with agrees with what it sends.
	if rep.planned < rep.TokensAfter {
		t.Errorf("planned %d < sent %d", rep.planned, rep.TokensAfter)
	}
}
