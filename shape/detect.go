package shape

import (
	"encoding/json"
	"strings"

	"github.com/terse-dev/terse/internal/lazyre"
)

// Detect names the shape of text, the result of call: "read" (numbered
// file lines), "paths" (a path list), "grep" (search results
// "path:12:text"), "test" (a test runner's output), "git" (the output of
// a git command: status, log, show, branch…), "build" (a compiler's or
// linter's: go build/vet, tsc, eslint, cargo build/check/clippy, rustc…),
// "log" (other shell output), or "" when it is unknown. The tool's name and input decide
// when they are known (Claude Code's Read, Bash, Grep, Glob; Codex's
// shell and exec); otherwise, and for MCP tools, the content does, and
// only clear cases are named.
func Detect(text string, call Call) string {
	switch call.Tool {
	case "Read":
		return "read"
	case "Glob":
		return "paths"
	case "Grep":
		var in struct {
			Mode string `json:"output_mode"`
		}
		json.Unmarshal(call.Input, &in)
		switch in.Mode {
		case "content":
			return "grep"
		case "", "files_with_matches":
			return "paths"
		}
		return ""
	case "Bash", "shell", "exec", "exec_command", "local_shell", "container.exec", "shell_command":
		return commandShape(command(call.Input), text)
	case "LS", "WebFetch", "WebSearch", "Edit", "Write", "MultiEdit", "TodoWrite", "Task":
		return ""
	}
	return contentShape(text)
}

