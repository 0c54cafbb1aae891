package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
)

func manifestDir(t *testing.T) string {
	return corpus.Dir(t, "kimbap-manifests")
}

// TestManifestsLoad: every real kimbap manifest decodes strictly,
// validates, and every action's filter compiles.
func TestManifestsLoad(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(manifestDir(t), "*.yaml"))
	if len(files) != 58 {
		t.Errorf("found %d manifests, want 58", len(files))
	}
	var filters, texts, compacts int
	for _, f := range files {
		m, err := LoadManifest(f)
		if err != nil {
			t.Errorf("LoadManifest: %v", err)
			continue
		}
		for _, name := range m.ActionNames() {
			a := m.Action(name)
			if !a.HasFilter() {
				continue
			}
			r := a.Response
			if r.Filter != nil {
				filters++
			}
			if r.TextFilter != nil {
				texts++
			}
			if r.Compact != nil {
				compacts++
			}
			spec, err := a.FilterSpec()
			if err != nil {
				t.Errorf("%s %s: FilterSpec: %v", filepath.Base(f), name, err)
				continue
			}
			if _, err := filter.Compile(spec); err != nil {
				t.Errorf("%s %s: Compile: %v", filepath.Base(f), name, err)
			}
		}
	}
	// The counts of the kimbap catalog (reference note, section 12).
	if filters != 65 || texts != 65 || compacts != 3 {
		t.Errorf("filter/text_filter/compact blocks = %d/%d/%d, want 65/65/3", filters, texts, compacts)
	}
}

func TestManifestStrict(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unknown top-level key",
			"name: x\nversion: 1\nnme: y\nactions: {}\n",
			"m.yaml:3:1: field nme not found in type config.Manifest"},
		{"unknown response key",
			"name: x\nactions:\n  a:\n    response:\n      type: object\n      filtr: {}\n",
			"m.yaml:6:1: field filtr not found"},
		{"unknown filter key",
			"name: x\nactions:\n  a:\n    response:\n      type: array\n      filter:\n        max_item: 3\n",
			"m.yaml:7:1: field max_item not found"},
		{"wrong type",
			"name: x\nactions:\n  a:\n    response:\n      type: array\n      filter:\n        max_items: lots\n",
			"m.yaml:7:1: cannot unmarshal !!str `lots` into int"},
		{"negative max_items",
			"name: x\nactions:\n  a:\n    response:\n      type: array\n      filter:\n        max_items: -1\n",
			"m.yaml:6:7: actions.a.response.filter: max_items -1: must be >= 0"},
		{"bad type",
			"name: x\nactions:\n  a:\n    response:\n      type: list\n",
			`m.yaml:5:7: actions.a.response.type: "list" is not object or array`},
		{"empty select path",
			"name: x\nactions:\n  a:\n    response:\n      type: array\n      filter:\n        select:\n          id: \"\"\n",
			"m.yaml:8:11: actions.a.response.filter.select: select keys and source paths must be non-empty strings"},
		{"bad select path",
			"name: x\nactions:\n  a:\n    response:\n      type: array\n      filter:\n        select:\n          id: a..b\n",
			`m.yaml:6:7: actions.a.response.filter: select path "a..b": empty segment`},
		{"compact without item",
			"name: x\nactions:\n  a:\n    response:\n      type: array\n      compact:\n        header: h\n",
			"m.yaml:6:7: actions.a.response.compact: compact.item: template is required"},
		{"bad regex",
			"name: x\nactions:\n  a:\n    response:\n      type: object\n      text_filter:\n        keep_lines_matching: [\"(\"]\n",
			`m.yaml:6:7: actions.a.response.text_filter: keep_lines_matching pattern "("`},
		{"negative max_lines",
			"name: x\nactions:\n  a:\n    response:\n      type: object\n      text_filter:\n        max_lines: -1\n",
			"m.yaml:6:7: actions.a.response.text_filter: max_lines -1: must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tt.in), "m.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseManifest = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestManifestStrictRealFile: a typo added to a real manifest is caught
// with its line.
func TestManifestStrictRealFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(manifestDir(t), "github.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	i := slices.Index(lines, "        max_items: 25")
	if i < 0 {
		t.Fatal("github.yaml changed: no max_items: 25 line")
	}
	lines = slices.Insert(lines, i+1, "        max_itemz: 5")
	_, err = ParseManifest([]byte(strings.Join(lines, "\n")), "github.yaml")
	want := "github.yaml:" + strconv.Itoa(i+2) + ":1: field max_itemz not found"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ParseManifest = %v, want %q", err, want)
	}
	if _, ok := errors.AsType[*Error](err); !ok {
		t.Errorf("error is %T, want *Error", err)
	}
}

