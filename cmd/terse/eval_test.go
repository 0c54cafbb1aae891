package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestEvalOpenAIReader runs "terse eval --reader openai" against a local
// Chat Completions endpoint that answers every question with "not shown":
// the run completes, the report files are written, and a second run is
// served from the cache.
func TestEvalOpenAIReader(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var req struct {
			Model string `json:"model"`
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &req)
		if r.URL.Path != "/v1/chat/completions" || req.Model != "tiny" {
			http.Error(w, "unexpected "+r.URL.Path+" "+req.Model, http.StatusBadRequest)
			return
		}
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"not shown"}}],"usage":{"prompt_tokens":100,"completion_tokens":2}}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	doc := filepath.Join(dir, "issues.json")
	os.WriteFile(doc, []byte(`{"total_count":2,"items":[{"number":1,"title":"A","state":"open"},{"number":2,"title":"B","state":"closed"}]}`), 0o644)
	args := []string{"eval", "--reader", "openai", "--model", "tiny", "--base-url", srv.URL + "/v1",
		"--cache", filepath.Join(dir, "cache"), "--out", filepath.Join(dir, "out"),
		"--encodings", "json,auto", "--questions", "3", "--yes", doc}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, nil, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if got := requests.Load(); got != 6 {
		t.Errorf("first run sent %d requests, want 6 (3 questions × 2 encodings)", got)
	}
	if !strings.Contains(stdout.String(), "| json | 0.0 % | 0/3 |") || !strings.Contains(stdout.String(), "Tokens the provider reported") {
		t.Errorf("report:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "will send 6 requests to openai:tiny (0 cached)") {
		t.Errorf("no estimate on stderr:\n%s", stderr.String())
	}
	for _, f := range []string{"report.md", "report.json", "chart.svg", "questions.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, "out", f)); err != nil {
			t.Error(err)
		}
	}
	// Again, without --yes: everything is cached, so it runs and sends nothing.
	stderr.Reset()
	stdout.Reset()
	again := append(append([]string{}, args[:len(args)-2]...), doc)
	if err := run(context.Background(), again, nil, &stdout, &stderr); err != nil {
		t.Fatalf("second run: %v\n%s", err, stderr.String())
	}
	if got := requests.Load(); got != 6 {
		t.Errorf("second run sent %d requests, want none", got-6)
	}
	if !strings.Contains(stderr.String(), "will send 0 requests to openai:tiny (6 cached)") {
		t.Errorf("second estimate:\n%s", stderr.String())
	}
	// The questions file written by the first run is accepted back.
	stdout.Reset()
	qargs := []string{"eval", "--reader", "openai", "--model", "tiny", "--base-url", srv.URL + "/v1",
		"--cache", filepath.Join(dir, "cache"), "--out", filepath.Join(dir, "out2"), "--encodings", "json",
		"--questions-file", filepath.Join(dir, "out", "questions.jsonl"), "--yes"}
	if err := run(context.Background(), qargs, nil, &stdout, &stderr); err != nil {
		t.Fatalf("questions file run: %v\n%s", err, stderr.String())
	}
}

// TestEvalReads runs "terse eval --reads" with the decode reader on a
// source file: the questions are file read questions, asked in the read
// as the agent shows it and in each read form, all answered right.
func TestEvalReads(t *testing.T) {
	dir := t.TempDir()
	var src strings.Builder
	for i := 1; i <= 120; i++ {
		if i%5 == 0 {
			src.WriteString("}\n")
			continue
		}
		src.WriteString("\tvalue" + strings.Repeat("x", i%7) + " := compute(" + strings.Repeat("1", i%3+1) + ", " + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ")\n")
	}
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "data.bin"), []byte{0, 1, 2}, 0o644)
	var stdout, stderr bytes.Buffer
	args := []string{"eval", "--reads", dir, "--questions", "6", "--out", filepath.Join(dir, "out")}
	if err := run(context.Background(), args, nil, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"| read | 100.0 % | 6/6 |", "| read:gutter | 100.0 % | 6/6 |", "| read:tab | 100.0 % | 6/6 |", "| read:sparse | 100.0 % | 6/6 |", "| read:range | 100.0 % | 6/6 |", "line-text", "line-number"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, stdout.String())
		}
	}
}
