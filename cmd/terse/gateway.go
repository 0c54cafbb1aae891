package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/mcpproxy"
	"github.com/terse-dev/terse/store/redisstore"
)

const gatewayDoc = `
Gateway serves MCP over Streamable HTTP at /mcp and aggregates the upstream
servers listed in the config file, stdio commands or HTTP URLs. Each
upstream tool appears as SERVER__TOOL with the same reserved parameters and
result handling as terse proxy (see terse proxy --help): compact, budgeted
results placed where each client's model reads them.

Dedup state is per MCP session (and per conversation named in the
params._meta key "terse/conversation"). A client compacts it by calling
terse_compact or by POSTing the notification notifications/terse/compact
to /mcp with its Mcp-Session-Id header (a 2026-07-28 client, which has
no session, names the conversation in params._meta instead).

Also served: /healthz (JSON, 503 when no upstream is up) and /metrics
(Prometheus, with the Go and process collectors:
terse_gateway_calls_total, terse_gateway_call_duration_seconds,
terse_gateway_tokens_in_total and terse_gateway_tokens_out_total by server
and tool, terse_gateway_tokens_saved_total and
terse_gateway_tokens_cost_total by server, tool and source (filter, dedup,
encoding, fit; saved minus cost is the net saving),
terse_gateway_errors_total, terse_gateway_upstream_up,
terse_gateway_upstream_restarts_total,
terse_gateway_rejected_messages_total,
terse_gateway_unknown_tool_calls_total and
terse_gateway_catalog_tokens_in_total/out_total).

Clients of MCP 2026-07-28 are served statelessly: any replica answers any
request, and the conversation named in params._meta "terse/conversation"
is what dedup and chunk handles are bound to (without one, results are
never referenced). Clients of 2025-11-25 and 2025-06-18 get sessions;
with [store] redis the sessions are kept there, so any replica serves them
too (no balancer stickiness needed).

With [store] redis, replicas share everything a call needs in Redis:
chunks, dedup partitions (near-references included), compaction counters,
sessions, the client of each conversation and the owner and shape of each
chunk handle; with Redis down, calls go on without dedup and without chunks
(terse_gateway_shared_state_up is 0) and recover when it returns. With
[gateway] tokens (or TERSE_GATEWAY_TOKENS="tenant=token,..."), /mcp
requires a bearer token, and each token's tenant has its own dedup and
chunks; a handle of another tenant or session is refused. See
docs/scaling.md.

Idle sessions end after [gateway] idle_timeout (default 30m); sessions
kept in Redis after [store] ttl. SIGINT and SIGTERM drain the server and
write --stats-file.

A crashed upstream fails its calls in flight with a JSON-RPC error and is
reconnected on its next call. Logs go to stderr.

Config (TOML):
  [gateway]
  listen = "127.0.0.1:7801"
  tokens = { team-a = "a-long-random-token-1" }

  [store]
  redis = "redis://127.0.0.1:6379/0"

  [[servers]]
  name = "fs"
  command = "npx"
  args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]

  [[servers]]
  name = "remote"
  url = "https://mcp.example.com/mcp"
  headers = { Authorization = "Bearer ${MCP_TOKEN}" }   # ${VAR}: from the environment

Listening off loopback (another machine can connect) needs [gateway]
tokens or TERSE_GATEWAY_TOKENS: without them anyone who reaches the port
can call every upstream tool, so the gateway refuses to start unless
--insecure says that is meant (a network you control, a proxy in front
that authenticates).

Examples:
  terse gateway --config terse.toml --listen 127.0.0.1:7801
  TERSE_GATEWAY_TOKENS=team-a=a-long-random-token-1 terse gateway --config terse.toml --listen 0.0.0.0:7801
`

// defaultListen is used when neither --listen nor [gateway] listen is set.
const defaultListen = "127.0.0.1:7801"

func runGateway(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("gateway", "--config FILE [--listen ADDR] [--verbose] [--stats-file F]", gatewayDoc, stdout, stderr)
	configPath := fs.String("config", "", "terse config `FILE` with [[servers]] (required)")
	listen := fs.String("listen", "", "address to serve on (default [gateway] listen, else "+defaultListen+")")
	verbose := fs.Bool("verbose", false, "log at DEBUG: one record per tool call")
	statsFile := fs.String("stats-file", "", "write JSON totals to `F` on exit (SIGINT or SIGTERM)")
	logFormat := fs.String("log-format", "text", "log `FORMAT` on stderr: text or json")
	insecure := fs.Bool("insecure", false, "serve off loopback without tokens (see above)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *configPath == "" {
		return &usageError{"gateway: --config FILE is required (it lists the upstream [[servers]])"}
	}
	if fs.NArg() > 0 {
		return &usageError{"gateway: unexpected arguments; upstreams are listed in the config file"}
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		return err
	}
	if len(cfg.Servers) == 0 {
		return fmt.Errorf("gateway: %s lists no [[servers]]", *configPath)
	}
	opts, tokenizer, err := mcpOptions(cfg)
	if err != nil {
		return err
	}
	logger, err := newLogger(stderr, *logFormat, *verbose)
	if err != nil {
		return err
	}
	for _, w := range cfg.Deprecated() {
		logger.Warn(w)
	}
	tokens, err := gatewayTokens(cfg.Gateway.Tokens, os.Getenv("TERSE_GATEWAY_TOKENS"))
	if err != nil {
		return err
	}
	addr, err := gatewayAddr(*listen, cfg, tokens, *insecure, logger)
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
	ctx, stop := withTerm(ctx)
	defer stop()
	specs, err := gatewaySpecs(cfg)
	if err != nil {
		return err
	}
	g, err := mcpproxy.NewGateway(specs, opts)
	if err != nil {
		return err
	}
	defer g.Close()
	g.SetTokens(tokens)
	st, err := sharedState(ctx, cfg, opts, g, logger)
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
	}
	logUpstreams(logger, specs)
	if err := g.Start(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger.Info("terse gateway serving", "addr", "http://"+ln.Addr().String()+"/mcp", "servers", len(specs),
		"tenants", len(tokens), "shared_state", cfg.Store.Redis != "")
	err = serveGateway(ctx, g, ln)
	if *statsFile != "" {
		if werr := g.Stats().WriteFile(*statsFile, tokenizer); werr != nil && err == nil {
			err = fmt.Errorf("writing stats: %w", werr)
		}
	}
	return err
}

