package history

import (
	"fmt"

	"github.com/terse-dev/terse/tree"
)

// decodeOpenAI reads an OpenAI Chat Completions request. Roles "system"
// and "developer" become system messages; each tool message becomes a tool message
// with one ToolResult part; an assistant's text comes before its tool
// calls.
func decodeOpenAI(v tree.Value) (*Request, error) {
	if v.Kind() != tree.KindObject {
		return nil, shapeErr("", "request is a JSON %s, want an object", v.Kind())
	}
	r := &Request{Format: OpenAI, raw: v}
	msgs, ok := v.Get("messages")
	if !ok || msgs.Kind() != tree.KindArray {
		return nil, shapeErr("/messages", "want an array of messages")
	}
	for i, m := range msgs.Items() {
		ptr := tree.Pointer("/messages").Index(i)
		if m.Kind() != tree.KindObject {
			return nil, shapeErr(ptr, "message is a JSON %s, want an object", m.Kind())
		}
		r.srcs = append(r.srcs, m)
		src := int32(len(r.srcs))
		msg, err := openaiMessage(m, ptr)
		if err != nil {
			return nil, err
		}
		msg.src = src
		for j := range msg.Parts {
			msg.Parts[j].src = src
		}
		r.Messages = append(r.Messages, msg)
	}
	r.Tools = toolsFrom(get(v, "tools"))
	return r, nil
}

func openaiRole(s string) (Role, bool) {
	switch s {
	case "system", "developer":
		return RoleSystem, true
	case "user":
		return RoleUser, true
	case "assistant":
		return RoleAssistant, true
	case "tool":
		return RoleTool, true
	}
	return "", false
}

// openaiMessage decodes one message (without provenance).
func openaiMessage(m tree.Value, ptr tree.Pointer) (Message, error) {
	role, ok := openaiRole(get(m, "role").Str())
	if !ok {
		return Message{}, shapeErr(ptr.Key("role"), "role %s, want system, developer, user, assistant or tool", get(m, "role"))
	}
	content, err := openaiContent(get(m, "content"), ptr.Key("content"))
	if err != nil {
		return Message{}, err
	}
	msg := Message{Role: role}
	switch role {
	case RoleTool:
		id, ok := m.Get("tool_call_id")
		if !ok || id.Kind() != tree.KindString {
			return msg, shapeErr(ptr.Key("tool_call_id"), "want a string")
		}
		msg.Parts = []Part{{Kind: ToolResult, ID: id.Str(), Content: content, raw: m}}
		return msg, nil
	case RoleAssistant:
		msg.Parts = content
		calls := get(m, "tool_calls")
		for j, c := range calls.Items() {
			p, err := openaiCall(c, ptr.Key("tool_calls").Index(j))
			if err != nil {
				return msg, err
			}
			msg.Parts = append(msg.Parts, p)
		}
		return msg, nil
	}
	msg.Parts = content
	return msg, nil
}

