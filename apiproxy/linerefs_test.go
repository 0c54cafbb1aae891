package apiproxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tree"
)

// lineRefsConvo is a file read, edited, and read again: the re-read
// differs from the first read in the edited line only. more adds turns
// after it.
func lineRefsConvo(more int) (c convo, reread string) {
	first := fileText("a", 80)
	reread = strings.Replace(first, "return compute(70)", "return compute(71)", 1)
	c.user("Fix a.go.")
	c.call("Read", `{"file_path":"/src/a.go"}`, first)
	c.call("Edit", `{"file_path":"/src/a.go","old_string":"compute(70)","new_string":"compute(71)"}`, "The file /src/a.go has been updated.")
	c.call("Read", `{"file_path":"/src/a.go"}`, reread)
	for i := range more {
		c.call("Bash", `{"command":"go test ./..."}`, strings.Repeat("ok  \tpkg", i+1))
	}
	return c, reread
}

// sentResults are the texts of the tool results of a request body, by
// tool_use_id, and the body's messages, each as its JSON.
func sentResults(t *testing.T, body []byte) (map[string]string, []string) {
	t.Helper()
	v, err := tree.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	texts := make(map[string]string)
	var msgs []string
	for _, m := range get(v, "messages").Items() {
		msgs = append(msgs, string(tree.AppendJSON(nil, m)))
		for _, b := range get(m, "content").Items() {
			if get(b, "type").Str() == "tool_result" {
				texts[get(b, "tool_use_id").Str()] = get(b, "content").Str()
			}
		}
	}
	return texts, msgs
}

