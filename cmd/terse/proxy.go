package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/mcpproxy"
	"github.com/terse-dev/terse/profile"
	"github.com/terse-dev/terse/tokens"
)

const proxyDoc = `
Proxy runs an MCP server and relays its JSON-RPC over this process's stdin
and stdout, so the model gets compact, budgeted results. Put it in front of
the server's command in your MCP client's config.

Everything passes through unchanged, in order, except:
  tools/list   schemas are compacted where the meaning is kept ($schema
               and the like go); the catalogue is never more tokens than
               the server's own. Every tool also accepts, declared once in
               the description of the tool terse_compact (listed when the
               compaction paid for it):
                 _output_mode  "raw" returns exactly what the server returned
                 _budget       token budget for this result
                 _chunk        "c_0123456789abcdef.2": fetch chunk 2 of an
                               earlier result without calling the tool
                               (within _budget; only in the session and
                               conversation that got the result)
               Calling terse_compact after the conversation was compacted
               (or sending notifications/terse/compact) resets dedup.
  tools/call   text results are re-encoded (never more tokens than the
               server's text, lossless or with declared, recoverable
               elision). Clients that show the model structuredContent
               (Claude Code, Copilot CLI) get one compact copy instead of
               it; Claude Code results stay under its 25,000-token limit.

When the chunk store fails (an unwritable directory, Redis down), results
still keep their budget and say the rest is not retrievable right now;
re-run with _output_mode "raw" for the whole result. With [telemetry]
enabled = true in the config, one anonymous event per result is written
(see docs/telemetry.md).

A repeated result the model has already seen becomes a one-line reference
to it. After terse_compact or notifications/terse/compact the next repeat
comes back in full. A client that shares one session between several
conversations names each in the params._meta key "terse/conversation" of
tools/call (and of the compaction, to compact only that conversation); a
result is never a reference to one from another conversation.

If the server crashes, calls in flight get a JSON-RPC error and the server
is restarted on the next request. SIGINT and SIGTERM drain the calls in
flight and write --stats-file. Logs go to stderr (--log-format text|json);
stdout carries only MCP.

Examples:
  terse proxy -- npx -y @modelcontextprotocol/server-filesystem /repo
  terse proxy --verbose --stats-file stats.json -- ./my-server --flag
  terse proxy --upstream https://mcp.example.com/mcp
  terse proxy --upstream https://mcp.example.com/mcp --header 'Authorization: Bearer ${MCP_TOKEN}'

Claude Code config (.mcp.json):
  {"mcpServers": {"fs": {"command": "terse",
     "args": ["proxy", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "."]}}}
`

func runProxy(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("proxy", "[--config FILE] [--verbose] [--stats-file F] [--upstream URL [--header 'NAME: VALUE']...] -- COMMAND [ARGS...]", proxyDoc, stdout, stderr)
	configPath := fs.String("config", "", "terse config `FILE` ([proxy] section and per-tool rules)")
	verbose := fs.Bool("verbose", false, "log at DEBUG: one record per tool call")
	statsFile := fs.String("stats-file", "", "write JSON totals (calls, tokens before/after, saved by source) to `F` on exit")
	upstreamURL := fs.String("upstream", "", "relay to a Streamable-HTTP MCP server at `URL` instead of running COMMAND")
	logFormat := fs.String("log-format", "text", "log `FORMAT` on stderr: text or json")
	headers := headerFlag{}
	fs.Var(headers, "header", "with --upstream: send the header \"`NAME: VALUE`\" (repeatable; ${VAR} in VALUE is the environment variable)")
	fs.Var(headerEnvFlag(headers), "header-env", "with --upstream: send the header NAME with the value of the environment variable VAR, \"`NAME=VAR`\" (repeatable; what terse setup writes)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	rest := fs.Args()
	var up mcpproxy.Upstream
	switch {
	case *upstreamURL != "" && len(rest) > 0:
		return &usageError{"proxy: give either --upstream URL or -- COMMAND, not both"}
	case len(headers) > 0 && *upstreamURL == "":
		return &usageError{"proxy: --header goes with --upstream URL"}
	case *upstreamURL != "":
		client, err := upstreamClient(headers)
		if err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
		up = &mcpproxy.HTTP{URL: *upstreamURL, Client: client}
	case len(rest) == 0:
		return &usageError{"proxy: missing the server command: terse proxy [flags] -- COMMAND [ARGS...]"}
	default:
		up = &mcpproxy.Command{Path: rest[0], Args: rest[1:], Stderr: stderr}
	}

	logger, err := newLogger(stderr, *logFormat, *verbose)
	if err != nil {
		return err
	}
	ctx, stop := withTerm(ctx)
	defer stop()
	cfg, err := loadConfig(*configPath)
	if err != nil && !flagGiven(args, "config") {
		// The default config file is broken: an MCP client started this
		// proxy, and its tools must not vanish over it. Serve with the
		// defaults and say why in the log.
		logger.Error("the default config file does not load; serving with the built-in defaults (terse config check shows the problem)", "err", err)
		cfg, err = config.Default(), nil
	}
	if err != nil {
		return err
	}
	for _, w := range cfg.Deprecated() {
		logger.Warn(w)
	}
	opts, tokenizer, err := mcpOptions(cfg)
	if err != nil {
		return err
	}
	opts.Logger = logger
	rec, err := openTelemetry(cfg) // nil when off
	if err != nil {
		return err
	}
	defer rec.Close()
	opts.Telemetry = rec
	p := mcpproxy.NewProxy(up, opts)
	logger.Info("terse proxy started", "upstream", up.String(), "tokenizer", tokenizer)
	err = p.Serve(ctx, stdin, stdout)
	if *statsFile != "" {
		if werr := p.Stats().WriteFile(*statsFile, tokenizer); werr != nil && err == nil {
			err = fmt.Errorf("writing stats: %w", werr)
		}
	}
	if ctx.Err() != nil {
		logger.Info("terse proxy stopped", "calls", p.Stats().Totals().Calls)
		return nil // interrupted or terminated: a normal way to stop a proxy
	}
	return err
}

// loadConfig reads the config file, or returns the defaults for "".
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	return config.Load(path)
}

