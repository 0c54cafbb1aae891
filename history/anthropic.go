package history

import (
	"fmt"

	"github.com/terse-dev/terse/tree"
)

// decodeAnthropic reads an Anthropic Messages request. A user message that
// carries tool_result blocks becomes tool messages (the runs of results)
// and user messages (the runs of other blocks), all linked to the one
// provider message so that encoding joins them again.
func decodeAnthropic(v tree.Value) (*Request, error) {
	if v.Kind() != tree.KindObject {
		return nil, shapeErr("", "request is a JSON %s, want an object", v.Kind())
	}
	r := &Request{Format: Anthropic, raw: v}
	if sys, ok := v.Get("system"); ok {
		r.srcs = append(r.srcs, sys)
		r.sys = int32(len(r.srcs))
		var parts []Part
		switch sys.Kind() {
		case tree.KindString:
			parts = textParts(sys.Str(), r.sys)
		case tree.KindArray:
			for i, b := range sys.Items() {
				p, err := anthropicBlock(b, tree.Pointer("/system").Index(i))
				if err != nil {
					return nil, err
				}
				p.src = r.sys
				parts = append(parts, p)
			}
		default:
			return nil, shapeErr("/system", "system is a JSON %s, want a string or an array", sys.Kind())
		}
		r.Messages = append(r.Messages, Message{Role: RoleSystem, Parts: parts, src: r.sys})
	}
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
		msg, err := anthropicMessage(m, ptr)
		if err != nil {
			return nil, err
		}
		role, parts := msg.Role, msg.Parts
		if role == RoleTool {
			role = RoleUser
		}
		for j := range parts {
			parts[j].src = src
		}
		if len(parts) == 0 {
			r.Messages = append(r.Messages, Message{Role: role, src: src})
			continue
		}
		// Split a user message into runs of tool results and of the rest.
		start := 0
		for j := 1; j <= len(parts); j++ {
			if j == len(parts) || (parts[j].Kind == ToolResult) != (parts[start].Kind == ToolResult) {
				ro := role
				if role == RoleUser && parts[start].Kind == ToolResult {
					ro = RoleTool
				}
				r.Messages = append(r.Messages, Message{Role: ro, Parts: parts[start:j:j], src: src})
				start = j
			}
		}
	}
	r.Tools = toolsFrom(get(v, "tools"))
	return r, nil
}

// anthropicMessage decodes one message (without provenance): its blocks
// in order, under the role of its first run (RoleTool for a user message
// that starts with tool results).
func anthropicMessage(m tree.Value, ptr tree.Pointer) (Message, error) {
	var role Role
	switch get(m, "role").Str() {
	case "user":
		role = RoleUser
	case "assistant":
		role = RoleAssistant
	default:
		return Message{}, shapeErr(ptr.Key("role"), "role %s, want \"user\" or \"assistant\"", get(m, "role"))
	}
	c := get(m, "content")
	var parts []Part
	switch c.Kind() {
	case tree.KindString:
		parts = textParts(c.Str(), 0)
	case tree.KindArray:
		for j, b := range c.Items() {
			p, err := anthropicBlock(b, ptr.Key("content").Index(j))
			if err != nil {
				return Message{}, err
			}
			parts = append(parts, p)
		}
	default:
		return Message{}, shapeErr(ptr.Key("content"), "content is a JSON %s, want a string or an array", c.Kind())
	}
	if role == RoleUser && len(parts) > 0 && parts[0].Kind == ToolResult {
		role = RoleTool
	}
	return Message{Role: role, Parts: parts}, nil
}

// textParts is one Text part, or none for "".
func textParts(s string, src int32) []Part {
	if s == "" {
		return nil
	}
	return []Part{{Kind: Text, Text: s, src: src}}
}

// anthropicBlock decodes one content block.
func anthropicBlock(b tree.Value, ptr tree.Pointer) (Part, error) {
	if b.Kind() != tree.KindObject {
		return Part{}, shapeErr(ptr, "content block is a JSON %s, want an object", b.Kind())
	}
	p := Part{raw: b}
	str := func(key string) (string, error) {
		x, ok := b.Get(key)
		if !ok || x.Kind() != tree.KindString {
			return "", shapeErr(ptr.Key(key), "want a string")
		}
		return x.Str(), nil
	}
	var err error
	switch get(b, "type").Str() {
	case "text":
		p.Kind = Text
		p.Text, err = str("text")
	case "tool_use":
		p.Kind = ToolCall
		if p.ID, err = str("id"); err != nil {
			return p, err
		}
		if p.Name, err = str("name"); err != nil {
			return p, err
		}
		p.Args = string(tree.AppendJSON(nil, get(b, "input")))
	case "tool_result":
		p.Kind = ToolResult
		if p.ID, err = str("tool_use_id"); err != nil {
			return p, err
		}
		p.IsError = get(b, "is_error").Bool()
		c, ok := b.Get("content")
		switch {
		case !ok || c.IsNull():
		case c.Kind() == tree.KindString:
			p.Content = textParts(c.Str(), 0)
		case c.Kind() == tree.KindArray:
			for i, x := range c.Items() {
				q, err := anthropicBlock(x, ptr.Key("content").Index(i))
				if err != nil {
					return p, err
				}
				p.Content = append(p.Content, q)
			}
		default:
			return p, shapeErr(ptr.Key("content"), "content is a JSON %s, want a string or an array", c.Kind())
		}
	case "image":
		p.Kind = Image
		s := get(b, "source")
		p.MediaType = get(s, "media_type").Str()
		p.Data = get(s, "data").Str()
		p.URL = get(s, "url").Str()
	case "thinking":
		p.Kind = Thinking
		p.Text = get(b, "thinking").Str()
		p.Signature = get(b, "signature").Str()
	case "redacted_thinking":
		p.Kind = Thinking
		p.Redacted = true
		p.Signature = get(b, "data").Str()
	default:
		p.Kind = Opaque
	}
	return p, err
}

