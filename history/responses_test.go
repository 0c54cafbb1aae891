package history

import (
	"strings"
	"testing"

	"github.com/terse-dev/terse/tree"
)

const responsesRequest = `{"model":"gpt-5-codex","instructions":"You are Codex.","input":[` +
	`{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions>"}]},` +
	`{"type":"message","role":"user","content":[{"type":"input_text","text":"List the files"},{"type":"input_image","image_url":"data:x"}]},` +
	`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},` +
	`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"shell","arguments":"{\"command\":[\"ls\"]}"},` +
	`{"type":"function_call_output","call_id":"call_1","output":"a.txt\nb.txt\n"},` +
	`{"type":"custom_tool_call","id":"ct_1","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch\n*** Update File: a.txt\n"},` +
	`{"type":"custom_tool_call_output","call_id":"call_2","output":[{"type":"input_text","text":"Done"}]},` +
	`{"type":"web_search_call","id":"ws_1","status":"completed"},` +
	`{"type":"function_call","call_id":"call_3","name":"shell","arguments":"{}"},` +
	`{"type":"function_call_output","call_id":"call_3","output":{"type":"input_text","text":"a.txt\n","detail":null}},` +
	`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Found 2 files.","annotations":[]}]},` +
	`{"role":"user","content":"thanks"}],"tools":[{"type":"function","name":"shell","parameters":{"type":"object"}}],"stream":true}`

func TestResponsesRoundTrip(t *testing.T) {
	r, err := Decode([]byte(responsesRequest), 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Format != Responses {
		t.Fatalf("detected %v", r.Format)
	}
	got, err := r.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != responsesRequest {
		t.Fatalf("round trip:\n%s\nwant\n%s", got, responsesRequest)
	}
	var roles []string
	for _, m := range r.Messages {
		roles = append(roles, string(m.Role))
	}
	if s := strings.Join(roles, " "); s != "system system user assistant assistant tool assistant tool assistant assistant tool assistant user" {
		t.Fatalf("roles %s", s)
	}
}

// TestResponsesTrim: a long Codex-style conversation trimmed to a small
// window keeps every call with its output, the opaque items as they were,
// and user and system text.
func TestResponsesTrim(t *testing.T) {
	var items []string
	items = append(items, `{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}`)
	big := strings.Repeat("line of output\\n", 300)
	for i := range 20 {
		id := string(rune('a' + i))
		items = append(items,
			`{"type":"reasoning","id":"rs_`+id+`","summary":[],"encrypted_content":"enc`+id+`"}`,
			`{"type":"function_call","call_id":"c_`+id+`","name":"shell","arguments":"{}"}`,
			`{"type":"function_call_output","call_id":"c_`+id+`","output":"`+big+`"}`)
	}
	body := `{"model":"gpt-5","instructions":"sys","input":[` + strings.Join(items, ",") + `]}`
	r, err := Decode([]byte(body), Responses)
	if err != nil {
		t.Fatal(err)
	}
	out, _, rep := Reduce(r.Messages, 20_000, State{}, nil)
	if rep.Trimmed == 0 {
		t.Fatal("nothing trimmed")
	}
	r.Messages = out
	enc, err := r.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tree.Parse(enc)
	if err != nil {
		t.Fatal(err)
	}
	calls, outputs := map[string]bool{}, map[string]bool{}
	trimmed := 0
	for _, it := range get(v, "input").Items() {
		switch get(it, "type").Str() {
		case "function_call":
			calls[get(it, "call_id").Str()] = true
		case "function_call_output":
			outputs[get(it, "call_id").Str()] = true
			if get(it, "output").Str() == Placeholder {
				trimmed++
			}
		case "reasoning":
			if !strings.Contains(body, it.String()) {
				t.Fatalf("reasoning item changed: %s", it)
			}
		}
	}
	if trimmed == 0 || len(calls) != len(outputs) {
		t.Fatalf("%d trimmed, %d calls, %d outputs", trimmed, len(calls), len(outputs))
	}
	for id := range calls {
		if !outputs[id] {
			t.Fatalf("call %s lost its output", id)
		}
	}
	if get(v, "instructions").Str() != "sys" || !strings.Contains(string(enc), `"text":"fix it"`) {
		t.Fatalf("system or user text changed: %s", enc)
	}
}
