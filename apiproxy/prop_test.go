package apiproxy

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tree"
	"pgregory.net/rapid"
)

// Property tests over generated agent sessions: each request is the whole
// conversation so far, sent turn after turn through one Rewriter.

var paths = []string{"/src/a.go", "/src/b.go", "/src/c.go"}

// genSession returns the requests of a generated Claude-Code-like
// session: file reads and edits, shell output (some JSON), repeated
// results, thinking with signatures, cache_control markers and blocks of
// unknown types.
func genSession(t *rapid.T) [][]byte {
	var c convo
	system := obj("type", "text", "text", "You are a coding agent. "+strings.Repeat("Be careful. ", rapid.IntRange(1, 50).Draw(t, "sys")),
		"cache_control", obj("type", "ephemeral"))
	tools := []tree.Value{obj("name", "Read", "description", "Reads a file", "input_schema", obj("type", "object"))}
	var reqs [][]byte
	request := func() {
		reqs = append(reqs, tree.AppendJSON(nil, obj("model", "claude-sonnet-4-5", "system", []tree.Value{system},
			"tools", tools, "messages", c.msgs, "stream", true)))
	}
	c.user("Please fix the tests. " + strings.Repeat("Details. ", rapid.IntRange(0, 30).Draw(t, "user")))
	steps := rapid.IntRange(1, 40).Draw(t, "steps")
	for s := 0; s < steps; s++ {
		request()
		c.n++
		id := fmt.Sprintf("toolu_%02d", c.n)
		p := rapid.SampledFrom(paths).Draw(t, "path")
		var name, args, result string
		switch rapid.IntRange(0, 4).Draw(t, "tool") {
		case 0, 1:
			name, args = "Read", fmt.Sprintf(`{"file_path":%q}`, p)
			result = fileText(p, rapid.IntRange(5, 200).Draw(t, "lines"))
		case 2:
			name, args, result = "Edit", fmt.Sprintf(`{"file_path":%q,"old_string":"a","new_string":"b"}`, p), "The file "+p+" has been updated."
		case 3:
			name, args = "Bash", `{"command":"gh api issues"}`
			var items []string
			for i := range rapid.IntRange(1, 40).Draw(t, "items") {
				items = append(items, fmt.Sprintf(`{"number": %d, "title": "issue %d", "state": "open", "labels": ["bug"]}`, i, i))
			}
			result = "[" + strings.Join(items, ",\n ") + "]"
		case 4:
			name, args = "Bash", `{"command":"go test ./..."}`
			result = strings.Repeat("ok  \tpkg/x\t0.1s\n", rapid.IntRange(1, 100).Draw(t, "ok"))
		}
		blocks := []tree.Value{}
		if rapid.Bool().Draw(t, "thinking") {
			blocks = append(blocks, obj("type", "thinking", "thinking", "Let me think about "+p, "signature", "sig"+id))
		}
		if rapid.IntRange(0, 9).Draw(t, "unknown") == 0 {
			blocks = append(blocks, obj("type", "future_block", "payload", obj("x", id)))
		}
		a, _ := tree.ParseString(args)
		blocks = append(blocks, obj("type", "tool_use", "id", id, "name", name, "input", a))
		res := obj("type", "tool_result", "tool_use_id", id, "content", result)
		if rapid.IntRange(0, 5).Draw(t, "cache") == 0 {
			res = obj("type", "tool_result", "tool_use_id", id, "content", result, "cache_control", obj("type", "ephemeral"))
		}
		c.msgs = append(c.msgs, obj("role", "assistant", "content", blocks), obj("role", "user", "content", []tree.Value{res}))
		if rapid.IntRange(0, 7).Draw(t, "say") == 0 {
			c.msgs = append(c.msgs, obj("role", "assistant", "content", "Done with that."))
			c.user("Continue. " + p)
		}
	}
	request()
	return reqs
}

func TestRewriteProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		reqs := genSession(t)
		o := Options{Window: rapid.SampledFrom([]int{4_000, 10_000, 30_000, 200_000}).Draw(t, "window")}
		rw, again := NewRewriter(o), NewRewriter(o)
		var prev [][]byte
		for i, body := range reqs {
			res := rw.Rewrite(body, history.Anthropic)
			out := body
			if res.Body != nil {
				out = res.Body
			}
			// Determinism: a second rewriter fed the same requests writes
			// the same bytes.
			if res2 := again.Rewrite(body, history.Anthropic); !bytes.Equal(res.Body, res2.Body) {
				t.Fatalf("request %d: two rewriters differ", i)
			}
			for _, v := range checkRequest(body, out, true) {
				t.Fatalf("request %d: %s", i, v)
			}
			msgs := rawMessages(t, out)
			checkBlocks(t, i, body, out)
			// Prefix stability: when the trimming did not move, the
			// previous request is a prefix of this one.
			if i > 0 && !res.PrefixChanged {
				if len(msgs) < len(prev) {
					t.Fatalf("request %d: shorter than the one before", i)
				}
				for j := range prev {
					if !bytes.Equal(prev[j], msgs[j]) {
						t.Fatalf("request %d: message %d changed without a boundary move:\n%s\n%s", i, j, prev[j], msgs[j])
					}
				}
			}
			prev = msgs
		}
	})
}

func rawMessages(t *rapid.T, body []byte) [][]byte {
	v, err := tree.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, m := range get(v, "messages").Items() {
		out = append(out, tree.AppendJSON(nil, m))
	}
	return out
}

// checkBlocks: thinking and unknown blocks in the output are copies of
// input blocks; every changed tool result names its call or decodes to
// the original.
func checkBlocks(t *rapid.T, i int, in, out []byte) {
	iv, _ := tree.Parse(in)
	ov, _ := tree.Parse(out)
	var inBlocks []string
	for _, m := range get(iv, "messages").Items() {
		for _, b := range get(m, "content").Items() {
			inBlocks = append(inBlocks, b.String())
		}
	}
	for _, m := range get(ov, "messages").Items() {
		for _, b := range get(m, "content").Items() {
			switch typ := get(b, "type").Str(); typ {
			case "thinking", "redacted_thinking", "future_block":
				if !slices.Contains(inBlocks, b.String()) {
					t.Fatalf("request %d: %s block changed: %s", i, typ, b)
				}
			case "tool_result":
				if !slices.Contains(inBlocks, b.String()) && !strings.Contains(get(b, "content").Str(), "call toolu_") {
					if _, err := render.Decode(get(b, "content").Str()); err != nil {
						t.Fatalf("request %d: result changed without naming its call: %s", i, b)
					}
				}
			}
		}
	}
}
