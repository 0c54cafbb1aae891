package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/memtest"
)

// The memory test runs the CLI on 100 MB inputs generated in the test and
// reports each command's peak resident memory (VmHWM) as a multiple of the
// input: an array of issue-like objects, an array of small objects (about
// 100 bytes each, where the parsed tree alone is over twice the input)
// and one string. It is slow and large, so it runs only when asked:
//
//	TERSE_MEMTEST=1 go test ./cmd/terse -run TestMemory -v
//
// TERSE_MEMTEST_MB sets the input size in MB (default 100) and
// TERSE_MEMTEST_MAX a multiple that fails the test when exceeded (by
// default it only reports each figure against the 4× goal).
// Each command runs in a process of its own (this test binary, re-run),
// so that one run's peak does not hide another's.
func TestMemory(t *testing.T) {
	if os.Getenv("TERSE_MEMTEST") == "" {
		t.Skip("set TERSE_MEMTEST=1 to run the 100 MB memory test")
	}
	mb := 100
	if s := os.Getenv("TERSE_MEMTEST_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	const goal = 4.0
	limit := 0.0
	if s := os.Getenv("TERSE_MEMTEST_MAX"); s != "" {
		limit, _ = strconv.ParseFloat(s, 64)
	}
	dir := t.TempDir()
	inputs := map[string]string{
		"objects": filepath.Join(dir, "objects.json"),
		"small":   filepath.Join(dir, "small.json"),
		"string":  filepath.Join(dir, "string.json"),
	}
	if err := os.WriteFile(inputs["objects"], memObjects(mb<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inputs["small"], memtest.Array(mb<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inputs["string"], memString(mb<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	for _, in := range []string{"objects", "small", "string"} {
		for _, cmdline := range []string{"compact --budget 8000", "encode --to auto", "encode --to toon"} {
			args := append(strings.Fields(cmdline), inputs[in])
			if args[0] == "compact" {
				args = append([]string{args[0], "--store", store}, args[1:]...)
			}
			t.Run(in+"/"+cmdline, func(t *testing.T) {
				st, _ := os.Stat(inputs[in])
				cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryChild$")
				cmd.Env = append(os.Environ(), "TERSE_MEMTEST_CHILD="+strings.Join(args, "\x1f"))
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Run(); err != nil {
					t.Fatalf("%v\n%s\n%s", err, out.Bytes(), errb.Bytes())
				}
				var hwm int64
				for l := range strings.Lines(out.String()) {
					if s, ok := strings.CutPrefix(l, "VmHWM_KB "); ok {
						hwm, _ = strconv.ParseInt(strings.TrimSpace(s), 10, 64)
					}
				}
				if hwm == 0 {
					t.Fatalf("no VmHWM in the output:\n%s\n%s", out.Bytes(), errb.Bytes())
				}
				x := float64(hwm<<10) / float64(st.Size())
				met := "within"
				if x > goal {
					met = "over"
				}
				t.Logf("terse %s (%s): input %.1f MB, peak RSS %.1f MB, %.1f× the input (%s the %.0f× goal)", cmdline, in,
					float64(st.Size())/1e6, float64(hwm<<10)/1e6, x, met, goal)
				if limit > 0 && x > limit {
					t.Errorf("peak %.1f× the input, want at most %.1f×", x, limit)
				}
			})
		}
	}
}

// TestMemoryChild runs one command for TestMemory, its output discarded,
// and prints the process's peak resident memory.
func TestMemoryChild(t *testing.T) {
	spec := os.Getenv("TERSE_MEMTEST_CHILD")
	if spec == "" {
		t.Skip("run by TestMemory")
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	var stderr bytes.Buffer
	if err := run(context.Background(), strings.Split(spec, "\x1f"), os.Stdin, devnull, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.Bytes())
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fmt.Printf("VmHWM_KB %s\n", strings.TrimSuffix(strings.TrimSpace(s), " kB"))
		}
	}
}

// memObjects returns a JSON array of issue-like objects of about n bytes.
func memObjects(n int) []byte {
	b := make([]byte, 0, n+1024)
	b = append(b, '[')
	for i := 0; len(b) < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":%d,"number":%d,"title":"Scheduler drops job %d when the queue is full","state":"%s","user":{"login":"dev%d","id":%d,"site_admin":false},"labels":[{"name":"bug","color":"d73a4a"},{"name":"p%d"}],"comments":%d,"created_at":"2025-0%d-1%dT10:%02d:00Z","url":"https://api.example.com/repos/org/repo/issues/%d","body":"The worker %d stops after %d retries; logs show a timeout in step %d."}`,
			1000000+i, i+1, i, []string{"open", "closed"}[i%2], i%97, 5000+i%97, i%3, i%13, 1+i%9, i%10, i%60, i+1, i%31, i%7, i%11)
	}
	return append(b, ']')
}

// memString returns one JSON string of about n bytes of prose, with an
// escaped line break now and then.
func memString(n int) []byte {
	b := make([]byte, 0, n+1024)
	b = append(b, '"')
	words := strings.Fields("the worker stops after three retries and the log shows a timeout in the step that uploads artifacts to the cache")
	for i := 0; len(b) < n; i++ {
		b = append(b, words[i%len(words)]...)
		if i%23 == 22 {
			b = append(b, `.\n`...)
		} else {
			b = append(b, ' ')
		}
	}
	return append(b, '"')
}
