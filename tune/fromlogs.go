package tune

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/profile"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tokens"
)

// DominantShare is P1's threshold: the share of assistant messages the
// pinned model must have sent.
const DominantShare = 0.80

// ToolCost is what one tool's results cost in the transcripts.
type ToolCost struct {
	Tool        string
	Calls       int
	Tokens      int // what the model read
	Replayed    int // after terse's pipeline
	ReplayCalls int // results replayed (errors and empty results are not)
}

// Sink is one large result.
type Sink struct {
	Tool    string
	Session int // index in LogReport.SessionIDs order
	Tokens  int
}

// LogReport is what FromLogs found.
type LogReport struct {
	Tokenizer                   string
	Files, Lines, Skipped       int
	Unknown, Unmatched          int
	Sessions, Sidechains        int
	Models                      map[string]int
	Dominant                    string
	Share                       float64
	Results, Tokens             int
	EventsPerSession            float64
	CompactionsPerSession       float64
	ReadShare                   float64
	ByTool                      []ToolCost
	Sinks                       []Sink
	ReReads, ReReadTokens       int
	StaleReads, StaleReadTokens int
	ReplayIn, ReplayOut         int
	ReplaySaved                 map[string]int
	ReplayErrors                int
	MCPTools                    []string
}

// ReplayOptions configure the replay of results through the pipeline.
type ReplayOptions struct {
	// Recorder, when set, receives one telemetry event per replayed
	// result (entry "replay").
	Recorder *telemetry.Recorder
	// Now stamps the events; nil means a fixed clock (deterministic).
	Now func() time.Time
}

// FromLogs reads transcripts into a report and a plan (rules P1–P3), and
// replays every tool result through terse's pipeline (auto format, the
// default text shaping, dedup per session partition, the default budget)
// to measure what it saves.
func FromLogs(ctx context.Context, l *Logs, o ReplayOptions) (*LogReport, *Plan, error) {
	counter := tokens.O200kBase()
	t := &logTally{counter: counter, o: o, tools: map[string]*ToolCost{}, mcp: map[string]bool{}, clock: int64(1_800_000_000_000)}
	t.rep = &LogReport{Tokenizer: counter.Name(), Files: l.Files, Lines: l.Lines, Skipped: l.Skipped,
		Unknown: l.Unknown, Unmatched: l.Unmatched, Models: map[string]int{}, ReplaySaved: map[string]int{}}
	rep := t.rep
	for si, s := range l.Sessions {
		rep.Sessions++
		if s.Sidechain {
			rep.Sidechains++
		}
		for m, n := range s.Models {
			rep.Models[m] += n
		}
		t.compactions += s.Compactions
		cache := dedup.New(dedup.Options{})
		p, err := terse.New(&terse.Options{Format: "auto", Tokenizer: counter, Dedup: cache, Shape: config.Default().Shape.Options()})
		if err != nil {
			return nil, nil, err
		}
		seen := map[string]bool{}    // partition/tool/content hash
		lastRead := map[string]int{} // path → tokens of its last read in the partition
		for _, r := range s.Results {
			class, n, tc := t.count(si, r, seen, lastRead)
			t.replay(ctx, p, s, r, class, n, tc)
		}
	}
	t.finish()
	return rep, planFromLogs(rep), nil
}

// logTally is what FromLogs adds up over the sessions' results.
type logTally struct {
	counter                    tokens.Counter
	o                          ReplayOptions
	rep                        *LogReport
	tools                      map[string]*ToolCost
	mcp                        map[string]bool
	sinks                      []Sink
	reads, events, compactions int
	clock                      int64 // the events' fixed clock
}

// count adds result r of session si to the report: its tokens, its
// tool's, and whether it re-reads what the partition has seen or reads
// a file a later change makes stale. It returns r's class, tokens and
// tool.
func (t *logTally) count(si int, r Result, seen map[string]bool, lastRead map[string]int) (string, int, *ToolCost) {
	t.events++
	class := telemetry.ClassOf(r.Tool)
	if class == "file_read" || class == "file_search" {
		t.reads++
	}
	if strings.HasPrefix(r.Tool, "mcp__") {
		t.mcp[r.Tool] = true
	}
	n := t.counter.Count(r.Text)
	t.rep.Results++
	t.rep.Tokens += n
	tc := t.tools[r.Tool]
	if tc == nil {
		tc = &ToolCost{Tool: r.Tool}
		t.tools[r.Tool] = tc
	}
	tc.Calls++
	tc.Tokens += n
	t.sinks = append(t.sinks, Sink{Tool: r.Tool, Session: si, Tokens: n})

	sum := sha256.Sum256([]byte(r.Text))
	key := strconv.Itoa(r.Partition) + "/" + r.Tool + "/" + string(sum[:16])
	if seen[key] && n > 0 {
		t.rep.ReReads++
		t.rep.ReReadTokens += n
	}
	seen[key] = true
	pkey := strconv.Itoa(r.Partition) + "/" + r.Path
	switch {
	case r.Path == "":
	case class == "file_read":
		lastRead[pkey] = n
	case class == "file_mutate":
		if last, ok := lastRead[pkey]; ok {
			t.rep.StaleReads++
			t.rep.StaleReadTokens += last
			delete(lastRead, pkey)
		}
	}
	return class, n, tc
}

