package apiproxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/shape"
)

// resultTexts maps the tool_use ids of an Anthropic request to their
// result texts.
func resultTexts(t *testing.T, body []byte) map[string]string {
	t.Helper()
	out := make(map[string]string)
	for id, v := range results(mustParse(t, body)) {
		out[id] = v.Str()
	}
	return out
}

// TestShapedAtSource: a result is shaped when it first appears, and every
// later request of the conversation carries exactly that form, whatever
// grows after it (more results, a repeat of it, other tools); the same
// result at another position of another conversation gets the same
// bytes; and every shaped text restores exactly (terse expand).
func TestShapedAtSource(t *testing.T) {
	read := fileText("a", 60) // Claude Code's rendered Read: "     N→" gutters
	js := jsonIssues()
	var c convo
	c.user("look at a.go")
	idRead := c.call("Read", `{"file_path":"/src/a.go"}`, read)
	idJSON := c.call("Bash", `{"command":"gh issue list --json"}`, js)
	rw := NewRewriter(Options{NoTrim: true})
	var first map[string]string
	for step := 0; step < 8; step++ {
		body := c.request()
		res := rw.Rewrite(body, history.Anthropic)
		if res.Body == nil {
			t.Fatalf("step %d: nothing shaped", step)
		}
		got := resultTexts(t, res.Body)
		if first == nil {
			first = got
			if !strings.HasPrefix(got[idRead], "> [lossless: ") {
				t.Fatalf("the read is not shaped:\n%.300s", got[idRead])
			}
			if back, err := shape.Expand(got[idRead]); err != nil || back != read {
				t.Fatalf("the shaped read does not expand to the original (%v)", err)
			}
			if !restores(got[idJSON], js) {
				t.Fatalf("the re-encoded JSON does not decode to the original:\n%s", got[idJSON])
			}
		}
		for _, id := range []string{idRead, idJSON} {
			if got[id] != first[id] {
				t.Fatalf("step %d: the form of %s changed:\n%.300s\nwas\n%.300s", step, id, got[id], first[id])
			}
		}
		switch step % 3 {
		case 0:
			c.call("Grep", fmt.Sprintf(`{"pattern":"p%d"}`, step), strings.Repeat(fmt.Sprintf("src/x%d.go:12:func p() {}\n", step), 3))
		case 1:
			c.call("Read", `{"file_path":"/src/a.go"}`, read) // a repeat of it
		case 2:
			c.call("Read", fmt.Sprintf(`{"file_path":"/src/b%d.go"}`, step), fileText(fmt.Sprintf("b%d", step), 30))
		}
	}

	// Another conversation, the same result at another position, another
	// rewriter: the same bytes.
	var d convo
	d.user("something else first")
	d.n = 10
	d.call("Glob", `{"pattern":"**/*.go"}`, "src/a.go\nsrc/b.go\n")
	d.n = 0 // the read gets the same id as above
	d.call("Read", `{"file_path":"/src/a.go"}`, read)
	res := NewRewriter(Options{NoTrim: true}).Rewrite(d.request(), history.Anthropic)
	if got := resultTexts(t, res.Body)[idRead]; got != first[idRead] {
		t.Fatalf("the same read elsewhere is shaped differently:\n%.300s", got)
	}
}

// TestShapedRepeatNamesCall: a repeated shaped result becomes a reference
// in the dedup dialect naming the call and its main argument, the wording
// the hook writes.
func TestShapedRepeatNamesCall(t *testing.T) {
	read := fileText("a", 60)
	var c convo
	c.user("look at a.go twice")
	c.call("Read", `{"file_path":"/src/a.go"}`, read)
	id := c.call("Read", `{"file_path":"/src/a.go"}`, read)
	res := NewRewriter(Options{NoTrim: true}).Rewrite(c.request(), history.Anthropic)
	if got, want := resultTexts(t, res.Body)[id], `> [ref: toolu_01 (Read "/src/a.go"), byte-identical]`; got != want {
		t.Fatalf("repeat = %q, want %q", got, want)
	}
}

// TestShapeNeverLarger: a result that no pipeline form makes smaller, or
// whose form would not restore, is sent as it is.
func TestShapeNeverLarger(t *testing.T) {
	var c convo
	c.user("x")
	short := `{"a":1}`
	prose := strings.Repeat("Plain prose that no shaper knows, line after line of it.\n", 20)
	c.call("Bash", `{"command":"echo"}`, short)
	c.call("WebFetch", `{"url":"https://example.com"}`, prose)
	res := NewRewriter(Options{NoTrim: true}).Rewrite(c.request(), history.Anthropic)
	if res.Body != nil || len(res.Edits) != 0 {
		t.Fatalf("changed: %+v", res.Edits)
	}
}

// TestShapedJSONDocuments: a shell result of several JSON documents (two
// gh api calls) is sent as each document's auto encoding after its line,
// and reads back (terse.DecodeJSONDocuments) as the original's documents.
func TestShapedJSONDocuments(t *testing.T) {
	js := jsonIssues()
	two := js + "\n" + js + "\n"
	var c convo
	c.user("list the issues twice")
	id := c.call("Bash", `{"command":"gh api issues; gh api issues"}`, two)
	res := NewRewriter(Options{NoTrim: true}).Rewrite(c.request(), history.Anthropic)
	got := resultTexts(t, res.Body)[id]
	if !strings.HasPrefix(got, "> [JSON document 1 of 2]") {
		t.Fatalf("not sent as JSON documents:\n%.300s", got)
	}
	if !restores(got, two) {
		t.Fatalf("does not decode to the original's documents:\n%.300s", got)
	}
}