// applyAction runs a manifest action's filter on a corpus file.
func applyAction(t *testing.T, manifest, action, file string) filter.Result {
	t.Helper()
	m, err := LoadManifest(filepath.Join(manifestDir(t), manifest))
	if err != nil {
		t.Fatal(err)
	}
	a := m.Action(action)
	if a == nil {
		t.Fatalf("%s has no action %s", manifest, action)
	}
	spec, err := a.FilterSpec()
	if err != nil {
		t.Fatal(err)
	}
	r, err := filter.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(corpus.Dir(t, "corpus"), file))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.ApplyBytes(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Err != nil {
		t.Fatalf("%s %s on %s: %v", manifest, action, file, res.Report.Err)
	}
	again, _ := r.ApplyBytes(data, nil)
	if string(again.Append(nil)) != string(res.Append(nil)) {
		t.Fatalf("%s %s on %s: output differs between runs", manifest, action, file)
	}
	return res
}

func keys(v tree.Value) []string {
	var ks []string
	for _, m := range v.Members() {
		ks = append(ks, m.Key)
	}
	return ks
}

// checkItems asserts that every item's keys are, in order, a subsequence
// of want, that no value is null, and returns the items.
func checkItems(t *testing.T, items []tree.Value, want []string) {
	t.Helper()
	for i, it := range items {
		ks := keys(it)
		j := 0
		for _, k := range ks {
			for j < len(want) && want[j] != k {
				j++
			}
			if j == len(want) {
				t.Fatalf("item %d keys %v: not an ordered subset of %v", i, ks, want)
			}
		}
		for _, m := range it.Members() {
			if m.Value.Kind() == tree.KindNull {
				t.Errorf("item %d: %s is null after drop_nulls", i, m.Key)
			}
		}
	}
}

func TestManifestOnCorpus(t *testing.T) {
	t.Run("github list-repos", func(t *testing.T) {
		res := applyAction(t, "github.yaml", "list-repos", "github/pygithub__user-repos.json")
		want := []string{"id", "name", "full_name", "html_url", "description", "language", "updated_at", "stargazers_count", "private", "fork", "owner_login"}
		rep := res.Report
		if !rep.List || rep.Root != "" || rep.Total != 16 || rep.Count != 16 {
			t.Fatalf("Report = %+v", rep)
		}
		checkItems(t, res.Value.Items(), want)
		first := res.Value.Index(0)
		if got := keys(first); len(got) < 9 {
			t.Errorf("first repo keys = %v, want most of %v", got, want)
		}
		if v, _ := first.Get("owner_login"); v.Str() != "jacquev6" {
			t.Errorf("owner_login = %s, want jacquev6", v)
		}
		if rep.ResultBytes*3 > rep.OriginalBytes {
			t.Errorf("%d → %d bytes, want at least 3x smaller", rep.OriginalBytes, rep.ResultBytes)
		}
		if !strings.HasPrefix(res.Note, "> [filtered: 19 fields per item omitted by config; null fields dropped; ") {
			t.Errorf("Note = %q", res.Note)
		}
	})
	t.Run("github get-issue on a real issue (reference bug 1)", func(t *testing.T) {
		res := applyAction(t, "github.yaml", "get-issue", "github/danger__issue.json")
		rep := res.Report
		if rep.List || rep.Root != "" {
			t.Fatalf("root = %q list=%v: the issue was taken for a list", rep.Root, rep.List)
		}
		got := keys(res.Value)
		want := []string{"id", "number", "title", "state", "html_url", "user_login", "body", "created_at", "updated_at"}
		if !slices.Equal(got, want) {
			t.Errorf("issue keys = %v, want %v", got, want)
		}
		if v, _ := res.Value.Get("user_login"); v.Str() != "orta" {
			t.Errorf("user_login = %s, want orta", v)
		}
	})
	t.Run("github get-issue on PR-shaped issues keeps each whole", func(t *testing.T) {
		res := applyAction(t, "github.yaml", "get-issue", "github/pygithub__repo-issues-page2.json")
		checkItems(t, res.Value.Items(), []string{"id", "number", "title", "state", "html_url", "user_login", "body", "created_at", "updated_at"})
	})
	t.Run("slack list-channels (wrapper detected by select)", func(t *testing.T) {
		res := applyAction(t, "slack.yaml", "list-channels", "slack/python-slack-sdk__web_response_conversations_list.json")
		rep := res.Report
		if rep.Root != "/channels" || !rep.List || rep.Count != 2 {
			t.Fatalf("Report = %+v", rep)
		}
		if got := keys(res.Value); !slices.Equal(got, []string{"ok", "channels", "response_metadata"}) {
			t.Errorf("wrapper keys = %v, want ok, channels, response_metadata kept", got)
		}
		chans, _ := res.Value.Get("channels")
		checkItems(t, chans.Items(), []string{"id", "name", "is_channel", "is_private", "num_members", "topic_value"})
		if n, _ := chans.Index(0).Get("name"); n.Str() != "general" {
			t.Errorf("first channel = %s, want general", n)
		}
	})
	t.Run("slack get-channel-history", func(t *testing.T) {
		res := applyAction(t, "slack.yaml", "get-channel-history", "slack/slackdump__conversations-history-page1.json")
		rep := res.Report
		if rep.Total != 100 || rep.Count != 30 || rep.TruncatedFrom != 100 {
			t.Fatalf("Report = %+v", rep)
		}
		checkItems(t, res.Value.Items(), []string{"ts", "text", "user", "type", "thread_ts", "reply_count"})
		if !strings.HasPrefix(res.Note, "> [filtered: showing 30 of 100 items; ") || !strings.HasSuffix(res.Note, "; call with _output_mode=raw for all]") {
			t.Errorf("Note = %q", res.Note)
		}
	})
	t.Run("notion query-database (extract: results)", func(t *testing.T) {
		res := applyAction(t, "notion.yaml", "query-database", "notion/notionapi__database_query.json")
		rep := res.Report
		if rep.Root != "/results" || rep.Detected || rep.Count != 1 {
			t.Fatalf("Report = %+v", rep)
		}
		results, _ := res.Value.Get("results")
		checkItems(t, results.Items(), []string{"id", "url", "last_edited_time", "created_time", "archived"})
		if got := keys(results.Index(0)); len(got) != 5 {
			t.Errorf("page keys = %v, want all five", got)
		}
	})
	t.Run("kubectl logs text filter", func(t *testing.T) {
		res := applyAction(t, "kubectl.yaml", "logs", "logs/treeherder__mochitest-end.log")
		if !res.IsText || res.Report.LinesKept > 100 || res.Report.Lines <= 100 {
			t.Fatalf("Report = %+v", res.Report)
		}
		if !strings.Contains(res.Note, "showing first 100 of ") {
			t.Errorf("Note = %q", res.Note)
		}
	})
}

