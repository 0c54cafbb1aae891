package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/mcpproxy"
	"github.com/terse-dev/terse/tokens"
)

const proxyDoc = `
Proxy runs an MCP server and relays its JSON-RPC over this process's stdin
and stdout, so the model gets compact, budgeted results. Put it in front of
the server's command in your MCP client's config.

Everything passes through unchanged, in order, except:
  tools/list   each tool gains three optional parameters:
                 _output_mode  "raw" returns exactly what the server returned
                 _budget       token budget for this result
                 _chunk        handle such as "r1.2": fetch a chunk of an
                               earlier result without calling the tool
               and a tool terse_compact is added (call it after the
               conversation was compacted; the notification
               notifications/terse/compact does the same).
  tools/call   text results are re-encoded (never larger than compact JSON,
               lossless or with declared, recoverable elision). Clients that
               show the model structuredContent (Claude Code, Copilot CLI)
               get the compact text instead of it; Claude Code results stay
               under its 25,000-token limit.

A repeated result the model has already seen becomes a one-line reference
to it. After terse_compact or notifications/terse/compact the next repeat
comes back in full. A client that shares one session between several
conversations names each in the params._meta key "terse/conversation" of
tools/call (and of the compaction, to compact only that conversation); a
result is never a reference to one from another conversation.

If the server crashes, calls in flight get a JSON-RPC error and the server
is restarted on the next request. Logs go to stderr; stdout carries only MCP.

Examples:
  terse proxy -- npx -y @modelcontextprotocol/server-filesystem /repo
  terse proxy --verbose --stats-file stats.json -- ./my-server --flag
  terse proxy --upstream https://mcp.example.com/mcp

Claude Code config (.mcp.json):
  {"mcpServers": {"fs": {"command": "terse",
     "args": ["proxy", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "."]}}}
`

func runProxy(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("proxy", "[--config FILE] [--verbose] [--stats-file F] [--upstream URL] -- COMMAND [ARGS...]", proxyDoc, stdout, stderr)
	configPath := fs.String("config", "", "terse config `FILE` ([proxy] section and per-tool rules)")
	verbose := fs.Bool("verbose", false, "print one line per tool call (and restarts) to stderr")
	statsFile := fs.String("stats-file", "", "write JSON totals (calls, tokens before/after, saved by source) to `F` on exit")
	upstreamURL := fs.String("upstream", "", "relay to a Streamable-HTTP MCP server at `URL` instead of running COMMAND")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	rest := fs.Args()
	var up mcpproxy.Upstream
	switch {
	case *upstreamURL != "" && len(rest) > 0:
		return &usageError{"proxy: give either --upstream URL or -- COMMAND, not both"}
	case *upstreamURL != "":
		up = &mcpproxy.HTTP{URL: *upstreamURL}
	case len(rest) == 0:
		return &usageError{"proxy: missing the server command: terse proxy [flags] -- COMMAND [ARGS...]"}
	default:
		up = &mcpproxy.Command{Path: rest[0], Args: rest[1:], Stderr: stderr}
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		return err
	}
	opts, tokenizer, err := mcpOptions(cfg)
	if err != nil {
		return err
	}
	opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if *verbose {
		opts.Verbose = stderr
	}
	p := mcpproxy.NewProxy(up, opts)
	err = p.Serve(ctx, stdin, stdout)
	if *statsFile != "" {
		if werr := p.Stats().WriteFile(*statsFile, tokenizer); werr != nil && err == nil {
			err = fmt.Errorf("writing stats: %w", werr)
		}
	}
	if ctx.Err() != nil {
		return nil // interrupted: a normal way to stop a proxy
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

// mcpOptions turns the config into proxy options running the terse
// pipeline, and names the tokenizer for the stats file.
func mcpOptions(cfg *config.Config) (*mcpproxy.Options, string, error) {
	counter, err := tokens.Get(cfg.Tokenizer)
	if err != nil {
		return nil, "", err
	}
	st, err := configStore(cfg.Store.Dir, cfg.Store.Redis, cfg.Store.TTL.Duration)
	if err != nil {
		return nil, "", err
	}
	pl := &mcpproxy.Pipeline{
		Options: terse.Options{Tokenizer: counter, Format: cfg.Format, Budget: cfg.Budget,
			Store: st},
		NoDedup: !cfg.Dedup.Enabled,
		Dedup: dedup.New(dedup.Options{NearRef: cfg.Dedup.NearRef, MaxEntries: cfg.Dedup.MaxEntries,
			MaxBytes: cfg.Dedup.MaxBytes, MutatingTools: cfg.Dedup.MutatingTools}),
		ForTool: func(tool string, o *terse.Options) {
			t := cfg.Tool(tool)
			if t == nil {
				return
			}
			if t.Budget > 0 {
				o.Budget = t.Budget
			}
			o.Filter = t.Rule()
			o.Strategy = t.Strategy
			o.Pointer = t.Items
			o.DropFields, o.KeepFields = t.DropFields, t.KeepFields
			o.Template = t.Template
			o.Mutating = t.Mutating
		},
	}
	if _, err := terse.New(&pl.Options); err != nil {
		return nil, "", err
	}
	opts := &mcpproxy.Options{
		Transformer:   pl,
		Counter:       counter,
		MinSizeBytes:  cfg.Proxy.MinSizeBytes,
		MaxSizeBytes:  cfg.Proxy.MaxSizeBytes,
		ExcludeTools:  cfg.Proxy.ExcludeTools,
		FailOnError:   !cfg.Proxy.SkipOnError,
		DefaultBudget: cfg.Budget,
		MutatingTools: cfg.Dedup.MutatingTools,
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