// encodeAnthropic writes the request back as an Anthropic request.
func (r *Request) encodeAnthropic() (tree.Value, error) {
	ps := pieces(r.Messages)
	var sys []piece
	for len(ps) > 0 && ps[0].role == RoleSystem {
		sys = append(sys, ps[0])
		ps = ps[1:]
	}
	var set []tree.Member
	var drop []string
	if len(sys) > 0 {
		var parts []Part
		for _, s := range sys {
			parts = append(parts, s.parts...)
		}
		raw := tree.Value{}
		if r.sys != 0 {
			raw = r.srcs[r.sys-1]
		}
		c, err := anthropicContent(raw, parts)
		if err != nil {
			return c, err
		}
		set = append(set, member("system", c))
	} else if r.sys != 0 {
		drop = append(drop, "system")
	}
	items := make([]tree.Value, 0, len(ps))
	for i, p := range ps {
		if p.role == RoleSystem {
			return tree.Value{}, fmt.Errorf("history: anthropic: system message after the first user or assistant message (piece %d)", i)
		}
		raw, same := r.source(p)
		if same {
			items = append(items, raw)
			continue
		}
		c, err := anthropicContent(get(raw, "content"), p.parts)
		if err != nil {
			return c, err
		}
		role := "user"
		if p.role == RoleAssistant {
			role = "assistant"
		}
		set := []tree.Member{member("role", tree.String(role)), member("content", c)}
		if get(raw, "role").Str() == role {
			set = set[1:]
		}
		items = append(items, patch(raw, set))
	}
	set = append(set, member("messages", tree.Array(items...)))
	return patch(r.raw, set, drop...), nil
}

// anthropicContent encodes parts as content: a string when the original
// was a string (or there was none) and one text part remains, else blocks.
func anthropicContent(orig tree.Value, parts []Part) (tree.Value, error) {
	if orig.Kind() == tree.KindString || orig.IsNull() {
		if len(parts) == 0 && orig.Kind() == tree.KindString {
			return orig, nil
		}
		if len(parts) == 1 && parts[0].Kind == Text && (parts[0].raw.IsNull() || orig.Kind() == tree.KindString) {
			return tree.String(parts[0].Text), nil
		}
	}
	items := make([]tree.Value, len(parts))
	for i := range parts {
		b, err := anthropicEncodeBlock(&parts[i])
		if err != nil {
			return b, err
		}
		items[i] = b
	}
	return tree.Array(items...), nil
}

// anthropicEncodeBlock writes one part as a content block: its raw block
// when unchanged, otherwise the raw block patched with the part's fields.
func anthropicEncodeBlock(p *Part) (tree.Value, error) {
	raw := p.raw
	if !raw.IsNull() {
		if q, err := anthropicBlock(raw, ""); err == nil && q.sameAs(p) {
			return raw, nil
		} else if err != nil || q.Kind != p.Kind {
			raw = tree.Value{}
		}
	}
	typ := func(t string) tree.Member { return member("type", tree.String(t)) }
	switch p.Kind {
	case Text:
		return patch(raw, []tree.Member{typ("text"), member("text", tree.String(p.Text))}, "citations"), nil
	case ToolCall:
		return patch(raw, []tree.Member{typ("tool_use"), member("id", tree.String(p.ID)),
			member("name", tree.String(p.Name)), member("input", argsValue(p.Args))}), nil
	case ToolResult:
		set := []tree.Member{typ("tool_result"), member("tool_use_id", tree.String(p.ID))}
		c, err := anthropicContent(get(raw, "content"), p.Content)
		if err != nil {
			return c, err
		}
		set = append(set, member("content", c))
		if p.IsError {
			set = append(set, member("is_error", tree.Bool(true)))
		}
		return patch(raw, set), nil
	case Image:
		src := get(raw, "source")
		var s tree.Value
		if p.URL != "" {
			s = patch(src, []tree.Member{typ("url"), member("url", tree.String(p.URL))})
		} else {
			s = patch(src, []tree.Member{typ("base64"), member("media_type", tree.String(p.MediaType)), member("data", tree.String(p.Data))})
		}
		return patch(raw, []tree.Member{typ("image"), member("source", s)}), nil
	case Thinking:
		if p.Redacted {
			return patch(raw, []tree.Member{typ("redacted_thinking"), member("data", tree.String(p.Signature))}), nil
		}
		return patch(raw, []tree.Member{typ("thinking"), member("thinking", tree.String(p.Text)), member("signature", tree.String(p.Signature))}), nil
	case Opaque:
		if raw.IsNull() {
			return raw, fmt.Errorf("history: opaque part without its block")
		}
		return raw, nil
	}
	return tree.Value{}, fmt.Errorf("history: part of kind %v", p.Kind)
}
