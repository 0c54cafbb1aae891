package history

import (
	"fmt"

	"github.com/terse-dev/terse/tree"
)

// decodeResponses reads an OpenAI Responses API request. "instructions"
// becomes a leading system message; a string "input" one user message;
// each input item one message: "message" items by their role with their
// input_text and output_text parts as text (other parts opaque),
// function_call and custom_tool_call items assistant tool calls,
// function_call_output and custom_tool_call_output items tool results,
// and every other item (reasoning, web search calls, references, ...) an
// assistant message holding one opaque part, passed through as it is.
func decodeResponses(v tree.Value) (*Request, error) {
	if v.Kind() != tree.KindObject {
		return nil, shapeErr("", "request is a JSON %s, want an object", v.Kind())
	}
	r := &Request{Format: Responses, raw: v}
	if ins, ok := v.Get("instructions"); ok && ins.Kind() == tree.KindString {
		r.srcs = append(r.srcs, ins)
		r.sys = int32(len(r.srcs))
		r.Messages = append(r.Messages, Message{Role: RoleSystem, Parts: textParts(ins.Str(), r.sys), src: r.sys})
	}
	input, ok := v.Get("input")
	switch {
	case !ok:
		return nil, shapeErr("/input", "want a string or an array of items")
	case input.Kind() == tree.KindString:
		r.srcs = append(r.srcs, input)
		src := int32(len(r.srcs))
		r.Messages = append(r.Messages, Message{Role: RoleUser, Parts: textParts(input.Str(), src), src: src})
		r.Tools = toolsFrom(get(v, "tools"))
		return r, nil
	case input.Kind() != tree.KindArray:
		return nil, shapeErr("/input", "input is a JSON %s, want a string or an array", input.Kind())
	}
	for i, it := range input.Items() {
		ptr := tree.Pointer("/input").Index(i)
		if it.Kind() != tree.KindObject {
			return nil, shapeErr(ptr, "item is a JSON %s, want an object", it.Kind())
		}
		r.srcs = append(r.srcs, it)
		src := int32(len(r.srcs))
		m, err := responsesItem(it, ptr)
		if err != nil {
			return nil, err
		}
		m.src = src
		for j := range m.Parts {
			m.Parts[j].src = src
		}
		r.Messages = append(r.Messages, m)
	}
	r.Tools = toolsFrom(get(v, "tools"))
	return r, nil
}

// responsesItem decodes one input item (without provenance).
func responsesItem(it tree.Value, ptr tree.Pointer) (Message, error) {
	str := func(key string) (string, error) {
		x, ok := it.Get(key)
		if !ok || x.Kind() != tree.KindString {
			return "", shapeErr(ptr.Key(key), "want a string")
		}
		return x.Str(), nil
	}
	typ := get(it, "type").Str()
	switch typ {
	case "message", "":
		if typ == "" && !it.Has("role") {
			break
		}
		var role Role
		switch get(it, "role").Str() {
		case "user":
			role = RoleUser
		case "assistant":
			role = RoleAssistant
		case "system", "developer":
			role = RoleSystem
		default:
			return Message{}, shapeErr(ptr.Key("role"), "role %s, want user, assistant, system or developer", get(it, "role"))
		}
		parts, err := responsesContent(get(it, "content"), ptr.Key("content"))
		return Message{Role: role, Parts: parts}, err
	case "function_call", "custom_tool_call":
		p := Part{Kind: ToolCall, raw: it}
		var err error
		if p.ID, err = str("call_id"); err != nil {
			return Message{}, err
		}
		if p.Name, err = str("name"); err != nil {
			return Message{}, err
		}
		key := "arguments"
		if typ == "custom_tool_call" {
			key = "input"
		}
		p.Args = get(it, key).Str()
		return Message{Role: RoleAssistant, Parts: []Part{p}}, nil
	case "function_call_output", "custom_tool_call_output":
		p := Part{Kind: ToolResult, raw: it}
		var err error
		if p.ID, err = str("call_id"); err != nil {
			return Message{}, err
		}
		if p.Content, err = responsesContent(get(it, "output"), ptr.Key("output")); err != nil {
			return Message{}, err
		}
		return Message{Role: RoleTool, Parts: []Part{p}}, nil
	}
	return Message{Role: RoleAssistant, Parts: []Part{{Kind: Opaque, raw: it}}}, nil
}

// responsesContent decodes message content or tool output: a string is
// one text part; input_text and output_text parts are text; others are
// opaque. A lone part object counts as an array of one.
func responsesContent(c tree.Value, ptr tree.Pointer) ([]Part, error) {
	switch c.Kind() {
	case tree.KindNull:
		return nil, nil
	case tree.KindString:
		return textParts(c.Str(), 0), nil
	case tree.KindArray:
	case tree.KindObject:
		// One part on its own (as Codex rollouts record outputs).
		c = tree.Array(c)
	default:
		return nil, shapeErr(ptr, "content is a JSON %s, want a string, an array or an object", c.Kind())
	}
	var out []Part
	for i, b := range c.Items() {
		if b.Kind() != tree.KindObject {
			return nil, shapeErr(ptr.Index(i), "content part is a JSON %s, want an object", b.Kind())
		}
		switch get(b, "type").Str() {
		case "input_text", "output_text":
			t, ok := b.Get("text")
			if !ok || t.Kind() != tree.KindString {
				return nil, shapeErr(ptr.Index(i).Key("text"), "want a string")
			}
			out = append(out, Part{Kind: Text, Text: t.Str(), raw: b})
		default:
			out = append(out, Part{Kind: Opaque, raw: b})
		}
	}
	return out, nil
}

