package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
	"unsafe"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/profile"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/store/redisstore"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tokens"
)

const compactDoc = `
Compact fits a tool result under a token budget. JSON is fitted by its items:
the array at the configured pointer (config "items", or --items), else the
largest array of objects near the top; each item is kept at full, standard
(no URLs, avatars, node ids, extra timestamps or empty values; long strings
cut with "…[+N chars]") or minimal detail (identity fields), or left out,
whichever keeps the most value for the tool's strategy. Text is fitted by
lines (logs: head and tail, error lines kept with one line of context) and
diffs by file. The output is at most --budget tokens by the real tokenizer,
and byte-identical to the plain encoding when it already fits.

Text is shaped first, when that saves tokens (see docs/shapes.md): --tool
and --tool-input (the call's arguments as JSON) tell its shape, as a proxy
knows it from the call: a numbered file read (Read, cat -n) is written
with unpadded line numbers, a path list as a tree, search results grouped
by file, paths under --workdir relative to it, runs of a repeated line
folded, terminal output as what the terminal showed; each declared in one
header line that "terse expand" undoes. Test output and long logs may be
elided with every failure, error and verdict line kept and the rest
counted and fetchable as chunks.

Binary input (not UTF-8 text) is written out unchanged, with a note on
stderr and kind "binary" in the Report.

Everything left out is declared in the output: gaps with their positions,
a "> [+N more …]" hint and a chunk index. The full result is stored (in
--store, kept 30 minutes after last use) and any chunk can be printed with
the command the output shows, "terse chunk HANDLE N". With --config, the
config's profiles and [hints] policy apply (one run is one session): with
the "more" hint family off for the tool, nothing is left out and the
result comes back whole, over --budget if it must be (budget 0 in the
Report).

The strategy comes from --tool: config first, then built-in defaults
(get_issues → element_count, get_issue_comments → cascading,
get_merge_request_diffs → size_proportional, get_merge_request_discussions
→ thread_level, get_job_logs → head_tail), also after stripping an MCP
prefix (github__get_issues → get_issues); otherwise uniform for JSON,
head_tail for text and size_proportional for diffs.

Examples:
  terse compact --budget 4000 issues.json
  kubectl logs pod | terse compact --budget 1000 --tool get_job_logs
  terse compact --to toon --report report.json --tool github__list_issues page.json
  terse compact --to auto --budget 2000 page.json
  terse compact --config terse.toml --tool get_issues issues.json
  terse compact --tool Bash --tool-input '{"command":"go test ./..."}' out.txt
  terse compact --tool Read read.txt | terse expand
`

