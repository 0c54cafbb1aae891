package tune

import (
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/telemetry"
)

// synth builds records: per session, tools in round robin.
func synth(sessions, perSession int, each func(s, i int, r *telemetry.Record)) *telemetry.Log {
	l := &telemetry.Log{Files: sessions}
	ms := int64(1_800_000_000_000)
	for s := range sessions {
		for i := range perSession {
			ms++
			r := telemetry.Record{V: 1, Ms: ms, Session: fmt.Sprintf("%016x", s), TokensIn: 100, TokensOut: 50, BytesIn: 400}
			each(s, i, &r)
			l.Records = append(l.Records, r)
		}
	}
	return l
}

func TestAnalyzeRules(t *testing.T) {
	l := synth(4, 30, func(s, i int, r *telemetry.Record) {
		switch i % 3 {
		case 0: // repeats every other call, 2 apart
			r.Tool, r.Shape, r.Depth = "poller", "nested_object", 2
			r.FP = fmt.Sprint(i / 6)
		case 1: // never repeats, Markdown tables
			r.Tool, r.Shape, r.Cols = "tables", "markdown_table", 4
			r.FP = fmt.Sprint(s, i)
			r.BytesIn = 2000
		case 2: // hashed, diffs
			r.Tool, r.Shape, r.Inner = "t:abcdefabcdef", "diff", []string{"diff", "url"}
			r.Dedup = "miss"
		}
		if i == 15 {
			r.Compact = 1
			r.Partition = 1
		}
	})
	text := Analyze(l, nil).Render()
	if _, err := config.Parse([]byte(text), "analyze"); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for _, want := range []string{
		"R1 (poller): 16 of 40 results repeat an earlier one (rate 0.40), p90 distance 3 results → keep references; the cache must hold 4 results",
		"R1 (tables): 0 of 40", `match = "tables"`, `hints = ["more", "query", "encoded"]`,
		"R2 (tables): dominant shape markdown_table (40 of 40 calls), 4.0 columns on average → template csv_from_md",
		`template = "csv_from_md"`,
		"R2 (t:abcdefabcdef): inner formats diff+url; would set template mr_diff_fence, but the tool is known only by its hash",
		"R3 (session profile): 4 compactions over 120 events (rate 0.0333 per event), 30.0 events per session",
		"max_entries = 5",
		"R5 (session profile): p25 input size 400 bytes", "min_size_bytes = 400",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q", want)
		}
	}
	// The agent axis changed no option: tune writes none of it.
	for _, gone := range []string{"recursion_depth", "agent_variants", "agent ="} {
		if strings.Contains(text, gone) {
			t.Errorf("writes %q", gone)
		}
	}
	if t.Failed() {
		t.Log(text)
	}
	// With the name, the hashed tool gets its rule.
	text = Analyze(l, map[string]string{"t:abcdefabcdef": "gitlab__get_mr_diff"}).Render()
	if !strings.Contains(text, `match = "gitlab__get_mr_diff"`+"\n"+`template = "mr_diff_fence"`) {
		t.Errorf("named tool: %s", text)
	}
}

func TestAnalyzeCompactionRate(t *testing.T) {
	// 10 % of events compact: the cache follows the partition length.
	l := synth(2, 100, func(s, i int, r *telemetry.Record) {
		r.Tool, r.Partition = "x", i/10
		if i%10 == 9 {
			r.Compact = 1
		}
	})
	text := Analyze(l, nil).Render()
	if !strings.Contains(text, "rate 0.1000 per event") || !strings.Contains(text, "max_entries = 10") {
		t.Error(text)
	}
	// Too little evidence: nothing but notes.
	small := synth(1, 10, func(s, i int, r *telemetry.Record) { r.Tool = "x" })
	text = Analyze(small, nil).Render()
	if strings.Contains(text, "\n[") || !strings.Contains(text, "R3 (session profile): 10 events (need 50)") {
		t.Error(text)
	}
}

// TestAnalyzeBrakes: R6 proposes whole results for a tool whose sessions
// kept re-fetching it (the proxy's brake), and leaves alone a tool braked
// in too few sessions.
func TestAnalyzeBrakes(t *testing.T) {
	l := synth(5, 10, func(s, i int, r *telemetry.Record) {
		r.Tool = []string{"search", "list"}[i%2]
		r.Brake = i == 8 || (i == 9 && s == 0)
	})
	p := Analyze(l, nil)
	var fired, noted []string
	for _, f := range p.Fired {
		if f.Rule == "R6" {
			fired = append(fired, f.Subject)
		}
	}
	for _, f := range p.Notes {
		if f.Rule == "R6" {
			noted = append(noted, f.Subject)
		}
	}
	if strings.Join(fired, ",") != "search" || strings.Join(noted, ",") != "list" {
		t.Errorf("R6 fired for %v, noted %v; want search, list", fired, noted)
	}
	out := p.Render()
	if !strings.Contains(out, `name = "r6_search"`) || !strings.Contains(out, `hints = ["ref", "near_ref", "query", "encoded"]`) {
		t.Errorf("no lossless variant for search:\n%s", out)
	}
	if _, err := config.Parse([]byte(out), "analyze"); err != nil {
		t.Errorf("plan does not load: %v\n%s", err, out)
	}
}
