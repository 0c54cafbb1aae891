package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestProxySIGTERM: SIGTERM stops terse proxy as SIGINT does: it drains,
// writes --stats-file and returns without error.
func TestProxySIGTERM(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat to stand in for a server")
	}
	// Keep this process alive whatever the proxy's handler does.
	keep := make(chan os.Signal, 1)
	signal.Notify(keep, syscall.SIGTERM)
	defer signal.Stop(keep)

	stats := filepath.Join(t.TempDir(), "stats.json")
	stdin, _ := io.Pipe() // the client never closes its side
	errR, errW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runProxy(context.Background(), []string{"--stats-file", stats, "--log-format", "json", "--", cat}, stdin, io.Discard, errW)
		errW.Close()
	}()
	sc := bufio.NewScanner(errR)
	started := false
	for !started && sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		started = line["msg"] == "terse proxy started" && line["level"] == "INFO"
	}
	if !started {
		t.Fatal("no INFO startup line")
	}
	go io.Copy(io.Discard, errR)
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("runProxy after SIGTERM = %v", err)
	}
	data, err := os.ReadFile(stats)
	if err != nil || !strings.Contains(string(data), `"calls"`) {
		t.Fatalf("stats file after SIGTERM: %v %s", err, data)
	}
}