// gatewayAddr is the address to serve on: --listen, else [gateway]
// listen, else the default. An address reachable from other machines
// without tokens is refused, unless insecure (then a warning).
func gatewayAddr(listen string, cfg *config.Config, tokens map[string]string, insecure bool, logger *slog.Logger) (string, error) {
	addr := listen
	if addr == "" {
		addr = cfg.Gateway.Listen
	}
	if addr == "" {
		addr = defaultListen
	}
	// Before any upstream starts: an open gateway is refused at once.
	if len(tokens) == 0 && !loopbackAddr(addr) {
		if !insecure {
			return "", &usageError{fmt.Sprintf("gateway: --listen %s is reachable from other machines and no [gateway] tokens (or TERSE_GATEWAY_TOKENS) are set, so anyone there could call every upstream tool; listen on 127.0.0.1, set tokens, or pass --insecure", addr)}
		}
		logger.Warn("serving off loopback without tokens (--insecure): anyone who reaches the port can call every upstream tool", "addr", addr)
	}
	return addr, nil
}

// gatewaySpecs are the config's upstream servers.
func gatewaySpecs(cfg *config.Config) ([]mcpproxy.ServerSpec, error) {
	var specs []mcpproxy.ServerSpec
	for _, s := range cfg.Servers {
		client, err := upstreamClient(s.Headers)
		if err != nil {
			return nil, fmt.Errorf("gateway: server %s: %w", s.Name, err)
		}
		specs = append(specs, mcpproxy.ServerSpec{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Client: client})
	}
	return specs, nil
}

// sharedState opens the shared state a Redis store gives (the gateway's
// and dedup's, across replicas), when the config names one: returned, to
// close.
func sharedState(ctx context.Context, cfg *config.Config, opts *mcpproxy.Options, g *mcpproxy.Gateway, logger *slog.Logger) (*redisstore.State, error) {
	if cfg.Store.Redis != "" {
		st, err := redisstore.NewState(cfg.Store.Redis, cfg.Store.TTL.Duration)
		if err != nil {
			return nil, err
		}
		if opts.Dedup != nil {
			opts.Dedup.SetShared(mcpproxy.SharedDedup(st), g.SharedError)
		}
		g.SetState(st)
		if err := st.Ping(ctx); err != nil {
			logger.Warn("shared state unreachable; serving without dedup until it answers", "err", err)
		}
		return st, nil
	}
	return nil, nil
}

// logUpstreams says which upstream is starting.
func logUpstreams(logger *slog.Logger, specs []mcpproxy.ServerSpec) {
	// Upstreams start one after another (an npx server may take many
	// seconds to install): say what is starting, so a quiet wait reads as
	// what it is.
	for _, sp := range specs {
		what := sp.URL
		if what == "" {
			what = shellJoin(append([]string{sp.Command}, sp.Args...))
		}
		logger.Info("starting upstream", "server", sp.Name, "upstream", what)
	}
}

// serveGateway serves g on ln until it fails or ctx is done (then it
// shuts down, within 5 seconds).
func serveGateway(ctx context.Context, g *mcpproxy.Gateway, ln net.Listener) error {
	var err error
	srv := &http.Server{Handler: g.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = srv.Shutdown(sctx)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// loopbackAddr reports whether a listen address serves this machine only:
// a loopback IP or localhost (an empty host means every interface).
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// gatewayTokens merges the config's tokens (tenant → token) with env
// ("tenant=token,…") into token → tenant.
func gatewayTokens(cfg map[string]string, env string) (map[string]string, error) {
	byTenant := map[string]string{}
	for t, tok := range cfg {
		byTenant[t] = tok
	}
	for _, kv := range strings.Split(env, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		t, tok, ok := strings.Cut(kv, "=")
		if !ok || !config.ValidTenant(t) || len(tok) < 16 {
			return nil, fmt.Errorf("gateway: TERSE_GATEWAY_TOKENS: each entry is TENANT=TOKEN, tenant from [A-Za-z0-9_.-], token of 16 characters or more")
		}
		byTenant[t] = tok
	}
	out := map[string]string{}
	for t, tok := range byTenant {
		if other, dup := out[tok]; dup {
			return nil, fmt.Errorf("gateway: tenants %s and %s have the same token", other, t)
		}
		out[tok] = t
	}
	return out, nil
}
