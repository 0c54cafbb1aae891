package terse

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// checkReport checks what every Report must satisfy: OutputTokens is the
// count of Text, the budget holds, and the savings add up exactly.
func checkReport(t *testing.T, name string, res Result) {
	t.Helper()
	r := res.Report
	if n := tokens.O200kBase().Count(res.Text); n != r.OutputTokens {
		t.Errorf("%s: OutputTokens = %d, counted %d", name, r.OutputTokens, n)
	}
	if r.OutputTokens > r.Budget {
		t.Errorf("%s: OutputTokens = %d, budget %d", name, r.OutputTokens, r.Budget)
	}
	if got, want := r.Saved.Total(), r.RawTokens-r.OutputTokens; got != want {
		t.Errorf("%s: Saved = %+v sums to %d, want RawTokens − OutputTokens = %d", name, r.Saved, got, want)
	}
	if !r.Truncated && r.Saved.Fitting != 0 {
		t.Errorf("%s: Saved.Fitting = %d for an untrimmed result", name, r.Saved.Fitting)
	}
	if r.Filtered == false && r.Saved.Filter != 0 {
		t.Errorf("%s: Saved.Filter = %d without a filter", name, r.Saved.Filter)
	}
}

// stripIDLine returns text without a leading dedup id line.
func stripIDLine(text string) string {
	if strings.HasPrefix(text, "> [id: ") {
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			return text[i+1:]
		}
	}
	return text
}

// TestSavingsSumExact runs corpus files through pipelines of every stage
// combination and checks that the savings by source sum to
// RawTokens − OutputTokens exactly, and that the budget holds.
func TestSavingsSumExact(t *testing.T) {
	files := corpus.Files(t, ".json", ".log", ".md", ".diff")
	if testing.Short() && len(files) > 12 {
		files = files[:12]
	}
	rule, err := filter.Compile(filter.Spec{Exclude: []string{"*_url", "node_id", "avatar*"}, DropNulls: true})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		o    Options
	}{
		{"json", Options{}},
		{"toon-4000", Options{Format: "toon", Budget: 4000}},
		{"auto", Options{Format: "auto"}},
		{"auto-1000-filter", Options{Format: "auto", Budget: 1000, Filter: rule}},
		{"auto-300-dedup", Options{Format: "auto", Budget: 300}},
		{"json-4000-filter-dedup", Options{Budget: 4000, Filter: rule}},
	}
	ctx := context.Background()
	for _, tc := range cases {
		o := tc.o
		o.Store = &store.Mem{}
		if strings.Contains(tc.name, "dedup") {
			o.Dedup = dedup.New(dedup.Options{})
		}
		p, err := New(&o)
		if err != nil {
			t.Fatal(err)
		}
		sum := Savings{}
		raw, out := 0, 0
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			name := tc.name + "/" + corpus.Name(f)
			// Twice: with dedup, the second run is a reference.
			for range 2 {
				res, err := p.Process(ctx, data, nil)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					break
				}
				checkReport(t, name, res)
				r := res.Report
				sum.Filter += r.Saved.Filter
				sum.Dedup += r.Saved.Dedup
				sum.Encoding += r.Saved.Encoding
				sum.Fitting += r.Saved.Fitting
				raw += r.RawTokens
				out += r.OutputTokens
			}
		}
		t.Logf("%-24s %d files: %d → %d tokens; saved filter %d, dedup %d, encoding %d, fitting %d",
			tc.name, len(files), raw, out, sum.Filter, sum.Dedup, sum.Encoding, sum.Fitting)
	}
}

