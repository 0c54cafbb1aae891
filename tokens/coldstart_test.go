package tokens

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkColdStart builds the terse binary and runs `terse count` and
// `terse encode --to json` on the same 1 KB JSON file, alternately, each as
// a whole process, and reports each one's CPU time (user + system) per run,
// their ratio (count-vs-encode) and the binary's size.
//
//	go test -run '^$' -bench ColdStart -benchtime 20x ./tokens/
func BenchmarkColdStart(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "terse")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/terse").CombinedOutput(); err != nil {
		b.Skipf("go build: %v\n%s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		b.Fatal(err)
	}
	type item struct {
		ID   int      `json:"id"`
		Name string   `json:"name"`
		OK   bool     `json:"ok"`
		Tags []string `json:"tags"`
	}
	var items []item
	for i := 0; i < 17; i++ {
		items = append(items, item{i, fmt.Sprintf("item %d", i), i%2 == 0, []string{"a", "b"}})
	}
	data, _ := json.Marshal(items) // about 1 KB
	file := filepath.Join(dir, "in.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Fatal(err)
	}
	cpu := func(args ...string) time.Duration {
		cmd := exec.Command(bin, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("terse %v: %v\n%s", args, err, out)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var count, encode time.Duration
	for b.Loop() {
		count += cpu("count", file)
		encode += cpu("encode", "--to", "json", file)
	}
	n := float64(b.N)
	b.ReportMetric(count.Seconds()*1e3/n, "count-cpu-ms")
	b.ReportMetric(encode.Seconds()*1e3/n, "encode-cpu-ms")
	b.ReportMetric(count.Seconds()/encode.Seconds(), "count-vs-encode")
	b.ReportMetric(float64(fi.Size())/1e6, "binary-MB")
}
