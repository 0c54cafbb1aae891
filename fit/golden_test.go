package fit

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txtar golden files")

// goldenCases pin the in-band text a model reads (gap markers, detail
// notes, the overflow hint, the chunk index, string cut markers) on
// representative corpus files.
var goldenCases = []struct {
	name, file, tool string
	budget           int
	what             string
	toon, noStore    bool
}{
	{"issues-minimal", "github/pygithub__repo-issues-page2.json", "get_issues", 1000,
		"A GitHub issue list under a small budget: items at minimal detail, omitted ranges, hint and chunk index.", false, false},
	{"issues-mixed", "github/pygithub__repo-issues-page2.json", "get_issues", 4000,
		"The same list with more room: levels mixed per item by element_count value.", false, false},
	{"comments-cascading", "github/pygithub__repo-issues-comments.json", "get_issue_comments", 2000,
		"Issue comments under cascading: the newest kept richest.", false, false},
	{"log-headtail", "logs/holmes__01_crashpod__kubectl_logs_all_containers.log", "get_job_logs", 600,
		"A crash log: head and tail kept, error lines boosted, gaps as line-numbered markers.", false, false},
	{"diff-files", "diffs/git-show__toon-spec-c29ae26628.diff", "get_merge_request_diffs", 1500,
		"A git show: per-file levels, shortened hunks and file-level gap markers.", false, false},
	{"document-members", "mcp/filesystem__read_text_file.json", "read_text_file", 300,
		"One big document without an item array: members fitted, a long string cut with its marker.", false, false},
	{"issues-toon", "github/pygithub__repo-issues-page2.json", "get_issues", 1500,
		"The issue list as TOON: items costed in TOON, the same notes and index.", true, false},
	{"log-nostore", "logs/sonobuoy__podlog-etcd.log", "", 500,
		"A log fitted without a store: the hint says the rest is not stored, and how to see more.", false, true},
}

func TestGolden(t *testing.T) {
	dir := corpus.Dir(t, "corpus")
	c := tokens.O200kBase()
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			o := &Options{Budget: tc.budget, Counter: c, Tool: tc.tool, Store: &store.Mem{}}
			if tc.toon {
				o.Format = toonFormat
			}
			if tc.noStore {
				o.Store = nil
			}
			var res Result
			if v, err := tree.Parse(data); err == nil {
				res, err = FitJSON(context.Background(), v, o)
				if err != nil {
					t.Fatal(err)
				}
			} else if res, err = FitText(context.Background(), string(data), o); err != nil {
				t.Fatal(err)
			}
			if n := c.Count(res.Text); n > tc.budget {
				t.Errorf("output is %d tokens, budget %d", n, tc.budget)
			}
			st := res.Stats
			stats := fmt.Sprintf("kind=%s unit=%s pointer=%q total=%d full=%d standard=%d minimal=%d strategy=%s (%s) solver=%s chunks=%d tokens=%d\n",
				st.Kind, st.Unit, st.Pointer, st.Total, st.Full, st.Standard, st.Minimal, st.Strategy, st.StrategySource, st.Solver, st.Chunks, st.Tokens)
			ar := &txtar.Archive{
				Comment: []byte(fmt.Sprintf("%s\ninput: corpus/%s, tool %s, budget %d (o200k_base)\n", tc.what, tc.file, tc.tool, tc.budget)),
				Files: []txtar.File{
					{Name: "stats", Data: []byte(stats)},
					{Name: "output", Data: []byte(strings.TrimSuffix(res.Text, "\n") + "\n")},
				},
			}
			path := filepath.Join("testdata", tc.name+".txtar")
			got := txtar.Format(ar)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file (run with -update to accept):\n%s", path, got)
			}
		})
	}
}
