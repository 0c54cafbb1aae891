package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// hookMinVersion is the first Claude Code whose PostToolUse hooks can
// replace the output of every tool (hookSpecificOutput.updatedToolOutput,
// v2.1.121 changelog); earlier ones replace only MCP tools' output
// (updatedMCPToolOutput).
var hookMinVersion = [3]int{2, 1, 121}

// doctorHook shows where terse's PostToolUse hook is installed and the
// Claude Code version, and returns the number of problems found: a hook
// whose terse does not exist. A Claude Code too old for the hook is a
// warning, not a problem.
func doctorHook(ctx context.Context, stdout io.Writer) int {
	problems := 0
	fmt.Fprintln(stdout, "\nclaude-code hook:")
	installed := 0
	for _, scope := range []string{"user", "project", "local"} {
		path, err := hookSettingsPath(scope)
		if err != nil {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		root, err := parseSettings(data)
		if err != nil {
			fmt.Fprintf(stdout, "  %s: %v\n", path, err)
			problems++
			continue
		}
		hooks, _ := root.Get("hooks")
		post, _ := hooks.Get("PostToolUse")
		for _, g := range post.Items() {
			matcher, _ := g.Get("matcher")
			hs, _ := g.Get("hooks")
			for _, it := range hs.Items() {
				c, _ := it.Get("command")
				if !isTerseHook(c.Str()) {
					continue
				}
				installed++
				fmt.Fprintf(stdout, "  %s (%s): PostToolUse %q: %s\n", path, scope, matcher.Str(), c.Str())
				bin, _ := hookBinary(c.Str())
				if _, err := os.Stat(bin); err != nil {
					if _, ok := lookTerse(bin); !ok {
						fmt.Fprintf(stdout, "    problem: %s does not exist\n", bin)
						problems++
					}
				}
			}
		}
	}
	if installed == 0 {
		fmt.Fprintln(stdout, "  not installed (terse setup claude-code installs it)")
	}
	claude, err := exec.LookPath("claude")
	if err != nil {
		fmt.Fprintln(stdout, "  claude: not found on PATH")
		return problems
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, claude, "--version").Output()
	if err != nil {
		fmt.Fprintf(stdout, "  claude: %s --version failed: %v\n", claude, err)
		return problems
	}
	line := strings.TrimSpace(string(out))
	fmt.Fprintf(stdout, "  claude: %s\n", line)
	if v, ok := parseVersion(line); ok && less(v, hookMinVersion) {
		fmt.Fprintf(stdout, "    warning: Claude Code below %d.%d.%d replaces only MCP tools' output; upgrade it for the hook to shape Bash, Grep, Glob and WebFetch\n",
			hookMinVersion[0], hookMinVersion[1], hookMinVersion[2])
	}
	return problems
}

// parseVersion reads the first "X.Y.Z" of s.
func parseVersion(s string) ([3]int, bool) {
	for _, f := range strings.Fields(s) {
		parts := strings.Split(strings.TrimPrefix(f, "v"), ".")
		if len(parts) < 3 {
			continue
		}
		var v [3]int
		ok := true
		for i := range v {
			n, err := strconv.Atoi(strings.TrimFunc(parts[i], func(r rune) bool { return r < '0' || r > '9' }))
			if err != nil {
				ok = false
				break
			}
			v[i] = n
		}
		if ok {
			return v, true
		}
	}
	return [3]int{}, false
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
