package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
)

const wrapDoc = `
Wrap runs a coding agent with its model requests going through terse api:
it starts the proxy on a free loopback port, runs the agent (claude or
codex, found on PATH) with ANTHROPIC_BASE_URL or OPENAI_BASE_URL pointing at
it, stops the proxy when the agent exits and prints the summary to stderr.
Arguments after "--" go to the agent. Exit status 1 when the agent fails.
The config's [profiles] and [telemetry] apply as for terse api.

Example:
  terse wrap claude -- --model claude-sonnet-4-5
  terse wrap --window 150000 --stats-file stats.jsonl codex
`

// agentEnv is the base-URL variable each agent reads, and the path the
// proxy's address is given with.
var agentEnv = map[string][2]string{
	"claude": {"ANTHROPIC_BASE_URL", ""},
	"codex":  {"OPENAI_BASE_URL", "/v1"},
}

func runWrap(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("wrap", "[--config FILE] [--window TOKENS] [--stats-file FILE] [--dry-run] claude|codex [-- ARGS]", wrapDoc, stdout, stderr)
	af := addAPIFlags(fs)
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
	cfg, a, err := af.settings()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s, err := startAPI(cfg, a, ln, stderr)
	if err != nil {
		ln.Close()
		return err
	}
	// Not tied to ctx: an interrupt at the terminal reaches the agent
	// itself (it uses it to stop a turn); terse waits for it to exit.
	cmd := exec.Command(agent, agentArgs...)
	cmd.Env = append(os.Environ(), env[0]+"=http://"+ln.Addr().String()+env[1])
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	runErr := cmd.Run()
	fmt.Fprint(stderr, s.stop())
	if ee, ok := errors.AsType[*exec.ExitError](runErr); ok {
		return &agentExit{agent: agent, code: ee.ExitCode()}
	}
	return runErr
}

// agentExit is a wrapped agent's failure exit.
type agentExit struct {
	agent string
	code  int
}

func (e *agentExit) Error() string {
	return fmt.Sprintf("wrap: %s exited with status %d", e.agent, e.code)
}
