package history

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
	"pgregory.net/rapid"
)

// Property tests over generated conversations: the invariants of the seed
// design and of this package, checked on every Reduce call.

// conv is a generated conversation and the indices where a turn ends (a
// complete request could be sent there).
type conv struct {
	msgs []Message
	ends []int
}

var filler = strings.Repeat("the quick brown fox jumps over the lazy dog; 日本語 ", 2000)

func genText(t *rapid.T, label string, lo, hi int) string {
	n := rapid.IntRange(lo, hi).Draw(t, label)
	start := rapid.IntRange(0, 40).Draw(t, label+"-at")
	s := filler[start : start+n]
	return strings.ToValidUTF8(s, "?")
}

func genConv(t *rapid.T) conv {
	var c conv
	if rapid.Bool().Draw(t, "system") {
		c.msgs = append(c.msgs, TextMessage(RoleSystem, genText(t, "system-text", 1, 400)))
	}
	id := 0
	turns := rapid.IntRange(1, 10).Draw(t, "turns")
	for range turns {
		text := genText(t, "user-text", 1, 300)
		if rapid.IntRange(0, 9).Draw(t, "tag") == 0 {
			text = "<checkpoint_id>" + fmt.Sprint(id) + "</checkpoint_id>\n" + text
		}
		c.msgs = append(c.msgs, user(text))
		for range rapid.IntRange(0, 3).Draw(t, "steps") {
			m := Message{Role: RoleAssistant}
			if rapid.Bool().Draw(t, "thinking") {
				m.Parts = append(m.Parts, Part{Kind: Thinking, Text: genText(t, "thought", 0, 300), Signature: fmt.Sprintf("sig-%d", id)})
			}
			if rapid.Bool().Draw(t, "text") {
				m.Parts = append(m.Parts, Part{Kind: Text, Text: genText(t, "assistant-text", 1, 200)})
			}
			var ids []string
			for range rapid.IntRange(1, 3).Draw(t, "calls") {
				id++
				ids = append(ids, fmt.Sprintf("call_%d", id))
				args := fmt.Sprintf(`{"q":%q}`, genText(t, "args", 0, 600))
				m.Parts = append(m.Parts, Part{Kind: ToolCall, ID: ids[len(ids)-1], Name: "tool", Args: args})
			}
			c.msgs = append(c.msgs, m)
			separate := rapid.Bool().Draw(t, "separate")
			var tool Message
			for _, x := range ids {
				r := result(x, genText(t, "result", 0, 3000))
				if separate {
					c.msgs = append(c.msgs, r)
				} else {
					tool.Role = RoleTool
					tool.Parts = append(tool.Parts, r.Parts...)
				}
			}
			if !separate {
				c.msgs = append(c.msgs, tool)
			}
		}
		if rapid.Bool().Draw(t, "answer") {
			c.msgs = append(c.msgs, assistant(genText(t, "answer-text", 1, 500)))
		}
		c.ends = append(c.ends, len(c.msgs))
	}
	return c
}

func genOptions(t *rapid.T) *Options {
	return &Options{
		Threshold:     rapid.SampledFrom([]float64{0, 0.5, 0.7, 0.9}).Draw(t, "threshold"),
		Target:        rapid.SampledFrom([]float64{0, 0.3, 0.5, 0.9}).Draw(t, "target"),
		KeepAssistant: rapid.IntRange(-1, 5).Draw(t, "keep"),
		MaxArgs:       rapid.SampledFrom([]int{-1, 0, 16}).Draw(t, "max-args"),
		KeepThinking:  rapid.Bool().Draw(t, "keep-thinking"),
		Counter:       rapid.SampledFrom(counters()).Draw(t, "counter"),
	}
}

// counters are the counters properties are checked with: the estimate
// (nil), the tokens package's byte estimate and real BPE, and a rune
// counter.
func counters() []tokens.Counter {
	cs := []tokens.Counter{nil, tokens.Estimate(), runeCounter{}}
	if c, err := tokens.Get("o200k_base"); err == nil {
		cs = append(cs, c)
	}
	return cs
}

// runeCounter counts a token per rune: a counter unlike the byte estimate.
type runeCounter struct{}

func (runeCounter) Name() string       { return "runes" }
func (runeCounter) Exact() bool        { return true }
func (runeCounter) Count(s string) int { return utf8.RuneCountInString(s) }

