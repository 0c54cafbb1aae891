// Command terse makes what an LLM agent reads smaller without making it
// wrong.
//
// Usage:
//
//	terse encode  [--to auto|toon|json] [--exact] [--delimiter D] [--indent N] [FILE]
//	terse decode  [--from detect|toon|auto|json] [--strict=true|false] [--indent N] [--pretty] [FILE]
//	terse count   [--tokenizer o200k_base|cl100k_base|estimate] [--json] [FILE...]
//	terse compact [--tool NAME] [--budget TOKENS] [--config FILE] [--report FILE] [FILE]
//	terse chunk   [--budget TOKENS] HANDLE N | HANDLE.N
//	terse expand  [FILE]
//	terse report  [--tokenizer T] [--json] PATH...
//	terse filter  --manifest FILE --action NAME [FILE]
//	terse history trim [--format anthropic|openai|responses|auto] [--window N] [--state FILE] FILE
//	terse proxy   [--config FILE] -- COMMAND [ARGS...]
//	terse gateway --config FILE [--listen ADDR]
//	terse api     [--config FILE] [--listen ADDR] [--window TOKENS] [--stats-file FILE] [--dry-run]
//	terse wrap    [flags] claude|codex [AGENT ARGS...]
//	terse hook    claude-code [--config FILE]
//	terse setup   claude-code|cursor|codex [--config-path P] [--dry-run] [--undo]
//	terse doctor  [--config-path P]
//	terse config  path|show|check [--config FILE]
//	terse stats   [DIR] [--json] [--since DURATION]
//	terse tune    analyze [DIR] | from-claude-logs [--input-dir DIR]
//	terse eval    [--docs DIR|FILE...] [--encodings LIST] [--reader decode|anthropic|openai]
//	terse version
//
// FILE absent or "-" means standard input; an output file "-" means
// standard output. Flags may come before or after file names. Output goes
// to standard output, diagnostics to standard error. Exit status:
//
//	0    ok
//	1    failure (bad input is reported on one line as NAME:LINE:COL: message)
//	2    usage error (an unknown command or flag: one line, with the nearest name)
//	3    nothing done: the command wants --yes (terse eval's estimate)
//	127  a program terse was asked to run is not installed (terse wrap's agent)
//
// terse wrap exits with its agent's own status.
//
// Run "terse help COMMAND" (or "terse COMMAND --help") for a command's
// flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// command is one subcommand: its name, a one-line summary for the overview,
// and the function that runs it.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order the overview shows them. Each
// lives in a file of its own named after it.
var commands = []command{
	{"encode", "re-encode JSON as TOON or compact JSON", runEncode},
	{"decode", "decode TOON back to JSON", runDecode},
	{"count", "count tokens with a real tokenizer", runCount},
	{"compact", "fit a tool result under a token budget", runCompact},
	{"chunk", "print a chunk of an earlier compacted result", runChunk},
	{"expand", "print the original of a lossless text shaping", runExpand},
	{"report", "savings table over files", runReport},
	{"filter", "apply a declarative output filter", runFilter},
	{"history", "trim a conversation history (history trim)", runHistory},
	{"proxy", "stdio MCP proxy around an upstream server", runProxy},
	{"gateway", "Streamable-HTTP MCP gateway over several upstreams", runGateway},
	{"stats", "savings from telemetry", runStats},
	{"tune", "write profiles from telemetry or agent logs (tune analyze|from-claude-logs)", runTune},
	{"eval", "measure whether a model still answers correctly from terse's output", runEval},
	{"setup", "wire terse into an MCP client (claude-code, cursor, codex)", runSetup},
	{"doctor", "show how terse is wired into MCP clients", runDoctor},
	{"config", "where the default config file is, what it says, whether it is valid", runConfig},
	{"version", "print the version, VCS revision and Go version", runVersion},
	{"api", "proxy in front of the Anthropic and OpenAI APIs", runAPI},
	{"wrap", "run claude or codex through terse api", runWrap},
	{"hook", "an agent's tool-result hook (hook claude-code)", runHook},
}

// run is the whole program; main only turns its error into an exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return nil
	case "help":
		if len(args) == 1 {
			usage(stdout)
			return nil
		}
		// "terse help CMD [SUB]" is "terse CMD [SUB] --help".
		return run(ctx, append(append([]string(nil), args[1:]...), "--help"), stdin, stdout, stderr)
	case "-version", "--version":
		return runVersion(ctx, nil, stdin, stdout, stderr)
	}
	var names []string
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdin, stdout, stderr)
		}
		names = append(names, c.name)
	}
	msg := fmt.Sprintf("unknown command %q", args[0])
	if s := nearest(args[0], names); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	return &usageError{msg + "; see terse --help"}
}

func usage(w io.Writer) {
	fmt.Fprint(w, "terse makes what an LLM agent reads smaller without making it wrong.\n\nUsage: terse COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'terse help COMMAND' for a command's flags. FILE absent or '-' reads standard\ninput; an output file '-' is standard output. Flags may follow file names.\n")
}

// errUsage marks a usage error (exit status 2) whose message was already
// printed.
var errUsage = errors.New("usage")

// usageError is a usage error with a message still to print.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// reported marks an error whose message was already written to stderr.
var errReported = errors.New("reported")

// Exit statuses besides 0 (ok), 1 (failure) and 2 (usage error). A
// wrapped agent's own status is passed on as it is.
const (
	exitNeedsYes = 3   // nothing done: the command wants --yes (eval's estimate)
	exitNotFound = 127 // a program terse was asked to run is not installed
)

// errNeedsYes ends a command that printed what it would do and did
// nothing, because that costs money and --yes was not given.
var errNeedsYes = errors.New("needs --yes")

// exitCode prints err (unless already printed) and maps it to the exit
// status: 0 ok, 1 failure, 2 usage error, 3 nothing done without --yes,
// 127 a program to run is not installed; terse wrap exits with its
// agent's status.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errReported):
		return 1
	case errors.Is(err, errNeedsYes):
		return exitNeedsYes
	}
	if ae, ok := errors.AsType[*agentExit](err); ok {
		return ae.code
	}
	if _, ok := errors.AsType[*agentMissing](err); ok {
		fmt.Fprintf(stderr, "terse: %v\n", err)
		return exitNotFound
	}
	if ue, ok := errors.AsType[*usageError](err); ok {
		fmt.Fprintf(stderr, "terse: %s\n", ue.msg)
		return 2
	}
	fmt.Fprintf(stderr, "terse: %v\n", err)
	return 1
}