// encodeResponses writes the request back as a Responses API request.
func (r *Request) encodeResponses() (tree.Value, error) {
	var set []tree.Member
	var items []tree.Value
	stringInput := false
	for _, p := range pieces(r.Messages) {
		raw, same := r.source(p)
		if same {
			items = append(items, raw)
			continue
		}
		if p.src != 0 && p.src == r.sys {
			c, err := responsesContentValue(raw, p.parts, "input_text")
			if err != nil {
				return c, err
			}
			set = append(set, member("instructions", c))
			continue
		}
		if raw.Kind() == tree.KindString { // a string input
			c, err := responsesContentValue(raw, p.parts, "input_text")
			if err != nil {
				return c, err
			}
			items = append(items, c)
			stringInput = true
			continue
		}
		it, err := responsesEncodeItem(raw, p)
		if err != nil {
			return it, err
		}
		items = append(items, it)
	}
	if stringInput && len(items) == 1 {
		set = append(set, member("input", items[0]))
	} else {
		set = append(set, member("input", tree.Array(items...)))
	}
	return patch(r.raw, set), nil
}

// responsesEncodeItem writes one piece back as its item.
func responsesEncodeItem(raw tree.Value, p piece) (tree.Value, error) {
	if raw.IsNull() {
		return raw, fmt.Errorf("history: responses: a %s message without its item", p.role)
	}
	switch typ := get(raw, "type").Str(); typ {
	case "function_call", "custom_tool_call":
		if len(p.parts) != 1 || p.parts[0].Kind != ToolCall {
			return raw, fmt.Errorf("history: responses: %s item holds %d parts", typ, len(p.parts))
		}
		key := "arguments"
		if typ == "custom_tool_call" {
			key = "input"
		}
		if orig, ok := raw.Get(key); (!ok || orig.Kind() != tree.KindString) && p.parts[0].Args == get(raw, key).Str() {
			// Arguments that are absent or not a string, and unchanged,
			// stay as they were.
			return raw, nil
		}
		return patch(raw, []tree.Member{member(key, tree.String(p.parts[0].Args))}), nil
	case "function_call_output", "custom_tool_call_output":
		if len(p.parts) != 1 || p.parts[0].Kind != ToolResult {
			return raw, fmt.Errorf("history: responses: %s item holds %d parts", typ, len(p.parts))
		}
		if len(p.parts[0].Content) == 0 && !raw.Has("output") {
			return raw, nil // a result without output stays without one
		}
		c, err := responsesContentValue(get(raw, "output"), p.parts[0].Content, "input_text")
		if err != nil {
			return c, err
		}
		return patch(raw, []tree.Member{member("output", c)}), nil
	case "message", "":
		if typ == "" && !raw.Has("role") {
			break
		}
		textType := "input_text"
		if p.role == RoleAssistant {
			textType = "output_text"
		}
		if len(p.parts) == 0 && !raw.Has("content") {
			return raw, nil // a message without content stays without one
		}
		c, err := responsesContentValue(get(raw, "content"), p.parts, textType)
		if err != nil {
			return c, err
		}
		return patch(raw, []tree.Member{member("content", c)}), nil
	}
	// An opaque item: itself, or a placeholder message when trimming
	// replaced it (it never does: opaque parts are kept).
	if len(p.parts) == 1 && p.parts[0].Kind == Opaque {
		return raw, nil
	}
	return raw, fmt.Errorf("history: responses: %s item changed", get(raw, "type").Str())
}

// responsesContentValue encodes parts as content or output: a string when
// the original was a string (or absent) and one text part remains, else
// an array of parts, text parts written as textType.
func responsesContentValue(orig tree.Value, parts []Part, textType string) (tree.Value, error) {
	if orig.Kind() == tree.KindObject && len(parts) == 1 && !parts[0].raw.IsNull() {
		a, err := responsesContentValue(tree.Array(orig), parts, textType)
		return a.Index(0), err
	}
	if orig.Kind() != tree.KindArray {
		if len(parts) == 0 && orig.Kind() == tree.KindString {
			return orig, nil
		}
		if len(parts) == 1 && parts[0].Kind == Text {
			return tree.String(parts[0].Text), nil
		}
	}
	items := make([]tree.Value, len(parts))
	for i := range parts {
		q := &parts[i]
		switch q.Kind {
		case Text:
			raw := q.raw
			if t := get(raw, "type").Str(); t != "input_text" && t != "output_text" {
				raw = tree.Value{}
			}
			if raw.IsNull() {
				items[i] = tree.Object(member("type", tree.String(textType)), member("text", tree.String(q.Text)))
			} else {
				items[i] = patch(raw, []tree.Member{member("text", tree.String(q.Text))})
			}
		case Opaque:
			if q.raw.IsNull() {
				return q.raw, fmt.Errorf("history: opaque part without its block")
			}
			items[i] = q.raw
		default:
			return tree.Value{}, fmt.Errorf("history: responses: content cannot hold a %v part", q.Kind)
		}
	}
	return tree.Array(items...), nil
}
