package history

import (
	"fmt"
	"math"
	"strconv"

	"github.com/terse-dev/terse/tokens"
)

// Defaults for [Options].
const (
	DefaultThreshold     = 0.8
	DefaultTarget        = 0.6
	DefaultKeepAssistant = 10
	DefaultMaxArgs       = 256
)

// Options configure [Reduce]. The zero value (or nil) uses the defaults.
type Options struct {
	// Threshold is the fraction of the window above which trimming starts.
	// Zero means DefaultThreshold (0.8).
	Threshold float64
	// Target is the fraction of the window trimming brings the estimate
	// down to once it starts; the gap to Threshold is headroom that keeps
	// the boundary, and so the cached prefix, still for the next turns.
	// Zero means DefaultTarget (0.6); a Target above Threshold is taken as
	// Threshold (no hysteresis).
	Target float64
	// KeepAssistant is how many of the newest assistant messages are left
	// untrimmed when trimming starts, best effort: the budget wins. Zero
	// means DefaultKeepAssistant (10); negative keeps none.
	KeepAssistant int
	// MaxArgs is the size in bytes above which a trimmed tool call's
	// arguments are replaced by a placeholder object (when that is
	// smaller). Zero means DefaultMaxArgs (256); negative never replaces
	// them.
	MaxArgs int
	// Counter counts tokens; nil uses the conservative estimate
	// ([Estimate]).
	Counter tokens.Counter
	// Tools are the request's tool definitions; their size
	// ([ToolOverhead]) counts against the budget.
	Tools []Tool
	// StripTags are the tags Normalize strips; nil means
	// [DefaultStripTags], an empty non-nil slice none.
	StripTags []string
	// KeepThinking keeps thinking blocks of trimmed turns. By default a
	// turn's thinking is dropped whole once the turn and the user message
	// that ends it lie before the boundary (Anthropic ignores earlier
	// turns' thinking anyway; text sent together with tool results does
	// not end a turn). Thinking is never edited either way.
	KeepThinking bool
	// ResultText gives the text that replaces a trimmed tool result's
	// content, from the id of the call it answers; nil means
	// [Placeholder]. It must depend on the id alone, so that a trimmed
	// prefix stays byte-identical from call to call.
	ResultText func(id string) string

	// seed reproduces the seed algorithm exactly, for its test vectors:
	// no hysteresis, no protection of the newest exchange, no argument
	// placeholders, no thinking removal and no second stage.
	seed bool
}

func (o *Options) withDefaults() Options {
	var x Options
	if o != nil {
		x = *o
	}
	if x.Threshold <= 0 {
		x.Threshold = DefaultThreshold
	}
	if x.Target <= 0 {
		x.Target = DefaultTarget
	}
	if x.Target > x.Threshold || x.seed {
		x.Target = x.Threshold
	}
	switch {
	case x.KeepAssistant == 0:
		x.KeepAssistant = DefaultKeepAssistant
	case x.KeepAssistant < 0:
		x.KeepAssistant = 0
	}
	if x.MaxArgs == 0 {
		x.MaxArgs = DefaultMaxArgs
	}
	if x.seed {
		x.MaxArgs = -1
		x.KeepThinking = true
	}
	return x
}

// Report says what one [Reduce] call did. Token figures include the tool
// definitions and are in the units of Tokenizer.
type Report struct {
	Tokenizer string `json:"tokenizer"` // "estimate" or the Counter's name
	Window    int    `json:"window"`
	Threshold int    `json:"threshold"` // tokens: trimming starts above this
	Target    int    `json:"target"`    // tokens: trimming aims at or below this

	TokensBefore int `json:"tokens_before"` // the normalised conversation, untrimmed
	TokensAfter  int `json:"tokens_after"`  // the result

	Messages        int `json:"messages"`         // normalised messages
	Trimmed         int `json:"trimmed"`          // messages with placeholders
	Dropped         int `json:"dropped"`          // messages removed by the second stage
	ArgsTrimmed     int `json:"args_trimmed"`     // tool calls whose arguments became a placeholder
	ThinkingDropped int `json:"thinking_dropped"` // thinking parts removed with their turn

	Boundary         int `json:"boundary"`
	PrevBoundary     int `json:"prev_boundary"`
	DropBoundary     int `json:"drop_boundary"`
	PrevDropBoundary int `json:"prev_drop_boundary"`

	// CachePrefixChanged is true when this call changed what precedes the
	// boundary (so the provider's prompt cache misses once).
	CachePrefixChanged bool `json:"cache_prefix_changed"`
	// CachePrefixChanges and Calls count over the life of the state.
	CachePrefixChanges int `json:"cache_prefix_changes"`
	Calls              int `json:"calls"`

	// OverBudget is true when even the most trimming allowed (everything
	// but user and system content and the newest tool exchange) leaves the
	// result above Threshold.
	OverBudget bool `json:"over_budget"`
	// StateMismatch says why the given state was not used ("" when it was).
	StateMismatch string `json:"state_mismatch,omitempty"`

	Normalize NormalizeReport `json:"normalize"`

	planned int // the size the search planned with, ≥ TokensAfter (tests)
}

