package hook

import (
	"strings"

	"github.com/terse-dev/terse/tree"
)

// Slot is one text field of a tool's output that terse may replace.
type Slot struct {
	// Name is the field's name ("stdout", "content", "filenames",
	// "result"), or "text" for a text block of an MCP tool's output.
	Name string
	// Text is the field's text. A field that is a list of strings (Glob's
	// and Grep's filenames) is its items joined by newlines, one per line,
	// as Claude Code shows them.
	Text string
	// Lines marks a list of strings.
	Lines bool

	block int // the MCP content block, by index
}

// fields lists, per built-in tool, the text fields of its output object,
// in the order Claude Code shows them. A name ending in "[]" is a list of
// strings. Tools not listed (Read, Edit, Write, TodoWrite, Task, …) have
// no slots: their output is left as it is.
var fields = map[string][]string{
	"Bash":       {"stdout", "stderr"},
	"BashOutput": {"stdout", "stderr"},
	"Grep":       {"content", "filenames[]"},
	"Glob":       {"filenames[]"},
	"WebFetch":   {"result"},
}

// Slots returns the text fields of a tool's output that terse may
// replace, in order; none for a tool whose output terse leaves alone, for
// an output shaped other than expected, and for empty fields. A string
// holding lone UTF-16 surrogates is never a slot: it could not be written
// back as it was.
func Slots(tool string, resp tree.Value) []Slot {
	if IsMCP(tool) {
		return mcpSlots(resp)
	}
	names, ok := fields[tool]
	if !ok || resp.Kind() != tree.KindObject {
		return nil
	}
	if v, ok := resp.Get("isImage"); ok && v.Bool() {
		return nil
	}
	var out []Slot
	for _, name := range names {
		name, lines := strings.CutSuffix(name, "[]")
		v, ok := resp.Get(name)
		if !ok {
			continue
		}
		if lines {
			if s, ok := joinLines(v); ok && s != "" {
				out = append(out, Slot{Name: name, Text: s, Lines: true})
			}
			continue
		}
		if v.Kind() == tree.KindString && !v.Escaped() && v.Str() != "" {
			out = append(out, Slot{Name: name, Text: v.Str()})
		}
	}
	return out
}

// joinLines joins a list of strings by newlines; ok is false for anything
// else, and for a list whose items could not be told apart again (an
// item holding a newline).
func joinLines(v tree.Value) (string, bool) {
	if v.Kind() != tree.KindArray {
		return "", false
	}
	items := v.Items()
	parts := make([]string, len(items))
	for i, it := range items {
		if it.Kind() != tree.KindString || it.Escaped() || strings.Contains(it.Str(), "\n") {
			return "", false
		}
		parts[i] = it.Str()
	}
	return strings.Join(parts, "\n"), true
}

// mcpBlocks returns an MCP tool's content blocks: the output itself when
// it is a list, or its "content" member (a CallToolResult).
func mcpBlocks(resp tree.Value) ([]tree.Value, bool) {
	switch resp.Kind() {
	case tree.KindArray:
		return resp.Items(), true
	case tree.KindObject:
		if c, ok := resp.Get("content"); ok && c.Kind() == tree.KindArray {
			return c.Items(), true
		}
	}
	return nil, false
}

func mcpSlots(resp tree.Value) []Slot {
	blocks, ok := mcpBlocks(resp)
	if !ok {
		return nil
	}
	var out []Slot
	for i, b := range blocks {
		if b.Kind() != tree.KindObject {
			continue
		}
		if t, _ := b.Get("type"); t.Str() != "text" {
			continue
		}
		if t, ok := b.Get("text"); ok && t.Kind() == tree.KindString && !t.Escaped() && t.Str() != "" {
			out = append(out, Slot{Name: "text", Text: t.Str(), block: i})
		}
	}
	return out
}

// Replace returns the tool's output with the text of each slot (as
// Slots returned them, in order) replaced by texts[i]; every other field,
// and every slot whose text is unchanged, is kept as it was. A list of
// strings is given back as the lines of its new text.
func Replace(tool string, resp tree.Value, slots []Slot, texts []string) tree.Value {
	if len(slots) == 0 {
		return resp
	}
	if IsMCP(tool) {
		return replaceMCP(resp, slots, texts)
	}
	ms := append([]tree.Member(nil), resp.Members()...)
	for i, s := range slots {
		if texts[i] == s.Text {
			continue
		}
		for k := range ms {
			if ms[k].Key != s.Name {
				continue
			}
			if s.Lines {
				ms[k].Value = splitLines(texts[i])
			} else {
				ms[k].Value = tree.String(texts[i])
			}
		}
	}
	return tree.Object(ms...)
}

func splitLines(s string) tree.Value {
	if s == "" {
		return tree.Array()
	}
	lines := strings.Split(s, "\n")
	items := make([]tree.Value, len(lines))
	for i, l := range lines {
		items[i] = tree.String(l)
	}
	return tree.Array(items...)
}

func replaceMCP(resp tree.Value, slots []Slot, texts []string) tree.Value {
	blocks, _ := mcpBlocks(resp)
	nb := append([]tree.Value(nil), blocks...)
	for i, s := range slots {
		if texts[i] == s.Text {
			continue
		}
		ms := append([]tree.Member(nil), nb[s.block].Members()...)
		for k := range ms {
			if ms[k].Key == "text" {
				ms[k].Value = tree.String(texts[i])
			}
		}
		nb[s.block] = tree.Object(ms...)
	}
	if resp.Kind() == tree.KindArray {
		return tree.Array(nb...)
	}
	ms := append([]tree.Member(nil), resp.Members()...)
	for k := range ms {
		if ms[k].Key == "content" {
			ms[k].Value = tree.Array(nb...)
		}
	}
	return tree.Object(ms...)
}
