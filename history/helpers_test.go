package history

import (
	"flag"
	"fmt"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func user(s string) Message      { return TextMessage(RoleUser, s) }
func assistant(s string) Message { return TextMessage(RoleAssistant, s) }

// call is an assistant message with optional text and one tool call.
func call(text, id, name, args string) Message {
	m := Message{Role: RoleAssistant}
	if text != "" {
		m.Parts = append(m.Parts, Part{Kind: Text, Text: text})
	}
	m.Parts = append(m.Parts, Part{Kind: ToolCall, ID: id, Name: name, Args: args})
	return m
}

// result is a tool message with one result.
func result(id, content string) Message {
	return Message{Role: RoleTool, Parts: []Part{{Kind: ToolResult, ID: id, Content: []Part{{Kind: Text, Text: content}}}}}
}

// isTrimmed reports whether every text and result in m is a placeholder.
func isTrimmed(m Message) bool {
	seen := false
	for _, p := range m.Parts {
		switch p.Kind {
		case Text:
			if p.Text != Placeholder {
				return false
			}
			seen = true
		case ToolResult:
			if len(p.Content) != 1 || p.Content[0].Text != Placeholder {
				return false
			}
			seen = true
		}
	}
	return seen
}

// seedOpts are options that reproduce the seed algorithm.
func seedOpts(keep int, threshold float64) *Options {
	if keep == 0 {
		keep = -1
	}
	return &Options{KeepAssistant: keep, Threshold: threshold, seed: true}
}

// describe renders messages compactly for failure messages.
func describe(msgs []Message) string {
	var b strings.Builder
	for i, m := range msgs {
		fmt.Fprintf(&b, "%d:%s", i, m.Role)
		if isTrimmed(m) {
			b.WriteString("*")
		}
		b.WriteString(" ")
	}
	return b.String()
}

func mustTB(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
