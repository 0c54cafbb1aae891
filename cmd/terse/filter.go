package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

const filterDoc = `
Filter applies a declared per-tool filter to one tool result (FILE, or
standard input) and prints what the model would read: one note line
declaring what was left out, when anything was, then the payload as
compact JSON, or as text for logs and compact templates.

The rule comes from one of:
  --manifest FILE --action NAME   a kimbap service manifest, unchanged
                                  (actions.NAME.response: extract, filter,
                                  text_filter, compact)
  --config FILE --tool NAME       terse's own config (see docs/config.md);
                                  the rule of the first [[tools]] entry
                                  matching NAME: exact name, then globs in
                                  file order, then NAME without its MCP
                                  server prefix ("github__list_issues")

Operations, per item of the payload's list (or on a single object):
select (output key <- source path such as user.login, labels[0].name,
labels[*].name), exclude (name globs at any depth, e.g. *_url), max_items,
drop_nulls, drop_empty; for text: include/exclude line patterns, head/tail,
collapse of repeated lines. The list is the configured root, else the
"items", "data" or "result" array, else the first array of an envelope; a
single object with array fields (a GitHub issue and its assignees) stays
one object.

The note is a Markdown blockquote, for example:
  > [filtered: showing 25 of 140 items; 71 fields per item omitted by config; call with _output_mode=raw for all]
When no select path matches, the payload passes unfiltered with a
"> [filter failed: ...]" note, the reason goes to stderr, and the exit
status is still 0.

Examples:
  terse filter --manifest github.yaml --action list-repos repos.json
  gh api /repos/o/r/issues | terse filter --config terse.toml --tool list_issues
  terse filter --manifest kubectl.yaml --action logs --report report.json pod.log
`

func runFilter(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("filter", "(--manifest FILE --action NAME | --config FILE --tool NAME) [--report FILE] [FILE]", filterDoc, stdout, stderr)
	manifest := fs.String("manifest", "", "kimbap service manifest `FILE` (YAML)")
	action := fs.String("action", "", "action `NAME` in the manifest")
	cfgPath := fs.String("config", "", "terse config `FILE` (TOML)")
	tool := fs.String("tool", "", "tool `NAME` to look up in the config")
	report := fs.String("report", "", "write the filter report as JSON to `FILE` (\"-\": standard output, after the result)")
	tokenizer := fs.String("tokenizer", "o200k_base", "`TOKENIZER` for the report's token counts: o200k_base, cl100k_base or estimate")
	recover := fs.String("recover", "", "override the clause that tells the model how to get what was left out")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return &usageError{"filter takes at most one FILE"}
	}
	var spec filter.Spec
	switch {
	case *manifest != "" && *cfgPath != "":
		return &usageError{"use either --manifest or --config, not both"}
	case *manifest != "":
		if *action == "" {
			return &usageError{"--manifest needs --action NAME"}
		}
		m, err := config.LoadManifest(*manifest)
		if err != nil {
			return reportConfigError(stderr, err)
		}
		a := m.Action(*action)
		if a == nil {
			return fmt.Errorf("%s: no action %q (actions: %s)", *manifest, *action, strings.Join(m.ActionNames(), ", "))
		}
		if spec, err = a.FilterSpec(); err != nil {
			return err
		}
	case *cfgPath != "":
		if *tool == "" {
			return &usageError{"--config needs --tool NAME"}
		}
		c, err := config.Load(*cfgPath)
		if err != nil {
			return reportConfigError(stderr, err)
		}
		t := c.Tool(*tool)
		if t == nil {
			return fmt.Errorf("%s: no [[tools]] rule matches %q", *cfgPath, *tool)
		}
		spec = t.FilterSpec()
	default:
		return &usageError{"give --manifest FILE --action NAME or --config FILE --tool NAME"}
	}
	if *recover != "" {
		spec.Recover = *recover
	}
	rule, err := filter.Compile(spec)
	if err != nil {
		return err
	}
	var opts filter.Options
	if *report != "" {
		if opts.Counter, err = tokens.Get(*tokenizer); err != nil {
			return &usageError{err.Error()}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, name, err := readInput(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	res, err := rule.ApplyBytes(data, &opts)
	if err != nil {
		if se, ok := errors.AsType[*tree.SyntaxError](err); ok {
			fmt.Fprintf(stderr, "%s:%d:%d: %s\n", name, se.Line, se.Column, se.Msg)
			return errReported
		}
		return err
	}
	if res.Report.Err != nil {
		// The payload still goes out, unfiltered and declared; people
		// running the command also get the reason.
		fmt.Fprintf(stderr, "terse: warning: %v\n", res.Report.Err)
	}
	out := append(res.Append(nil), '\n')
	if _, err := stdout.Write(out); err != nil {
		return err
	}
	if *report != "" {
		return writeFilterReport(*report, stdout, res.Report)
	}
	return nil
}

// reportConfigError prints config and manifest errors, which already
// carry FILE:LINE:COL, one per line.
func reportConfigError(stderr io.Writer, err error) error {
	var pe *config.Error
	if _, ok := errors.AsType[*config.ValidationError](err); ok || errors.As(err, &pe) {
		fmt.Fprintln(stderr, err)
		return errReported
	}
	return err
}

func writeFilterReport(path string, stdout io.Writer, r filter.Report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeOutput(path, stdout, append(data, '\n'))
}
