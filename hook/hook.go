// Package hook holds the agent-specific parts of terse's tool-result hook:
// reading an agent's hook event, finding the text fields of the tool's
// output that terse may replace, writing the agent's reply, and reading
// the agent's transcript to know which earlier results the model still
// has in context. Everything between (shaping, encoding, fitting) is the
// root pipeline's, shared with every other surface.
//
// One agent is supported today, Claude Code, whose PostToolUse hook may
// replace a tool's output ("updatedToolOutput", since v2.1.121; MCP tools
// earlier through "updatedMCPToolOutput"):
//
//	ev, err := hook.ParseEvent(data)          // the event on stdin
//	slots := hook.Slots(ev.ToolName, ev.ToolResponse)
//	// … replace slot texts …
//	out := hook.Reply(ev.ToolName, hook.Replace(ev.ToolName, ev.ToolResponse, slots, texts))
//
// A replacement keeps the tool's own output shape: tool_response is the
// tool's output object (Bash {stdout, stderr, …}, Grep {content,
// filenames, …}, an MCP tool's list of content blocks), and Claude Code
// renders the text the model reads from it. Only text fields change;
// every other field (counts, flags, paths) is kept as it was.
//
// Read results have no slots: Claude Code numbers the lines of a file
// read from its startLine when it renders them, so any change to the
// content would shift the numbers the model reads.
package hook

import (
	"errors"
	"strings"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/toolname"
	"github.com/terse-dev/terse/tree"
)

// Event is a PostToolUse hook event. Fields the event does not carry are
// empty; fields this type does not know are ignored.
type Event struct {
	SessionID      string
	TranscriptPath string
	Cwd            string
	HookEventName  string
	ToolName       string
	ToolUseID      string
	// AgentID is set when the call was made by a sub-agent, whose context
	// is not the main conversation's.
	AgentID string
	// ToolInput is the call's arguments; ToolInputJSON is their JSON text
	// as the event wrote it.
	ToolInput     tree.Value
	ToolInputJSON string
	// ToolResponse is the tool's output object.
	ToolResponse tree.Value
}

// Errors ParseEvent returns for events it cannot use.
var (
	ErrEmpty     = errors.New("hook: empty event")
	ErrNotObject = errors.New("hook: event is not a JSON object")
	ErrNoTool    = errors.New("hook: event names no tool or has no tool_response")
)

// UnknownEventError is returned for an event other than PostToolUse.
type UnknownEventError struct{ Name string }

func (e *UnknownEventError) Error() string { return "hook: not a PostToolUse event: " + e.Name }

// ParseEvent decodes a Claude Code PostToolUse event. Unknown fields are
// ignored; an event naming another hook event is an *UnknownEventError. The
// event may share data's memory.
func ParseEvent(data []byte) (*Event, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, ErrEmpty
	}
	v, err := tree.ParseOwned(data)
	if err != nil {
		return nil, err
	}
	if v.Kind() != tree.KindObject {
		return nil, ErrNotObject
	}
	ev := &Event{}
	for _, m := range v.Members() {
		switch m.Key {
		case "session_id":
			ev.SessionID = m.Value.Str()
		case "transcript_path":
			ev.TranscriptPath = m.Value.Str()
		case "cwd":
			ev.Cwd = m.Value.Str()
		case "hook_event_name":
			ev.HookEventName = m.Value.Str()
		case "tool_name":
			ev.ToolName = m.Value.Str()
		case "tool_use_id":
			ev.ToolUseID = m.Value.Str()
		case "agent_id":
			ev.AgentID = m.Value.Str()
		case "tool_input":
			ev.ToolInput = m.Value
			ev.ToolInputJSON = m.Value.String()
		case "tool_response":
			ev.ToolResponse = m.Value
		}
	}
	if ev.HookEventName != "" && ev.HookEventName != "PostToolUse" {
		return nil, &UnknownEventError{ev.HookEventName}
	}
	if ev.ToolName == "" || !hasMember(v, "tool_response") {
		return nil, ErrNoTool
	}
	return ev, nil
}

func hasMember(v tree.Value, key string) bool {
	_, ok := v.Get(key)
	return ok
}

// IsMCP reports whether tool is an MCP tool (mcp__server__tool).
func IsMCP(tool string) bool { return strings.HasPrefix(tool, "mcp__") }

// Reply is the hook's output for a replaced tool output: the
// hookSpecificOutput object with updatedToolOutput. For an MCP tool the
// same value is also given as updatedMCPToolOutput, the spelling Claude
// Code read before v2.1.121 (later versions prefer updatedToolOutput).
func Reply(tool string, updated tree.Value) []byte {
	ms := []tree.Member{
		{Key: "hookEventName", Value: tree.String("PostToolUse")},
		{Key: "updatedToolOutput", Value: updated},
	}
	if IsMCP(tool) {
		ms = append(ms, tree.Member{Key: "updatedMCPToolOutput", Value: updated})
	}
	out := tree.Object(tree.Member{Key: "hookSpecificOutput", Value: tree.Object(ms...)})
	return append(tree.AppendJSON(nil, out), '\n')
}

// RefHint is the text that replaces a result identical to the one of the
// earlier call ref of tool: the dedup dialect's reference,
//
//	> [ref: toolu_01ABC (Bash "git status"), byte-identical]
//
// naming the call by its tool_use_id and, so that the model can tell which
// of its calls that is, by its tool and main argument (at most 40
// characters; quotes, brackets and line breaks replaced).
func RefHint(tool string, ref Ref) string {
	return inband.Ref{ID: RefName(tool, ref)}.String()
}

// RefName is how a reference names the earlier call ref of tool: its
// tool_use_id and its label, `toolu_01ABC (Bash "git status")`.
func RefName(tool string, ref Ref) string {
	label := tool
	if IsMCP(tool) {
		label = toolname.Tool(tool)
	}
	for _, k := range [...]string{"command", "pattern", "url", "query", "file_path", "path"} {
		if v, ok := ref.Input.Get(k); ok && v.Kind() == tree.KindString && v.Str() != "" {
			label += ` "` + clip(v.Str(), 40) + `"`
			break
		}
	}
	return ref.ID + " (" + label + ")"
}

// clip shortens s to at most n characters (with "…" when cut) and replaces
// what could end or break the hint.
func clip(s string, n int) string {
	r := strings.NewReplacer("\n", " ", "\r", " ", "\t", " ", `"`, "'", "[", "(", "]", ")", ",", ";")
	s = r.Replace(s)
	rs := []rune(s)
	if len(rs) > n {
		return string(rs[:n-1]) + "…"
	}
	return s
}