func runCompact(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("compact", "[--tool NAME] [--tool-input JSON] [--workdir DIR] [--budget TOKENS] [--to json|toon|auto] [--tokenizer T] [--config FILE] [--report FILE] [FILE]", compactDoc, stdout, stderr)
	tool := fs.String("tool", "", "tool `name` that produced the result; selects the strategy and, for text, its shape")
	toolInput := fs.String("tool-input", "", "the call's arguments as `JSON` (a Bash command, a Grep mode): with --tool, the shape of a text result")
	workDir := fs.String("workdir", "", "the agent's working `directory`: paths under it may be written relative to it")
	budget := fs.Int("budget", fit.DefaultBudget, "largest output in `tokens`")
	to := fs.String("to", "auto", "output `format` for JSON: auto (the cheapest verified encoding, never more tokens than compact JSON), json or toon; a config file's format applies when this flag is not given")
	tokenizer := fs.String("tokenizer", "o200k_base", "tokenizer: o200k_base, cl100k_base or estimate")
	cfgPath := fs.String("config", "", "terse config `file` (TOML): budget, tokenizer, format, store and per-tool rules")
	reportPath := fs.String("report", "", "write the Report as JSON to `file` (\"-\": standard output, after the text)")
	items := fs.String("items", "", "JSON `pointer` of the item array (default: detected)")
	strategy := fs.String("strategy", "", "force a strategy: "+fmt.Sprint(fit.Strategies))
	storeDir := fs.String("store", "", "chunk store `directory` (default: the user cache directory)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return &usageError{"compact: at most one FILE"}
	}
	if *toolInput != "" && !json.Valid([]byte(*toolInput)) {
		return &usageError{"compact: --tool-input is not JSON"}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	// The options are resolved as every surface resolves them
	// (profile.Resolve, Effective.Options) from the config, or the
	// built-in defaults; the flags given override them (all of them
	// without --config).
	cfg := config.Default()
	dir, ttl := *storeDir, store.DefaultTTL
	redisURL := ""
	var rec *telemetry.Recorder // nil: telemetry off
	if *cfgPath != "" {
		var err error
		if cfg, err = config.Load(*cfgPath); err != nil {
			return err
		}
		warnDeprecated(stderr, cfg)
		if rec, err = openTelemetry(cfg); err != nil {
			return err
		}
		defer rec.Close()
		if dir == "" {
			dir, redisURL = cfg.Store.Dir, cfg.Store.Redis
		}
		if cfg.Store.TTL.Duration > 0 {
			ttl = cfg.Store.TTL.Duration
		}
	}
	opts, c, hints, err := compactOptions(cfg, *cfgPath, set, *tool, *tokenizer, *to, *budget, *items, *strategy)
	if err != nil {
		return err
	}
	r, err := compactStore(&opts, dir, redisURL, ttl, *cfgPath)
	if err != nil {
		return err
	}
	if r != nil {
		defer r.Close()
	}
	p, err := terse.New(&opts)
	if err != nil {
		return &usageError{strings.TrimPrefix(err.Error(), "terse: ")}
	}
	data, name, err := readInput(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	limitMemory(len(data), true)
	if tokens.Binary(data) {
		return passBinary(stdout, stderr, name, data, c, opts.Budget, *tool, *reportPath)
	}
	start := time.Now()
	// The input is processed without a copy (data is not changed
	// afterwards).
	res, err := p.ProcessString(ctx, unsafe.String(unsafe.SliceData(data), len(data)), &terse.Request{Tool: *tool, Hints: hints,
		ToolInput: *toolInput, WorkDir: *workDir})
	if rec != nil {
		ev := telemetry.Event{Entry: telemetry.EntryCompact, Session: "compact", Tool: *tool, Latency: time.Since(start)}
		ev.SetInput(rec, data)
		ev.SetResult(&res, err, "parse")
		rec.Record(&ev)
	}
	if err != nil {
		return inputError(stderr, name, err)
	}
	return writeCompacted(stdout, res, c, *reportPath)
}

// compactOptions resolves the options as every surface resolves them
// (profile.Resolve, Effective.Options) from the config, the flags given
// overriding them (all of them without a config file), and returns them
// with the tokenizer and the hint policy (nil: every hint).
func compactOptions(cfg *config.Config, cfgPath string, set map[string]bool, tool, tokenizer, to string, budget int, items, strategy string) (terse.Options, tokens.Counter, terse.Hints, error) {
	var hints terse.Hints // nil: every hint
	override := func(flag string) bool { return set[flag] || cfgPath == "" }
	eff := profile.Resolve(cfg, profile.Context{Tool: tool})
	if cfgPath != "" {
		// The hint policy: one invocation is one session.
		hints = profile.Gate{E: &eff, C: new(profile.HintCounter)}
	}
	if override("tokenizer") {
		eff.Tokenizer = tokenizer
	}
	c, err := tokens.Get(eff.Tokenizer)
	if err != nil {
		return terse.Options{}, nil, nil, &usageError{err.Error()}
	}
	opts, err := eff.Options(terse.Options{Shape: cfg.Shape.Options()})
	if err != nil {
		return terse.Options{}, nil, nil, err
	}
	if override("to") {
		opts.Format = to
	}
	if override("budget") || opts.Budget <= 0 {
		opts.Budget = budget // the flag, or its default when nothing sets one
	}
	if items != "" {
		opts.Pointer = items
	}
	opts.Strategy = strategy // a forced strategy (strategy_source "option")
	if opts.Budget <= 0 {
		return terse.Options{}, nil, nil, &usageError{"compact: --budget must be positive"}
	}
	return opts, c, hints, nil
}

// compactStore sets the chunk store and its fetch command: Redis when
// the config names it (the store returned, to close), else a directory.
func compactStore(opts *terse.Options, dir, redisURL string, ttl time.Duration, cfgPath string) (*redisstore.Redis, error) {
	if redisURL != "" {
		// The fetch command names the config, not the URL: it may hold a
		// password and the output goes to a model.
		r, err := redisstore.New(redisURL, ttl)
		if err != nil {
			return nil, err
		}
		opts.Store = r
		opts.Fetch = "terse chunk --config " + shellQuote(cfgPath) + " {handle} {n}"
		return r, nil
	}
	if dir == "" {
		dir = store.DefaultDir()
	}
	opts.Store = &store.Dir{Path: dir, TTL: ttl}
	opts.Fetch = chunkCommand(dir, ttl)
	return nil, nil
}

// passBinary writes binary input unchanged, with a note: it is not text a
// model can read, nor something terse may rewrite.
func passBinary(stdout, stderr io.Writer, name string, data []byte, c tokens.Counter, budget int, tool, reportPath string) error {
	var res terse.Result
	// Binary input is not text a model can read, nor something terse
	// may rewrite: it passes through unchanged, with a note.
	binaryNote(stderr, name, len(data))
	n := tokens.CountBytes(c, data)
	res.Report = terse.Report{Tokenizer: c.Name(), Exact: c.Exact(), Budget: budget, Tool: tool,
		RawTokens: n, OutputTokens: n, RawChars: len(data), OutputChars: len(data), Ratio: 1,
		Kind: "binary", Format: "binary"}
	if _, err := stdout.Write(data); err != nil {
		return err
	}
	return writeReport(reportPath, stdout, res.Report)
}

// writeCompacted writes the result's text and its Report.
func writeCompacted(stdout io.Writer, res terse.Result, c tokens.Counter, reportPath string) error {
	// End with a newline, unless that one more token would break the
	// budget (the budget holds for what is printed), or the text is a
	// lossless shaping (terse expand gives back its original exactly).
	text := res.Text
	shaped := res.Report.ShapeClass == "lossless" || res.Report.ShapeClass == "display"
	if len(text) > 0 && text[len(text)-1] != '\n' && !shaped && (res.Report.Budget == 0 || c.Count(text+"\n") <= res.Report.Budget) {
		text += "\n"
	}
	if _, err := io.WriteString(stdout, text); err != nil {
		return err
	}
	return writeReport(reportPath, stdout, res.Report)
}

// writeReport writes the Report as indented JSON to path ("-" is standard
// output, after the text); an empty path writes nothing.
func writeReport(path string, stdout io.Writer, rep terse.Report) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return writeOutput(path, stdout, append(b, '\n'))
}

// binaryNote says on stderr that binary input passed through unchanged.
func binaryNote(stderr io.Writer, name string, n int) {
	fmt.Fprintf(stderr, "terse: %s: binary input (%d bytes, not UTF-8 text), passed through unchanged\n", name, n)
}
