package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

const historyDoc = `
History works on LLM conversation histories. Its one subcommand:

  trim   trim a request's conversation to fit a context window

Run 'terse history trim --help' for how trimming works.
`

const historyTrimDoc = `
Trim reads an LLM API request (an Anthropic Messages or OpenAI Chat
Completions body) and prints it with its conversation trimmed to fit the
context window, without breaking tool pairing or the provider's prompt
cache. Everything else in the request is printed exactly as it was read
(as compact JSON); a request that needs no trimming comes out unchanged.

How it trims:
  - Nothing happens while the estimate is at or under threshold × window.
  - Above it, old assistant text and tool results become "[trimmed]", up
    to a boundary, until the estimate is at or under target × window. The
    gap between threshold and target means the next many turns trim
    nothing, so the request prefix, and the provider's cache of it, stays
    byte-identical.
  - User and system messages are never changed. Tool calls keep their ids
    and names, so every result still pairs with its call; arguments larger
    than --max-args bytes become {"trimmed":"N bytes"}. Thinking blocks are
    never edited; a finished turn's thinking is dropped whole once trimmed.
  - The newest --keep-assistant assistant messages stay untrimmed if the
    budget allows, and the newest tool call and its result always do.
  - If placeholders alone are still too big, the oldest trimmed assistant
    and tool messages are dropped, each call together with its result.

The boundary only moves forward. It is kept in the --state file between
calls (written after each call; a missing file means a fresh start). A
state that does not match the conversation (edited history, another
conversation) is reported on stderr and recomputed.

Tokens are the conservative estimate (bytes/3.5 plus per-message and
per-part overheads, images 2000, ×1.05) unless --tokenizer names a real
tokenizer; tool definitions in the request count too.

Examples:
  terse history trim --window 200000 --state s.json request.json > out.json
  terse history trim --format openai --window 128000 --target 0.5 req.json
  terse history trim --state s.json --report report.json request.json
`

func runHistory(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: terse history trim [flags] FILE\n%s", historyDoc)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stdout, "Usage: terse history trim [flags] FILE\n%s", historyDoc)
		return nil
	case "trim":
		return runHistoryTrim(ctx, args[1:], stdin, stdout, stderr)
	}
	return &usageError{fmt.Sprintf("history: unknown subcommand %q (want trim)", args[0])}
}

func runHistoryTrim(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("history trim", "[--format anthropic|openai|responses|auto] [--window N] [--threshold F] [--target F] [--keep-assistant N] [--state FILE] [--report FILE] [--pretty] FILE", historyTrimDoc, stdout, stderr)
	format := fs.String("format", "anthropic", "request `FORMAT`: anthropic, openai (Chat Completions), responses (OpenAI Responses) or auto (detect from the body)")
	window := fs.Int("window", 200000, "context window in tokens, less what the answer needs")
	threshold := fs.Float64("threshold", history.DefaultThreshold, "fraction of the window above which trimming starts")
	target := fs.Float64("target", history.DefaultTarget, "fraction of the window trimming brings the request down to")
	keep := fs.Int("keep-assistant", 0, "newest assistant messages to leave untrimmed (best effort; 0: none)")
	maxArgs := fs.Int("max-args", history.DefaultMaxArgs, "bytes above which a trimmed tool call's arguments become a placeholder (-1: never)")
	tokenizer := fs.String("tokenizer", "estimate", "token counting `TOKENIZER`: estimate, o200k_base or cl100k_base")
	statePath := fs.String("state", "", "state `FILE` to read and update (absent: a fresh start; not given: no state kept)")
	reportPath := fs.String("report", "", "write the report as JSON to `FILE` (\"-\": standard output, after the request)")
	pretty := fs.Bool("pretty", false, "print the request indented by two spaces per level instead of compact")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return &usageError{"history trim: one FILE at most"}
	}
	f, opts, err := trimOptions(*format, *window, *threshold, *target, *keep, *maxArgs, *tokenizer)
	if err != nil {
		return err
	}

	data, name, err := readInput(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	req, err := decodeRequest(data, f, name, stderr)
	if err != nil {
		return err
	}
	opts.Tools = req.Tools

	state, err := readState(*statePath)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	out, next, rep := history.Reduce(req.Messages, *window, state, opts)
	req.Messages = out
	v, err := req.Value()
	if err != nil {
		return err
	}
	if err := writeRequest(stdout, v, *pretty); err != nil {
		return err
	}
	return finishTrim(stdout, stderr, rep, next, *statePath, *reportPath)
}