// Reduce normalises msgs ([Normalize]) and trims them to fit window
// tokens, continuing from st. It returns the messages to send, the state
// to pass to the next call, and a report. msgs is not modified; the result
// may share unchanged messages and parts with it.
//
// Nothing is trimmed while the estimate is at or under Threshold × window.
// Above it, the boundary moves forward (never back) until the estimate is
// at or under Target × window: first to keep only the newest KeepAssistant
// assistant messages untrimmed, then one message at a time, never past the
// assistant message that made the newest tool call. If placeholders alone
// still exceed Target, the oldest trimmed assistant and tool messages are
// dropped, in whole call/result groups. Under the threshold the previous
// boundary is re-applied unchanged, so the prefix stays byte-identical.
func Reduce(msgs []Message, window int, st State, o *Options) ([]Message, State, Report) {
	opt := o.withDefaults()
	norm, nrep := Normalize(msgs, opt.StripTags)
	rep := Report{Tokenizer: "estimate", Window: window, Messages: len(norm), Normalize: nrep}
	if opt.Counter != nil {
		rep.Tokenizer = opt.Counter.Name()
	}
	rep.Threshold = int(math.Floor(float64(window)*opt.Threshold + 1e-9))
	rep.Target = int(math.Floor(float64(window)*opt.Target + 1e-9))
	overhead := ToolOverhead(opt.Counter, opt.Tools)
	sz, ends := measure(norm, &opt)
	cost := func(d, b int) int { return sz.cost(d, b) + overhead }
	rep.TokensBefore = cost(0, 0)

	// The state.
	b0, d0, why := checkState(norm, st)
	var closed []bool // positions where no call is separated from its result
	if why == "" && d0 > 0 {
		closed = closedPositions(norm)
		if !closed[d0] {
			why = "dropped " + strconv.Itoa(d0) + " splits a tool call from its result"
		}
	}
	if why != "" {
		b0, d0 = 0, 0
		rep.StateMismatch = why
	}
	rep.PrevBoundary, rep.PrevDropBoundary = b0, d0
	b, d := b0, d0
	if (b0 > 0 || d0 > 0 || rep.TokensBefore > rep.Threshold) && cost(d, b) > rep.Threshold {
		b = placeholderBoundary(norm, &opt, b, rep.Target, func(b int) int { return cost(d, b) })
		if !opt.seed && cost(d, b) > rep.Target {
			if closed == nil {
				closed = closedPositions(norm)
			}
			d = dropBoundary(closed, d, b, rep.Target, cost)
		}
	}
	rep.Boundary, rep.DropBoundary = b, d

	out := apply(norm, b, d, ends, opt, &rep)
	rep.TokensAfter = Count(opt.Counter, out) + overhead
	rep.planned = cost(d, b)
	rep.OverBudget = rep.TokensAfter > rep.Threshold

	next := State{Version: StateVersion, Boundary: b, Dropped: d, Calls: st.Calls + 1, PrefixChanges: st.PrefixChanges}
	if b > 0 {
		next.First, next.Last = Fingerprint(&norm[0]), Fingerprint(&norm[b-1])
	}
	rep.CachePrefixChanged = why != "" || b != b0 || d != d0
	if rep.CachePrefixChanged {
		next.PrefixChanges++
	}
	rep.Calls, rep.CachePrefixChanges = next.Calls, next.PrefixChanges
	return out, next, rep
}

