package fit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// corpusItems returns n items cycled from real GitHub list responses.
func corpusItems(b *testing.B, n int) tree.Value {
	dir := corpus.Dir(b, "corpus")
	var pool []tree.Value
	for _, f := range []string{"github/pygithub__repo-issues-page2.json", "github/pygithub__repo-issues-comments.json", "github/pygithub__user-repos.json"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			b.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		pool = append(pool, v.Items()...)
	}
	items := make([]tree.Value, n)
	for i := range items {
		items[i] = pool[i%len(pool)]
	}
	return tree.Array(items...)
}

// BenchmarkFit1000Items fits a 1,000-item array of real GitHub objects
// (issues, comments, repositories) to 8,000 o200k_base tokens. Target:
// ≤ 20 ms per op.
func BenchmarkFit1000Items(b *testing.B) {
	v := corpusItems(b, 1000)
	c := tokens.O200kBase()
	c.Count("warm up")
	size := len(tree.AppendJSON(nil, v))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	o := &Options{Budget: 8000, Counter: c, Tool: "get_issues"}
	defer reportCPU(b)()
	for b.Loop() {
		res, err := FitJSON(context.Background(), v, o)
		if err != nil || !res.Stats.Truncated {
			b.Fatal(err, res.Stats)
		}
	}
}

// reportCPU starts counting the process's CPU time; the function it
// returns reports it per op (cpu-ms/op: collector and every goroutine
// included, steadier than wall time on a loaded machine).
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if d := processCPU() - start; d > 0 && b.N > 0 {
			b.ReportMetric(d.Seconds()*1e3/float64(b.N), "cpu-ms/op")
		}
	}
}

// logLines returns n lines cycled from the corpus logs.
func logLines(b *testing.B, n int) string {
	dir := corpus.Dir(b, "corpus")
	var lines []string
	for _, f := range []string{"logs/treeherder__mochitest-end.log", "logs/holmes__01_crashpod__kubectl_logs_all_containers.log"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, splitLines(string(data))...)
	}
	var sb strings.Builder
	for i := range n {
		sb.WriteString(lines[i%len(lines)])
		sb.WriteByte('\n')
	}
	return sb.String()
}

// BenchmarkFit100kLogLines fits 100,000 real log lines to 8,000 tokens.
// Target: ≤ 200 ms per op.
func BenchmarkFit100kLogLines(b *testing.B) {
	s := logLines(b, 100000)
	c := tokens.O200kBase()
	c.Count("warm up")
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	o := &Options{Budget: 8000, Counter: c, Tool: "get_job_logs"}
	defer reportCPU(b)()
	for b.Loop() {
		res, err := FitText(context.Background(), s, o)
		if err != nil || !res.Stats.Truncated {
			b.Fatal(err, res.Stats)
		}
	}
}

// BenchmarkFastPath compares fitting a result that already fits with the
// plain encoding of the same value, in the same run. "plain" is
// tree.AppendJSON; "plain+count" adds the exact token count a caller needs
// to know that the result fits; "fit" is FitJSON. Target: fit < 1.05 ×
// plain. The small file is below the budget in bytes (no count needed);
// the large one is below it only in tokens, so fit must count.
func BenchmarkFastPath(b *testing.B) {
	dir := corpus.Dir(b, "corpus")
	c := tokens.O200kBase()
	c.Count("warm up")
	for _, tc := range []struct {
		name, file string
		budget     int
	}{
		{"small", "github/pygithub__repo-issues-item-comments.json", 25000},
		{"large", "github/pygithub__repo-issues-page2.json", 25000},
	} {
		data, err := os.ReadFile(filepath.Join(dir, tc.file))
		if err != nil {
			b.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		size := int64(len(tree.AppendJSON(nil, v)))
		o := &Options{Budget: tc.budget, Counter: c}
		b.Run(tc.name+"/plain", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				_ = tree.AppendJSON(nil, v)
			}
		})
		b.Run(tc.name+"/plain+count", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				_ = tokens.CountBytes(c, tree.AppendJSON(nil, v))
			}
		})
		b.Run(tc.name+"/fit", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				res, _ := FitJSON(context.Background(), v, o)
				if res.Stats.Truncated {
					b.Fatal("trimmed")
				}
			}
		})
	}
}

// BenchmarkFitFormats fits a 30-item GitHub list (pull requests, 424 KB)
// in each output format to the budgets the proxy uses. auto is render's
// verified adaptive encoding, the expensive case: candidates are costed
// and counted in it.
func BenchmarkFitFormats(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(corpus.Dir(b, "corpus"), "github/pygithub__repo-pulls.json"))
	if err != nil {
		b.Fatal(err)
	}
	v, err := tree.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	c := tokens.O200kBase()
	for _, f := range []Format{JSON, toonFormat, autoFormat} {
		for _, budget := range []int{8000, 20000} {
			b.Run(fmt.Sprintf("%s/%d", f.Name, budget), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				o := &Options{Budget: budget, Counter: c, Format: f, Store: &store.Mem{}}
				for b.Loop() {
					res, err := FitJSON(context.Background(), v, o)
					if err != nil || !res.Stats.Truncated {
						b.Fatal(err, res.Stats)
					}
				}
			})
		}
	}
}