// command is the shell command of a call's input: Claude Code's
// {"command": "…"}, Codex's {"command": ["bash", "-lc", "…"]} or
// {"cmd": "…"}.
func command(input []byte) string {
	var in struct {
		Command json.RawMessage `json:"command"`
		Cmd     string          `json:"cmd"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	if in.Cmd != "" {
		return in.Cmd
	}
	var s string
	if json.Unmarshal(in.Command, &s) == nil {
		return s
	}
	var argv []string
	if json.Unmarshal(in.Command, &argv) == nil && len(argv) > 0 {
		return argv[len(argv)-1]
	}
	return ""
}

var (
	// cdPrefix: comment lines and "cd DIR &&" before the command.
	cdPrefix = lazyre.New(`^\s*(#[^\n]*\n\s*|cd\s+\S+\s*(&&|;)\s*)+`)
	testCmd  = lazyre.New(`(^|\s|/)(go test|gotestsum|pytest|py\.test|python3? -m pytest|cargo (test|nextest)|npx (vitest|jest)|vitest|jest|npm (run )?test|pnpm (run )?test|yarn test|mix test|rspec|bundle exec rspec|mise run test|make test)\b`)
	readCmd  = lazyre.New(`^(cat -n|nl)\b`)
	pathsCmd = lazyre.New(`^(find|fd|git ls-files|ls -1)\b`)
	grepCmd  = lazyre.New(`^(grep|rg|git grep)\b.*\s-[a-zA-Z]*n`)
	// gitCmd: git commands whose output names commits, branches and
	// files (kept whole: lossless shaping only).
	gitCmd = lazyre.New(`^git( +-C +\S+)? +(status|log|show|branch|reflog|rev-parse|rev-list|shortlog|tag|describe|stash( +(list|show))?|remote|ls-remote|merge|rebase|cherry-pick|pull|fetch|push|commit|checkout|switch|diff|add +-p)\b`)
	// buildCmd: compilers and linters, whose every error line and
	// file:line is kept (lossless shaping only, or the terminal view).
	buildCmd = lazyre.New(`(^|[\s/;&|])(go (build|vet|install)|golangci-lint|staticcheck|(npx |pnpm |yarn )?(tsc|eslint)|cargo (build|check|clippy)|rustc|mix compile|javac|gcc|g\+\+|clang)\b`)
)

// commandShape is the shape of a shell command's output.
func commandShape(cmd, text string) string {
	c := cdPrefix.ReplaceAllString(cmd, "")
	switch {
	case testCmd.MatchString(c):
		return "test"
	case readCmd.MatchString(c) && !strings.Contains(c, "|"):
		return "read"
	case pathsCmd.MatchString(c) && !strings.Contains(c, "|"):
		return "paths"
	case grepCmd.MatchString(c) && !strings.Contains(c, "|"):
		return "grep"
	case gitCmd.MatchString(c) && !pipedTo(c),
		gitCmd.MatchString(lastStage(c)) && !strings.ContainsAny(c, "\n;&"):
		// Search results and path lists (git diff --name-only) keep
		// their own lossless shapes, which elide nothing either.
		switch s := contentShape(text); s {
		case "read", "paths", "grep":
			return s
		}
		return "git"
	case buildCmd.MatchString(c) && !pipedTo(c):
		// Not grouped by file as search results are: every error line
		// keeps its file:line.
		return "build"
	}
	if s := contentShape(text); s != "" {
		return s
	}
	return "log"
}

// lastStage is the last command of a pipeline ("printf 'y\n' | git add
// -p f": the git command whose output is read), or "" for a command
// that is not piped.
func lastStage(c string) string {
	i := strings.LastIndexByte(c, '|')
	if i <= 0 || c[i-1] == '|' {
		return ""
	}
	return strings.TrimSpace(c[i+1:])
}

// pipedTo reports whether a command's output goes through a filter other
// than head and tail (which keep its lines as they are).
func pipedTo(c string) bool {
	for _, p := range strings.Split(c, "|")[1:] {
		p = strings.TrimSpace(p)
		if p == "" {
			continue // "||": the next piece counts as piped (left as a log)
		}
		if !strings.HasPrefix(p, "head") && !strings.HasPrefix(p, "tail") {
			return true
		}
	}
	return false
}

// contentShape names the clear cases from the content alone: numbered
// lines, a terminal's output (escape codes, progress redraws), a test
// runner's output, search results, a path list.
func contentShape(text string) string {
	head := text
	if len(head) > 64<<10 {
		head = head[:64<<10]
	}
	lines := strings.Split(head, "\n")
	if len(lines) > 1 && len(head) < len(text) {
		lines = lines[:len(lines)-1] // the last one may be cut
	}
	if len(lines) < 3 {
		return ""
	}
	numbered, results, paths, nonEmpty := 0, 0, 0, 0
	for _, l := range lines {
		if l == "" {
			continue
		}
		nonEmpty++
		for _, g := range gutters {
			sp := len(l) - len(strings.TrimLeft(l, " "))
			if d := digits(l[sp:]); d > 0 && sp+d == g.width && strings.HasPrefix(l[sp+d:], g.sep) {
				numbered++
				break
			}
		}
		if matchPath(l) > 0 {
			results++
		}
		if looksLikePath(l) {
			paths++
		}
	}
	switch {
	case nonEmpty < 3:
		return ""
	case numbered*10 >= nonEmpty*9:
		return "read"
	case needsDisplay(text):
		return "log"
	case isTestOutput(head):
		return "test"
	case results*10 >= nonEmpty*9:
		return "grep"
	case paths == nonEmpty:
		return "paths"
	}
	return ""
}

// looksLikePath reports whether a line is a file path alone: a slash,
// no spaces, no colon.
func looksLikePath(l string) bool {
	return strings.Contains(l, "/") && !strings.ContainsAny(l, " \t:;,'\"()<>{}[]=") && len(l) < 4096
}

// isTestOutput reports whether text holds a test runner's verdict lines.
func isTestOutput(text string) bool {
	return testVerdict.MatchString(text)
}

var testVerdict = lazyre.New(`(?m)^(ok  \t|FAIL\t|--- (PASS|FAIL): |=+ .*\b(passed|failed)\b.* in [\d.]+s|test result: (ok|FAILED)\.| Test Files  |Tests: +\d|\d+ (examples?|tests?|doctests?|properties)(, \d+ (tests?|properties))*, \d+ failures?\b)`)