// replay runs result r (of class, n tokens) through p, adding what it
// saves to the report and recording its event; an error result or an
// empty one is recorded untouched.
func (t *logTally) replay(ctx context.Context, p *terse.Pipeline, s *Session, r Result, class string, n int, tc *ToolCost) {
	if r.IsError || strings.TrimSpace(r.Text) == "" {
		if t.o.Recorder != nil {
			t.clock++
			ev := telemetry.Event{Time: time.UnixMilli(t.clock), Entry: telemetry.EntryReplay, Session: s.File + "#" + s.ID,
				Partition: r.Partition, Sidechain: r.Sidechain, Tool: r.Tool, Untouched: telemetry.UntouchedTooSmall,
				BytesIn: len(r.Text), BytesOut: len(r.Text), TokensIn: n, TokensOut: n, Tokenizer: t.counter.Name()}
			if r.IsError {
				ev.Untouched = telemetry.UntouchedError
			}
			t.o.Recorder.Record(&ev)
		}
		return
	}
	var paths []string
	if r.Path != "" {
		paths = []string{r.Path}
	}
	start := time.Now()
	res, err := p.ProcessString(ctx, r.Text, &terse.Request{Tool: r.Tool,
		Session: dedup.Key{Session: s.ID, Partition: strconv.Itoa(r.Partition)}, Paths: paths,
		Mutating: class == "file_mutate"})
	lat := time.Since(start)
	ev := telemetry.Event{Entry: telemetry.EntryReplay, Session: s.File + "#" + s.ID, Partition: r.Partition,
		Sidechain: r.Sidechain, Tool: r.Tool}
	ev.SetInput(t.o.Recorder, []byte(r.Text))
	ev.SetResult(&res, err, "parse")
	if err != nil {
		t.rep.ReplayErrors++
		ev.BytesIn, ev.BytesOut, ev.TokensIn, ev.TokensOut, ev.Tokenizer = len(r.Text), len(r.Text), n, n, t.counter.Name()
		t.rep.ReplayIn += n
		t.rep.ReplayOut += n
		tc.Replayed += n
	} else {
		out := res.Report.OutputTokens
		// The baseline is what the model read; the pipeline's
		// RawTokens re-encodes JSON compactly, which is counted
		// as an encoding saving.
		t.rep.ReplayIn += n
		t.rep.ReplayOut += out
		tc.Replayed += out
		tc.ReplayCalls++
		telemetry.AddSaved(t.rep.ReplaySaved, res.Report.SavedAgainst(n))
	}
	if t.o.Recorder != nil {
		t.clock++
		ev.Time = time.UnixMilli(t.clock)
		if t.o.Now != nil {
			ev.Time = t.o.Now()
		}
		ev.Latency = lat
		t.o.Recorder.Record(&ev)
	}
}

// finish sets the report's shares, its dominant model and its tools and
// sinks in order.
func (t *logTally) finish() {
	if t.rep.Sessions > 0 {
		t.rep.EventsPerSession = float64(t.events) / float64(t.rep.Sessions)
		t.rep.CompactionsPerSession = float64(t.compactions) / float64(t.rep.Sessions)
	}
	if t.events > 0 {
		t.rep.ReadShare = float64(t.reads) / float64(t.events)
	}
	total := 0
	for _, n := range t.rep.Models {
		total += n
	}
	for _, m := range slices.Sorted(maps.Keys(t.rep.Models)) {
		if t.rep.Dominant == "" || t.rep.Models[m] > t.rep.Models[t.rep.Dominant] {
			t.rep.Dominant = m
		}
	}
	if total > 0 {
		t.rep.Share = float64(t.rep.Models[t.rep.Dominant]) / float64(total)
	}
	for _, tc := range t.tools {
		t.rep.ByTool = append(t.rep.ByTool, *tc)
	}
	slices.SortFunc(t.rep.ByTool, func(a, b ToolCost) int { return cmp.Or(cmp.Compare(b.Tokens, a.Tokens), cmp.Compare(a.Tool, b.Tool)) })
	slices.SortStableFunc(t.sinks, func(a, b Sink) int { return cmp.Compare(b.Tokens, a.Tokens) })
	t.rep.Sinks = t.sinks[:min(len(t.sinks), 10)]
	t.rep.MCPTools = slices.Sorted(maps.Keys(t.mcp))
}

