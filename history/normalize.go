package history

import "strings"

// NormalizeReport counts what [Normalize] changed.
type NormalizeReport struct {
	TagsStripped int `json:"tags_stripped"` // tag blocks removed
	Merged       int `json:"merged"`        // messages merged into the one before
	Deduped      int `json:"deduped"`       // duplicate tool results removed
}

// DefaultStripTags are the tags [Normalize] strips when none are given.
var DefaultStripTags = []string{"checkpoint_id"}

// Normalize prepares a conversation for trimming, without changing msgs:
//
//   - every <tag>…</tag> block of the given tags (nil: [DefaultStripTags])
//     is removed from text, with the whitespace that follows it; a text that
//     becomes empty is dropped;
//   - consecutive messages of the same role are merged into one (so the N
//     results after an assistant turn form one tool message); messages
//     without parts are left alone;
//   - within a tool message, only the last result for each tool-call id is
//     kept.
//
// The adapters remember which provider message every part came from, so
// merging is undone on encoding: a normalised request that needed none of
// these changes encodes to the same bytes.
func Normalize(msgs []Message, stripTags []string) ([]Message, NormalizeReport) {
	if stripTags == nil {
		stripTags = DefaultStripTags
	}
	var rep NormalizeReport
	opens := make([]string, len(stripTags))
	for i, tag := range stripTags {
		opens[i] = "<" + tag + ">"
	}
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		m.Parts = stripParts(m.Parts, stripTags, opens, &rep)
		if n := len(out); n > 0 && out[n-1].Role == m.Role && len(m.Parts) > 0 && len(out[n-1].Parts) > 0 {
			prev := &out[n-1]
			merged := make([]Part, 0, len(prev.Parts)+len(m.Parts))
			prev.Parts = append(append(merged, prev.Parts...), m.Parts...)
			rep.Merged++
			continue
		}
		out = append(out, m)
	}
	for i := range out {
		if out[i].Role == RoleTool {
			out[i].Parts = dedupResults(out[i].Parts, &rep)
		}
	}
	return out, rep
}

// stripParts strips tags from text parts, copying the slice only when
// something changes.
func stripParts(ps []Part, tags, opens []string, rep *NormalizeReport) []Part {
	var out []Part
	for i, p := range ps {
		changed := false
		switch p.Kind {
		case Text:
			if hasAny(p.Text, opens) {
				if s, n := stripTags(p.Text, tags); n > 0 {
					rep.TagsStripped += n
					p.Text, changed = s, true
				}
			}
		case ToolResult:
			if c := stripParts(p.Content, tags, opens, rep); len(c) != len(p.Content) || (len(c) > 0 && &c[0] != &p.Content[0]) {
				p.Content, changed = c, true
			}
		}
		if changed && out == nil {
			out = make([]Part, i, len(ps))
			copy(out, ps[:i])
		}
		if out != nil && !(p.Kind == Text && p.Text == "" && changed) {
			out = append(out, p)
		}
	}
	if out == nil {
		return ps
	}
	return out
}

// hasAny reports whether s contains any of subs.
func hasAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// stripTags removes <tag>…</tag> blocks and the whitespace after each.
func stripTags(s string, tags []string) (string, int) {
	n := 0
	for _, tag := range tags {
		open, close := "<"+tag+">", "</"+tag+">"
		for {
			i := strings.Index(s, open)
			if i < 0 {
				break
			}
			j := strings.Index(s[i+len(open):], close)
			if j < 0 {
				break
			}
			end := i + len(open) + j + len(close)
			for end < len(s) && (s[end] == ' ' || s[end] == '\n' || s[end] == '\t' || s[end] == '\r') {
				end++
			}
			s = s[:i] + s[end:]
			n++
		}
	}
	return s, n
}

// dedupResults keeps only the last result for each call id.
func dedupResults(ps []Part, rep *NormalizeReport) []Part {
	if len(ps) < 2 {
		return ps
	}
	// superseded reports whether a later result answers the same call.
	var superseded func(i int) bool
	if len(ps) <= 16 {
		superseded = func(i int) bool {
			for j := i + 1; j < len(ps); j++ {
				if ps[j].Kind == ToolResult && ps[j].ID == ps[i].ID {
					return true
				}
			}
			return false
		}
	} else {
		last := make(map[string]int, len(ps))
		for i, p := range ps {
			if p.Kind == ToolResult {
				last[p.ID] = i
			}
		}
		superseded = func(i int) bool { return last[ps[i].ID] != i }
	}
	var out []Part
	for i, p := range ps {
		if p.Kind == ToolResult && superseded(i) {
			if out == nil {
				out = make([]Part, i, len(ps)-1)
				copy(out, ps[:i])
			}
			rep.Deduped++
			continue
		}
		if out != nil {
			out = append(out, p)
		}
	}
	if out == nil {
		return ps
	}
	return out
}
