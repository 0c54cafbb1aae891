package history_test

import (
	"fmt"
	"strings"

	"github.com/terse-dev/terse/history"
)

func ExampleReduce() {
	big := strings.Repeat("log line\n", 40)
	msgs := []history.Message{
		history.TextMessage(history.RoleUser, "Why does the build fail?"),
		{Role: history.RoleAssistant, Parts: []history.Part{
			{Kind: history.Text, Text: "Let me look at the log."},
			{Kind: history.ToolCall, ID: "call_1", Name: "read_log", Args: `{"lines":40}`},
		}},
		{Role: history.RoleTool, Parts: []history.Part{
			{Kind: history.ToolResult, ID: "call_1", Content: []history.Part{{Kind: history.Text, Text: big}}},
		}},
		history.TextMessage(history.RoleAssistant, "The linker runs out of memory."),
		history.TextMessage(history.RoleUser, "And the tests?"),
		{Role: history.RoleAssistant, Parts: []history.Part{{Kind: history.ToolCall, ID: "call_2", Name: "run_tests", Args: `{}`}}},
		{Role: history.RoleTool, Parts: []history.Part{
			{Kind: history.ToolResult, ID: "call_2", Content: []history.Part{{Kind: history.Text, Text: "ok"}}},
		}},
	}
	out, state, rep := history.Reduce(msgs, 300, history.State{}, &history.Options{KeepAssistant: 1})
	for _, m := range out {
		p := m.Parts[0]
		switch p.Kind {
		case history.Text:
			fmt.Printf("%-9s %s\n", m.Role, p.Text)
		case history.ToolCall:
			fmt.Printf("%-9s call %s\n", m.Role, p.ID)
		case history.ToolResult:
			fmt.Printf("%-9s result %s: %.20q\n", m.Role, p.ID, p.Content[0].Text)
		}
	}
	fmt.Printf("%d → %d tokens, boundary %d\n", rep.TokensBefore, rep.TokensAfter, state.Boundary)
	// Output:
	// user      Why does the build fail?
	// assistant [trimmed]
	// tool      result call_1: "[trimmed]"
	// assistant [trimmed]
	// user      And the tests?
	// assistant call call_2
	// tool      result call_2: "ok"
	// 260 → 144 tokens, boundary 5
}

func ExampleDecode() {
	req := []byte(`{"model":"m","max_tokens":100,"system":"Be brief.","messages":[
	  {"role":"user","content":"hi","x-unknown":1}]}`)
	r, err := history.Decode(req, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Format, len(r.Messages), r.Messages[0].Role, r.Messages[1].Role)
	out, _ := r.AppendJSON(nil)
	fmt.Println(string(out))
	// Output:
	// anthropic 2 system user
	// {"model":"m","max_tokens":100,"system":"Be brief.","messages":[{"role":"user","content":"hi","x-unknown":1}]}
}
