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

	"regexp"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse/fit/readtest"

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

// TestFetchGolden pins the texts of the chunk path on a 30-item list
// (item 17 far larger than the others): the fitted result, a chunk that
// comes back whole, a chunk over the fetch budget split into smaller
// chunks, an item over the budget split into parts and one part, the
// store-down notice and the refusals.
func TestFetchGolden(t *testing.T) {
	ctx := context.Background()
	c := tokens.O200kBase()
	v := list30(t)
	o := &Options{Budget: 1000, Counter: c, Store: &store.Mem{}, Scope: "session-1"}
	res, err := FitJSON(ctx, v, o)
	if err != nil {
		t.Fatal(err)
	}
	h := res.Stats.Handle
	small := *o
	var files []txtar.File
	add := func(name, text string) {
		files = append(files, txtar.File{Name: name, Data: []byte(strings.TrimSuffix(text, "\n") + "\n")})
	}
	// fetched adds a fetch's text, checked against its budget; a chunk
	// that came back whole is shown by its first line.
	fetched := func(name string, r ChunkResult, err error, budget int) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if n := c.Count(r.Text); n > budget {
			t.Errorf("%s: %d tokens, budget %d", name, n, budget)
		}
		text := r.Text
		if r.Whole {
			head, body, _ := strings.Cut(text, "\n")
			text = fmt.Sprintf("%s\n(%d bytes of the chunk in full follow)", head, len(body))
		}
		add(name, text)
	}
	add("fit at 1000", res.Text)
	// The call the index names: no budget of its own.
	named := *o
	named.Budget = 0
	whole, err := FetchChunk(ctx, h, 1, &named)
	fetched("fetch chunk 1 as the index names it (whole)", whole, err, DefaultFetchBudget)
	small.Budget = 1000
	split, err := FetchChunk(ctx, h, 1, &small)
	fetched("fetch chunk 1 with a budget of 1000 (split)", split, err, 1000)
	// The smaller chunk that holds item 17, at 1000: item 17 alone is
	// over that budget, and comes back in parts.
	sh, sn := subChunkOf(t, split.Text, 17)
	parts, err := FetchChunk(ctx, sh, sn, &small)
	fetched(fmt.Sprintf("fetch %s chunk %d at 1000 (item 17: parts)", sh, sn), parts, err, 1000)
	ph, _ := subChunkOf(t, parts.Text, 0)
	part, err := FetchChunk(ctx, ph, 2, &small)
	fetched(fmt.Sprintf("fetch %s chunk 2 at 1000 (one part)", ph), part, err, 1000)
	// A fetch budget smaller than item 17: its chunk is over budget,
	// and the call the index names gives its parts.
	lim := *o
	lim.FetchBudget = 2000
	lr, err := FitJSON(ctx, v, &lim)
	if err != nil {
		t.Fatal(err)
	}
	add("fit at 1000, fetches of up to 2000", lr.Text)
	lrr, _ := readtestParse(lr.Text)
	lim.Budget = 0
	over, err := FetchChunk(ctx, lr.Stats.Handle, lrr.ChunkOf(17), &lim)
	fetched(fmt.Sprintf("fetch chunk %d as the index names it, up to 2000 (holds item 17)", lrr.ChunkOf(17)), over, err, 2000)
	oh, on := subChunkOf(t, over.Text, 17)
	over17, err := FetchChunk(ctx, oh, on, &lim)
	fetched(fmt.Sprintf("fetch %s chunk %d, up to 2000 (item 17: parts)", oh, on), over17, err, 2000)
	other := *o
	other.Scope = "session-2"
	_, err = Chunk(ctx, h, 1, &other)
	add("fetch from another session (error)", err.Error())
	_, err = Chunk(ctx, "c_0000000000000000", 1, o)
	add("fetch unknown handle (error)", err.Error())
	_, err = Chunk(ctx, h, 99, o)
	add("fetch chunk 99 (error)", err.Error())
	down := *o
	down.Store, down.RawHint = &failStore{}, `re-run the call with _output_mode: "raw" to get the whole result`
	dr, _ := FitJSON(ctx, v, &down)
	add("fit at 1000, store down", dr.Text)
	tiny := *o
	tiny.Budget = 10
	tr, _ := FitJSON(ctx, v, &tiny)
	add("fit at 10 (nothing fits: the hint alone, with its handle)", tr.Text)
	checkGolden(t, "fetch-list30", &txtar.Archive{
		Comment: []byte("The chunk path on a synthetic 30-item list whose item 17 is far larger than the others:\nfit at 1000 tokens, then chunk fetches as the index names them and with a budget of 1000,\nand with fetches limited to 2000 tokens (store.Mem, scope session-1, public key).\n"),
		Files:   files,
	})
}

// TestLongLineGolden pins a long single line under a small budget: shown
// cut with its marker, declared in the index, and its chunk split into
// parts to join.
func TestLongLineGolden(t *testing.T) {
	ctx := context.Background()
	c := tokens.O200kBase()
	var sb strings.Builder
	for i := 0; sb.Len() < 6000; i++ {
		fmt.Fprintf(&sb, "w%d ", i)
	}
	text := "first line\n" + sb.String() + "\nlast line\n"
	o := &Options{Budget: 300, Counter: c, Store: &store.Mem{}}
	res, err := FitText(ctx, text, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count(res.Text); n > 300 {
		t.Errorf("%d tokens", n)
	}
	files := []txtar.File{{Name: "fit at 300", Data: []byte(res.Text)}}
	r, _ := readtestParse(res.Text)
	ch, err := Chunk(ctx, res.Stats.Handle, r.ChunkOf(2), o)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, txtar.File{Name: fmt.Sprintf("fetch chunk %d at 300 (holds line 2)", r.ChunkOf(2)), Data: []byte(ch + "\n")})
	checkGolden(t, "fetch-longline", &txtar.Archive{
		Comment: []byte("A 3-line text whose line 2 is 6 KB, fitted to 300 tokens, and the chunk holding line 2 fetched at 300.\n"),
		Files:   files,
	})
}

func readtestParse(text string) (*readtest.Response, error) { return readtest.Parse(text) }

// subChunkOf reads a split chunk's index: the handle it names and the
// number of the chunk that holds item k (0: the first).
func subChunkOf(t *testing.T, text string, k int) (string, int) {
	t.Helper()
	h := ""
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "[/chunks] ") {
			h = reHandleT.FindString(l)
		}
		var num, a, b int
		if _, err := fmt.Sscanf(l, "  chunk %d: items %d–%d,", &num, &a, &b); err == nil && k >= a && k <= b {
			n = num
		} else if _, err := fmt.Sscanf(l, "  chunk %d: item %d,", &num, &a); err == nil && k == a {
			n = num
		}
	}
	if n == 0 {
		n = 1
	}
	if h == "" {
		t.Fatalf("no sub-chunk handle in\n%s", text)
	}
	return h, n
}

var reHandleT = regexp.MustCompile(`c_[0-9]{16}`)

// checkGolden compares an archive with testdata/NAME.txtar (-update
// rewrites it).
func checkGolden(t *testing.T, name string, ar *txtar.Archive) {
	t.Helper()
	path := filepath.Join("testdata", name+".txtar")
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
}
