package terse

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/store"
)

// itemsDoc is {"items":[n objects]}.
func itemsDoc(n int) string {
	var sb strings.Builder
	sb.WriteString(`{"items":[`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"title":"item number %d","state":"open","body":"some words about item %d"}`, i+1, i+1, i+1)
	}
	sb.WriteString("]}")
	return sb.String()
}

// logText is n log lines.
func logText(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "2026-01-02T03:04:%02d INFO worker %d handled request %d in %d ms\n", i%60, i%7, i, i*13%97)
	}
	return sb.String()
}

// TestBudgetEdgeNoStore: with the zero Options (no store), a budget
// below the notice that declares what is left out still gives that
// notice, never empty text, and reports the budget it was raised to.
func TestBudgetEdgeNoStore(t *testing.T) {
	p, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, in string
		budget   int
	}{
		{"items-200-at-20", itemsDoc(200), 20},
		{"log-300-at-10", logText(300), 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := p.ProcessString(context.Background(), tc.in, &Request{Budget: tc.budget})
			if err != nil {
				t.Fatal(err)
			}
			checkBudgetRule(t, p, tc.in, tc.budget, res)
		})
	}
}

// checkBudgetRule checks the one budget rule on a result of a non-empty
// input asked for at budget (0: the pipeline's).
func checkBudgetRule(t *testing.T, p *Pipeline, in string, budget int, res Result) {
	t.Helper()
	r := res.Report
	if strings.TrimSpace(in) != "" && res.Text == "" {
		t.Fatalf("empty text for a non-empty input (report %+v)", r)
	}
	if r.Budget > 0 {
		if n := p.Counter().Count(res.Text); n > r.Budget {
			t.Fatalf("text is %d tokens, over Report.Budget %d:\n%s", n, r.Budget, res.Text)
		}
		if budget > 0 && r.Budget < budget {
			t.Fatalf("Report.Budget %d below the budget asked for, %d", r.Budget, budget)
		}
	}
	if r.Truncated && !strings.Contains(res.Text, "left out") && !strings.Contains(res.Text, "shortened") && !strings.Contains(res.Text, "cut") && !strings.Contains(res.Text, "…[+") {
		t.Fatalf("truncated, but nothing declared:\n%s", res.Text)
	}
}

// TestFetchBudgetFromRequest: the chunk index promises the fetch budget
// the request names (a client whose limit is under fit's default), and
// sizes its chunks to it.
func TestFetchBudgetFromRequest(t *testing.T) {
	p, err := New(&Options{Store: &store.Mem{}})
	if err != nil {
		t.Fatal(err)
	}
	in := itemsDoc(2000)
	res, err := p.ProcessString(context.Background(), in, &Request{Budget: 3000, FetchBudget: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "a fetch returns up to 5,000 tokens") || strings.Contains(res.Text, "20,000") {
		t.Fatalf("the index does not promise the request's fetch budget:\n%s", res.Text)
	}
	ch, err := p.Chunk(context.Background(), res.Report.Handle, 1, &Request{FetchBudget: 5000, Budget: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ch.Text, "in full]") {
		t.Fatalf("chunk 1 does not come back whole at the fetch budget:\n%.300s", ch.Text)
	}
}

// FuzzBudget checks the budget rule at every budget from 1, with and
// without a store: a non-empty input never gives an empty text, the text
// is within Report.Budget, and Report.Budget is at least the budget
// asked for.
func FuzzBudget(f *testing.F) {
	for _, s := range []string{
		itemsDoc(200), logText(300), `[1,2,3]`, `{"a":"b"}`, "x", "one line\nanother line\n",
		`[{"number":1,"title":"a","state":"open"},{"number":2,"title":"b","state":"closed","body":null}]`,
	} {
		f.Add(s, uint16(1))
		f.Add(s, uint16(20))
	}
	var pipes []*Pipeline
	for _, o := range []*Options{nil, {Store: &store.Mem{}}, {Format: "auto"}, {Format: "auto", Store: &store.Mem{}}} {
		p, err := New(o)
		if err != nil {
			f.Fatal(err)
		}
		pipes = append(pipes, p)
	}
	f.Fuzz(func(t *testing.T, in string, budget uint16) {
		b := int(budget)%3000 + 1
		for _, p := range pipes {
			res, err := p.ProcessString(context.Background(), in, &Request{Budget: b})
			if err != nil {
				continue // input that starts like JSON and is not
			}
			checkBudgetRule(t, p, in, b, res)
		}
	})
}
