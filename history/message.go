package history

import (
	"github.com/terse-dev/terse/tree"
)

// Role is who speaks a message.
type Role string

// The four roles. Anthropic's top-level system prompt becomes a leading
// system message; its user messages that carry tool_result blocks become
// tool messages (and back again on encoding).
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Kind is the kind of a [Part].
type Kind uint8

// The part kinds.
const (
	// Text is plain text (Part.Text).
	Text Kind = iota + 1
	// ToolCall is a call the assistant makes: Part.ID, Part.Name, Part.Args.
	ToolCall
	// ToolResult answers the call whose id is Part.ID with Part.Content
	// (Text and Image parts) and Part.IsError.
	ToolResult
	// Image is an image: Part.MediaType and base64 Part.Data, or Part.URL.
	Image
	// Thinking is model reasoning: Part.Text and the opaque
	// Part.Signature, or, when Part.Redacted, the encrypted data in
	// Part.Signature. It is never edited.
	Thinking
	// Opaque is a provider block this package does not model (documents,
	// server tool use, audio, ...). It is passed through untouched and
	// counted by its JSON size.
	Opaque
)

var kindNames = [...]string{"invalid", "text", "tool_call", "tool_result", "image", "thinking", "opaque"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Part is one piece of a message's content. Which fields are used depends
// on Kind; the rest stay empty.
type Part struct {
	Kind Kind

	// Text is the text of a Text part or the reasoning of a Thinking part.
	Text string
	// ID is a tool call's id (ToolCall) or the id of the call a result
	// answers (ToolResult).
	ID string
	// Name is the tool's name (ToolCall).
	Name string
	// Args is the call's arguments as JSON text (ToolCall). Anthropic
	// arguments are written compact; OpenAI's are kept as sent.
	Args string
	// Content is a tool result's content: Text and Image (or Opaque) parts.
	Content []Part
	// IsError marks a failed tool result.
	IsError bool
	// MediaType and Data are an inline image's MIME type and base64 data;
	// URL is a linked image's address (or an OpenAI data URL, kept whole).
	MediaType, Data, URL string
	// Signature is a Thinking part's opaque signature, or its encrypted
	// data when Redacted.
	Signature string
	// Redacted marks a redacted thinking block.
	Redacted bool

	raw tree.Value // the provider block this part came from (null: none)
	src int32      // 1 + index of the provider message it came from (0: none)
}

// Message is one turn of a conversation.
type Message struct {
	Role  Role
	Parts []Part

	src int32 // provider message of an empty message (see Part.src)
}

// Tool is a tool definition sent with a request. Only its size matters to
// trimming.
type Tool struct {
	Name        string
	Description string
	Schema      tree.Value
}

// TextMessage returns a message holding one text part.
func TextMessage(role Role, text string) Message {
	return Message{Role: role, Parts: []Part{{Kind: Text, Text: text}}}
}

// Placeholder is the text that replaces trimmed content. It never changes
// between calls, so a trimmed prefix stays byte-identical.
//
// Models read it: its wording is part of the API.
const Placeholder = "[trimmed]"

// equalParts reports whether two part slices model the same content
// (ignoring raw and provenance).
func equalParts(a, b []Part) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].sameAs(&b[i]) {
			return false
		}
	}
	return true
}

// sameAs reports whether p and q model the same content.
func (p *Part) sameAs(q *Part) bool {
	return p.Kind == q.Kind && p.Text == q.Text && p.ID == q.ID && p.Name == q.Name &&
		p.Args == q.Args && p.IsError == q.IsError && p.MediaType == q.MediaType &&
		p.Data == q.Data && p.URL == q.URL && p.Signature == q.Signature &&
		p.Redacted == q.Redacted && equalParts(p.Content, q.Content) &&
		(p.Kind != Opaque || tree.Equal(p.raw, q.raw))
}

// Clone returns a deep copy of msgs whose slices share nothing with msgs.
func Clone(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = m
		out[i].Parts = cloneParts(m.Parts)
	}
	return out
}

func cloneParts(ps []Part) []Part {
	if ps == nil {
		return nil
	}
	out := make([]Part, len(ps))
	for i, p := range ps {
		out[i] = p
		out[i].Content = cloneParts(p.Content)
	}
	return out
}
