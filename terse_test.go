package terse

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

func readCorpus(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpus.Dir(t, "corpus"), name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestFastPathIdentical(t *testing.T) {
	data := readCorpus(t, "github/pygithub__repo-issues-item-comments.json")
	v, _ := tree.Parse(data)
	for _, format := range []string{"json", "toon"} {
		p, err := New(&Options{Format: format})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Process(context.Background(), data, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := string(tree.AppendJSON(nil, v))
		if format == "toon" {
			want = string(toon.Append(nil, v, &toon.EncodeOptions{ExactNumbers: true}))
		}
		if res.Text != want {
			t.Errorf("%s: untrimmed output differs from the plain encoding", format)
		}
		if res.Report.Truncated || res.Report.Items != nil {
			t.Errorf("%s: Report = %+v, want not truncated", format, res.Report)
		}
	}
}

func TestTrimmedReportAndChunks(t *testing.T) {
	data := readCorpus(t, "github/pygithub__repo-issues-page2.json")
	st := &store.Mem{}
	p, err := New(&Options{Budget: 1500, Store: st})
	req := &Request{Tool: "github__get_issues"}
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := p.Process(ctx, data, req)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r.Tokenizer != "o200k_base" || !r.Exact || !r.Truncated || r.OutputTokens > 1500 || r.Pointer == nil || *r.Pointer != "" {
		t.Fatalf("Report = %+v", r)
	}
	if n := tokens.O200kBase().Count(res.Text); n != r.OutputTokens {
		t.Errorf("OutputTokens = %d, counted %d", r.OutputTokens, n)
	}
	if r.Strategy != fit.StrategyElementCount || r.StrategySource != "builtin (prefix stripped)" {
		t.Errorf("strategy = %s (%s), want element_count (builtin (prefix stripped))", r.Strategy, r.StrategySource)
	}
	if r.Items.Total != 25 || r.Items.Kept != r.Items.Full+r.Items.Standard+r.Items.Minimal || r.Items.Kept == 0 {
		t.Errorf("Items = %+v", r.Items)
	}
	if r.RawTokens <= r.OutputTokens || r.Ratio >= 1 {
		t.Errorf("raw %d output %d ratio %g", r.RawTokens, r.OutputTokens, r.Ratio)
	}
	if !strings.Contains(res.Text, "terse chunk "+r.Handle+" N") && !(r.Chunks == 1 && strings.Contains(res.Text, "terse chunk "+r.Handle+" 1")) {
		t.Errorf("output does not say how to fetch chunks:\n%s", res.Text)
	}
	// Every chunk comes back, each within the budget.
	for n := 1; n <= r.Chunks; n++ {
		c, err := p.Chunk(ctx, r.Handle, n, nil)
		if err != nil {
			t.Fatalf("Chunk(%d): %v", n, err)
		}
		if got := tokens.O200kBase().Count(c.Text); got > 1500 {
			t.Errorf("chunk %d is %d tokens", n, got)
		}
	}
	if _, err := p.Chunk(ctx, "c_0000000000000000", 1, nil); !errors.As(err, new(*fit.ExpiredError)) {
		t.Errorf("Chunk(unknown) err = %v, want *fit.ExpiredError", err)
	}
	if _, err := p.Chunk(ctx, r.Handle, r.Chunks+1, nil); !errors.As(err, new(*fit.ChunkRangeError)) {
		t.Errorf("Chunk(out of range) err = %v, want *fit.ChunkRangeError", err)
	}
	// Deterministic: same input, same bytes (handle included).
	res2, _ := p.Process(ctx, data, req)
	if res2.Text != res.Text {
		t.Error("second run differs")
	}
}

func TestProviderMetadata(t *testing.T) {
	data := readCorpus(t, "github/pygithub__search-users.json")
	h := Header{"X-Total": {"120"}, "x-total-pages": {"4"}}
	p, _ := New(&Options{Budget: 500})
	res, err := p.Process(context.Background(), data, &Request{Headers: h})
	if err != nil {
		t.Fatal(err)
	}
	pg := res.Report.Pagination
	if pg["total_count"] == "" || pg["X-Total"] != "120" || pg["X-Total-Pages"] != "4" {
		t.Errorf("Pagination = %v", pg)
	}
	if *res.Report.Pointer != "/items" {
		t.Errorf("Pointer = %q, want /items", *res.Report.Pointer)
	}

	v, _ := tree.ParseString(`{"startAt":0,"maxResults":50,"total":310,"issues":[{"key":"A-1"},{"key":"A-2"}],"sort":"updated","order":"desc"}`)
	pag, sort := providerMeta(v, nil)
	if pag["startAt"] != "0" || pag["maxResults"] != "50" || pag["total"] != "310" || sort["sort"] != "updated" || sort["order"] != "desc" {
		t.Errorf("providerMeta = %v, %v", pag, sort)
	}
}

func TestTextAndErrors(t *testing.T) {
	p, _ := New(&Options{Budget: 400})
	ctx := context.Background()
	res, err := p.Process(ctx, readCorpus(t, "logs/holmes__01_crashpod__kubectl_logs_all_containers.log"), &Request{Tool: "get_job_logs"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Kind != "text" || res.Report.Strategy != fit.StrategyHeadTail || res.Report.OutputTokens > 400 {
		t.Errorf("Report = %+v", res.Report)
	}
	if !strings.Contains(res.Text, "lines left out: lines") {
		t.Errorf("no gap marker in:\n%s", res.Text)
	}
	// A log line starting with "[" is text, not broken JSON.
	if _, err := p.Process(ctx, []byte("[12:00:01] INFO start\n[12:00:02] ERROR boom\n"), nil); err != nil {
		t.Errorf("bracketed log: %v", err)
	}
	// Broken JSON is a positioned syntax error.
	_, err = p.Process(ctx, []byte("{\"a\": 1,\n \"b\": }"), nil)
	var se *tree.SyntaxError
	if !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("Process(bad JSON) err = %v, want *tree.SyntaxError on line 2", err)
	}
	if _, err := New(&Options{Format: "yaml"}); err == nil {
		t.Error("New(format yaml) succeeded")
	}
	if _, err := New(&Options{Strategy: "random"}); err == nil {
		t.Error("New(strategy random) succeeded")
	}
}

// TestFilterStage checks that a declared filter runs before fitting and
// that its note leads the output, inside the budget.
func TestFilterStage(t *testing.T) {
	rule, err := filter.Compile(filter.Spec{Exclude: []string{"*_url", "node_id"}, DropNulls: true})
	if err != nil {
		t.Fatal(err)
	}
	data := readCorpus(t, "github/pygithub__repo-issues-page2.json")
	p, _ := New(&Options{Budget: 2000, Filter: rule})
	res, err := p.Process(context.Background(), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Report.Filtered || !strings.HasPrefix(res.Text, "> [") {
		t.Errorf("filter note missing: filtered=%v, text starts %q", res.Report.Filtered, res.Text[:min(80, len(res.Text))])
	}
	if strings.Contains(res.Text, "html_url") {
		t.Error("excluded field html_url in output")
	}
	if res.Report.OutputTokens > 2000 {
		t.Errorf("OutputTokens = %d, budget 2000", res.Report.OutputTokens)
	}
}
