package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const wrapDoc = `
Wrap runs a coding agent with its model requests going through terse api:
it starts the proxy on a free loopback port, runs the agent (claude or
codex, found on PATH) with ANTHROPIC_BASE_URL or OPENAI_BASE_URL pointing at
it, stops the proxy when the agent exits and prints the summary to stderr.

Everything after the agent's name is the agent's own command line, flags
included ("--" before them is accepted and dropped). terse's flags go
before the name. The exit status is the agent's.

When ANTHROPIC_BASE_URL (claude) or OPENAI_BASE_URL (codex) is already set,
for a company gateway or a logging proxy, it becomes terse's upstream and
wrap says so once on start: requests, and the credentials in them, go
where they went before, through terse. (An OPENAI_BASE_URL must end in
/v1, as OpenAI's own does.) --anthropic-upstream and --openai-upstream
name the upstream explicitly.

While the agent runs, terse's own messages (upstream errors and the like)
go to a log file, not over the agent's screen; its path is printed at
exit. --log names another file, --log - keeps them on stderr.

The config's [profiles] and [telemetry] apply as for terse api.

Exit status: the agent's; 127 when the agent is not installed (nothing
is started then); 1 when terse itself fails; 2 for a usage error.

Examples:
  terse wrap claude --model claude-sonnet-4-5
  terse wrap --window 150000 --stats-file stats.jsonl codex
`

// agentEnv is the base-URL variable each agent reads, and the path the
// proxy's address is given with.
var agentEnv = map[string][2]string{
	"claude": {"ANTHROPIC_BASE_URL", ""},
	"codex":  {"OPENAI_BASE_URL", "/v1"},
}

// agentInstall says how to install each agent.
var agentInstall = map[string]string{
	"claude": "npm install -g @anthropic-ai/claude-code",
	"codex":  "npm install -g @openai/codex",
}

func runWrap(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("wrap", "[--config FILE] [--window TOKENS] [--stats-file FILE] [--log FILE] [--dry-run] claude|codex [AGENT ARGS...]", wrapDoc, stdout, stderr)
	af := addAPIFlags(fs)
	logPath := fs.String("log", "", "write terse's messages to `FILE` while the agent runs (default: wrap.log in terse's state directory; - for stderr)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return &usageError{"wrap: name the agent: claude or codex"}
	}
	agent := rest[0]
	env, ok := agentEnv[agent]
	if !ok {
		return &usageError{fmt.Sprintf("wrap: unknown agent %q (want claude or codex)", agent)}
	}
	agentArgs := rest[1:]
	if len(agentArgs) > 0 && agentArgs[0] == "--" {
		agentArgs = agentArgs[1:]
	}
	// The agent first: when it is missing nothing else starts.
	agentPath, err := exec.LookPath(agent)
	if err != nil {
		return &agentMissing{agent: agent}
	}
	cfg, a, err := af.settings()
	if err != nil {
		return err
	}
	// A base URL the user set is where requests went: keep it so.
	if prev := os.Getenv(env[0]); prev != "" {
		upstream := &a.AnthropicUpstream
		explicit := *af.anthropic != ""
		if agent == "codex" {
			upstream, explicit = &a.OpenAIUpstream, *af.openai != ""
		}
		switch {
		case explicit:
			fmt.Fprintf(stderr, "terse wrap: %s=%s is set, but --%s-upstream %s wins\n", env[0], prev, map[string]string{"claude": "anthropic", "codex": "openai"}[agent], *upstream)
		case agent == "codex" && !strings.HasSuffix(strings.TrimSuffix(prev, "/"), "/v1"):
			return fmt.Errorf("wrap: OPENAI_BASE_URL=%s does not end in /v1; terse forwards /v1 paths: name the upstream with --openai-upstream (its base without /v1)", prev)
		default:
			*upstream = strings.TrimSuffix(strings.TrimSuffix(prev, "/"), env[1])
			fmt.Fprintf(stderr, "terse wrap: %s was %s: requests go there, through terse\n", env[0], prev)
		}
	}
	if agent == "claude" {
		for _, v := range []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"} {
			if os.Getenv(v) != "" && os.Getenv(v) != "0" {
				fmt.Fprintf(stderr, "terse wrap: %s is set: Claude Code then talks to that cloud directly and terse sees no requests\n", v)
			}
		}
	}
	logw, logName, closeLog, err := openWrapLog(*logPath, stderr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		closeLog()
		return err
	}
	s, err := startAPI(cfg, a, ln, logw)
	if err != nil {
		ln.Close()
		closeLog()
		return err
	}
	// Not tied to ctx: an interrupt at the terminal reaches the agent
	// itself (it uses it to stop a turn); terse waits for it to exit.
	cmd := exec.Command(agentPath, agentArgs...)
	cmd.Env = append(os.Environ(), env[0]+"=http://"+ln.Addr().String()+env[1])
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	runErr := cmd.Run()
	fmt.Fprint(stderr, s.stop())
	closeLog()
	if logName != "" {
		fmt.Fprintf(stderr, "terse wrap: log: %s\n", logName)
	}
	if ee, ok := errors.AsType[*exec.ExitError](runErr); ok {
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return &agentExit{agent: agent, code: code}
	}
	return runErr
}

// openWrapLog opens where terse's messages go while the agent runs.
func openWrapLog(path string, stderr io.Writer) (io.Writer, string, func(), error) {
	if path == "-" {
		return stderr, "", func() {}, nil
	}
	if path == "" {
		dir, err := stateDir()
		if err != nil {
			return stderr, "", func() {}, nil
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return stderr, "", func() {}, nil
		}
		path = filepath.Join(dir, "wrap.log")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, "", nil, err
	}
	fmt.Fprintf(f, "-- terse wrap started %s\n", time.Now().Format(time.RFC3339))
	return f, path, func() { f.Close() }, nil
}

// stateDir is where terse keeps logs: $XDG_STATE_HOME/terse, else
// ~/.local/state/terse.
func stateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "terse"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "terse"), nil
}

// agentExit is a wrapped agent's failure exit; terse exits with the same
// status, saying nothing more (the agent has spoken for itself).
type agentExit struct {
	agent string
	code  int
}

func (e *agentExit) Error() string {
	return fmt.Sprintf("wrap: %s exited with status %d", e.agent, e.code)
}

// agentMissing is an agent that is not installed.
type agentMissing struct{ agent string }

func (e *agentMissing) Error() string {
	return fmt.Sprintf("wrap: %s is not installed (not found on PATH); install it with: %s", e.agent, agentInstall[e.agent])
}