// mcpOptions turns the config into proxy options. Each call's results
// get the pipeline of its client's profile (profile.Resolve for the
// client and tool: tokenizer, format, template, budget and hint policy),
// one pipeline per distinct set of options, built once and sharing the
// store and the dedup cache, so that their caches serve every call. It
// names the tokenizer of the stats file: the configuration's, before any
// client is known.
func mcpOptions(cfg *config.Config) (*mcpproxy.Options, string, error) {
	eff := profile.Resolve(cfg, profile.Context{})
	counter, err := tokens.Get(eff.Tokenizer)
	if err != nil {
		return nil, "", err
	}
	// Chunk handles are keyed per process: unguessable, and bound to the
	// session that earned them (a fetch checks the scope the store
	// keeps, so gateway replicas need not share the key).
	key := make([]byte, 32)
	rand.Read(key)
	st, err := configStore(cfg.Store.Dir, cfg.Store.Redis, cfg.Store.TTL.Duration, cfg.Store.MaxBytes)
	if err != nil {
		return nil, "", err
	}
	var cache *dedup.Cache
	if cfg.Dedup.Enabled {
		cache = dedup.New(dedup.Options{NearRef: cfg.Dedup.NearRef, MaxEntries: cfg.Dedup.MaxEntries,
			MaxBytes: cfg.Dedup.MaxBytes, MutatingTools: cfg.Dedup.MutatingTools})
	}
	ps := newPipelines(cfg, terse.Options{Store: st, Fetch: mcpproxy.FetchTemplate, RawHint: mcpproxy.RawHint, Key: key, Dedup: cache,
		Shape: cfg.Shape.Options()})
	def, err := ps.pipeline(&eff)
	if err != nil {
		return nil, "", err
	}
	if err := ps.rules(); err != nil {
		return nil, "", err
	}
	opts := &mcpproxy.Options{
		Pipeline:      def,
		Profile:       ps.profile,
		Dedup:         cache,
		Counter:       counter,
		MinSizeBytes:  cfg.Proxy.MinSizeBytes,
		MaxSizeBytes:  cfg.Proxy.MaxSizeBytes,
		ExcludeTools:  cfg.Proxy.ExcludeTools,
		FailOnError:   !cfg.Proxy.SkipOnError,
		BrakeFetches:  cfg.Proxy.BrakeFetches,
		DefaultBudget: eff.Budget,
		MutatingTools: cfg.Dedup.MutatingTools,
		IdleTimeout:   cfg.Gateway.IdleTimeout.Duration,
	}
	if len(cfg.Proxy.IncludeTools) > 0 {
		opts.IncludeTools = cfg.Proxy.IncludeTools
	}
	for _, t := range cfg.Tools {
		if t.Mutating {
			opts.MutatingTools = append(opts.MutatingTools, t.Match)
		}
	}
	for _, c := range cfg.Proxy.Clients {
		r := mcpproxy.ClientRule{Match: c.Match, Budget: c.Budget}
		if c.Reads == "structured" {
			r.Reads = mcpproxy.ReadsStructured
		}
		opts.Clients = append(opts.Clients, r)
	}
	return opts, counter.Name(), nil
}

// newLogger is the one logger of proxy and gateway: slog to stderr, as
// text or JSON, at INFO (DEBUG with --verbose).
func newLogger(w io.Writer, format string, verbose bool) (*slog.Logger, error) {
	ho := &slog.HandlerOptions{Level: slog.LevelInfo}
	if verbose {
		ho.Level = slog.LevelDebug
	}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, &usageError{fmt.Sprintf("--log-format must be text or json, not %q", format)}
}

// withTerm extends ctx (which the interrupt signal ends) to SIGTERM, the
// signal service managers stop with: both drain and write the stats.
func withTerm(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
}