// sizes are the prefix sums Reduce prices boundaries with: of each
// message's size kept (pu), trimmed with its thinking (pt), and once
// dropped (pk). A trimmed assistant message also loses its thinking once
// its turn ends before the boundary: te[b] sums those savings over turns
// ending before b, ps[d] over messages before d (already dropped, so
// nothing left to save).
type sizes struct {
	pu, pt, pk, te, ps []int
}

// measure sizes the messages, and returns the end of each one's turn
// (nil when thinking is kept).
func measure(norm []Message, opt *Options) (sizes, []int) {
	n := len(norm)
	z := sizer{c: opt.Counter, rt: opt.ResultText}
	var sz sizes
	pu := make([]int, 3*(n+1))
	sz.pt, sz.pk = pu[n+1:2*(n+1)], pu[2*(n+1):]
	sz.pu = pu[:n+1]
	var ends []int
	if !opt.KeepThinking {
		ends = turnEnds(norm)
	}
	for i := range norm {
		m := &norm[i]
		u := z.message(m)
		t, k := u, u
		if trimmable(m.Role) {
			t, k = z.trimmedMessage(m, opt.MaxArgs, false), 0
			if ends != nil && hasThinking(m) {
				if sz.te == nil {
					sz.te, sz.ps = make([]int, n+2), make([]int, n+1)
				}
				sav := t - z.trimmedMessage(m, opt.MaxArgs, true)
				sz.te[ends[i]+1] += sav
				sz.ps[i+1] = sav
			}
		}
		sz.pu[i+1] = sz.pu[i] + u
		sz.pt[i+1] = sz.pt[i] + t
		sz.pk[i+1] = sz.pk[i] + k
	}
	if sz.te != nil {
		for i := 1; i < len(sz.te); i++ {
			sz.te[i] += sz.te[i-1]
		}
		for i := 1; i < len(sz.ps); i++ {
			sz.ps[i] += sz.ps[i-1]
		}
	}
	return sz, ends
}

// cost is the size of the conversation with messages before d dropped
// and those before b trimmed (without the tools' overhead).
func (sz *sizes) cost(d, b int) int {
	n := len(sz.pu) - 1
	raw := sz.pk[d] + sz.pt[b] - sz.pt[d] + sz.pu[n] - sz.pu[b]
	if sz.te != nil {
		// Savings of turns ending before b, less all savings before d:
		// exact when d is 0, an overestimate of the cost otherwise.
		raw -= max(0, sz.te[b]-sz.ps[d])
	}
	return safe(raw)
}

// placeholderBoundary is stage 1: the trim boundary moves forward from b
// to keep only the newest KeepAssistant assistant messages untrimmed,
// then one message at a time until cost is at or under target, never
// past the assistant message that made the newest tool call.
func placeholderBoundary(norm []Message, opt *Options, b, target int, cost func(b int) int) int {
	bmax := maxBoundary(norm, opt.seed)
	cand := b
	if k := keepBoundary(norm, opt.KeepAssistant); k > 0 {
		cand = max(cand, min(k, bmax))
	}
	for i := cand; cost(cand) > target && i < bmax; i++ {
		if trimmable(norm[i].Role) {
			cand = i + 1
		}
	}
	return max(b, cand)
}

// dropBoundary is stage 2: the oldest trimmed messages before b are
// dropped, in whole call/result groups (closed positions), until cost is
// at or under target.
func dropBoundary(closed []bool, d, b, target int, cost func(d, b int) int) int {
	for j := d + 1; j <= b; j++ {
		if closed[j] {
			d = j
			if cost(d, b) <= target {
				break
			}
		}
	}
	return d
}

// trimmable reports whether a role's content may be replaced.
func trimmable(r Role) bool { return r == RoleAssistant || r == RoleTool }

// checkState validates st against the conversation and returns its
// boundaries, or why it does not fit.
func checkState(msgs []Message, st State) (b, d int, why string) {
	switch {
	case st.problem != "":
		return 0, 0, st.problem
	case st.Version == 0 && st.Boundary == 0 && st.Dropped == 0:
		return 0, 0, ""
	case st.Version != StateVersion:
		return 0, 0, fmt.Sprintf("state version %d, want %d", st.Version, StateVersion)
	case st.Boundary < 0 || st.Dropped < 0 || st.Dropped > st.Boundary:
		return 0, 0, fmt.Sprintf("dropped %d and boundary %d are not 0 ≤ dropped ≤ boundary", st.Dropped, st.Boundary)
	case st.Boundary > len(msgs):
		return 0, 0, fmt.Sprintf("boundary %d is past the end (%d messages)", st.Boundary, len(msgs))
	case st.Boundary == 0:
		return 0, 0, ""
	case st.First != Fingerprint(&msgs[0]):
		return 0, 0, "first message differs from the one the state was made for"
	case st.Last != Fingerprint(&msgs[st.Boundary-1]):
		return 0, 0, "message before the boundary differs from the one the state was made for"
	}
	return st.Boundary, st.Dropped, ""
}

