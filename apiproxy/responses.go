package apiproxy

import (
	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/tree"
)

// RewriteResponses rewrites an OpenAI Responses API request body: tool
// outputs (function_call_output and custom_tool_call_output items) get
// the repeat references and JSON re-encodings of [Rewriter.Rewrite].
// History is not trimmed in this format (agents that use it, such as
// Codex, compact their own history), so stale reads, which are declared
// only when trimming moves, are not either. Every other item is left as
// it is.
func (rw *Rewriter) RewriteResponses(body []byte) Result {
	v, err := tree.Parse(body)
	if err != nil {
		return Result{Skipped: "does not decode: " + err.Error()}
	}
	res := Result{Model: get(v, "model").Str()}
	input, ok := v.Get("input")
	if v.Kind() != tree.KindObject || !ok || input.Kind() != tree.KindArray {
		return res // a plain string input, or not a request this reads
	}
	items := input.Items()
	// The items as a conversation: calls and their outputs; other items
	// are empty user messages, which keep the indices aligned.
	msgs := make([]history.Message, len(items))
	outText := make(map[string]bool)
	for i, it := range items {
		typ := get(it, "type").Str()
		id := get(it, "call_id").Str()
		switch typ {
		case "function_call", "custom_tool_call":
			args := get(it, "arguments").Str()
			if typ == "custom_tool_call" {
				args = string(tree.AppendJSON(nil, tree.Object(tree.Member{Key: "input", Value: get(it, "input")})))
			}
			msgs[i] = history.Message{Role: history.RoleAssistant, Parts: []history.Part{{Kind: history.ToolCall, ID: id, Name: get(it, "name").Str(), Args: args}}}
		case "function_call_output", "custom_tool_call_output":
			out := get(it, "output")
			if out.Kind() == tree.KindString {
				msgs[i] = history.Message{Role: history.RoleTool, Parts: []history.Part{{Kind: history.ToolResult, ID: id,
					Content: []history.Part{{Kind: history.Text, Text: out.Str()}}}}}
				outText[id] = true
				continue
			}
			msgs[i] = history.Message{Role: history.RoleUser}
		default:
			msgs[i] = history.Message{Role: history.RoleUser}
		}
	}
	if len(outText) == 0 {
		return res
	}
	calls := indexCalls(msgs)
	base, encEdits := rw.encode(msgs, calls)
	edited, edits := rw.declare(base, calls, 0)
	res.Edits = append(encEdits, edits...)
	if len(res.Edits) == 0 {
		return res
	}
	newItems := make([]tree.Value, len(items))
	for i, it := range items {
		newItems[i] = it
		m := &edited[i]
		if m.Role != history.RoleTool || len(m.Parts) != 1 {
			continue
		}
		text, _ := resultText(&m.Parts[0])
		if text == get(it, "output").Str() {
			continue
		}
		mems := append([]tree.Member(nil), it.Members()...)
		for j := range mems {
			if mems[j].Key == "output" {
				mems[j].Value = tree.String(text)
			}
		}
		newItems[i] = tree.Object(mems...)
	}
	mems := append([]tree.Member(nil), v.Members()...)
	for j := range mems {
		if mems[j].Key == "input" {
			mems[j].Value = tree.Array(newItems...)
		}
	}
	res.Body = tree.AppendJSON(nil, tree.Object(mems...))
	return res
}

// get returns v's member k (null when absent).
func get(v tree.Value, k string) tree.Value {
	x, _ := v.Get(k)
	return x
}
