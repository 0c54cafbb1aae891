package apiproxy

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/shape"
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
				text := get(b, "content").Str()
				if rest := withoutDropNote(text); rest != text {
					b = obj("type", "tool_result", "tool_use_id", get(b, "tool_use_id").Str(), "content", rest)
					text = rest
				}
				if !slices.Contains(inBlocks, b.String()) && !namesCall(text) && !inContents(inBlocks, text) && !restoresOne(inBlocks, text) && !resolvesOne(inBlocks, text, results(ov)) {
					t.Fatalf("request %d: result changed without naming its call or restoring: %s", i, b)
				}
			}
		}
	}
}

// toResponses turns a generated Anthropic request into the Responses API
// shape Codex sends: thinking becomes a reasoning item, text a message,
// tool_use a function_call and tool_result a function_call_output.
func toResponses(t fataler, body []byte) []byte {
	v, err := tree.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	var items []tree.Value
	for _, m := range get(v, "messages").Items() {
		role := get(m, "role").Str()
		c := get(m, "content")
		if c.Kind() == tree.KindString {
			typ := "input_text"
			if role == "assistant" {
				typ = "output_text"
			}
			items = append(items, obj("type", "message", "role", role, "content", []tree.Value{obj("type", typ, "text", c.Str())}))
			continue
		}
		for _, b := range c.Items() {
			switch get(b, "type").Str() {
			case "thinking":
				items = append(items, obj("type", "reasoning", "summary", []tree.Value{}, "encrypted_content", get(b, "signature").Str()))
			case "text":
				items = append(items, obj("type", "message", "role", role, "content", []tree.Value{obj("type", "output_text", "text", get(b, "text").Str())}))
			case "tool_use":
				items = append(items, obj("type", "function_call", "call_id", get(b, "id").Str(), "name", get(b, "name").Str(), "arguments", get(b, "input").String()))
			case "tool_result":
				items = append(items, obj("type", "function_call_output", "call_id", get(b, "tool_use_id").Str(), "output", get(b, "content").Str()))
			default:
				items = append(items, b)
			}
		}
	}
	return tree.AppendJSON(nil, obj("model", "gpt-5-codex", "instructions", "You are Codex.", "input", items, "stream", true))
}

// TestRewriteResponsesProperties: the same properties on the Responses
// API shape: determinism, every call with its output, opaque items and
// user and system text unchanged, the prefix kept unless reported changed.
func TestRewriteResponsesProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var reqs [][]byte
		for _, b := range genSession(t) {
			reqs = append(reqs, toResponses(t, b))
		}
		o := Options{Window: rapid.SampledFrom([]int{4_000, 10_000, 200_000}).Draw(t, "window")}
		rw, again := NewRewriter(o), NewRewriter(o)
		var prev [][]byte
		for i, body := range reqs {
			res := rw.Rewrite(body, history.Responses)
			if res.Skipped != "" {
				t.Fatalf("request %d: %s", i, res.Skipped)
			}
			out := body
			if res.Body != nil {
				out = res.Body
			}
			if res2 := again.Rewrite(body, history.Responses); !bytes.Equal(res.Body, res2.Body) {
				t.Fatalf("request %d: two rewriters differ", i)
			}
			checkResponsesItems(t, i, body, out)
			msgs := rawItems(t, out)
			if i > 0 && !res.PrefixChanged {
				for j := range prev {
					if j >= len(msgs) || !bytes.Equal(prev[j], msgs[j]) {
						t.Fatalf("request %d: item %d changed without a boundary move", i, j)
					}
				}
			}
			prev = msgs
		}
	})
}

func rawItems(t *rapid.T, body []byte) [][]byte {
	v, err := tree.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, it := range get(v, "input").Items() {
		out = append(out, tree.AppendJSON(nil, it))
	}
	return out
}

// checkResponsesItems: instructions and user messages unchanged, reasoning
// and unknown items copies of input items, every call with its output
// right after the calls of its turn, changed outputs naming a call or
// decoding losslessly.
func checkResponsesItems(t *rapid.T, i int, in, out []byte) {
	iv, _ := tree.Parse(in)
	ov, err := tree.Parse(out)
	if err != nil {
		t.Fatalf("request %d: not JSON: %v", i, err)
	}
	if !tree.Equal(get(iv, "instructions"), get(ov, "instructions")) {
		t.Fatalf("request %d: instructions changed", i)
	}
	var inItems []string
	var inUser []string
	for _, it := range get(iv, "input").Items() {
		inItems = append(inItems, it.String())
		if get(it, "role").Str() == "user" {
			inUser = append(inUser, it.String())
		}
	}
	var outUser []string
	calls, outputs := map[string]bool{}, map[string]bool{}
	for _, it := range get(ov, "input").Items() {
		switch typ := get(it, "type").Str(); typ {
		case "message":
			if get(it, "role").Str() == "user" {
				outUser = append(outUser, it.String())
			}
		case "function_call":
			calls[get(it, "call_id").Str()] = true
		case "function_call_output":
			id := get(it, "call_id").Str()
			if !calls[id] {
				t.Fatalf("request %d: output %s before or without its call", i, id)
			}
			outputs[id] = true
			if !slices.Contains(inItems, it.String()) {
				text := withoutDropNote(get(it, "output").Str())
				if !namesCall(text) && !inContents(inItems, text) && !restoresOne(inItems, text) && !resolvesOne(inItems, text, callOutputs(ov)) {
					t.Fatalf("request %d: output changed without naming a call or restoring: %s", i, it)
				}
			}
		default:
			if !slices.Contains(inItems, it.String()) {
				t.Fatalf("request %d: %s item changed: %s", i, typ, it)
			}
		}
	}
	for id := range calls {
		if !outputs[id] {
			t.Fatalf("request %d: call %s without its output", i, id)
		}
	}
	if !slices.Equal(inUser, outUser) {
		t.Fatalf("request %d: user messages changed", i)
	}
}