// lineRefs are the line references of text.
func lineRefs(text string) []inband.RefLines {
	var out []inband.RefLines
	for _, l := range strings.Split(text, "\n") {
		if v, err := inband.Parse(l); err == nil {
			if r, ok := v.(inband.RefLines); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

// sent is the body a rewriter sends for body.
func sent(rw *Rewriter, body []byte) ([]byte, Result) {
	res := rw.Rewrite(body, history.Anthropic)
	if res.Body != nil {
		return res.Body, res
	}
	return body, res
}

// TestLineRefs: a file read again after an edit carries line references
// to the first read in place of its unchanged lines; resolved against
// the first read's text as sent they give back the re-read as it is sent
// without references, byte for byte; the next request keeps the same
// bytes for the messages before it; a profile without references (NoRefs)
// leaves every result without them.
func TestLineRefs(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"trimming", Options{Window: 200_000, NoShape: true}},
		{"no-trim", Options{Window: 200_000, NoShape: true, NoTrim: true}},
		{"shaped", Options{Window: 200_000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, reread := lineRefsConvo(0)

			// Without references: the texts the references stand for.
			off := tc.opt
			off.Profile = func(string) Profile { return Profile{NoRefs: true} }
			plain, _ := sent(NewRewriter(off), c.request())
			plainTexts, _ := sentResults(t, plain)
			for id, s := range plainTexts {
				if r := lineRefs(s); len(r) > 0 {
					t.Errorf("%s carries %d line references with NoRefs", id, len(r))
				}
			}
			want := plainTexts["toolu_03"]
			if tc.opt.NoShape && want != reread {
				t.Fatalf("the re-read changed with NoRefs:\n%s", want)
			}

			rw := NewRewriter(tc.opt)
			body, res := sent(rw, c.request())
			if res.Body == nil {
				t.Fatalf("request not rewritten (%s)", res.Skipped)
			}
			texts, msgs := sentResults(t, body)
			got := texts["toolu_03"]
			refs := lineRefs(got)
			if len(refs) == 0 {
				t.Fatalf("the re-read carries no line reference:\n%s", got)
			}
			for _, r := range refs {
				if !strings.HasPrefix(r.ID, "toolu_01 (Read ") {
					t.Errorf("%s names another result than the first read", r)
				}
			}
			back, err := resolvedText("toolu_03", bodyResults(t, body), 0)
			if err != nil {
				t.Fatal(err)
			}
			if back != want {
				t.Fatalf("resolved re-read differs from the one sent without references:\n got %q\nwant %q", back, want)
			}
			if len(got) >= len(want)/4 {
				t.Errorf("re-read sent as %d bytes of %d", len(got), len(want))
			}

			// One turn later: the same bytes up to the re-read.
			c2, _ := lineRefsConvo(1)
			body2, res2 := sent(rw, c2.request())
			_, msgs2 := sentResults(t, body2)
			if res2.PrefixChanged || len(msgs2) < len(msgs) {
				t.Fatalf("prefix changed (%v), %d messages after %d", res2.PrefixChanged, len(msgs2), len(msgs))
			}
			for i := range msgs {
				if msgs2[i] != msgs[i] {
					t.Fatalf("message %d changed on the next request:\n%s\n%s", i, msgs[i], msgs2[i])
				}
			}
		})
	}
}

// TestLineRefsTrimmedEarlier: when trimming leaves out the result a
// re-read's line references name, the re-read is sent whole, and so is a
// later read whose references name lines of that re-read as it would
// have been sent (a read of the lines the edit changed): every line
// reference sent resolves, against the texts as sent, to the result as
// the client sent it.
func TestLineRefsTrimmedEarlier(t *testing.T) {
	var c convo
	first := fileText("a", 80)
	// The re-read: lines 10–20 edited; the last read: those lines only.
	lines := strings.SplitAfter(first, "\n")
	for i := 9; i < 20; i++ {
		lines[i] = strings.Replace(lines[i], "return compute(", "return 2*compute(", 1)
	}
	second, third := strings.Join(lines, ""), strings.Join(lines[9:20], "")
	orig := make(map[string]string)
	c.user("Fix a.go.")
	orig[c.call("Read", `{"file_path":"/src/a.go"}`, first)] = first
	c.call("Edit", `{"file_path":"/src/a.go","old_string":"compute(70)","new_string":"compute(71)"}`, "The file /src/a.go has been updated.")
	for i := range 30 {
		c.call("Grep", fmt.Sprintf(`{"pattern":"p%d"}`, i), fileText(fmt.Sprintf("g%d_", i), 40))
	}
	reread := c.call("Read", `{"file_path":"/src/a.go"}`, second)
	orig[reread] = second
	last := c.call("Read", `{"file_path":"/src/a.go","offset":10,"limit":11}`, third)
	orig[last] = third

	// With the whole window, the last read names lines of the re-read,
	// which names lines of the first read.
	roomy, _ := sent(NewRewriter(Options{Window: 200_000, NoShape: true, NoTrim: true, NoStale: true, NoEdit: true}), c.request())
	texts, _ := sentResults(t, roomy)
	if r := lineRefs(texts[reread]); len(r) == 0 || !strings.HasPrefix(r[0].ID, "toolu_01 ") {
		t.Fatalf("the re-read names no lines of the first read:\n%s", texts[reread])
	}
	if r := lineRefs(texts[last]); len(r) == 0 || !strings.HasPrefix(r[0].ID, reread+" ") {
		t.Fatalf("the last read names no lines of the re-read:\n%s", texts[last])
	}

	body, res := sent(NewRewriter(Options{Window: 20_000, MinTarget: 0.5, NoEdit: true, NoStale: true, NoShape: true}), c.request())
	texts, _ = sentResults(t, body)
	if res.Report.Trimmed == 0 || strings.Contains(texts["toolu_01"], "→") {
		t.Fatalf("the first read is not trimmed (%d trimmed):\n%.200s", res.Report.Trimmed, texts["toolu_01"])
	}
	for id, want := range orig {
		s, ok := texts[id]
		if !ok || strings.HasPrefix(s, "> [trimmed: ") {
			continue
		}
		back, err := resolvedText(id, bodyResults(t, body), 0)
		if err != nil || back != want {
			t.Errorf("%s does not resolve to the result sent (%v):\n%s", id, err, s)
		}
	}
}

// bodyResults are the results of a request body by tool_use_id.
func bodyResults(t *testing.T, body []byte) map[string]tree.Value {
	t.Helper()
	v, err := tree.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	return results(v)
}
