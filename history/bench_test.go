package history

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
)

// benchConversation is n messages of an agent session: a system prompt, a
// user request, then assistant turns (text and one or two tool calls) and
// their results, 200 bytes to 6 KB each, with a user message every 20
// turns. Its size, about 3,500 bytes a message, is far over a 200k window.
func benchConversation(n int) []Message {
	msgs := []Message{TextMessage(RoleSystem, strings.Repeat("You are a coding agent. ", 400)), user("Fix the build.")}
	id := 0
	for turn := 0; len(msgs) < n; turn++ {
		if turn%20 == 19 {
			msgs = append(msgs, user(fmt.Sprintf("Turn %d: what did you find?", turn)))
		}
		a := Message{Role: RoleAssistant, Parts: []Part{{Kind: Text, Text: fmt.Sprintf("Step %d: reading the next file to see where the build breaks.", turn)}}}
		calls := turn%2 + 1
		tool := Message{Role: RoleTool}
		for range calls {
			id++
			cid := fmt.Sprintf("toolu_%06d", id)
			a.Parts = append(a.Parts, Part{Kind: ToolCall, ID: cid, Name: "Read", Args: fmt.Sprintf(`{"file_path":"/repo/pkg/f%d.go"}`, id)})
			size := 200 + (id*7919)%5800
			tool.Parts = append(tool.Parts, Part{Kind: ToolResult, ID: cid, Content: []Part{{Kind: Text, Text: filler[:size]}}})
		}
		msgs = append(msgs, a, tool)
	}
	return msgs[:n]
}

func conversationBytes(msgs []Message) int64 {
	var n int64
	for _, m := range msgs {
		for _, p := range m.Parts {
			n += int64(len(p.Text) + len(p.Args))
			for _, q := range p.Content {
				n += int64(len(q.Text))
			}
		}
	}
	return n
}

// BenchmarkReduce measures Reduce on 10,000 messages with a 200k window:
// the first trim (no state), the steady state (the boundary already set,
// nothing to add), and the estimate alone as the baseline.
func BenchmarkReduce(b *testing.B) {
	msgs := benchConversation(10_000)
	const window = 200_000
	_, st, rep := Reduce(msgs, window, State{}, nil)
	if rep.Boundary == 0 || rep.OverBudget {
		b.Fatalf("setup: %+v", rep)
	}
	size := conversationBytes(msgs)
	b.Run("baseline-estimate", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			Estimate(msgs)
		}
	})
	b.Run("first-trim", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			Reduce(msgs, window, State{}, nil)
		}
	})
	b.Run("steady", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			_, _, r := Reduce(msgs, window, st, nil)
			if r.CachePrefixChanged {
				b.Fatal("steady state moved the boundary")
			}
		}
	})
}

// BenchmarkRequest measures the whole CLI path on real data: the SWE-agent
// trajectories' histories as an OpenAI request, decoded, reduced (nothing
// to trim) and encoded.
func BenchmarkRequest(b *testing.B) {
	for _, f := range corpus.Files(b, ".traj.json") {
		data, err := os.ReadFile(f)
		mustTB(b, err)
		req := sweRequest(b, data)
		if req == nil {
			continue
		}
		name := strings.TrimSuffix(f[strings.LastIndex(f, "/")+1:], ".traj.json")
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := DecodeOpenAI(req)
				if err != nil {
					b.Fatal(err)
				}
				out, _, _ := Reduce(r.Messages, 200_000, State{}, nil)
				r.Messages = out
				if _, err := r.AppendJSON(nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