// openaiContent decodes content: a string, null, or an array of parts.
func openaiContent(c tree.Value, ptr tree.Pointer) ([]Part, error) {
	switch c.Kind() {
	case tree.KindNull:
		return nil, nil
	case tree.KindString:
		return textParts(c.Str(), 0), nil
	case tree.KindArray:
		var out []Part
		for i, b := range c.Items() {
			p, err := openaiPart(b, ptr.Index(i))
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	}
	return nil, shapeErr(ptr, "content is a JSON %s, want a string, null or an array", c.Kind())
}

func openaiPart(b tree.Value, ptr tree.Pointer) (Part, error) {
	if b.Kind() != tree.KindObject {
		return Part{}, shapeErr(ptr, "content part is a JSON %s, want an object", b.Kind())
	}
	p := Part{raw: b}
	switch get(b, "type").Str() {
	case "text":
		t, ok := b.Get("text")
		if !ok || t.Kind() != tree.KindString {
			return p, shapeErr(ptr.Key("text"), "want a string")
		}
		p.Kind, p.Text = Text, t.Str()
	case "image_url":
		p.Kind = Image
		p.URL = get(get(b, "image_url"), "url").Str()
	default:
		p.Kind = Opaque
	}
	return p, nil
}

func openaiCall(c tree.Value, ptr tree.Pointer) (Part, error) {
	if c.Kind() != tree.KindObject {
		return Part{}, shapeErr(ptr, "tool call is a JSON %s, want an object", c.Kind())
	}
	fn := get(c, "function")
	p := Part{Kind: ToolCall, ID: get(c, "id").Str(), Name: get(fn, "name").Str(), raw: c}
	switch a := get(fn, "arguments"); a.Kind() {
	case tree.KindString:
		p.Args = a.Str()
	case tree.KindNull:
	default:
		p.Args = string(tree.AppendJSON(nil, a))
	}
	if p.ID == "" {
		return p, shapeErr(ptr.Key("id"), "want a non-empty string")
	}
	return p, nil
}

// encodeOpenAI writes the request back as an OpenAI request.
func (r *Request) encodeOpenAI() (tree.Value, error) {
	var items []tree.Value
	for _, p := range pieces(r.Messages) {
		raw, same := r.source(p)
		if same {
			items = append(items, raw)
			continue
		}
		if p.role == RoleTool {
			// One provider message per result.
			if len(p.parts) == 0 && !raw.IsNull() {
				items = append(items, raw)
			}
			for i := range p.parts {
				m, err := openaiToolMessage(raw, &p.parts[i])
				if err != nil {
					return m, err
				}
				items = append(items, m)
			}
			continue
		}
		m, err := openaiEncodeMessage(raw, p)
		if err != nil {
			return m, err
		}
		items = append(items, m)
	}
	return patch(r.raw, []tree.Member{member("messages", tree.Array(items...))}), nil
}

func openaiToolMessage(raw tree.Value, p *Part) (tree.Value, error) {
	if p.Kind != ToolResult {
		return tree.Value{}, fmt.Errorf("history: openai: a tool message holds a %v part", p.Kind)
	}
	if !p.raw.IsNull() {
		raw = p.raw
	}
	set := []tree.Member{member("role", tree.String("tool")), member("tool_call_id", tree.String(p.ID))}
	if get(raw, "role").Str() == "tool" {
		set = set[1:]
	}
	if orig := get(raw, "content"); len(p.Content) > 0 || raw.IsNull() || !orig.IsNull() {
		c, err := openaiEncodeContent(orig, p.Content)
		if err != nil {
			return c, err
		}
		set = append(set, member("content", c))
	}
	return patch(raw, set), nil
}

func openaiEncodeMessage(raw tree.Value, p piece) (tree.Value, error) {
	var content, calls []Part
	for _, q := range p.parts {
		if q.Kind == ToolCall {
			calls = append(calls, q)
		} else {
			content = append(content, q)
		}
	}
	if len(calls) > 0 && p.role != RoleAssistant {
		return tree.Value{}, fmt.Errorf("history: openai: %s message holds tool calls", p.role)
	}
	var set []tree.Member
	var drop []string
	if rr, _ := openaiRole(get(raw, "role").Str()); rr != p.role || raw.IsNull() {
		set = append(set, member("role", tree.String(string(p.role))))
	}
	origContent := get(raw, "content")
	if len(content) == 0 && (origContent.IsNull() || origContent.Str() == "" && origContent.Kind() == tree.KindString) && (p.role == RoleAssistant || !raw.IsNull()) {
		// No text: keep what was there (absent, null or ""); a new
		// assistant message gets null.
		if raw.IsNull() {
			set = append(set, member("content", tree.Null()))
		}
	} else {
		c, err := openaiEncodeContent(origContent, content)
		if err != nil {
			return c, err
		}
		set = append(set, member("content", c))
	}
	if len(calls) > 0 {
		items := make([]tree.Value, len(calls))
		for i := range calls {
			items[i] = openaiEncodeCall(&calls[i])
		}
		set = append(set, member("tool_calls", tree.Array(items...)))
	} else if raw.Has("tool_calls") && get(raw, "tool_calls").Len() > 0 {
		drop = append(drop, "tool_calls")
	}
	return patch(raw, set, drop...), nil
}

// openaiEncodeContent encodes content parts: a string when the original
// was a string (or absent) and one text part remains, else an array.
func openaiEncodeContent(orig tree.Value, parts []Part) (tree.Value, error) {
	if orig.Kind() != tree.KindArray {
		if len(parts) == 0 {
			if orig.Kind() == tree.KindString {
				return orig, nil
			}
			return tree.String(""), nil
		}
		if len(parts) == 1 && parts[0].Kind == Text && (parts[0].raw.IsNull() || orig.Kind() == tree.KindString) {
			return tree.String(parts[0].Text), nil
		}
	}
	items := make([]tree.Value, len(parts))
	for i := range parts {
		p := &parts[i]
		raw := p.raw
		if !raw.IsNull() {
			if q, err := openaiPart(raw, ""); err == nil && q.sameAs(p) {
				items[i] = raw
				continue
			} else if err != nil || q.Kind != p.Kind {
				raw = tree.Value{}
			}
		}
		typ := func(t string) tree.Member { return member("type", tree.String(t)) }
		switch p.Kind {
		case Text:
			items[i] = patch(raw, []tree.Member{typ("text"), member("text", tree.String(p.Text))})
		case Image:
			url := p.URL
			if url == "" {
				url = "data:" + p.MediaType + ";base64," + p.Data
			}
			iu := patch(get(raw, "image_url"), []tree.Member{member("url", tree.String(url))})
			items[i] = patch(raw, []tree.Member{typ("image_url"), member("image_url", iu)})
		case Opaque:
			if raw.IsNull() {
				return raw, fmt.Errorf("history: opaque part without its block")
			}
			items[i] = raw
		default:
			return tree.Value{}, fmt.Errorf("history: openai: content cannot hold a %v part", p.Kind)
		}
	}
	return tree.Array(items...), nil
}

func openaiEncodeCall(p *Part) tree.Value {
	raw := p.raw
	if !raw.IsNull() {
		if q, err := openaiCall(raw, ""); err == nil && q.sameAs(p) {
			return raw
		}
	}
	fn := patch(get(raw, "function"), []tree.Member{member("name", tree.String(p.Name)), member("arguments", tree.String(p.Args))})
	return patch(raw, []tree.Member{member("id", tree.String(p.ID)), member("type", tree.String("function")), member("function", fn)})
}
