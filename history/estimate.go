package history

import (
	"math"

	"github.com/terse-dev/terse/tokens"
)

// The estimate's constants (see the package doc).
const (
	bytesPerToken   = 3.5  // as tokens.BytesPerToken
	partOverhead    = 3    // tokens per part of a multi-part message
	messageOverhead = 8    // tokens per message (role, wrappers)
	imageTokens     = 2000 // tokens per image
	callBytes       = 30   // bytes of wrapping per tool call or result
	callTokens      = 9    // callBytes in tokens, for real counters
	safety          = 1.05 // factor on the message total
	toolJSONFactor  = 1.2  // factor on a tool definition's bytes
)

// bytesToTokens is ceil(n / 3.5), in integers.
func bytesToTokens(n int) int { return (2*n + 6) / 7 }

// safe applies the safety factor: ceil(raw × 1.05).
func safe(raw int) int { return int(math.Ceil(float64(raw) * safety)) }

// sizer measures parts: with the byte estimate when c is nil, else with c.
type sizer struct {
	c  tokens.Counter
	rt func(id string) string // a trimmed result's text (nil: Placeholder)
}

// resultText is the text that replaces the content of the trimmed result
// of call id.
func (z sizer) resultText(id string) string {
	if z.rt == nil {
		return Placeholder
	}
	return z.rt(id)
}

func (z sizer) text(s string) int {
	if z.c == nil {
		return bytesToTokens(len(s))
	}
	return z.c.Count(s)
}

// wrapped is text plus a tool call's or result's wrapping.
func (z sizer) wrapped(n int, ss ...string) int {
	if z.c == nil {
		for _, s := range ss {
			n += len(s)
		}
		return bytesToTokens(n + callBytes)
	}
	for _, s := range ss {
		n += z.c.Count(s)
	}
	return n + callTokens
}

func (z sizer) part(p *Part) int {
	switch p.Kind {
	case Text:
		return z.text(p.Text)
	case ToolCall:
		return z.wrapped(0, p.Name, p.Args)
	case ToolResult:
		// Text parts count as if joined by newlines.
		extra, n := 0, 0
		texts := make([]string, 0, 1)
		for i := range p.Content {
			q := &p.Content[i]
			switch q.Kind {
			case Text:
				texts = append(texts, q.Text)
			case Image:
				extra += imageTokens
			default:
				extra += z.part(q)
			}
		}
		if z.c == nil && len(texts) > 1 {
			n = len(texts) - 1
		}
		return z.wrapped(n, texts...) + extra
	case Image:
		return imageTokens
	case Thinking:
		return z.text(p.Text) + z.text(p.Signature)
	case Opaque:
		return z.text(p.raw.String())
	}
	return 0
}

// message is a message's size before the safety factor: a lone text part
// counts as a plain string, otherwise each part costs 3 more; 8 per
// message.
func (z sizer) message(m *Message) int {
	if len(m.Parts) == 1 && m.Parts[0].Kind == Text {
		return z.text(m.Parts[0].Text) + messageOverhead
	}
	n := messageOverhead
	for i := range m.Parts {
		n += z.part(&m.Parts[i]) + partOverhead
	}
	return n
}

// Estimate is the conservative token estimate of msgs: per-part and
// per-message overheads, bytes/3.5, images 2,000, and ×1.05 on the total.
// It overcounts on purpose so that trimming starts a little early rather
// than too late. A user message "Hello world" estimates to 13.
func Estimate(msgs []Message) int { return Count(nil, msgs) }

// Count is [Estimate] with the text counted by c (nil: bytes/3.5); the
// overheads are the same, in tokens.
func Count(c tokens.Counter, msgs []Message) int {
	z := sizer{c: c}
	raw := 0
	for i := range msgs {
		raw += z.message(&msgs[i])
	}
	return safe(raw)
}

// ToolOverhead estimates what tool definitions add to a request: per tool,
// its name, description and compact schema JSON, ×1.2 for the wrapping,
// in tokens (bytes/3.5 when c is nil), plus 8.
func ToolOverhead(c tokens.Counter, tools []Tool) int {
	n := 0
	for _, t := range tools {
		schema := ""
		if !t.Schema.IsNull() {
			schema = t.Schema.String()
		}
		if c == nil {
			b := int(math.Ceil(float64(len(t.Name)+len(t.Description)+len(schema)) * toolJSONFactor))
			n += bytesToTokens(b) + messageOverhead
			continue
		}
		n += int(math.Ceil(float64(c.Count(t.Name)+c.Count(t.Description)+c.Count(schema))*toolJSONFactor)) + messageOverhead
	}
	return n
}