// checkReduce checks one call's invariants: in is the conversation given,
// out, st and rep what Reduce returned for it, prev the state given.
func checkReduce(t *rapid.T, in []Message, window int, prev State, o *Options, out []Message, st State, rep Report) {
	opt := o.withDefaults()
	norm, _ := Normalize(in, opt.StripTags)

	// User and system content is never changed or removed.
	var want, got []string
	for i := range norm {
		if r := norm[i].Role; r == RoleUser || r == RoleSystem {
			want = append(want, Fingerprint(&norm[i]))
		}
	}
	for i := range out {
		if r := out[i].Role; r == RoleUser || r == RoleSystem {
			got = append(got, Fingerprint(&out[i]))
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("user/system messages changed")
	}

	// Every tool result has its call and every call its result.
	calls, results := map[string]int{}, map[string]int{}
	for i, m := range out {
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
			t.Fatalf("result %s at %d without an earlier call", id, r)
		}
	}
	for id := range calls {
		if _, ok := results[id]; !ok {
			t.Fatalf("call %s without its result", id)
		}
	}

	// The boundary never decreases (the state matched: same conversation,
	// grown).
	if rep.StateMismatch != "" {
		t.Fatalf("state mismatch on a grown conversation: %s", rep.StateMismatch)
	}
	if st.Boundary < prev.Boundary || st.Dropped < prev.Dropped || st.Dropped > st.Boundary {
		t.Fatalf("boundary %d/%d → %d/%d", prev.Dropped, prev.Boundary, st.Dropped, st.Boundary)
	}

	// The newest tool result is never blanked.
	lastIn, lastOut := -1, -1
	for i := range norm {
		if norm[i].Role == RoleTool {
			lastIn = i
		}
	}
	for i := range out {
		if out[i].Role == RoleTool {
			lastOut = i
		}
	}
	if lastIn >= 0 && (lastOut < 0 || Fingerprint(&norm[lastIn]) != Fingerprint(&out[lastOut])) {
		t.Fatalf("newest tool result changed")
	}

	// Thinking is never edited: every thinking part out was a part in.
	thoughts := map[string]bool{}
	for _, m := range norm {
		for _, p := range m.Parts {
			if p.Kind == Thinking {
				thoughts[p.Text+"\x00"+p.Signature] = true
			}
		}
	}
	for _, m := range out {
		for _, p := range m.Parts {
			if p.Kind == Thinking && !thoughts[p.Text+"\x00"+p.Signature] {
				t.Fatalf("thinking part edited: %q", p.Text)
			}
		}
	}

	// Output ≤ threshold whenever reachable: the most trimming allowed is
	// everything up to maxBoundary, and dropping up to the last closed
	// position before it.
	bmax := max(maxBoundary(norm, false), st.Boundary)
	closed := closedPositions(norm)
	dmax := 0
	for j := bmax; j >= 0; j-- {
		if closed[j] {
			dmax = j
			break
		}
	}
	dmax = max(dmax, st.Dropped)
	var ends []int
	if !opt.KeepThinking {
		ends = turnEnds(norm)
	}
	floor := Count(opt.Counter, apply(norm, bmax, dmax, ends, opt, &Report{})) + ToolOverhead(opt.Counter, opt.Tools)
	if floor <= rep.Threshold && rep.TokensAfter > rep.Threshold {
		t.Fatalf("%d tokens after, threshold %d reachable (floor %d)", rep.TokensAfter, rep.Threshold, floor)
	}
	if rep.planned < rep.TokensAfter || (st.Dropped == 0 && rep.planned != rep.TokensAfter) {
		t.Fatalf("planned %d tokens, got %d (dropped %d)", rep.planned, rep.TokensAfter, st.Dropped)
	}
	if rep.OverBudget != (rep.TokensAfter > rep.Threshold) {
		t.Fatalf("OverBudget %v with %d > %d", rep.OverBudget, rep.TokensAfter, rep.Threshold)
	}
	if got := Count(opt.Counter, out); got+ToolOverhead(opt.Counter, opt.Tools) != rep.TokensAfter {
		t.Fatalf("TokensAfter %d, recount %d", rep.TokensAfter, got)
	}
	// Nothing trimmed while under the threshold with no prior trimming.
	if prev.Boundary == 0 && rep.TokensBefore <= rep.Threshold && (st.Boundary != 0 || rep.CachePrefixChanged) {
		t.Fatalf("trimmed under the threshold: %d ≤ %d, boundary %d", rep.TokensBefore, rep.Threshold, st.Boundary)
	}
	// Placeholders are only ever in assistant and tool messages, and only
	// before the boundary.
	for i := range out[max(0, len(out)-(len(norm)-st.Boundary)):] {
		m := out[len(out)-(len(norm)-st.Boundary)+i]
		if Fingerprint(&m) != Fingerprint(&norm[st.Boundary+i]) {
			t.Fatalf("message %d after the boundary %d changed", st.Boundary+i, st.Boundary)
		}
	}
}

func TestReduceProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConv(t)
		o := genOptions(t)
		window := rapid.IntRange(50, 6000).Draw(t, "window")
		// Two calls: at a turn end, then on the grown conversation with the
		// returned state (through JSON), then the same again (stable).
		cut := c.ends[rapid.IntRange(0, len(c.ends)-1).Draw(t, "cut")]
		first := Clone(c.msgs[:cut])
		out1, st1, rep1 := Reduce(first, window, State{}, o)
		checkReduce(t, first, window, State{}, o, out1, st1, rep1)
		if Fingerprint(&first[0]) != Fingerprint(&c.msgs[0]) {
			t.Fatalf("Reduce modified its input")
		}
		st1b, err := ParseState(st1.AppendJSON(nil))
		if err != nil || st1b != st1 {
			t.Fatalf("state JSON round trip: %v, %+v != %+v", err, st1b, st1)
		}
		out2, st2, rep2 := Reduce(c.msgs, window, st1b, o)
		checkReduce(t, c.msgs, window, st1b, o, out2, st2, rep2)
		out3, st3, rep3 := Reduce(c.msgs, window, st2, o)
		checkReduce(t, c.msgs, window, st2, o, out3, st3, rep3)
		if st3.Boundary != st2.Boundary || st3.Dropped != st2.Dropped || rep3.CachePrefixChanged {
			t.Fatalf("a repeated call moved the boundary: %d → %d", st2.Boundary, st3.Boundary)
		}
		// Deterministic: same input, same output.
		if a, b := joinPrints(out2), joinPrints(out3); a != b {
			t.Fatalf("repeated call gave different messages")
		}
	})
}

func joinPrints(msgs []Message) string {
	var b strings.Builder
	for i := range msgs {
		b.WriteString(Fingerprint(&msgs[i]))
	}
	return b.String()
}

// TestTrimmedCost checks that the size Reduce plans with for a trimmed
// message is the size of the trimmed message.
func TestTrimmedCost(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConv(t)
		maxArgs := rapid.SampledFrom([]int{-1, 0, 16}).Draw(t, "max-args")
		drop := rapid.Bool().Draw(t, "drop-thinking")
		z := sizer{c: rapid.SampledFrom(counters()).Draw(t, "counter")}
		for _, m := range c.msgs {
			if !trimmable(m.Role) {
				continue
			}
			tm := m
			tm.Parts = trimParts(nil, m, z, maxArgs, drop, &Report{})
			planned, actual := z.trimmedMessage(&m, maxArgs, drop), z.message(&tm)
			if actual != planned {
				t.Fatalf("planned %d, trimmed message costs %d", planned, actual)
			}
		}
	})
}

