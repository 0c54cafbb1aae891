package filter

import (
	"bytes"
	"os"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
)

// githubList builds a JSON array of about size bytes from the items of the
// corpus's GitHub list responses (issues, pulls, repos, events...),
// repeated in file order until the size is reached.
func githubList(tb testing.TB, size int) []byte {
	tb.Helper()
	var items []tree.Value
	n := 0
	for _, f := range corpus.Files(tb, ".json") {
		if !bytes.Contains([]byte(f), []byte("/github/")) {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil || v.Kind() != tree.KindArray {
			continue
		}
		for _, it := range v.Items() {
			if it.Kind() == tree.KindObject {
				items = append(items, it)
			}
		}
	}
	if len(items) == 0 {
		tb.Skip("no GitHub list payloads in the corpus")
	}
	var out []tree.Value
	for i := 0; n < size; i++ {
		it := items[i%len(items)]
		out = append(out, it)
		n += len(tree.AppendJSON(nil, it)) + 1
	}
	return tree.AppendJSON(nil, tree.Array(out...))
}

// githubSpec is a typical list filter: a dozen fields, URL noise excluded,
// nulls dropped, no truncation (every item is processed).
var githubSpec = Spec{
	Select: []Field{
		{Path: "id"}, {Path: "number"}, {Path: "title"}, {Path: "name"}, {Path: "full_name"},
		{Path: "state"}, {Out: "author", Path: "user.login"}, {Out: "owner", Path: "owner.login"},
		{Path: "created_at"}, {Path: "updated_at"}, {Out: "labels", Path: "labels[*].name"},
		{Path: "description"}, {Path: "html_url"},
	},
	Exclude:   []string{"*_url"},
	DropNulls: true,
}

// BenchmarkFilterGitHubList filters a ~1 MB GitHub list. The baseline,
// in the same run, is parsing the same bytes: the cost every stage pays
// before filtering can start. The target is ≤ 5 ms per MB for Apply.
func BenchmarkFilterGitHubList(b *testing.B) {
	data := githubList(b, 1<<20)
	v, err := tree.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("baseline=tree.Parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tree.Parse(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	r := mustCompile(b, githubSpec)
	b.Run("Apply", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			r.Apply(v, nil)
		}
	})
	ex := mustCompile(b, Spec{Exclude: []string{"*_url", "node_id"}, DropNulls: true})
	b.Run("Apply/exclude-only", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			ex.Apply(v, nil)
		}
	})
	b.Run("ApplyBytes", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.ApplyBytes(data, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestGitHubListFilter(t *testing.T) {
	data := githubList(t, 1<<20)
	v, _ := tree.Parse(data)
	res := mustCompile(t, githubSpec).Apply(v, nil)
	rep := res.Report
	if rep.Err != nil || !rep.List || rep.Count != v.Len() {
		t.Fatalf("Report = %+v", rep)
	}
	if rep.ResultBytes*3 > rep.OriginalBytes {
		t.Errorf("filtered %d → %d bytes; want at least 3x smaller", rep.OriginalBytes, rep.ResultBytes)
	}
	for _, it := range res.Value.Items() {
		for _, m := range it.Members() {
			switch m.Key {
			case "id", "number", "title", "name", "full_name", "state", "author", "owner", "created_at", "updated_at", "labels", "description":
			default:
				t.Fatalf("item has field %q outside the select (html_url is excluded by *_url)", m.Key)
			}
			if m.Value.Kind() == tree.KindNull {
				t.Fatalf("item has null %q after drop_nulls", m.Key)
			}
		}
	}
}