// maxBoundary is how far the boundary may go: never past the assistant
// message that made the newest tool call (so the newest result and its
// call stay whole), and never over the last message.
func maxBoundary(msgs []Message, seed bool) int {
	n := len(msgs)
	if seed || n == 0 {
		return n
	}
	bmax := n - 1
	for r := n - 1; r >= 0; r-- {
		if msgs[r].Role != RoleTool {
			continue
		}
		bmax = min(bmax, r)
		for a := r - 1; a >= 0; a-- {
			if msgs[a].Role == RoleAssistant {
				bmax = min(bmax, a)
				break
			}
		}
		break
	}
	return bmax
}

// keepBoundary is the index of the keep-th assistant message from the end:
// len(msgs) when keep is 0, 0 when there are fewer.
func keepBoundary(msgs []Message, keep int) int {
	if keep == 0 {
		return len(msgs)
	}
	seen := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			if seen++; seen == keep {
				return i
			}
		}
	}
	return 0
}

// closedPositions marks each index j in [0, len] where cutting the
// conversation leaves every tool call on the same side as its result.
//
// Results almost always answer the message just before them, so their
// calls are looked up there first; a map of all calls is built only for
// the others.
func closedPositions(msgs []Message) []bool {
	n := len(msgs)
	diff := make([]int, n+2)
	var calls map[string]int
	for i := range msgs {
		for j := range msgs[i].Parts {
			p := &msgs[i].Parts[j]
			if p.Kind != ToolResult {
				continue
			}
			c := -1
			if i > 0 && hasCall(msgs[i-1].Parts, p.ID) {
				c = i - 1
			} else {
				if calls == nil {
					calls = callIndex(msgs)
				}
				if x, ok := calls[p.ID]; ok && x < i {
					c = x
				}
			}
			if c >= 0 {
				diff[c+1]++ // positions c+1 … i separate the call from its result
				diff[i+1]--
			}
		}
	}
	closed := make([]bool, n+1)
	open := 0
	for j := 0; j <= n; j++ {
		open += diff[j]
		closed[j] = open == 0
	}
	return closed
}

func hasCall(ps []Part, id string) bool {
	for i := range ps {
		if ps[i].Kind == ToolCall && ps[i].ID == id {
			return true
		}
	}
	return false
}

// callIndex maps each tool-call id to the index of the first message
// making that call.
func callIndex(msgs []Message) map[string]int {
	calls := make(map[string]int)
	for i := range msgs {
		for j := range msgs[i].Parts {
			if p := &msgs[i].Parts[j]; p.Kind == ToolCall {
				if _, ok := calls[p.ID]; !ok {
					calls[p.ID] = i
				}
			}
		}
	}
	return calls
}

// apply builds the result: assistant and tool messages before d removed,
// those before b trimmed; with ends (see turnEnds), an assistant message's
// thinking is dropped when its turn ends before b.
func apply(msgs []Message, b, d int, ends []int, opt Options, rep *Report) []Message {
	out := make([]Message, 0, len(msgs))
	var arena []Part
	for i := range msgs {
		m := msgs[i]
		if !trimmable(m.Role) || i >= b {
			out = append(out, m)
			continue
		}
		if i < d {
			rep.Dropped++
			continue
		}
		rep.Trimmed++
		if len(arena) < len(m.Parts)+1 {
			arena = make([]Part, max(256, len(m.Parts)+1))
		}
		m.Parts = trimParts(arena[:0:len(m.Parts)+1], m, sizer{rt: opt.ResultText}, opt.MaxArgs, ends != nil && ends[i] < b, rep)
		arena = arena[len(m.Parts):cap(arena)]
		out = append(out, m)
	}
	return out
}

