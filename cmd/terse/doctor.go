package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

const doctorDoc = `
Doctor shows how terse is wired into the MCP clients on this machine: the
terse version, which terse is found on PATH and whether it is this binary,
and for each client whose configuration exists (see "terse help setup")
every server, whether it runs through terse, and whether the terse its
configuration calls is found and is the one on PATH.

It changes nothing. The exit status is 0 when every terse a configuration
calls is found, 1 otherwise.

Examples:
  terse doctor
  terse doctor --config-path .mcp.json
`

func runDoctor(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("doctor", "[--config-path FILE]", doctorDoc, stdout, stderr)
	cfgPath := fs.String("config-path", "", "check only this client configuration `FILE` (JSON for claude-code or cursor, TOML for codex)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{"doctor takes no arguments"}
	}
	fmt.Fprintln(stdout, versionLine())
	onPath, found := printTersePath(stdout)
	targets := doctorTargets(*cfgPath)
	problems := 0
	for _, t := range targets {
		data, err := os.ReadFile(t.path)
		if errors.Is(err, os.ErrNotExist) {
			if *cfgPath != "" {
				return err
			}
			fmt.Fprintf(stdout, "\n%s: %s not found\n", t.client, t.path)
			continue
		}
		if err != nil {
			return err
		}
		var servers []*serverEntry
		look := func(s *serverEntry) {}
		if t.client == "codex" {
			_, servers, err = rewriteTOML(data, look)
		} else {
			_, servers, err = rewriteJSON(data, t.client == "claude-code", look)
		}
		if err != nil {
			fmt.Fprintf(stdout, "\n%s: %s: %v\n", t.client, t.path, err)
			problems++
			continue
		}
		wrapped := 0
		for _, s := range servers {
			if s.wrapped() || s.wrappedRemote() {
				wrapped++
			}
		}
		fmt.Fprintf(stdout, "\n%s: %s: %s, %d through terse\n", t.client, t.path, plural(len(servers), "server"), wrapped)
		problems += checkServers(stdout, t.client, servers, onPath, found)
	}
	if *cfgPath == "" {
		problems += doctorHook(ctx, stdout)
	}
	if problems > 0 {
		fmt.Fprintf(stdout, "\n%s\n", plural(problems, "problem"))
		return errReported
	}
	return nil
}

// printTersePath says which terse PATH finds, and whether it is this
// binary; it returns its path and whether one was found.
func printTersePath(stdout io.Writer) (string, bool) {
	self, _ := os.Executable()
	onPath, found := lookTerse("terse")
	switch {
	case !found:
		fmt.Fprintln(stdout, "PATH: no terse found; MCP clients that run \"terse\" will fail to start it")
	case sameFile(onPath, self):
		fmt.Fprintf(stdout, "PATH: %s (this binary)\n", onPath)
	default:
		fmt.Fprintf(stdout, "PATH: %s (not this binary, %s)\n", onPath, self)
	}
	return onPath, found
}

// doctorTarget is a client configuration file to check.
type doctorTarget struct{ client, path string }

// doctorTargets are the configuration files to check: cfgPath, else
// every MCP client's.
func doctorTargets(cfgPath string) []doctorTarget {
	var targets []doctorTarget
	if cfgPath != "" {
		targets = append(targets, doctorTarget{clientOfPath(cfgPath), cfgPath})
	} else {
		for _, c := range mcpClients {
			paths, err := clientConfigPaths(c)
			if err != nil {
				continue
			}
			for _, p := range paths {
				targets = append(targets, doctorTarget{c, p})
			}
		}
	}
	return targets
}

// checkServers says how each server of a client's configuration is run,
// and returns the problems found.
func checkServers(stdout io.Writer, client string, servers []*serverEntry, onPath string, found bool) int {
	problems := 0
	for _, s := range servers {
		switch {
		case s.url != "":
			fmt.Fprintf(stdout, "  %s: HTTP (%s), not through terse\n", s.label(), s.url)
		case s.wrappedRemote():
			fmt.Fprintf(stdout, "  %s: through terse: HTTP %s\n", s.label(), s.args[indexOf(s.args, "--upstream")+1])
			if msg, ok := checkTerse(s.command, onPath, found); !ok {
				problems++
				fmt.Fprintf(stdout, "    problem: %s\n", msg)
			}
		case s.wrapped():
			cmd, args := s.unwrapped()
			fmt.Fprintf(stdout, "  %s: through terse: %s\n", s.label(), shellJoin(append([]string{cmd}, args...)))
			if msg, ok := checkTerse(s.command, onPath, found); !ok {
				problems++
				fmt.Fprintf(stdout, "    problem: %s\n", msg)
			} else if msg != "" {
				fmt.Fprintf(stdout, "    %s\n", msg)
			}
			if msg := checkServerCommand(cmd, args); msg != "" {
				problems++
				fmt.Fprintf(stdout, "    problem: %s\n", msg)
			}
		default:
			fmt.Fprintf(stdout, "  %s: not wrapped: %s (terse setup %s wraps it)\n", s.label(), shellJoin(append([]string{s.command}, s.args...)), client)
			if msg := checkServerCommand(s.command, s.args); msg != "" {
				problems++
				fmt.Fprintf(stdout, "    problem: %s\n", msg)
			}
		}
	}
	return problems
}

// checkTerse says whether the terse a configuration calls (command) can be
// found, and whether it is the one on PATH.
func checkTerse(command, onPath string, found bool) (string, bool) {
	if filepath.IsAbs(command) {
		if _, err := os.Stat(command); err != nil {
			return fmt.Sprintf("%s does not exist (moved or deleted?); run terse setup again with the terse you use now", command), false
		}
		if why := ephemeralPath(command); why != "" {
			return fmt.Sprintf("%s is in %s; install terse and run terse setup again", command, why), false
		}
		if found && !sameFile(command, onPath) {
			return fmt.Sprintf("calls %s, not the terse on PATH (%s)", command, onPath), true
		}
		return "", true
	}
	if !found {
		return fmt.Sprintf("calls %q, which is not on PATH", command), false
	}
	return "", true
}

// shellJoin writes a command line for reading, quoting what needs it.
func shellJoin(args []string) string {
	out := ""
	for i, a := range args {
		if i > 0 {
			out += " "
		}
		if a == "" || strings.ContainsAny(a, " \t\"'$\\") {
			out += fmt.Sprintf("%q", a)
		} else {
			out += a
		}
	}
	return out
}

// clientOfPath names the client a configuration file is for, from its
// name.
func clientOfPath(path string) string {
	slash := filepath.ToSlash(path)
	switch {
	case filepath.Ext(path) == ".toml":
		return "codex"
	case strings.Contains(slash, ".cursor/"):
		return "cursor"
	case filepath.Base(path) == ".mcp.json" || filepath.Base(path) == ".claude.json":
		return "claude-code"
	}
	return "mcp config"
}

// checkServerCommand says what will stop a server's command from
// starting: an absolute path that does not exist, or a command line
// written as one string (no program has that name).
func checkServerCommand(command string, args []string) string {
	if command == "" {
		return ""
	}
	if filepath.IsAbs(command) {
		if _, err := os.Stat(command); err != nil {
			return fmt.Sprintf("the server's command %s does not exist", command)
		}
		return ""
	}
	if len(args) == 0 && strings.ContainsAny(command, " \t") {
		return fmt.Sprintf("the command %q is one string with spaces and no args; terse setup splits it into command and args", command)
	}
	return ""
}
