package history

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// session describes a simulated agent session: every turn the assistant
// calls tools whose outputs grow as the session goes on, and now and then
// the user speaks.
type session struct {
	window    int
	turns     int
	base      int // bytes of a tool output at turn 0
	growth    int // more bytes per turn
	calls     func(turn int) int
	userEvery int
	keep      int
}

// sessionStats is what a simulated session measured.
type sessionStats struct {
	turns       int // transitions between consecutive requests
	trimmed     int // transitions after the first trim
	identical   int // transitions where the prefix up to the new boundary is byte-identical in both requests
	fullPrefix  int // transitions where the whole previous request is a prefix of the next
	changes     int // transitions whose prefix bytes differ
	reported    int // Report.CachePrefixChanges at the end
	overBudget  int
	maxAfter    int
	finalTokens int
	dropped     int
}

// prefixJSON is the Anthropic request bytes of msgs.
func prefixJSON(tb fataler, msgs []Message) []byte {
	r := &Request{Format: Anthropic, Messages: msgs}
	b, err := r.AppendJSON(nil)
	if err != nil {
		tb.Fatalf("encode: %v", err)
	}
	return b
}

// fataler is what testing.TB and *rapid.T share.
type fataler interface {
	Fatalf(format string, args ...any)
}

func runSession(tb fataler, s session) sessionStats {
	var st sessionStats
	var msgs, prevOut []Message
	var state State
	id := 0
	msgs = append(msgs, TextMessage(RoleSystem, "You are a coding agent. "+strings.Repeat("Follow the repository's conventions. ", 40)),
		user("Fix the failing tests in ./tokens and explain the cause."))
	o := &Options{KeepAssistant: s.keep}
	for turn := range s.turns {
		if s.userEvery > 0 && turn > 0 && turn%s.userEvery == 0 {
			msgs = append(msgs, user(fmt.Sprintf("Turn %d: keep going, and tell me what you found so far.", turn)))
		}
		a := Message{Role: RoleAssistant, Parts: []Part{{Kind: Text, Text: fmt.Sprintf("Step %d: checking the next file.", turn)}}}
		var ids []string
		for range s.calls(turn) {
			id++
			ids = append(ids, fmt.Sprintf("toolu_%04d", id))
			a.Parts = append(a.Parts, Part{Kind: ToolCall, ID: ids[len(ids)-1], Name: "Read", Args: fmt.Sprintf(`{"file_path":"/repo/pkg/file_%d.go","limit":2000}`, id)})
		}
		msgs = append(msgs, a)
		for _, x := range ids {
			size := s.base + s.growth*turn
			body := filler[:size]
			msgs = append(msgs, result(x, strings.ToValidUTF8(body, "?")))
		}
		out, next, rep := Reduce(msgs, s.window, state, o)
		if rep.StateMismatch != "" {
			tb.Fatalf("turn %d: state mismatch: %s", turn, rep.StateMismatch)
		}
		if rep.OverBudget {
			st.overBudget++
		}
		st.maxAfter = max(st.maxAfter, rep.TokensAfter)
		st.finalTokens = rep.TokensAfter
		st.dropped = rep.Dropped
		if turn > 0 {
			st.turns++
			if state.Boundary > 0 {
				st.trimmed++
			}
			// The prefix up to this turn's boundary, in this request and
			// in the previous one.
			m := len(out) - (rep.Messages - next.Boundary)
			same := len(prevOut) >= m && bytes.Equal(prefixJSON(tb, out[:m]), prefixJSON(tb, prevOut[:m]))
			if same {
				st.identical++
			} else {
				st.changes++
				if !rep.CachePrefixChanged {
					tb.Fatalf("turn %d: prefix bytes changed but the report says not", turn)
				}
			}
			full := len(out) >= len(prevOut)
			for i := 0; full && i < len(prevOut); i++ {
				full = sameParts(out[i].Parts, prevOut[i].Parts) || Fingerprint(&out[i]) == Fingerprint(&prevOut[i])
			}
			if full {
				st.fullPrefix++
			}
		}
		prevOut = out
		state = next
		st.reported = rep.CachePrefixChanges
	}
	return st
}

// TestSession300 simulates a 300-turn agent session on a 200k window with
// tool outputs growing from 800 bytes to about 8 KB and checks that the
// request prefix up to the boundary is byte-identical between consecutive
// turns on at least 90% of turns.
func TestSession300(t *testing.T) {
	s := session{window: 200_000, turns: 300, base: 800, growth: 25,
		calls: func(turn int) int { return turn%3 + 1 }, userEvery: 10}
	st := runSession(t, s)
	pct := 100 * float64(st.identical) / float64(st.turns)
	t.Logf("300-turn session: prefix identical on %d/%d turns (%.1f%%), whole previous request a prefix on %d; %d prefix changes (report counts %d); max %d tokens, threshold %d",
		st.identical, st.turns, pct, st.fullPrefix, st.changes, st.reported, st.maxAfter, 160_000)
	if pct < 90 {
		t.Errorf("prefix identical on %.1f%% of turns, want ≥ 90%%", pct)
	}
	if st.overBudget > 0 || st.maxAfter > 160_000 {
		t.Errorf("over budget on %d turns (max %d)", st.overBudget, st.maxAfter)
	}
	if st.reported < st.changes {
		t.Errorf("report counts %d prefix changes, measured %d", st.reported, st.changes)
	}
}

// TestSessionProperty checks the same over generated sessions: windows
// from 40k to 200k tokens, outputs growing so that the newest turn costs up
// to 1.5% of the window, any keep count.
func TestSessionProperty(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	// Each case is a whole 300-turn session: run 25 unless -rapid.checks
	// asks for a number of its own.
	if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
		f.Value.Set("25")
		defer f.Value.Set(f.DefValue)
	}
	rapid.Check(t, func(t *rapid.T) {
		window := rapid.IntRange(40_000, 200_000).Draw(t, "window")
		maxCalls := rapid.IntRange(1, 3).Draw(t, "max-calls")
		// The last turn's tool bytes: up to 1.5% of the window.
		last := rapid.IntRange(window/500, window*15/1000).Draw(t, "last-turn-tokens") * 7 / 2 / maxCalls
		base := rapid.IntRange(50, max(51, last/2)).Draw(t, "base")
		s := session{
			window: window, turns: 300, base: base, growth: max(0, last-base) / 300,
			calls:     func(turn int) int { return turn%maxCalls + 1 },
			userEvery: rapid.IntRange(0, 20).Draw(t, "user-every"),
			keep:      rapid.IntRange(-1, 20).Draw(t, "keep"),
		}
		st := runSession(t, s)
		if pct := 100 * float64(st.identical) / float64(st.turns); pct < 90 {
			t.Fatalf("prefix identical on %.1f%% of turns (%d changes), want ≥ 90%%", pct, st.changes)
		}
		if st.overBudget > 0 {
			t.Fatalf("over budget on %d turns", st.overBudget)
		}
	})
}

// sameParts reports whether a and b are the same slice.
func sameParts(a, b []Part) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