// turnEnds returns, for each message, the index of the user message that
// ends its turn (len(msgs) when none does yet).
func turnEnds(msgs []Message) []int {
	ends := make([]int, len(msgs))
	next := len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		ends[i] = next
		if msgs[i].Role == RoleUser && !splitFromResults(msgs, i) {
			next = i
		}
	}
	return ends
}

func hasThinking(m *Message) bool {
	for i := range m.Parts {
		if m.Parts[i].Kind == Thinking {
			return true
		}
	}
	return false
}

// splitFromResults reports whether user message i is the text that came
// in one provider message with the tool results before it (Anthropic): it
// does not end the assistant's turn.
func splitFromResults(msgs []Message, i int) bool {
	if i == 0 || msgs[i-1].Role != RoleTool || len(msgs[i].Parts) == 0 {
		return false
	}
	prev := msgs[i-1].Parts
	return len(prev) > 0 && prev[len(prev)-1].src != 0 && prev[len(prev)-1].src == msgs[i].Parts[0].src
}

// ArgsPlaceholder is the JSON object that replaces trimmed tool-call
// arguments of the given size in bytes. Models read it: its wording is
// part of the API.
func ArgsPlaceholder(size int) string {
	return `{"trimmed":"` + strconv.Itoa(size) + ` bytes"}`
}

// trimArgs reports whether arguments are replaced by their placeholder:
// when longer than maxArgs (non-negative) and than the placeholder.
func trimArgs(args string, maxArgs int) bool {
	return maxArgs >= 0 && len(args) > maxArgs && len(args) > len(ArgsPlaceholder(len(args)))
}

// trimParts appends m's parts with their content replaced by
// placeholders to dst.
func trimParts(dst []Part, m Message, z sizer, maxArgs int, dropThinking bool, rep *Report) []Part {
	src := m.src
	for _, p := range m.Parts {
		if src == 0 {
			src = p.src
		}
		switch p.Kind {
		case Text:
			if len(p.Text) > len(Placeholder) {
				p.Text = Placeholder
			}
		case Image:
			p = Part{Kind: Text, Text: Placeholder, src: p.src}
		case ToolCall:
			if trimArgs(p.Args, maxArgs) {
				p.Args = ArgsPlaceholder(len(p.Args))
				rep.ArgsTrimmed++
			}
		case ToolResult:
			if t := z.resultText(p.ID); trimResult(&p, t) {
				p.Content = []Part{{Kind: Text, Text: t}}
			}
		case Thinking:
			if dropThinking {
				rep.ThinkingDropped++
				continue
			}
		}
		dst = append(dst, p)
	}
	if len(dst) == 0 {
		dst = append(dst, Part{Kind: Text, Text: Placeholder, src: src})
	}
	return dst
}

// trimResult reports whether a tool result's content is replaced by
// text: never when that is not smaller (an all-text content no longer than
// text stays as it is).
func trimResult(p *Part, text string) bool {
	n := -1
	for i := range p.Content {
		if p.Content[i].Kind != Text {
			return true
		}
		n += 1 + len(p.Content[i].Text)
	}
	return n > len(text)
}

// trimmedMessage is the size of m once trimmed by trimParts.
func (z sizer) trimmedMessage(m *Message, maxArgs int, dropThinking bool) int {
	ph := z.text(Placeholder)
	n, parts, lone, text := messageOverhead, 0, false, ph
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Kind {
		case Text:
			text = ph
			if len(p.Text) <= len(Placeholder) {
				text = z.text(p.Text) // kept: the placeholder would not be smaller
			}
			n += text
			lone = true
		case Image:
			text = ph
			n += ph
			lone = true
		case ToolCall:
			if trimArgs(p.Args, maxArgs) {
				n += z.wrapped(0, p.Name, ArgsPlaceholder(len(p.Args)))
			} else {
				n += z.part(p)
			}
		case ToolResult:
			if t := z.resultText(p.ID); trimResult(p, t) {
				n += z.wrapped(0, t)
			} else {
				n += z.part(p)
			}
		case Thinking:
			if dropThinking {
				continue
			}
			n += z.part(p)
		default:
			n += z.part(p)
		}
		n += partOverhead
		parts++
	}
	switch {
	case parts == 0:
		return ph + messageOverhead // one placeholder text
	case parts == 1 && lone:
		return text + messageOverhead // a lone text counts as a string
	}
	return n
}