// toChat turns a generated Anthropic request into a Chat Completions
// request (thinking has no place there and is left out).
func toChat(t fataler, body []byte) []byte {
	v, err := tree.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []tree.Value{obj("role", "system", "content", "You are a coding agent.")}
	for _, m := range get(v, "messages").Items() {
		role := get(m, "role").Str()
		c := get(m, "content")
		if c.Kind() == tree.KindString {
			msgs = append(msgs, obj("role", role, "content", c.Str()))
			continue
		}
		var text string
		var calls []tree.Value
		for _, b := range c.Items() {
			switch get(b, "type").Str() {
			case "text":
				text += get(b, "text").Str()
			case "tool_use":
				calls = append(calls, obj("id", get(b, "id").Str(), "type", "function",
					"function", obj("name", get(b, "name").Str(), "arguments", get(b, "input").String())))
			case "tool_result":
				msgs = append(msgs, obj("role", "tool", "tool_call_id", get(b, "tool_use_id").Str(), "content", get(b, "content").Str()))
			}
		}
		if role == "assistant" {
			if len(calls) > 0 {
				msgs = append(msgs, obj("role", "assistant", "content", text, "tool_calls", calls))
			} else {
				msgs = append(msgs, obj("role", "assistant", "content", text))
			}
		}
	}
	return tree.AppendJSON(nil, obj("model", "gpt-4.1", "messages", msgs, "stream", true))
}

// TestRewriteChatProperties: the same properties on Chat Completions.
func TestRewriteChatProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var reqs [][]byte
		for _, b := range genSession(t) {
			reqs = append(reqs, toChat(t, b))
		}
		o := Options{Window: rapid.SampledFrom([]int{4_000, 10_000, 200_000}).Draw(t, "window")}
		rw, again := NewRewriter(o), NewRewriter(o)
		var prev [][]byte
		for i, body := range reqs {
			res := rw.Rewrite(body, history.OpenAI)
			if res.Skipped != "" {
				t.Fatalf("request %d: %s", i, res.Skipped)
			}
			out := body
			if res.Body != nil {
				out = res.Body
			}
			if res2 := again.Rewrite(body, history.OpenAI); !bytes.Equal(res.Body, res2.Body) {
				t.Fatalf("request %d: two rewriters differ", i)
			}
			iv, _ := tree.Parse(body)
			ov, err := tree.Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			var inFixed, outFixed []string
			for _, m := range get(iv, "messages").Items() {
				if r := get(m, "role").Str(); r == "user" || r == "system" {
					inFixed = append(inFixed, m.String())
				}
			}
			calls := map[string]bool{}
			answered := map[string]bool{}
			for _, m := range get(ov, "messages").Items() {
				switch get(m, "role").Str() {
				case "user", "system":
					outFixed = append(outFixed, m.String())
				case "assistant":
					for _, c := range get(m, "tool_calls").Items() {
						calls[get(c, "id").Str()] = true
					}
				case "tool":
					id := get(m, "tool_call_id").Str()
					if !calls[id] {
						t.Fatalf("request %d: result %s without its call before it", i, id)
					}
					answered[id] = true
				}
			}
			for id := range calls {
				if !answered[id] {
					t.Fatalf("request %d: call %s without its result", i, id)
				}
			}
			if !slices.Equal(inFixed, outFixed) {
				t.Fatalf("request %d: user or system messages changed", i)
			}
			msgs := rawMessages(t, out)
			if i > 0 && !res.PrefixChanged {
				for j := range prev {
					if j >= len(msgs) || !bytes.Equal(prev[j], msgs[j]) {
						t.Fatalf("request %d: message %d changed without a boundary move", i, j)
					}
				}
			}
			prev = msgs
		}
	})
}

// inContents reports whether text is, JSON-quoted, part of one of blocks.
func inContents(blocks []string, text string) bool {
	q := string(tree.AppendString(nil, text))
	for _, b := range blocks {
		if strings.Contains(b, q) {
			return true
		}
	}
	return false
}

// restoresOne reports whether a changed text restores (see restores) to
// a text held by one of the original blocks: a shaped text to its exact
// original, a re-encoded document to one that decodes equal.
func restoresOne(blocks []string, text string) bool {
	if strings.HasPrefix(text, "> [lossless: ") {
		back, err := shape.Expand(text)
		return err == nil && inContents(blocks, back)
	}
	_, err := render.Decode(text)
	return err == nil
}

// fataler is what the request converters need of a test.
type fataler interface{ Fatal(args ...any) }
