package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/terse-dev/terse/config"
)

// FuzzHookSettings checks the settings edits on any file: adding the hook
// twice changes nothing the second time, and removing it gives back the
// same settings as before (when terse's hook was not there already).
func FuzzHookSettings(f *testing.F) {
	f.Add([]byte(``))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"model":"opus","hooks":{"PostToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"fmt"}]}]}}`))
	f.Add([]byte(`{"hooks":{"PreToolUse":[]},"env":{"A":"1"}}`))
	f.Add([]byte(`{"hooks":{"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/x/terse hook claude-code"}]}]}}`))
	const cmd = "/opt/terse/bin/terse hook claude-code"
	f.Fuzz(func(t *testing.T, data []byte) {
		added, note, err := addHook(data, cmd)
		if err != nil {
			return
		}
		again, note2, err := addHook(added, cmd)
		if err != nil || !bytes.Equal(again, added) || note2 != "already installed" {
			t.Fatalf("adding twice: %q (%v), then %q", note, err, note2)
		}
		if strings.Contains(string(data), "hook claude-code") {
			return // a terse hook of its own: removed too
		}
		removed, _, err := removeHook(added)
		if err != nil {
			t.Fatal(err)
		}
		if !sameSettings(removed, data) {
			t.Fatalf("add then remove of %q gives %q", data, removed)
		}
	})
}

func TestIsTerseHook(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want bool
	}{
		{"/usr/local/bin/terse hook claude-code", true},
		{"'/Users/a b/bin/terse' hook claude-code", true},
		{"terse hook claude-code", true},
		{"/opt/terse-1.2/terse.exe hook claude-code", true},
		{"other hook claude-code", false},
		{"terse hook", false},
		{"gofmt -w .", false},
	} {
		if got := isTerseHook(c.cmd); got != c.want {
			t.Errorf("isTerseHook(%q) = %v, want %v", c.cmd, got, c.want)
		}
	}
}

func TestHookSelected(t *testing.T) {
	cfg := config.Default()
	if !hookSelected(cfg, "Bash") {
		t.Error("Bash not selected by default")
	}
	cfg.Proxy.ExcludeTools = []string{"mcp__*", "Grep"}
	for tool, want := range map[string]bool{"Bash": true, "Grep": false, "mcp__gh__list": false} {
		if got := hookSelected(cfg, tool); got != want {
			t.Errorf("exclude: hookSelected(%s) = %v, want %v", tool, got, want)
		}
	}
	// A glob selects an MCP tool by its tool part too, as the proxies'
	// selection does (toolname.Match).
	cfg.Proxy.ExcludeTools = []string{"list_*"}
	for tool, want := range map[string]bool{"mcp__gh__list_issues": false, "list_issues": false, "mcp__gh__get_me": true} {
		if got := hookSelected(cfg, tool); got != want {
			t.Errorf("bare name: hookSelected(%s) = %v, want %v", tool, got, want)
		}
	}
	// Include wins over exclude.
	cfg.Proxy.IncludeTools = []string{"Grep"}
	for tool, want := range map[string]bool{"Bash": false, "Grep": true, "mcp__gh__list": false} {
		if got := hookSelected(cfg, tool); got != want {
			t.Errorf("include: hookSelected(%s) = %v, want %v", tool, got, want)
		}
	}
}
