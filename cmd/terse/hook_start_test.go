package main

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/lazyre"
)

// TestLazyRegexpsCompile compiles every regular expression the packages
// of this program build on first use (to keep them out of process start),
// so that a bad one fails here rather than at its first use.
func TestLazyRegexpsCompile(t *testing.T) {
	if err := lazyre.CompileAll(); err != nil {
		t.Fatal(err)
	}
}

// TestHookGCRestores: the hook turns the collector off for its own run
// and leaves the settings as it found them (tests and replays run it in
// process, many times).
func TestHookGCRestores(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("TERSE_HOOK_LOG", filepath.Join(t.TempDir(), "hook.log"))
	gc := debug.SetGCPercent(77)
	limit := debug.SetMemoryLimit(1 << 40)
	defer func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}()
	var off bool
	restore := hookGC()
	off = debug.SetGCPercent(-1) == -1
	restore()
	if !off {
		t.Error("the collector ran during the hook")
	}
	var out bytes.Buffer
	if err := runHook(context.Background(), []string{"claude-code"}, strings.NewReader(`{}`), &out, &out); err != nil {
		t.Fatal(err)
	}
	if g, l := debug.SetGCPercent(77), debug.SetMemoryLimit(1<<40); g != 77 || l != 1<<40 {
		t.Errorf("after the hook: GOGC %d, memory limit %d; want 77, %d", g, l, int64(1<<40))
	}
}