// TestStateMismatch checks that a state that does not fit is reported and
// recomputed, never silently un-trimming.
func TestStateMismatch(t *testing.T) {
	msgs := toolTurns(30, 500)
	_, st, r := Reduce(msgs, 4000, State{}, nil)
	if st.Boundary == 0 {
		t.Fatalf("nothing trimmed: %+v", r)
	}
	other := toolTurns(30, 500)
	other[0] = user("a different first message")
	tests := []struct {
		name  string
		msgs  []Message
		state func() State
		want  string
	}{
		{"different first message", other, func() State { return st }, "first message differs"},
		{"index past the end", msgs[:10], func() State { return st }, "past the end"},
		{"wrong version", msgs, func() State { s := st; s.Version = 7; return s }, "state version 7"},
		{"wrong type", msgs, func() State {
			s, err := ParseState([]byte(`{"version":1,"boundary":"12"}`))
			mustTB(t, err)
			return s
		}, `boundary is "12"`},
		{"negative", msgs, func() State {
			s, err := ParseState([]byte(`{"version":1,"boundary":-3}`))
			mustTB(t, err)
			return s
		}, "boundary is -3"},
		{"float", msgs, func() State {
			s, err := ParseState([]byte(`{"version":1,"boundary":1.5}`))
			mustTB(t, err)
			return s
		}, "boundary is 1.5"},
		{"edited before the boundary", func() []Message {
			m := Clone(msgs)
			m[st.Boundary-1] = assistant("edited")
			return m
		}(), func() State { return st }, "before the boundary differs"},
	}
	for _, tt := range tests {
		out, st2, rep := Reduce(tt.msgs, 4000, tt.state(), nil)
		if !strings.Contains(rep.StateMismatch, tt.want) {
			t.Errorf("%s: StateMismatch = %q, want it to mention %q", tt.name, rep.StateMismatch, tt.want)
		}
		if !rep.CachePrefixChanged {
			t.Errorf("%s: a mismatch must count as a cache-prefix change", tt.name)
		}
		// Recomputed from scratch: the result is what a fresh call gives.
		fresh, stf, _ := Reduce(tt.msgs, 4000, State{}, nil)
		if joinPrints(out) != joinPrints(fresh) || st2.Boundary != stf.Boundary {
			t.Errorf("%s: not recomputed like a fresh call (boundary %d, fresh %d)", tt.name, st2.Boundary, stf.Boundary)
		}
	}
	if _, err := ParseState([]byte(`{"version":1,`)); err == nil {
		t.Error("ParseState accepted broken JSON")
	}
}

// TestClosedPositions compares closedPositions with the definition: j is
// closed when no call before j has its result at or after j.
func TestClosedPositions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConv(t)
		msgs, _ := Normalize(c.msgs, nil)
		// Shuffle some results out of place to exercise the slow path.
		if len(msgs) > 3 && rapid.Bool().Draw(t, "move") {
			i := rapid.IntRange(1, len(msgs)-2).Draw(t, "from")
			if msgs[i].Role == RoleTool {
				msgs = append(msgs[:i:i], append([]Message{user("between")}, msgs[i:]...)...)
			}
		}
		got := closedPositions(msgs)
		callAt, resultAt := map[string]int{}, map[string]int{}
		for i, m := range msgs {
			for _, p := range m.Parts {
				switch p.Kind {
				case ToolCall:
					callAt[p.ID] = i
				case ToolResult:
					resultAt[p.ID] = i
				}
			}
		}
		for j := 0; j <= len(msgs); j++ {
			want := true
			for id, c := range callAt {
				if r, ok := resultAt[id]; ok && c < j && r >= j {
					want = false
				}
			}
			if got[j] != want {
				t.Fatalf("closed[%d] = %v, want %v", j, got[j], want)
			}
		}
	})
}

// TestUserSystemBytes checks the invariant at the JSON level: a generated
// conversation is sent as an OpenAI request, trimmed, and every user and
// system message of the output request is byte-identical to the input's.
func TestUserSystemBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConv(t)
		var msgs []Message
		for _, m := range c.msgs {
			var ps []Part
			for _, p := range m.Parts {
				if p.Kind != Thinking { // Chat Completions has no thinking
					ps = append(ps, p)
				}
			}
			if len(ps) > 0 {
				m.Parts = ps
				msgs = append(msgs, m)
			}
		}
		in, err := (&Request{Format: OpenAI, Messages: msgs}).AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeOpenAI(in)
		if err != nil {
			t.Fatal(err)
		}
		o := genOptions(t)
		o.StripTags = []string{} // tag stripping is normalisation, configured to edit user text
		out, _, _ := Reduce(r.Messages, rapid.IntRange(50, 6000).Draw(t, "window"), State{}, o)
		r.Messages = out
		enc, err := r.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := userSystemJSON(t, in), userSystemJSON(t, enc); a != b {
			t.Fatalf("user/system bytes changed:\nin  %s\nout %s", a, b)
		}
	})
}

func userSystemJSON(t *rapid.T, req []byte) string {
	v, err := tree.Parse(req)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range get(v, "messages").Items() {
		if r := get(m, "role").Str(); r == "user" || r == "system" {
			b.Write(tree.AppendJSON(nil, m))
			b.WriteByte('\n')
		}
	}
	return b.String()
}