// TestKubectlGetPods is reference bug 2: "select: {items: items}" keeps
// the pod list instead of missing in every pod.
func TestKubectlGetPods(t *testing.T) {
	m, err := LoadManifest(filepath.Join(manifestDir(t), "kubectl.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := m.Action("get-pods").FilterSpec()
	r, err := filter.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	in := `{"apiVersion":"v1","items":[{"metadata":{"name":"web-1","deletionTimestamp":null},"status":{"phase":"Running"}}],"kind":"List","metadata":{"resourceVersion":""}}`
	res, _ := r.ApplyBytes([]byte(in), nil)
	if res.Report.Err != nil {
		t.Fatalf("Report.Err = %v", res.Report.Err)
	}
	want := `{"items":[{"metadata":{"name":"web-1"},"status":{"phase":"Running"}}]}`
	if got := res.Value.String(); got != want {
		t.Errorf("get-pods = %s, want %s", got, want)
	}
}

func TestGhCliCompact(t *testing.T) {
	m, err := LoadManifest(filepath.Join(manifestDir(t), "gh-cli.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := m.Action("pr-list").FilterSpec()
	r, err := filter.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	// gh's JSON; the second PR has no author (a deleted account).
	in := `[{"number":5,"title":"Add filter","state":"OPEN","author":{"login":"ada"}},{"number":6,"title":"Ghost","state":"CLOSED"}]`
	res, _ := r.ApplyBytes([]byte(in), nil)
	want := "Pull Requests:\n  #5 Add filter [OPEN] by ada\n  #6 Ghost [CLOSED] by \n2 PRs"
	if !res.IsText || res.Text != want || res.Note != "" {
		t.Errorf("pr-list = %q (note %q), want %q", res.Text, res.Note, want)
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte("name: x\nactions:\n  a:\n    response:\n      type: array\n      filter:\n        select:\n          id: id\n        max_items: 2\n"))
	f.Add([]byte("name: x\nactions:\n  a:\n    response:\n      type: object\n      text_filter:\n        keep_lines_matching: [\"(\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data, "f.yaml")
		if err != nil {
			_ = err.Error()
			return
		}
		for _, name := range m.ActionNames() {
			a := m.Action(name)
			if a == nil {
				continue
			}
			spec, err := a.FilterSpec()
			if err != nil {
				t.Fatalf("validated manifest, FilterSpec fails: %v", err)
			}
			if _, err := filter.Compile(spec); err != nil {
				t.Fatalf("validated manifest, Compile fails: %v", err)
			}
		}
	})
}