func planFromLogs(rep *LogReport) *Plan {
	p := &Plan{}
	p.Header = rep.lines()

	// P1.
	if rep.Dominant == "" {
		p.note("P1", "models", "no assistant messages with a model id")
	} else if ev := fmt.Sprintf("%s sent %.1f%% of %d assistant messages", rep.Dominant, 100*rep.Share, sum(rep.Models)); rep.Share < DominantShare {
		p.note("P1", "models", ev+fmt.Sprintf(" (need %.0f%%)", 100*DominantShare))
	} else {
		base := profile.Resolve(nil, profile.Context{ModelID: rep.Dominant})
		name := "pinned_" + ident(rep.Dominant)
		why := p.fire("P1", "models", ev, "pin LLM profile "+name+" ("+base.LLM+" family, "+base.Tokenizer+")")
		p.LLM, p.llmWhy = name, why
		p.LLMVariants = append(p.LLMVariants, variant[config.LLMProfile]{config.LLMProfile{Name: name, Match: []string{strings.ToLower(rep.Dominant)},
			Tokenizer: base.Tokenizer, ContextWindow: base.ContextWindow, Budget: base.Budget}, why})
	}

	// P3.
	for _, t := range rep.MCPTools {
		parts := strings.SplitN(strings.TrimPrefix(t, "mcp__"), "__", 2)
		bare := parts[len(parts)-1]
		calls := 0
		for _, c := range rep.ByTool {
			if c.Tool == t {
				calls = c.Calls
			}
		}
		why := p.fire("P3", t, fmt.Sprintf("%d calls", calls), "placeholder data profile (refine format, template, hints)")
		p.DataVariants = append(p.DataVariants, variant[config.DataProfile]{config.DataProfile{Name: ident(strings.TrimPrefix(t, "mcp__")),
			Match: globQuote(bare), Format: "auto"}, why})
	}
	if len(rep.MCPTools) == 0 {
		p.note("P3", "MCP tools", "none observed")
	}
	return p
}

func sum(m map[string]int) int {
	t := 0
	for _, v := range m {
		t += v
	}
	return t
}

// lines is the report, one line each, for the head of the config file and
// for the terminal.
func (r *LogReport) lines() []string {
	pct := func(a, b int) string {
		if b == 0 {
			return "0.0%"
		}
		return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 1, 64) + "%"
	}
	out := []string{
		"terse configuration proposed by `terse tune from-claude-logs` (rules P1-P3; see docs/tune.md).",
		fmt.Sprintf("Read %d files, %d lines (%d skipped, %d of other kinds, %d results without their call): %d sessions (%d sub-agents).",
			r.Files, r.Lines, r.Skipped, r.Unknown, r.Unmatched, r.Sessions, r.Sidechains),
		fmt.Sprintf("Tool results: %d, %d tokens of %s as the model read them.", r.Results, r.Tokens, r.Tokenizer),
	}
	if len(r.Models) > 0 {
		var ms []string
		for _, m := range slices.Sorted(maps.Keys(r.Models)) {
			ms = append(ms, fmt.Sprintf("%s %d", m, r.Models[m]))
		}
		out = append(out, "Models: "+strings.Join(ms, ", ")+".")
	}
	out = append(out, "", "Tokens by tool (calls, tokens, after terse):")
	for _, t := range r.ByTool {
		out = append(out, fmt.Sprintf("  %-28s %5d %8d %8d (%s saved)", t.Tool, t.Calls, t.Tokens, t.Replayed, pct(t.Tokens-t.Replayed, t.Tokens)))
	}
	out = append(out, "", "Biggest results (tool, session, tokens):")
	for _, s := range r.Sinks {
		out = append(out, fmt.Sprintf("  %-28s %5d %8d", s.Tool, s.Session+1, s.Tokens))
	}
	out = append(out, "",
		fmt.Sprintf("Identical re-reads: %d results, %d tokens (%s).", r.ReReads, r.ReReadTokens, pct(r.ReReadTokens, r.Tokens)),
		fmt.Sprintf("Stale reads (a file read, then edited): %d reads, %d tokens.", r.StaleReads, r.StaleReadTokens),
		fmt.Sprintf("Replayed through terse (auto format, text shaping, dedup, default budget): %d → %d tokens, %s saved; %d results failed to parse.",
			r.ReplayIn, r.ReplayOut, pct(r.ReplayIn-r.ReplayOut, r.ReplayIn), r.ReplayErrors))
	var src []string
	for _, k := range []string{"filter", "dedup", "encoding", "fit"} {
		src = append(src, fmt.Sprintf("%s %d", k, r.ReplaySaved[k]))
	}
	out = append(out, "  by source: "+strings.Join(src, ", ")+" (baseline: the results as the model read them).")
	return out
}

// globQuote escapes glob metacharacters so that a name matches itself.
func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