// TestAutoLossless checks that auto through the pipeline is lossless when
// nothing is trimmed: render.Decode of the text (without its id line) is
// the identical tree, never more tokens than compact JSON.
func TestAutoLossless(t *testing.T) {
	files := corpus.Files(t, ".json")
	if testing.Short() && len(files) > 10 {
		files = files[:10]
	}
	p, err := New(&Options{Format: "auto", Budget: 1 << 30, Dedup: dedup.New(dedup.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			continue // not every .json in the corpus is one document
		}
		checked++
		name := corpus.Name(f)
		res, err := p.Process(ctx, data, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r := res.Report
		if r.Truncated || r.Dedup {
			t.Errorf("%s: truncated %v, dedup %v under an unlimited budget", name, r.Truncated, r.Dedup)
			continue
		}
		back, err := render.Decode(stripIDLine(res.Text))
		if err != nil {
			t.Errorf("%s: Decode: %v", name, err)
			continue
		}
		if !tree.Equal(back, v) {
			t.Errorf("%s: Decode(auto output) differs from the input", name)
		}
		if r.Saved.Encoding < 0 {
			t.Errorf("%s: Saved.Encoding = %d, auto must never cost more than compact JSON", name, r.Saved.Encoding)
		}
	}
	if checked == 0 {
		t.Fatal("no JSON document checked")
	}
	t.Logf("%d JSON documents: auto through the pipeline decodes to the identical tree", checked)
}

// TestPipelineOrder checks the order of the stages as the text shows them:
// the id line first, then the filter's note, the data, and the fitting's
// hints last; and that dedup sees the filtered result.
func TestPipelineOrder(t *testing.T) {
	rule, err := filter.Compile(filter.Spec{Exclude: []string{"*url", "node_id"}, DropNulls: true})
	if err != nil {
		t.Fatal(err)
	}
	data := readCorpus(t, "github/pygithub__repo-issues-page2.json")
	ctx := context.Background()
	tests := []struct {
		name   string
		budget int
		want   []string // line prefixes in order
		none   []string // absent
	}{
		{"full", 1 << 20, []string{"> [id: ", "> [filtered", "@1 = "}, []string{"> [levels", "[chunks]"}},
		{"trimmed", 1500, []string{"> [filtered", "@1 = ", "> [detail", "> [23 of 25 items shortened: get all 25 items whole"}, []string{"> [id: "}},
	}
	for _, tc := range tests {
		cache := dedup.New(dedup.Options{})
		p, err := New(&Options{Format: "auto", Budget: tc.budget, Filter: rule, Dedup: cache, Store: &store.Mem{}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Process(ctx, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, tc.name, res)
		lines := strings.Split(res.Text, "\n")
		i := 0
		for _, w := range tc.want {
			for i < len(lines) && !strings.HasPrefix(lines[i], w) {
				i++
			}
			if i == len(lines) {
				t.Errorf("%s: no line starting %q in order %q", tc.name, w, tc.want)
				break
			}
			i++
		}
		for _, w := range tc.none {
			if strings.Contains(res.Text, w) {
				t.Errorf("%s: output contains %q", tc.name, w)
			}
		}
		if res.Report.Filtered != true || strings.Contains(res.Text, "html_url") {
			t.Errorf("%s: filter did not run before encoding", tc.name)
		}
		// The same payload with other values in excluded fields is the
		// same filtered result: dedup runs after the filter. A trimmed
		// result was never recorded, so it is not referenced.
		other := bytes.ReplaceAll(data, []byte("https://api.github.com"), []byte("https://api.example.org"))
		again, err := p.Process(ctx, other, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantHit := tc.name == "full"
		if again.Report.Dedup != wantHit {
			t.Errorf("%s: second call Dedup = %v, want %v (text %.80q)", tc.name, again.Report.Dedup, wantHit, again.Text)
		}
		if wantHit && again.Text != dedup.RefHint(res.Report.DedupID) {
			t.Errorf("%s: second call = %q, want %q", tc.name, again.Text, dedup.RefHint(res.Report.DedupID))
		}
	}
}

// TestDedupStage checks hits and misses through the pipeline, partitions,
// and invalidation by a mutating call and by compaction. One Pipeline per
// configuration serves every call; the partition is per call.
func TestDedupStage(t *testing.T) {
	data := readCorpus(t, "github/pygithub__repo-issues-item-comments.json")
	ctx := context.Background()
	cache := dedup.New(dedup.Options{})
	main := dedup.Key{Session: "s1", Partition: "main"}
	pipes := map[string]*Pipeline{}
	run := func(format string, req Request, payload []byte) Result {
		t.Helper()
		if format == "" {
			format = "auto"
		}
		p := pipes[format]
		if p == nil {
			var err error
			if p, err = New(&Options{Format: format, Dedup: cache}); err != nil {
				t.Fatal(err)
			}
			pipes[format] = p
		}
		res, err := p.Process(ctx, payload, &req)
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, fmt.Sprintf("%+v", req.Session), res)
		return res
	}
	first := run("", Request{Session: main, Tool: "get_comments"}, data)
	id := first.Report.DedupID
	if first.Report.Dedup || id == "" || !strings.HasPrefix(first.Text, dedup.IDLine(id)+"\n") {
		t.Fatalf("first call: Dedup %v, id %q, text starts %.40q", first.Report.Dedup, id, first.Text)
	}
	if first.Report.Saved.Dedup >= 0 {
		t.Errorf("first call Saved.Dedup = %d, want the id line's (negative) cost", first.Report.Saved.Dedup)
	}
	tests := []struct {
		name    string
		format  string
		req     Request
		payload []byte
		hit     bool
	}{
		{"same partition", "", Request{Session: main, Tool: "get_comments"}, data, true},
		{"other partition", "", Request{Session: dedup.Key{Session: "s1", Partition: "sub-agent"}, Tool: "get_comments"}, data, false},
		{"other format", "toon", Request{Session: main, Tool: "get_comments"}, data, false},
		{"other content", "", Request{Session: main, Tool: "get_comments"}, bytes.Replace(data, []byte(`"id"`), []byte(`"Id"`), 1), false},
	}
	for _, tc := range tests {
		res := run(tc.format, tc.req, tc.payload)
		if res.Report.Dedup != tc.hit {
			t.Errorf("%s: Dedup = %v, want %v", tc.name, res.Report.Dedup, tc.hit)
		}
		if tc.hit {
			r := res.Report
			if res.Text != dedup.RefHint(id) || r.Format != "hint" || r.DedupID != id {
				t.Errorf("%s: text %q format %q id %q, want %q", tc.name, res.Text, r.Format, r.DedupID, dedup.RefHint(id))
			}
			if r.Saved != (Savings{Dedup: r.RawTokens - r.OutputTokens}) {
				t.Errorf("%s: Saved = %+v, want all of it dedup", tc.name, r.Saved)
			}
		}
	}

	// A read of a path, then a write of it (or of its directory): the read
	// is shown again.
	files := dedup.Key{Session: "s1", Partition: "files"}
	read := Request{Session: files, Tool: "read_file", Paths: []string{"d/a.json"}}
	for _, written := range []string{"d/a.json", "d"} {
		run("", read, data)
		if !run("", read, data).Report.Dedup {
			t.Error("repeated read: not a reference")
		}
		run("", Request{Session: files, Tool: "apply_patch", Paths: []string{written}, Mutating: true}, []byte(`{"ok":true}`))
		if run("", read, data).Report.Dedup {
			t.Errorf("read after a mutating call on %s: still a reference", written)
		}
	}
	// A compaction boundary forgets everything.
	cache.Compact(main)
	if run("", Request{Session: main, Tool: "get_comments"}, data).Report.Dedup {
		t.Error("after Compact: still a reference")
	}
	// A small result gets no id line.
	if small := run("", Request{Session: main}, []byte(`{"id":1}`)); strings.HasPrefix(small.Text, "> [id:") {
		t.Errorf("small result has an id line: %q", small.Text)
	}
}

// TestBudgetWithIDLine walks the budget across the point where the id
// line fits: the budget always holds; below it the result is shown in
// full without an id line and is not recorded (so not referenced later);
// from it on the id line is shown and the next call is a reference.
func TestBudgetWithIDLine(t *testing.T) {
	data := readCorpus(t, "github/pygithub__repo-issues-item-comments.json")
	ctx := context.Background()
	plain, err := New(&Options{Format: "auto", Budget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	base, err := plain.Process(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := base.Report.OutputTokens
	for budget := n - 2; budget <= n+16; budget++ {
		cache := dedup.New(dedup.Options{})
		p, err := New(&Options{Format: "auto", Budget: budget, Dedup: cache, Store: &store.Mem{}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Process(ctx, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("budget %d", budget)
		checkReport(t, name, res)
		r := res.Report
		hasID := strings.HasPrefix(res.Text, "> [id: ")
		if hasID != (r.DedupID != "") {
			t.Errorf("%s: id line %v, DedupID %q", name, hasID, r.DedupID)
		}
		if r.Truncated && hasID {
			t.Errorf("%s: trimmed result with an id line", name)
		}
		if !r.Truncated && stripIDLine(res.Text) != base.Text {
			t.Errorf("%s: untrimmed result differs from the plain encoding", name)
		}
		again, _ := p.Process(ctx, data, nil)
		if again.Report.Dedup != hasID {
			t.Errorf("%s: second call Dedup = %v, want %v (the first showed an id line: %v)", name, again.Report.Dedup, hasID, hasID)
		}
		if budget >= n+14 && !hasID {
			t.Errorf("%s: no id line with %d tokens to spare", name, budget-n)
		}
	}
}

// TestReportGolden compares the Report JSON of representative cases with
// testdata/report.txtar; -update rewrites it.
func TestReportGolden(t *testing.T) {
	rule, err := filter.Compile(filter.Spec{Exclude: []string{"*_url", "node_id"}, DropNulls: true})
	if err != nil {
		t.Fatal(err)
	}
	issues := readCorpus(t, "github/pygithub__repo-issues-page2.json")
	comments := readCorpus(t, "github/pygithub__repo-issues-item-comments.json")
	ctx := context.Background()
	cache := dedup.New(dedup.Options{})
	k := dedup.Key{Session: "s", Partition: "main"}
	mk := func(o Options) *Pipeline {
		o.Format, o.Dedup, o.Store = "auto", cache, &store.Mem{}
		p, err := New(&o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	var got []txtar.File
	add := func(name, tool string, p *Pipeline, data []byte, withText bool) {
		res, err := p.Process(ctx, data, &Request{Tool: tool, Session: k})
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, name, res)
		b, _ := json.MarshalIndent(res.Report, "", "  ")
		got = append(got, txtar.File{Name: name + ".report.json", Data: append(b, '\n')})
		if withText {
			got = append(got, txtar.File{Name: name + ".txt", Data: []byte(res.Text + "\n")})
		}
	}
	add("issues-filter-auto-1500", "github__get_issues", mk(Options{Budget: 1500, Filter: rule}), issues, false)
	p := mk(Options{Budget: 4000})
	add("comments-auto-miss", "get_issue_comments", p, comments, false)
	add("comments-auto-ref", "get_issue_comments", p, comments, true)

	path := filepath.Join("testdata", "report.txtar")
	if *update {
		a := &txtar.Archive{Comment: []byte("Report JSON of representative pipeline runs (o200k_base); go test -run TestReportGolden -update rewrites it.\n"), Files: got}
		if err := os.WriteFile(path, txtar.Format(a), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	a, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range a.Files {
		want[f.Name] = string(f.Data)
	}
	if len(a.Files) != len(got) {
		t.Errorf("golden has %d files, want %d (run with -update)", len(a.Files), len(got))
	}
	for _, f := range got {
		if w, ok := want[f.Name]; !ok || w != string(f.Data) {
			t.Errorf("%s = \n%s\nwant\n%s\n(run with -update if the change is intended)", f.Name, f.Data, w)
		}
	}
}
