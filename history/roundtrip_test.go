package history

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
)

func compact(tb testing.TB, data []byte) []byte {
	tb.Helper()
	v, err := tree.Parse(data)
	mustTB(tb, err)
	return tree.AppendJSON(nil, v)
}

func encode(tb testing.TB, r *Request) []byte {
	tb.Helper()
	out, err := r.AppendJSON(nil)
	mustTB(tb, err)
	return out
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		file   string
		format Format
		roles  string // roles of the decoded messages
	}{
		{"anthropic-request.json", Anthropic, "system user assistant tool assistant tool user assistant tool assistant user"},
		{"openai-request.json", OpenAI, "system user assistant tool tool assistant user assistant tool"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			mustTB(t, err)
			want := compact(t, data)
			r, err := Decode(data, 0)
			mustTB(t, err)
			if r.Format != tt.format {
				t.Fatalf("detected format %v, want %v", r.Format, tt.format)
			}
			var roles []string
			for _, m := range r.Messages {
				roles = append(roles, string(m.Role))
			}
			if got := strings.Join(roles, " "); got != tt.roles {
				t.Errorf("roles = %s\nwant    %s", got, tt.roles)
			}
			if got := encode(t, r); !bytes.Equal(got, want) {
				t.Errorf("decode → encode differs:\ngot  %s\nwant %s", got, want)
			}
			// Normalising and reducing under a big window change nothing.
			norm, _ := Normalize(r.Messages, nil)
			r2 := *r
			r2.Messages = norm
			if got := encode(t, &r2); !bytes.Equal(got, want) {
				t.Errorf("normalise → encode differs:\ngot  %s\nwant %s", got, want)
			}
			out, st, rep := Reduce(r.Messages, 1_000_000, State{}, &Options{Tools: r.Tools})
			r2.Messages = out
			if got := encode(t, &r2); !bytes.Equal(got, want) || st.Boundary != 0 || rep.CachePrefixChanged {
				t.Errorf("reduce (big window) → encode differs or trimmed (boundary %d):\ngot  %s\nwant %s", st.Boundary, got, want)
			}
		})
	}
}

// TestTrimmedRequestsStayValid trims the testdata requests hard and checks
// that the result decodes again, keeps unmodelled fields, and pairs every
// tool result with its call.
func TestTrimmedRequestsStayValid(t *testing.T) {
	for _, file := range []string{"anthropic-request.json", "openai-request.json"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", file))
			mustTB(t, err)
			r, err := Decode(data, 0)
			mustTB(t, err)
			_, _, before := Reduce(r.Messages, 1<<30, State{}, nil)
			// Just over the threshold, with a target just under it: the
			// images in user messages are a floor no trimming removes.
			window := int(float64(before.TokensBefore)/0.8) - 5
			out, _, rep := Reduce(r.Messages, window, State{}, &Options{KeepAssistant: -1, MaxArgs: 10, Target: 0.79})
			if rep.Trimmed == 0 || rep.Dropped > 0 || rep.OverBudget {
				t.Fatalf("want trimming, no drops, under budget: %+v", rep)
			}
			r2 := *r
			r2.Messages = out
			enc := encode(t, &r2)
			back, err := Decode(enc, r.Format)
			mustTB(t, err)
			checkPairs(t, back.Messages)
			for _, keep := range []string{`"cache_control":{"type":"ephemeral"}`, `"stream":true`, `"parallel_tool_calls":true`, `"name":"dana"`, `"detail":"low"`} {
				if bytes.Contains(data, []byte(strings.ReplaceAll(keep, ":", ": "))) && !bytes.Contains(enc, []byte(keep)) {
					t.Errorf("lost %s", keep)
				}
			}
			if !bytes.Contains(enc, []byte(Placeholder)) {
				t.Error("no placeholder in the trimmed request")
			}
		})
	}
}

// checkPairs fails unless every tool result has its call earlier and every
// call has its result later.
func checkPairs(t *testing.T, msgs []Message) {
	t.Helper()
	calls, results := map[string]int{}, map[string]int{}
	for i, m := range msgs {
		for _, p := range m.Parts {
			switch p.Kind {
			case ToolCall:
				calls[p.ID] = i
			case ToolResult:
				results[p.ID] = i
			}
		}
	}
	for id, r := range results {
		if c, ok := calls[id]; !ok || c >= r {
			t.Errorf("tool result %s at %d has no earlier call", id, r)
		}
	}
	for id, c := range calls {
		if _, ok := results[id]; !ok {
			t.Errorf("tool call %s at %d has no result", id, c)
		}
	}
}

// TestRoundTripCorpus wraps the real SWE-agent trajectories' histories
// (OpenAI-shaped, with extra fields per message) in a request and checks
// that decoding and encoding gives them back byte for byte.
func TestRoundTripCorpus(t *testing.T) {
	n := 0
	for _, f := range corpus.Files(t, ".traj.json") {
		data, err := os.ReadFile(f)
		mustTB(t, err)
		req := sweRequest(t, data)
		if req == nil {
			continue
		}
		n++
		r, err := DecodeOpenAI(req)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if got, want := encode(t, r), compact(t, req); !bytes.Equal(got, want) {
			t.Errorf("%s: round trip differs", filepath.Base(f))
		}
	}
	if n == 0 {
		t.Skip("no trajectories with a history")
	}
}

// sweRequest builds {"model":…,"messages":history} from a trajectory.
func sweRequest(tb testing.TB, data []byte) []byte {
	v, err := tree.Parse(data)
	mustTB(tb, err)
	h, ok := v.Get("history")
	if !ok || h.Len() == 0 {
		return nil
	}
	req := tree.Object(tree.Member{Key: "model", Value: tree.String("gpt-4")}, tree.Member{Key: "messages", Value: h})
	return tree.AppendJSON(nil, req)
}

func FuzzRoundTrip(f *testing.F) {
	for _, file := range []string{"anthropic-request.json", "openai-request.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		mustTB(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":""}]}`))
	f.Add([]byte(`{"system":"","messages":[{"role":"user","content":[]},{"role":"user","content":"x","content":"y"}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","function":{"arguments":{}}}]},{"role":"tool","tool_call_id":"a"}]}`))
	f.Add([]byte(responsesRequest))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{Anthropic, OpenAI, Responses} {
			r, err := Decode(data, format)
			if err != nil {
				continue
			}
			want := compact(t, data)
			got, err := r.AppendJSON(nil)
			if err != nil {
				t.Fatalf("%v: encode: %v", format, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%v: round trip differs:\ngot  %s\nwant %s", format, got, want)
			}
			// Trimming everything must still encode and decode.
			out, _, _ := Reduce(r.Messages, 1, State{}, &Options{KeepAssistant: -1})
			r2 := *r
			r2.Messages = out
			enc, err := r2.AppendJSON(nil)
			if err != nil {
				t.Fatalf("%v: encode trimmed: %v", format, err)
			}
			if _, err := Decode(enc, format); err != nil {
				t.Fatalf("%v: trimmed request does not decode: %v\n%s", format, err, enc)
			}
		}
	})
}
