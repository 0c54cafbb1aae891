package history

import (
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/tree"
)

// The exact test vectors of the reference note on the seed system
// (reference/002, sections 3 and 10), reproduced with the seed algorithm
// (unexported option seed) and, where terse's defaults differ, also with
// those.

func TestEstimateVectors(t *testing.T) {
	tests := []struct {
		name string
		msgs []Message
		want int
	}{
		{"hello world", []Message{user("Hello world")}, 13},
		{"hello + world", []Message{user("Hello"), assistant("World")}, 21},
		{"400-byte tool result", []Message{result("call_1", strings.Repeat("r", 400))}, 141},
		{"empty", nil, 0},
		{"image", []Message{{Role: RoleUser, Parts: []Part{{Kind: Image, URL: "https://x"}}}}, 2112}, // ceil((2000+3+8)×1.05)
	}
	for _, tt := range tests {
		if got := Estimate(tt.msgs); got != tt.want {
			t.Errorf("Estimate(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestToolOverheadVector(t *testing.T) {
	schema, _ := tree.ParseString(`{"type":"object"}`)
	tools := []Tool{{Name: "read", Description: "Read a file.", Schema: schema}}
	// 4 + 12 + 17 = 33 bytes ×1.2 = 39.6 → 40 bytes → 12 tokens + 8.
	if got := ToolOverhead(nil, tools); got != 20 {
		t.Errorf("ToolOverhead = %d, want 20", got)
	}
}

func TestNormalizeVectors(t *testing.T) {
	got, _ := Normalize([]Message{user("<checkpoint_id>abc-123</checkpoint_id>\nHello, world!")}, nil)
	if len(got) != 1 || got[0].Role != RoleUser || got[0].Parts[0].Text != "Hello, world!" {
		t.Errorf("strip checkpoint tag: got %+v, want one user message \"Hello, world!\"", got)
	}

	msgs := []Message{
		user("go"),
		{Role: RoleAssistant, Parts: []Part{{Kind: ToolCall, ID: "call_1", Name: "a", Args: "{}"}, {Kind: ToolCall, ID: "call_2", Name: "b", Args: "{}"}}},
		result("call_1", "Result 1"),
		result("call_2", "Result 2"),
	}
	got, rep := Normalize(msgs, nil)
	if len(got) != 3 || got[2].Role != RoleTool || len(got[2].Parts) != 2 ||
		got[2].Parts[0].ID != "call_1" || got[2].Parts[0].Content[0].Text != "Result 1" ||
		got[2].Parts[1].ID != "call_2" || got[2].Parts[1].Content[0].Text != "Result 2" {
		t.Errorf("merge tool results: got %s, want user, assistant, tool(call_1, call_2)", describe(got))
	}
	if rep.Merged != 1 {
		t.Errorf("merge tool results: Merged = %d, want 1", rep.Merged)
	}

	msgs = []Message{call("", "call_1", "a", "{}"), result("call_1", "old_result"), result("call_1", "new_result")}
	got, rep = Normalize(msgs, nil)
	if len(got) != 2 || len(got[1].Parts) != 1 || got[1].Parts[0].Content[0].Text != "new_result" || got[1].Role != RoleTool {
		t.Errorf("dedup: got %s, want the tool message with new_result only", describe(got))
	}
	if rep.Deduped != 1 {
		t.Errorf("dedup: Deduped = %d, want 1", rep.Deduped)
	}
	if msgs[1].Parts[0].Content[0].Text != "old_result" || len(msgs) != 3 {
		t.Error("Normalize modified its input")
	}
}

// pairs builds n user/assistant pairs with the given bodies.
func pairs(n int, userBody, asstBody func(i int) string) []Message {
	var msgs []Message
	for i := range n {
		msgs = append(msgs, user(userBody(i)), assistant(asstBody(i)))
	}
	return msgs
}

func rep(s string, n int) func(int) string {
	return func(i int) string { return strings.Repeat(s, n) }
}

func labelled(prefix, s string, n int) func(int) string {
	return func(i int) string { return fmt.Sprintf("%s%d: %s", prefix, i, strings.Repeat(s, n)) }
}

func TestSeedBudgetVectors(t *testing.T) {
	tests := []struct {
		name      string
		msgs      []Message
		window    int
		keep      int
		fraction  float64
		want      int // boundary
		wantAfter int // estimate after, -1: not checked
		check     func(t *testing.T, out []Message)
	}{
		{
			name: "tiny conversation, big window: unchanged",
			msgs: []Message{user("hi"), assistant("hello")}, window: 200000, keep: 2, want: 0, wantAfter: -1,
		},
		{
			// The seed's test claims 37; user messages alone exceed 80
			// tokens, so every assistant is trimmed and the index is 40.
			name: "20 pairs of 100-char bodies, window 100, keep 2",
			msgs: pairs(20, labelled("u", "x", 100), labelled("a", "y", 100)), window: 100, keep: 2, want: 40, wantAfter: -1,
			check: func(t *testing.T, out []Message) {
				if !isTrimmed(out[1]) || isTrimmed(out[0]) {
					t.Errorf("first assistant trimmed, first user intact: got %s", describe(out[:2]))
				}
			},
		},
		{
			name: "keep counts assistants only",
			msgs: []Message{user("u1"), assistant(strings.Repeat("a", 302)), user("u2"), assistant(strings.Repeat("b", 302)),
				user("u3"), user("u4"), assistant(strings.Repeat("c", 302))},
			window: 400, keep: 2, want: 3, wantAfter: 247,
			check: func(t *testing.T, out []Message) {
				if len(out) != 6 || !isTrimmed(out[1]) || isTrimmed(out[3]) || isTrimmed(out[5]) {
					t.Errorf("a1 trimmed, a2 and a3 intact: got %s", describe(out))
				}
			},
		},
		{
			name: "production regression A: keep 50, fraction 0.3",
			msgs: pairs(10, rep("x", 200), rep("y", 200)), window: 500, keep: 50, fraction: 0.3, want: 20, wantAfter: -1,
		},
		{
			// The reference computes 284 tokens after; its user texts are
			// not given, these give 299.
			name: "production regression B: keep 3, 6 long assistants",
			msgs: pairs(6, labelled("question ", "", 0), rep("z", 520)), window: 500, keep: 3, want: 10, wantAfter: 299,
			check: func(t *testing.T, out []Message) {
				for i, m := range out {
					if m.Role == RoleAssistant && isTrimmed(m) == (i == len(out)-1) {
						t.Errorf("only the last assistant intact: got %s", describe(out))
						break
					}
				}
			},
		},
		{
			name: "cache prefix: 5 pairs of 100-char bodies, window 500, keep 2",
			msgs: pairs(5, labelled("user message ", "x", 100), labelled("assistant message ", "y", 100)), window: 500, keep: 2, want: 7, wantAfter: -1,
		},
		{
			// The boundary passes every assistant; "a1" and "a2" stay as
			// they are, shorter than the placeholder that would replace them.
			name:   "keep 0 trims every assistant",
			msgs:   []Message{user(strings.Repeat("x", 200)), assistant("a1"), user(strings.Repeat("x", 200)), assistant("a2")},
			window: 50, keep: 0, want: 4, wantAfter: -1,
			check: func(t *testing.T, out []Message) {
				if out[1].Parts[0].Text != "a1" || out[3].Parts[0].Text != "a2" || isTrimmed(out[0]) || isTrimmed(out[2]) {
					t.Errorf("every assistant past the boundary, no user trimmed: got %s", describe(out))
				}
			},
		},
		{
			name:   "keep 1 keeps only the last assistant",
			msgs:   pairs(3, rep("x", 50), rep("y", 100)),
			window: 200, keep: 1, want: 5, wantAfter: 135,
			check: func(t *testing.T, out []Message) {
				if !isTrimmed(out[1]) || !isTrimmed(out[3]) || isTrimmed(out[5]) {
					t.Errorf("all but the last assistant trimmed: got %s", describe(out))
				}
			},
		},
		{
			name: "fewer assistants than keep: the budget still forces trimming",
			msgs: []Message{user("q1"), assistant(strings.Repeat("a", 100)), user("q2"), assistant(strings.Repeat("b", 100)),
				user("q3"), assistant(strings.Repeat("c", 100))},
			window: 50, keep: 10, want: 6, wantAfter: -1,
		},
		{
			name:   "tool-call flow, keep 3, window 700",
			msgs:   toolTurns(5, 200),
			window: 700, keep: 3, want: 15, wantAfter: -1,
			check: func(t *testing.T, out []Message) {
				untrimmed := 0
				for i, m := range out {
					if m.Role == RoleAssistant && !isTrimmed(m) {
						untrimmed++
					}
					if m.Role == RoleTool && i < 15 && !isTrimmed(m) {
						t.Errorf("tool message %d before the boundary not trimmed", i)
					}
					if m.Role == RoleTool && i >= 15 && isTrimmed(m) {
						t.Errorf("tool message %d after the boundary trimmed", i)
					}
				}
				if untrimmed != 3 {
					t.Errorf("untrimmed assistants = %d, want 3: %s", untrimmed, describe(out))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := tt.fraction
			if fr == 0 {
				fr = 0.8
			}
			out, st, r := Reduce(tt.msgs, tt.window, State{}, seedOpts(tt.keep, fr))
			if r.Boundary != tt.want || st.Boundary != tt.want {
				t.Errorf("boundary = %d, want %d (%s; %d→%d tokens, threshold %d)", r.Boundary, tt.want, describe(out), r.TokensBefore, r.TokensAfter, r.Threshold)
			}
			if tt.wantAfter >= 0 && r.TokensAfter != tt.wantAfter {
				t.Errorf("tokens after = %d, want %d", r.TokensAfter, tt.wantAfter)
			}
			for i, m := range out {
				if (m.Role == RoleUser || m.Role == RoleSystem) && isTrimmed(m) {
					t.Errorf("%s message %d trimmed", m.Role, i)
				}
				if i >= r.Boundary && isTrimmed(m) {
					t.Errorf("message %d at or after the boundary %d trimmed", i, r.Boundary)
				}
			}
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
}

// toolTurns builds n turns of user, assistant(tool call), tool(result of
// size bytes), assistant(follow-up).
func toolTurns(n, size int) []Message {
	var msgs []Message
	for i := range n {
		id := fmt.Sprintf("tc_%d", i)
		msgs = append(msgs, user(fmt.Sprintf("user turn %d", i)), call("Let me read the file.", id, "read_file", `{"path":"src/main.go"}`),
			result(id, fmt.Sprintf("result %d: %s", i, strings.Repeat("r", size))), assistant(fmt.Sprintf("follow-up %d", i)))
	}
	return msgs
}

func TestSeedStatefulVectors(t *testing.T) {
	t.Run("index never decreases as the conversation grows", func(t *testing.T) {
		msgs := pairs(20, labelled("u", "x", 100), labelled("a", "y", 100))
		_, st, r1 := Reduce(msgs, 100, State{}, seedOpts(2, 0.8))
		msgs = append(msgs, user("more"), assistant("again"))
		_, st2, r2 := Reduce(msgs, 100, st, seedOpts(2, 0.8))
		if r2.Boundary < r1.Boundary || st2.Boundary < st.Boundary {
			t.Errorf("boundary %d → %d, want no decrease", r1.Boundary, r2.Boundary)
		}
	})
	t.Run("a larger keep later cannot move the index back", func(t *testing.T) {
		msgs := pairs(10, labelled("u", "x", 100), labelled("a", "y", 100))
		_, st, r1 := Reduce(msgs, 100, State{}, seedOpts(2, 0.8))
		_, _, r2 := Reduce(msgs, 100, st, seedOpts(8, 0.8))
		if r1.Boundary == 0 || r2.Boundary < r1.Boundary {
			t.Errorf("boundary %d → %d with keep 8, want > 0 and no decrease", r1.Boundary, r2.Boundary)
		}
	})
	t.Run("full lifecycle through JSON", func(t *testing.T) {
		msgs := pairs(5, rep("x", 80), rep("y", 80))
		_, st, r1 := Reduce(msgs, 200, State{}, seedOpts(2, 0.8))
		// 10 messages of 31 tokens: 326 > 160. Keep 2 → index 7 (263),
		// then the scan trims a7 (242) and a9 (221): index 10, still over.
		if r1.Boundary != 10 || r1.TokensAfter != 221 {
			t.Fatalf("boundary = %d (%d tokens), want 10 (221)", r1.Boundary, r1.TokensAfter)
		}
		st2, err := ParseState(st.AppendJSON(nil))
		mustTB(t, err)
		if st2 != st {
			t.Fatalf("state JSON round trip: got %+v, want %+v", st2, st)
		}
		msgs = append(msgs, user(strings.Repeat("x", 80)), assistant(strings.Repeat("y", 80)))
		out, _, r2 := Reduce(msgs, 200, st2, seedOpts(2, 0.8))
		if r2.StateMismatch != "" || r2.Boundary < r1.Boundary || len(out) != 12 {
			t.Fatalf("second call: boundary %d (mismatch %q), %d messages; want ≥ %d, 12", r2.Boundary, r2.StateMismatch, len(out), r1.Boundary)
		}
		for i := range out {
			if want := i < r2.Boundary && out[i].Role == RoleAssistant; isTrimmed(out[i]) != want {
				t.Errorf("message %d trimmed = %v, want %v (%s)", i, !want, want, describe(out))
			}
		}
	})
	t.Run("lazy re-apply under a big window", func(t *testing.T) {
		msgs := pairs(20, labelled("u", "x", 100), labelled("a", "y", 100))
		_, st, r1 := Reduce(msgs, 100, State{}, seedOpts(2, 0.8))
		out, _, r2 := Reduce(msgs, 200000, st, seedOpts(2, 0.8))
		if r2.Boundary != r1.Boundary || r2.CachePrefixChanged {
			t.Errorf("boundary %d → %d (changed %v), want unchanged", r1.Boundary, r2.Boundary, r2.CachePrefixChanged)
		}
		if !isTrimmed(out[1]) {
			t.Error("prefix no longer trimmed")
		}
	})
	t.Run("cache prefix survives a tiny new pair", func(t *testing.T) {
		msgs := pairs(5, labelled("user message ", "x", 100), labelled("assistant message ", "y", 100))
		out1, st, r1 := Reduce(msgs, 500, State{}, seedOpts(2, 0.8))
		msgs = append(msgs, user("ok"), assistant("ok"))
		out2, _, r2 := Reduce(msgs, 500, st, seedOpts(2, 0.8))
		if r1.Boundary != 7 || r2.Boundary != 7 || r2.CachePrefixChanged {
			t.Errorf("boundary %d → %d (changed %v), want 7 → 7", r1.Boundary, r2.Boundary, r2.CachePrefixChanged)
		}
		for i := range 7 {
			if isTrimmed(out1[i]) != isTrimmed(out2[i]) || Fingerprint(&out1[i]) != Fingerprint(&out2[i]) {
				t.Errorf("message %d differs between calls", i)
			}
		}
	})
	t.Run("empty state object", func(t *testing.T) {
		st, err := ParseState([]byte(`{}`))
		mustTB(t, err)
		msgs := pairs(3, rep("q", 10), rep("a", 500))
		out, _, r := Reduce(msgs, 400, st, seedOpts(2, 0.8))
		if r.StateMismatch != "" || !isTrimmed(out[1]) || isTrimmed(out[len(out)-1]) {
			t.Errorf("mismatch %q, %s; want first assistant trimmed, last intact", r.StateMismatch, describe(out))
		}
	})
	t.Run("ids survive trimming", func(t *testing.T) {
		out, _, r := Reduce(toolTurns(3, 200), 80, State{}, seedOpts(2, 0.8))
		if r.Boundary == 0 {
			t.Fatal("nothing trimmed")
		}
		for _, m := range out {
			for _, p := range m.Parts {
				if (p.Kind == ToolCall || p.Kind == ToolResult) && p.ID == "" || p.Kind == ToolCall && p.Name == "" {
					t.Errorf("empty id or name after trimming: %+v", p)
				}
			}
		}
	})
	t.Run("tool definitions push over the threshold", func(t *testing.T) {
		msgs := pairs(3, rep("x", 100), rep("y", 100))
		window := int(float64(Estimate(msgs)) / 0.75)
		if _, _, r := Reduce(msgs, window, State{}, seedOpts(2, 0.8)); r.Boundary != 0 {
			t.Fatalf("without tools: boundary %d, want 0", r.Boundary)
		}
		var tools []Tool
		for i := range 50 {
			d := strings.Repeat("x", 200)
			schema := tree.Object(tree.Member{Key: "type", Value: tree.String("object")}, tree.Member{Key: "properties", Value: tree.Object(
				tree.Member{Key: "arg1", Value: tree.Object(tree.Member{Key: "type", Value: tree.String("string")}, tree.Member{Key: "description", Value: tree.String(d)})},
				tree.Member{Key: "arg2", Value: tree.Object(tree.Member{Key: "type", Value: tree.String("string")}, tree.Member{Key: "description", Value: tree.String(d)})},
			)})
			tools = append(tools, Tool{Name: fmt.Sprintf("tool_%d", i), Description: d, Schema: schema})
		}
		o := seedOpts(2, 0.8)
		o.Tools = tools
		out, _, r := Reduce(msgs, window, State{}, o)
		if r.Boundary == 0 || !isTrimmed(out[1]) {
			t.Errorf("with tools: boundary %d, want trimming", r.Boundary)
		}
	})
	t.Run("progressive trimming then freeze", func(t *testing.T) {
		var msgs []Message
		st, last := State{}, 0
		for round := range 3 {
			msgs = append(msgs, pairs(4, labelled(fmt.Sprint("r", round, "u"), "x", 60), labelled("a", "y", 60))...)
			var r Report
			_, st, r = Reduce(msgs, 800, st, seedOpts(50, 0.3))
			if r.Boundary < last {
				t.Errorf("round %d: boundary %d < %d", round, r.Boundary, last)
			}
			last = r.Boundary
		}
	})
}
