package fit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

func TestFindItems(t *testing.T) {
	tests := []struct {
		doc  string
		want tree.Pointer
		ok   bool
	}{
		{`[{"a":1},{"a":2}]`, "", true},
		{`{"total_count":2,"items":[{"id":1,"t":"xxxxxxxxxxxx"},{"id":2,"t":"yyyyyyyyyyyy"}]}`, "/items", true},
		{`{"data":{"page":{"rows":[{"id":1,"t":"xxxxxxxxxxxx"},{"id":2,"t":"yyyyyyyyyyyyy"}]}}}`, "/data/page/rows", true},
		// An issue: its assignees are a small array field of one object.
		{`{"number":1,"title":"a long title that dominates the object size","body":"and a body too, longer than the assignees","assignees":[{"login":"a"},{"login":"b"}]}`, "", false},
		// Too deep (depth 4).
		{`{"a":{"b":{"c":{"d":[{"x":1},{"x":2}]}}}}`, "", false},
		// Inside an array element: never.
		{`{"x":[[{"a":1},{"a":2}]]}`, "", false},
		// Largest wins.
		{`{"a":[{"x":1},{"x":2}],"b":[{"x":"longer value"},{"x":"longer value"},{"x":"longer value"}]}`, "/b", true},
	}
	for _, tc := range tests {
		v, err := tree.ParseString(tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := FindItems(v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("FindItems(%s) = %q, %v, want %q, %v", tc.doc, got, ok, tc.want, tc.ok)
		}
	}
}

func TestResolve(t *testing.T) {
	over := map[string]string{"my_tool": StrategyCascading, "get_issues": StrategyDefault,
		"list_*": StrategyElementCount, "list_logs*": StrategyHeadTail, "gl__*": StrategyThreadLevel}
	tests := []struct{ tool, name, src string }{
		// A glob key (a config rule's match): the first in sorted order
		// that matches, after an exact key.
		{"list_items", StrategyElementCount, "config"},
		{"list_logs_today", StrategyElementCount, "config"},
		{"gl__list_items", StrategyThreadLevel, "config"},
		{"gh__list_items", StrategyElementCount, "config (prefix stripped)"},
		{"my_tool", StrategyCascading, "config"},
		{"get_issues", StrategyDefault, "config"},
		{"get_issue_comments", StrategyCascading, "builtin"},
		{"github__get_merge_request_diffs", StrategySizeProportional, "builtin (prefix stripped)"},
		{"mcp__server__get_job_logs", StrategyHeadTail, "builtin (prefix stripped)"},
		{"srv__my_tool", StrategyCascading, "config (prefix stripped)"},
		{"unknown", StrategyDefault, "uniform"},
		{"", StrategyDefault, "uniform"},
	}
	for _, tc := range tests {
		name, src := Resolve(tc.tool, over)
		if name != tc.name || src != tc.src {
			t.Errorf("Resolve(%q) = %s, %s, want %s, %s", tc.tool, name, src, tc.name, tc.src)
		}
	}
}

func TestPathWeight(t *testing.T) {
	tests := []struct {
		path string
		want float64
	}{
		{"Cargo.lock", 0.05}, {"web/package-lock.json", 0.05}, {"yarn.lock", 0.05}, {"go.sum", 0.05},
		{"dist/app.min.js", 0.10}, {"style.min.css", 0.10},
		{"db/migrations/001_init.sql", 0.60}, {"prisma/schema.prisma", 0.60}, {"db/migration_001.sql", 0.60},
		{"fit/fit_test.go", 0.70}, {"test_main.py", 0.70}, {"src/main.spec.ts", 0.70}, {"tests/helpers.rs", 0.70},
		{"src/main.rs", 1.0}, {"latest.go", 1.0}, {"contest/solution.go", 1.0},
	}
	for _, tc := range tests {
		if got := PathWeight(tc.path); got != tc.want {
			t.Errorf("PathWeight(%q) = %g, want %g", tc.path, got, tc.want)
		}
	}
}

func TestCutString(t *testing.T) {
	tests := []struct {
		s    string
		max  int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello world", 5, "hello…[+6 chars]"},
		{"héllo wörld", 4, "héll…[+7 chars]"},
		{"日本語のテキスト", 3, "日本語…[+5 chars]"},
		{"🙂🙂🙂", 1, "🙂…[+2 chars]"},
	}
	for _, tc := range tests {
		if got, _ := cutString(tc.s, tc.max); got != tc.want {
			t.Errorf("cutString(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
		}
	}
}

func TestStrategyValues(t *testing.T) {
	if v := positionValue(0, 10); v != 1 {
		t.Errorf("element_count first = %g, want 1", v)
	}
	if v := positionValue(9, 10); v < 0.2999 || v > 0.3001 {
		t.Errorf("element_count last = %g, want 0.3", v)
	}
	items := make([]tree.Value, 50)
	for i := range items {
		items[i] = tree.Object()
	}
	c := cascadeValues(items)
	if c[49] != 1 || c[0] > 0.09 || c[0] < 0.07 {
		t.Errorf("cascading newest %g oldest %g, want 1 and ≈0.081", c[49], c[0])
	}
	// With timestamps, the newest is found by time, not position.
	a, _ := tree.ParseString(`[{"created_at":"2024-03-01T00:00:00Z"},{"created_at":"2024-01-01T00:00:00Z"}]`)
	if c := cascadeValues(a.Items()); c[0] != 1 || c[1] != cascadeBeta {
		t.Errorf("cascading by time = %v, want [1 0.95]", c)
	}
	th, _ := tree.ParseString(`[{"id":1,"resolved":true},{"id":2,"resolved":false}]`)
	if v := jsonValues(StrategyThreadLevel, th.Items()); v[0] != 0.3 || v[1] != 1 {
		t.Errorf("thread_level = %v, want [0.3 1]", v)
	}
	diffs, _ := tree.ParseString(`[{"new_path":"go.sum"},{"new_path":"main.go"}]`)
	if v := jsonValues(StrategySizeProportional, diffs.Items()); v[0] != 0.05 || v[1] != 1 {
		t.Errorf("size_proportional = %v, want [0.05 1]", v)
	}
}

func TestLevels(t *testing.T) {
	v, _ := tree.ParseString(`{"id":7,"node_id":"MDU6","title":"Bug","state":"open","html_url":"https://x/7","created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-02T00:00:00Z","body":"","labels":[],"user":{"login":"ann","avatar_url":"https://a","id":1},"_links":{"self":"https://x"},"milestone":null}`)
	r := newRules(&Options{}, StrategyDefault, 200)
	std, changed := r.standard(v)
	if want := `{"id":7,"title":"Bug","state":"open","created_at":"2024-01-01T00:00:00Z","user":{"login":"ann","id":1}}`; !changed || std.String() != want {
		t.Errorf("standard = %s, want %s", std, want)
	}
	if got, want := r.minimal(v).String(), `{"id":7,"title":"Bug","state":"open","user":{"login":"ann","id":1}}`; got != want {
		t.Errorf("minimal = %s, want %s", got, want)
	}
}

// TestNothingToTrim checks that output that fits is the plain encoding,
// byte for byte, and reports nothing trimmed.
func TestNothingToTrim(t *testing.T) {
	v, _ := tree.ParseString(`{"items":[{"id":1},{"id":2}]}`)
	res, err := FitJSON(context.Background(), v, &Options{Budget: 100, Counter: tokens.Estimate()})
	if err != nil || res.Text != `{"items":[{"id":1},{"id":2}]}` || res.Stats.Truncated {
		t.Errorf("FitJSON = %q, %+v, %v", res.Text, res.Stats, err)
	}
	s := "line one\nline two\n"
	if res, _ := FitText(context.Background(), s, &Options{Budget: 100}); res.Text != s {
		t.Errorf("FitText = %q, want %q", res.Text, s)
	}
}

// TestTextNeverCutsLines checks log fitting: lines whole, every gap a
// marker with its line numbers, kept lines in order.
func TestTextNeverCutsLines(t *testing.T) {
	var sb strings.Builder
	for i := range 2000 {
		if i == 1000 {
			sb.WriteString("panic: runtime error: index out of range\n")
			continue
		}
		sb.WriteString("INFO request served in 12ms path=/api/v1/items/")
		sb.WriteString(strings.Repeat("x", i%7))
		sb.WriteString("\n")
	}
	src := sb.String()
	srcLines := map[string]bool{}
	for _, l := range splitLines(src) {
		srcLines[l] = true
	}
	c := tokens.O200kBase()
	res, err := FitText(context.Background(), src, &Options{Budget: 500, Counter: c, Tool: "get_job_logs"})
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count(res.Text); n > 500 {
		t.Fatalf("%d tokens, budget 500", n)
	}
	if !strings.Contains(res.Text, "panic: runtime error") {
		t.Error("the error line was not kept")
	}
	for _, l := range splitLines(res.Text) {
		if !srcLines[l] && !strings.HasPrefix(l, "[… ") && !strings.HasPrefix(l, "> [") && !strings.HasPrefix(l, "[chunks]") &&
			!strings.HasPrefix(l, "  chunk ") && !strings.HasPrefix(l, "[/chunks]") {
			t.Errorf("line not from the source and not a marker: %q", l)
		}
	}
}

func TestChunkExpired(t *testing.T) {
	_, err := Chunk(context.Background(), "c_1234", 1, &Options{Store: &store.Mem{}})
	var ee *ExpiredError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "re-run the original call") {
		t.Errorf("Chunk(unknown) = %v, want ExpiredError saying to re-run", err)
	}
	if _, err := Chunk(context.Background(), "../../etc/passwd", 1, &Options{Store: &store.Mem{}}); !errors.As(err, &ee) {
		t.Errorf("Chunk(bad handle) = %v, want ExpiredError", err)
	}
}

// FuzzFitText checks the budget guarantee on arbitrary text.
func FuzzFitText(f *testing.F) {
	f.Add("a\nb\nc\n", 5)
	f.Add(strings.Repeat("ERROR something failed\nok\n", 50), 40)
	f.Add("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", 10)
	f.Add("\xff\xfe broken utf8 \n🙂🙂\n", 3)
	c := tokens.O200kBase()
	f.Fuzz(func(t *testing.T, s string, budget int) {
		if budget < 1 || budget > 5000 || len(s) > 1<<16 {
			return
		}
		res, err := FitText(context.Background(), s, &Options{Budget: budget, Counter: c, Store: &store.Mem{}})
		if err != nil {
			t.Fatal(err)
		}
		// With a store, a budget below MinBudget is raised to it.
		if n := c.Count(res.Text); n > max(budget, MinBudget) {
			t.Fatalf("%d tokens, budget %d", n, budget)
		}
		if res.Stats.Truncated && !strings.Contains(res.Text, res.Stats.Handle) {
			t.Fatalf("trimmed without its handle %s:\n%s", res.Stats.Handle, res.Text)
		}
	})
}

// FuzzFitJSON checks the budget guarantee on arbitrary JSON, without a
// store (TestBudgetEdgeNoStore in the root checks the raise).
func FuzzFitJSON(f *testing.F) {
	f.Add(`[{"id":1,"title":"a"},{"id":2,"title":"b"}]`, 5)
	f.Add(`{"items":[{"id":1,"url":"https://x","body":"long long long"}],"total":1}`, 8)
	f.Add(`"just a string"`, 2)
	c := tokens.O200kBase()
	f.Fuzz(func(t *testing.T, doc string, budget int) {
		v, err := tree.ParseString(doc)
		if err != nil || budget < 1 || budget > 5000 {
			return
		}
		res, err := FitJSON(context.Background(), v, &Options{Budget: budget, Counter: c})
		if err != nil {
			t.Fatal(err)
		}
		if res.Text == "" {
			t.Fatalf("empty text for %q at budget %d", doc, budget)
		}
		// Over the budget only with nothing shown: the notice of what
		// is left out, which the caller raises its budget to.
		if n := c.Count(res.Text); n > budget && res.Stats.Full+res.Stats.Standard+res.Stats.Minimal > 0 {
			t.Fatalf("%d tokens, budget %d: %q", n, budget, res.Text)
		}
	})
}

func TestThreads(t *testing.T) {
	doc := `[{"id":"d1","notes":[{"id":1,"body":"first","resolvable":true,"resolved":true},{"id":2,"body":"mid","resolvable":true,"resolved":true},{"id":3,"body":"last","resolvable":true,"resolved":true}]},
	{"id":"d2","notes":[{"id":4,"body":"open question","resolvable":true,"resolved":false}]}]`
	v, _ := tree.ParseString(doc)
	if got := jsonValues(StrategyThreadLevel, v.Items()); got[0] != 0.3 || got[1] != 1 {
		t.Errorf("thread_level values = %v, want [0.3 1]", got)
	}
	r := newRules(&Options{}, StrategyThreadLevel, 200)
	std, _ := r.standard(v.Index(0))
	if got, want := std.String(), `{"id":"d1","notes":[{"id":1,"body":"first","resolvable":true,"resolved":true},{"id":3,"body":"last","resolvable":true,"resolved":true}]}`; got != want {
		t.Errorf("standard thread = %s, want %s", got, want)
	}
	if got, want := r.minimal(v.Index(0)).String(), `{"id":"d1","notes":[{"id":1,"body":"first"},{"id":3,"body":"last"}]}`; got != want {
		t.Errorf("minimal thread = %s, want %s", got, want)
	}
}

// TestDiffWeightsApplied checks that size_proportional file weights decide
// what a diff keeps: the lock file goes before the source file.
func TestDiffWeightsApplied(t *testing.T) {
	var sb strings.Builder
	for _, p := range []string{"go.sum", "main.go"} {
		sb.WriteString("diff --git a/" + p + " b/" + p + "\n--- a/" + p + "\n+++ b/" + p + "\n@@ -1,40 +1,40 @@\n")
		for i := range 40 {
			sb.WriteString("+line " + strings.Repeat("z", i%9) + " of " + p + "\n")
		}
	}
	c := tokens.O200kBase()
	full := c.Count(sb.String())
	res, err := FitText(context.Background(), sb.String(), &Options{Budget: full * 3 / 4, Counter: c, Tool: "get_merge_request_diffs"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "+line zzzzzzzz of main.go") {
		t.Errorf("main.go was not kept in full:\n%s", res.Text)
	}
	if strings.Contains(res.Text, "+line zzzzzzzz of go.sum") {
		t.Errorf("go.sum kept in full although it weighs 0.05:\n%s", res.Text)
	}
}

func TestPrimitiveArray(t *testing.T) {
	var items []string
	for i := range 400 {
		items = append(items, `"line `+strings.Repeat("word ", i%13)+`"`)
	}
	v, _ := tree.ParseString("[" + strings.Join(items, ",") + "]")
	c := tokens.O200kBase()
	res, err := FitJSON(context.Background(), v, &Options{Budget: 300, Counter: c})
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count(res.Text); n > 300 || res.Stats.Full == 0 || res.Stats.Unit != "items" {
		t.Errorf("tokens %d, stats %+v", n, res.Stats)
	}
}

// TestWrappers checks that a document wrapped in single-member objects, or
// a list of one object, is fitted by the members of the object that holds
// the content.
func TestWrappers(t *testing.T) {
	big := strings.Repeat("lorem ipsum dolor sit amet ", 200)
	c := tokens.O200kBase()
	for _, doc := range []string{
		`{"danger":{"git":{"title":"x","body":"` + big + `"},"id":7,"notes":"` + big + `"}}`,
		`[{"git":{"title":"x","body":"` + big + `"},"id":7,"notes":"` + big + `"}]`,
	} {
		v, _ := tree.ParseString(doc)
		res, err := FitJSON(context.Background(), v, &Options{Budget: 200, Counter: c})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.Unit != "members" || res.Stats.Total != 3 || c.Count(res.Text) > 200 || !strings.Contains(res.Text, `"id":7`) {
			t.Errorf("FitJSON(%.30s…) = %+v\n%s", doc, res.Stats, res.Text)
		}
	}
}

// TestEnvelopeNoRoom: when a budget leaves the item array of a root
// object no room for one item (a long fetch command in the notes), the
// result still indexes the items, rather than falling back to the root
// object's members, which would show nothing either.
func TestEnvelopeNoRoom(t *testing.T) {
	var rows []string
	for i := range 20 {
		rows = append(rows, fmt.Sprintf(`{"id":%d,"name":"row %d","url":"https://example.com/r/%d"}`, i, i, i))
	}
	v, _ := tree.ParseString(`{"items":[` + strings.Join(rows, ",") + `]}`)
	c := tokens.O200kBase()
	o := &Options{Budget: 100, Counter: c, Store: &store.Mem{}, Fetch: "terse chunk --store /a/rather/long/path/to/the/store/directory {handle} {n}"}
	res, err := FitJSON(context.Background(), v, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Unit != "items" || res.Stats.Pointer != "/items" || res.Stats.Total != 20 || !strings.Contains(res.Text, "items 1–20") {
		t.Errorf("stats %+v\n%s", res.Stats, res.Text)
	}
}

// TestLargeArray fits a 20,000-item array: within budget, items kept,
// solver named.
func TestLargeArray(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 20000 {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"id":` + strings.Repeat("1", 1+i%5) + `,"name":"item","state":"open","url":"https://example.com/x","note":"` + strings.Repeat("n", i%40) + `"}`)
	}
	sb.WriteString("]")
	v, err := tree.ParseString(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	c := tokens.O200kBase()
	res, err := FitJSON(context.Background(), v, &Options{Budget: 4000, Counter: c, Tool: "get_issues"})
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count(res.Text); n > 4000 || res.Stats.Solver != SolverGreedy || res.Stats.Full+res.Stats.Standard+res.Stats.Minimal == 0 {
		t.Errorf("tokens %d, stats %+v", n, res.Stats)
	}
}

// draftItems is an array that needs trimming under a small budget.
func draftItems(t *testing.T) tree.Value {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 40 {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"id":` + strings.Repeat("7", 1+i%4) + `,"title":"item ` + strings.Repeat("t", i%9) + `","state":"open","html_url":"https://example.com/x/` + strings.Repeat("u", i%7) + `","body":"` + strings.Repeat("body text ", 5+i%13) + `"}`)
	}
	sb.WriteString("]")
	v, err := tree.ParseString(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDraft checks Format.Draft: a draft that renders as Append does gives
// the same output as Append alone, and a draft that differs from Append
// (as when Append's own check rejects a draft) never leaks: the output is
// what Append alone gives, within budget.
func TestDraft(t *testing.T) {
	v := draftItems(t)
	c := tokens.O200kBase()
	indent := func(dst []byte, v tree.Value) []byte { return tree.AppendIndent(dst, v, " ") }
	calls := 0
	same := func(dst []byte, v tree.Value) []byte { calls++; return indent(dst, v) }
	for _, budget := range []int{200, 400, 1200} {
		fit := func(f Format) Result {
			res, err := FitJSON(context.Background(), v, &Options{Budget: budget, Counter: c, Format: f, Store: &store.Mem{}})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		want := fit(Format{Name: "indent", Append: indent})
		if !want.Stats.Truncated {
			t.Fatalf("budget %d: not trimmed, the test needs a smaller budget", budget)
		}
		calls = 0
		if got := fit(Format{Name: "indent", Append: indent, Draft: same}); got.Text != want.Text || got.Stats != want.Stats {
			t.Errorf("budget %d: with a faithful draft = %+v\n%s\nwant %+v\n%s", budget, got.Stats, got.Text, want.Stats, want.Text)
		}
		if calls == 0 {
			t.Errorf("budget %d: Draft never called", budget)
		}
		got := fit(Format{Name: "indent", Append: indent, Draft: tree.AppendJSON})
		if got.Text != want.Text {
			t.Errorf("budget %d: with a rejected draft = %+v\n%s\nwant %+v\n%s", budget, got.Stats, got.Text, want.Stats, want.Text)
		}
		if n := c.Count(got.Text); n > budget {
			t.Errorf("budget %d: with a rejected draft, %d tokens", budget, n)
		}
	}
	// The whole document is drafted to see whether it fits: a rejected
	// draft that fits where Append's text does not must not leak either.
	draftN, fullN := c.Count(string(tree.AppendJSON(nil, v))), c.Count(string(indent(nil, v)))
	for _, budget := range []int{(draftN + fullN) / 2, fullN} {
		o := func(f Format) *Options { return &Options{Budget: budget, Counter: c, Format: f} }
		want, err := FitJSON(context.Background(), v, o(Format{Name: "indent", Append: indent}))
		if err != nil {
			t.Fatal(err)
		}
		got, err := FitJSON(context.Background(), v, o(Format{Name: "indent", Append: indent, Draft: tree.AppendJSON}))
		if err != nil {
			t.Fatal(err)
		}
		if got.Text != want.Text || got.Stats.Truncated != want.Stats.Truncated {
			t.Errorf("budget %d (draft %d, full %d tokens): with a rejected draft = %+v\n%s\nwant %+v\n%s", budget, draftN, fullN, got.Stats, got.Text, want.Stats, want.Text)
		}
		if n := c.Count(got.Text); n > budget {
			t.Errorf("budget %d: with a rejected draft, %d tokens", budget, n)
		}
	}
}

// TestBudgetBelowNotice: with no store, a budget below the notice of
// what is left out gives that notice, not an empty text
// ({"items":[200 objects]} at 20, a 300-line log at 10).
func TestBudgetBelowNotice(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"items":[`)
	for i := range 200 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"title":"item %d","body":"words about item %d"}`, i, i, i)
	}
	sb.WriteString("]}")
	v, err := tree.ParseString(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	res, err := FitJSON(context.Background(), v, &Options{Budget: 20})
	if err != nil || res.Text == "" || !strings.Contains(res.Text, "left out") {
		t.Fatalf("JSON at 20: %v %q", err, res.Text)
	}
	var lb strings.Builder
	for i := range 300 {
		fmt.Fprintf(&lb, "INFO line %d of the log\n", i)
	}
	res, err = FitText(context.Background(), lb.String(), &Options{Budget: 10})
	if err != nil || res.Text == "" || !strings.Contains(res.Text, "left out") {
		t.Fatalf("log at 10: %v %q", err, res.Text)
	}
}

// TestIndexWithoutStore: an index of chunks that were not stored lists
// no sizes (nothing can fetch them), and readtest still reads it.
func TestIndexWithoutStore(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`[`)
	for i := range 3000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":%d,"title":"item %d","body":"%s"}`, i, i, strings.Repeat("some words ", 40))
	}
	sb.WriteString("]")
	v, err := tree.ParseString(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	res, err := FitJSON(context.Background(), v, &Options{Budget: 4000})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "[chunks] ") || strings.Contains(res.Text, "≈") || strings.Contains(res.Text, "over budget") {
		t.Fatalf("want an index without sizes:\n%s", res.Text[strings.Index(res.Text, "\n"):])
	}
}