// trimOptions checks the flags and returns the request format (zero:
// auto) and the trimming options.
func trimOptions(format string, window int, threshold, target float64, keep, maxArgs int, tokenizer string) (history.Format, *history.Options, error) {
	var f history.Format
	switch {
	case window <= 0:
		return f, nil, &usageError{"history trim: --window must be positive"}
	case threshold <= 0 || threshold > 1:
		return f, nil, &usageError{"history trim: --threshold must be in (0, 1]"}
	case target <= 0 || target > threshold:
		return f, nil, &usageError{"history trim: --target must be in (0, threshold]"}
	case keep < 0:
		return f, nil, &usageError{"history trim: --keep-assistant must not be negative"}
	}
	if err := choice("format", format, "anthropic", "openai", "responses", "auto"); err != nil {
		return f, nil, err
	}
	if format != "auto" {
		var err error
		if f, err = history.ParseFormat(format); err != nil {
			return f, nil, &usageError{err.Error()}
		}
	}
	opts := &history.Options{Threshold: threshold, Target: target, KeepAssistant: keep, MaxArgs: maxArgs}
	if keep == 0 {
		opts.KeepAssistant = -1
	}
	if maxArgs == 0 {
		opts.MaxArgs = 1 // every argument object larger than its placeholder
	}
	if err := choice("tokenizer", tokenizer, "estimate", "o200k_base", "cl100k_base"); err != nil {
		return f, nil, err
	}
	if tokenizer != "estimate" {
		c, err := tokens.Get(tokenizer)
		if err != nil {
			return f, nil, &usageError{err.Error()}
		}
		opts.Counter = c
	}
	return f, opts, nil
}

// decodeRequest decodes the request; an error is reported on stderr
// (with its line and column when the JSON is bad).
func decodeRequest(data []byte, f history.Format, name string, stderr io.Writer) (*history.Request, error) {
	req, err := history.Decode(data, f)
	if err != nil {
		if se, ok := errors.AsType[*tree.SyntaxError](err); ok {
			fmt.Fprintf(stderr, "%s:%d:%d: %s\n", name, se.Line, se.Column, se.Msg)
			return nil, errReported
		}
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return nil, errReported
	}
	return req, nil
}

// readState reads the state file, when one is given: absent, a fresh
// start; a bad one is reported by Reduce.
func readState(statePath string) (history.State, error) {
	var state history.State
	if statePath != "" {
		sdata, err := os.ReadFile(statePath)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return state, err
		default:
			state, _ = history.ParseState(sdata) // a bad state is reported below
		}
	}
	return state, nil
}

// writeRequest writes the request's JSON, compact or indented.
func writeRequest(stdout io.Writer, v tree.Value, pretty bool) error {
	var buf []byte
	if pretty {
		buf = tree.AppendIndent(nil, v, "  ")
	} else {
		buf = tree.AppendJSON(nil, v)
	}
	if _, err := stdout.Write(append(buf, '\n')); err != nil {
		return err
	}
	return nil
}

// finishTrim says on stderr what the trimming could not do, and writes
// the next state and the report when asked for.
func finishTrim(stdout, stderr io.Writer, rep history.Report, next history.State, statePath, reportPath string) error {
	if rep.StateMismatch != "" {
		fmt.Fprintf(stderr, "terse: history trim: state %s does not match this conversation (%s); recomputed\n", statePath, rep.StateMismatch)
	}
	if rep.OverBudget {
		fmt.Fprintf(stderr, "terse: history trim: %d tokens after trimming, over the threshold of %d (user and system content and the newest tool exchange are never trimmed)\n", rep.TokensAfter, rep.Threshold)
	}
	if statePath != "" {
		if err := writeFileAtomic(statePath, append(next.AppendJSON(nil), '\n')); err != nil {
			return err
		}
	}
	if reportPath != "" {
		rj, _ := json.MarshalIndent(rep, "", "  ")
		if err := writeOutput(reportPath, stdout, append(rj, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// writeFileAtomic replaces path with data, so a crash never leaves half a
// state file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
