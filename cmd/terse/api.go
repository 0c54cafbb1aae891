package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/apiproxy"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/profile"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/telemetry"
)

const apiDoc = `
Api is an HTTP proxy in front of the Anthropic and OpenAI APIs. Point a
client at it with its base-URL setting:

  ANTHROPIC_BASE_URL=http://127.0.0.1:8788
  OPENAI_BASE_URL=http://127.0.0.1:8788/v1

It rewrites the bodies of POST /v1/messages, /v1/chat/completions and
/v1/responses:
old turns trimmed once the conversation nears the context window (in steps
chosen so the provider's prompt cache keeps hitting), a tool result
identical to an earlier one replaced by a reference to that call, earlier
messages edited in batches (below), and tool results shaped losslessly
when that is cheaper. System prompts, user text, tool definitions and thinking blocks
are never changed. Everything else, responses included, passes through
untouched and streams as it arrives. A request with the header
"x-terse-bypass: 1" (or true, or yes) is forwarded as it is, and so is
one whose rewriting fails (logged with its stack, and counted).

GET /metrics serves Prometheus counters; the summary is printed on exit.
--stats-file appends one JSON line per request to a file only its owner
can read; when it would pass 64 MiB it is renamed FILE.1 (replacing the
previous one) and a new FILE is started, so the two hold at most 128 MiB.
With [telemetry] enabled in the config, one anonymous event per request is
written (docs/telemetry.md). A conversation's tokenizer, and its window
when the config's [profiles] name one, come from the model id of its first
request. The window is in the provider's tokens; terse estimates
o200k_base tokens, so it holds its estimate × an estimated ratio
against it:
learnt per model family from the provider's usage (10 requests on,
bounded to 1–2), until then 1.35 for Claude from Opus 4.7 on and 1 for
other models, frozen per conversation on its first request. See
docs/api.md.

Earlier messages are edited in batches (see docs/api.md, "Batched
edits"): a file read that a later write of the file superseded, the
payload of a write that succeeded (--edit-age requests ago, 6 by
default) and an old result of --edit-bulky bytes or more (1024) each
become one line saying what it was and how to get it back (call it again
when it only reads, else the terse chunk command that prints it from the
agent's shell). A batch is made only when the provider's cache is cold
anyway (the conversation idle longer than --cache-ttl, 5m by default, or
an hour when the request asks for 1-hour cache writes; another model; a
trimming step) or when it takes out --edit-share of the prompt (0.3);
later requests carry the same edited prefix. --no-edit keeps payloads and
old results (stale reads are still declared).

--holdout SHARE forwards that share of conversations untouched (the same
conversation always in the same arm) so that terse stats --api FILE can
compare what the provider billed for both arms; 0.1 is a reasonable
share for a trial, 0 (the default) holds out none.

--cache-diagnostics ([api] cache_diagnostics) asks Anthropic for its cache
diagnostics: each Anthropic request gets "diagnostics":
{"previous_message_id": ID} (the conversation's previous response; null
on its first) and the beta header cache-diagnosis-2026-04-07, unless it
carries diagnostics of its own. The misses the responses report are
counted by cache_miss_reason in the summary and in terse stats --api,
those at terse's own prefix changes (a trim boundary move or a batch of
edits) apart from the client's. Without the flag neither the field nor
the header is ever sent.
`

// apiFlags are the flags terse api and terse wrap share.
type apiFlags struct {
	config, anthropic, openai, statsFile *string
	window                               *int
	dryRun, cacheDiag                    *bool
	holdout                              *shareFlag
	holdoutSeed                          *string
	noEdit                               *bool
	editAge, editBulky                   *int
	editShare                            *shareFlag
	cacheTTL                             *time.Duration
}

// shareFlag is a share from 0 to 1 that remembers whether it was given.
type shareFlag struct {
	v   float64
	set bool
}

func (f *shareFlag) String() string { return strconv.FormatFloat(f.v, 'g', -1, 64) }

func (f *shareFlag) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v > 1 {
		return fmt.Errorf("want a share from 0 to 1")
	}
	f.v, f.set = v, true
	return nil
}

func addAPIFlags(fs *flag.FlagSet) apiFlags {
	holdout := &shareFlag{}
	fs.Var(holdout, "holdout", "forward this `share` (0 to 1) of conversations untouched, for the A/B comparison `terse stats --api` reports (default 0)")
	editShare := &shareFlag{}
	fs.Var(editShare, "edit-share", "make a batch of edits while the cache is warm only when it takes out this `share` (0 to 1) of the prompt (default 0.3)")
	return apiFlags{
		editShare:   editShare,
		noEdit:      fs.Bool("no-edit", false, "do not leave out applied write payloads or old bulky results (stale reads are still declared)"),
		editAge:     fs.Int("edit-age", 0, "leave out write payloads and bulky results older than this many `requests` (default 6)"),
		editBulky:   fs.Int("edit-bulky", 0, "an old result of at least this many `bytes` is bulky (default 1024)"),
		cacheTTL:    fs.Duration("cache-ttl", 0, "the provider's prompt-cache `lifetime` when a request asks for no other (default 5m)"),
		holdout:     holdout,
		holdoutSeed: fs.String("holdout-seed", "", "`seed` choosing the held-out conversations (default a fixed one)"),
		config:      fs.String("config", "", "terse config `FILE` ([api] section)"),
		anthropic:   fs.String("anthropic-upstream", "", "Anthropic base `URL` (default "+apiproxy.DefaultAnthropic+")"),
		openai:      fs.String("openai-upstream", "", "OpenAI base `URL` (default "+apiproxy.DefaultOpenAI+")"),
		window:      fs.Int("window", 0, "context window in the provider's `TOKENS` (default: the model's), held against terse's token estimate × the estimated window ratio"),
		statsFile:   fs.String("stats-file", "", "append one JSON line per request to `FILE` (mode 0600; at 64 MiB it becomes FILE.1)"),
		dryRun:      fs.Bool("dry-run", false, "forward the original requests; only report what would be saved"),
		cacheDiag:   fs.Bool("cache-diagnostics", false, "attach Anthropic's cache diagnostics to Anthropic requests and count the cache misses they report by reason (terse stats --api)"),
	}
}

// settings merges the flags over the config file's [api] section.
func (f apiFlags) settings() (*config.Config, config.API, error) {
	cfg := config.Default()
	if *f.config != "" {
		c, err := config.Load(*f.config)
		if err != nil {
			return nil, config.API{}, err
		}
		cfg = c
	}
	a := cfg.API
	if *f.anthropic != "" {
		a.AnthropicUpstream = *f.anthropic
	}
	if *f.openai != "" {
		a.OpenAIUpstream = *f.openai
	}
	if *f.window > 0 {
		a.Window = *f.window
	}
	if *f.statsFile != "" {
		a.StatsFile = *f.statsFile
	}
	if *f.dryRun {
		a.DryRun = true
	}
	if *f.cacheDiag {
		a.CacheDiagnostics = true
	}
	if f.holdout.set {
		a.Holdout = f.holdout.v
	}
	if *f.holdoutSeed != "" {
		a.HoldoutSeed = *f.holdoutSeed
	}
	if *f.noEdit {
		a.NoEdit = true
	}
	if *f.editAge > 0 {
		a.EditAge = *f.editAge
	}
	if *f.editBulky > 0 {
		a.EditBulkyBytes = *f.editBulky
	}
	if f.editShare.set {
		a.EditShare = f.editShare.v
	}
	if *f.cacheTTL > 0 {
		a.CacheTTL.Duration = *f.cacheTTL
	}
	if *f.editAge < 0 || *f.editBulky < 0 || *f.cacheTTL < 0 {
		return nil, config.API{}, &usageError{"api: --edit-age, --edit-bulky and --cache-ttl must not be negative"}
	}
	if a.Listen == "" {
		a.Listen = config.DefaultAPIListen
	}
	return cfg, a, nil
}

// apiPipelines gives the rewriter the pipeline of a tool's results in a
// conversation of a model: the effective options profile.Resolve gives
// for the model and tool, and the pipeline of that set of options (the
// tool's rule: filter, template, format, tokenizer), built once and
// shared as the MCP side's are (pipelines). The pipelines share no store
// and no dedup cache: terse api elides nothing and makes its references
// itself, from the request's own content. Text shaping is capped at the
// lossless class: a shaped result must restore exactly with terse expand.
func apiPipelines(cfg *config.Config) (func(model, tool string) *terse.Pipeline, error) {
	ps := newPipelines(cfg, terse.Options{Shape: losslessShape(cfg.Shape.Options())})
	if err := ps.rules(); err != nil {
		return nil, err
	}
	var mu sync.Mutex
	known := map[[2]string]*terse.Pipeline{}
	return func(model, tool string) *terse.Pipeline {
		k := [2]string{model, tool}
		mu.Lock()
		p, ok := known[k]
		mu.Unlock()
		if ok {
			return p
		}
		eff := profile.Resolve(cfg, profile.Context{ModelID: model, Tool: tool})
		p, _ = ps.pipeline(&eff) // nil on failure: results left as they are
		mu.Lock()
		if len(known) < maxProfiles {
			known[k] = p
		}
		mu.Unlock()
		return p
	}, nil
}

// losslessShape is o with every ceiling at most lossless (nil: nil).
func losslessShape(o *shape.Options) *shape.Options {
	if o == nil {
		return nil
	}
	c := *o
	if c.Ceiling == shape.None || c.Ceiling > shape.Lossless {
		c.Ceiling = shape.Lossless
	}
	c.Tools = append([]shape.ToolRule(nil), o.Tools...)
	for i := range c.Tools {
		if c.Tools[i].Ceiling > shape.Lossless {
			c.Tools[i].Ceiling = shape.Lossless
		}
	}
	return &c
}

// apiProfile resolves a conversation's model id with cfg's profiles: the
// tokenizer and the "ref" hint rule (the one hint family terse api
// emits) always, the window only when the config's profiles name the
// LLM variant (an explicit llm axis, or a variant of the file), so that
// built-in guesses do not override the window the model is known by.
func apiProfile(cfg *config.Config) func(model string) apiproxy.Profile {
	return func(model string) apiproxy.Profile {
		eff := profile.Resolve(cfg, profile.Context{ModelID: model})
		ref := eff.Hint("ref")
		p := apiproxy.Profile{Tokenizer: eff.Tokenizer, NoRefs: !ref.Allowed, MaxRefs: ref.MaxPerSession}
		named := cfg.Profiles.LLM != "" && cfg.Profiles.LLM != "auto"
		for _, l := range cfg.Profiles.LLMVariants {
			named = named || l.Name == eff.LLM
		}
		if named {
			p.Window = eff.ContextWindow
		}
		return p
	}
}

// apiPrices is the config's [[api.prices]] rows before the shipped
// table, unset cache prices filled in as config.APIPrice says.
func apiPrices(rows []config.APIPrice) *apiproxy.Prices {
	out := make([]apiproxy.PriceRow, 0, len(rows))
	for _, r := range rows {
		or := func(p *float64, d float64) float64 {
			if p != nil {
				return *p
			}
			return d
		}
		p := apiproxy.Price{Input: r.Input, Output: r.Output}
		p.CacheWrite5m = or(r.CacheWrite5m, r.Input)
		p.CacheWrite1h = or(r.CacheWrite1h, p.CacheWrite5m)
		p.CacheRead = or(r.CacheRead, r.Input)
		out = append(out, apiproxy.PriceRow{Model: strings.ToLower(r.Model), Price: p})
	}
	return apiproxy.NewPrices(out)
}

// apiChunkStore is where elided results are kept for the agent's shell
// and the command that prints one: terse chunk with the conversation's
// scope, and the store's directory and lifetime when they are not the
// defaults. A Redis store is not used for them (the command would need
// the config file's path): results of calls that may have side effects
// are then not elided.
func apiChunkStore(cfg *config.Config, st store.Store) (store.Store, string) {
	if cfg.Store.Redis != "" {
		return nil, ""
	}
	dir := cfg.Store.Dir
	if dir == "" {
		dir = store.DefaultDir()
	}
	return st, strings.Replace(chunkCommand(dir, cfg.Store.TTL.Duration), "terse chunk", "terse chunk --session {scope}", 1)
}

// apiServer is a running proxy.
type apiServer struct {
	srv   *http.Server
	stats *apiproxy.Stats
	rec   *telemetry.Recorder // nil: telemetry off
	file  *statsFile
	errc  chan error
}

// startAPI serves the proxy on ln.
func startAPI(cfg *config.Config, a config.API, ln net.Listener, stderr io.Writer) (*apiServer, error) {
	s := &apiServer{errc: make(chan error, 1)}
	var out io.Writer
	if a.StatsFile != "" {
		f, err := openStatsFile(a.StatsFile, statsFileMax)
		if err != nil {
			return nil, err
		}
		s.file, out = f, f
	}
	s.stats = apiproxy.NewStats(nil, out)
	s.stats.SetPrices(apiPrices(a.Prices))
	if a.StatsFile != "" {
		// The tokenizer calibration is kept with the stats: a restarted
		// proxy starts from what the stats file has learnt.
		if recs, _, _, err := readAPIStats(a.StatsFile); err == nil {
			s.stats.SeedCalibration(apiproxy.Calibrate(recs))
		}
	}
	fail := func(err error) (*apiServer, error) {
		s.stats.Close()
		s.rec.Close()
		if s.file != nil {
			s.file.Close()
		}
		return nil, err
	}
	st, err := configStore(cfg.Store.Dir, cfg.Store.Redis, cfg.Store.TTL.Duration, cfg.Store.MaxBytes)
	if err != nil {
		return fail(err)
	}
	if s.rec, err = openTelemetry(cfg); err != nil {
		return fail(err)
	}
	pipes, err := apiPipelines(cfg)
	if err != nil {
		return fail(err)
	}
	chunks, fetch := apiChunkStore(cfg, st)
	p, err := apiproxy.New(apiproxy.Config{
		Anthropic: a.AnthropicUpstream,
		OpenAI:    a.OpenAIUpstream,
		Rewriter: apiproxy.NewRewriter(apiproxy.Options{Window: a.Window, Include: a.IncludeTools, Exclude: a.ExcludeTools,
			StableTurns: a.StableTurns, Pipeline: pipes, Store: st, Profile: apiproxy.Calibrated(apiProfile(cfg), s.stats),
			NoEdit: a.NoEdit, EditAge: a.EditAge, EditBulky: a.EditBulkyBytes, EditShare: a.EditShare,
			CacheTTL: a.CacheTTL.Duration, Prices: apiPrices(a.Prices),
			ChunkStore: chunks, ChunkFetch: fetch}),
		DryRun:           a.DryRun,
		CacheDiagnostics: a.CacheDiagnostics,
		Holdout:          apiproxy.Holdout{Share: a.Holdout, Seed: a.HoldoutSeed},
		MaxBody:          int64(a.MaxBodyBytes),
		Stats:            s.stats,
		Telemetry:        s.rec,
		ErrorLog:         log.New(stderr, "terse api: ", 0),
	})
	if err != nil {
		return fail(err)
	}
	metrics := s.stats.Handler()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/metrics" {
			metrics.ServeHTTP(w, r)
			return
		}
		p.ServeHTTP(w, r)
	})
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	go func() { s.errc <- s.srv.Serve(ln) }()
	return s, nil
}

// stop shuts the proxy down (requests in flight get a few seconds) and
// returns the summary.
func (s *apiServer) stop() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
	s.stats.Close() // makes the last events: close the recorder after it
	s.rec.Close()
	if s.file != nil {
		s.file.Close()
	}
	return s.stats.Summary()
}

func runAPI(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("api", "[--config FILE] [--listen ADDR] [--anthropic-upstream URL] [--openai-upstream URL] [--window TOKENS] [--stats-file FILE] [--dry-run] [--holdout SHARE] [--no-edit] [--edit-age N] [--edit-bulky BYTES] [--edit-share F] [--cache-ttl D] [--cache-diagnostics]", apiDoc, stdout, stderr)
	listen := fs.String("listen", "", "address to serve on (default [api] listen, else "+config.DefaultAPIListen+")")
	af := addAPIFlags(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{"api: unexpected arguments"}
	}
	cfg, a, err := af.settings()
	if err != nil {
		return err
	}
	warnDeprecated(stderr, cfg)
	if *listen != "" {
		a.Listen = *listen
	}
	ln, err := net.Listen("tcp", a.Listen)
	if err != nil {
		return err
	}
	s, err := startAPI(cfg, a, ln, stderr)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(stderr, "terse api: listening on http://%s (ANTHROPIC_BASE_URL=http://%[1]s, OPENAI_BASE_URL=http://%[1]s/v1)\n", ln.Addr())
	select {
	case err = <-s.errc:
	case <-ctx.Done():
	}
	fmt.Fprint(stderr, s.stop())
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// statsFileMax is the size a stats file may reach before it is rotated.
const statsFileMax = 64 << 20

// statsFile is an append-only file of JSON lines, created 0600, that is
// renamed to path+".1" (replacing the previous one) before a line would
// take it past max bytes: the two files hold at most 2×max. Each Write is
// one whole line, so a rotation never splits one.
type statsFile struct {
	mu   sync.Mutex
	path string
	max  int64
	f    *os.File
	size int64
}

func openStatsFile(path string, max int64) (*statsFile, error) {
	s := &statsFile{path: path, max: max}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *statsFile) open() error {
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	s.f, s.size = f, fi.Size()
	return nil
}

func (s *statsFile) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return 0, os.ErrClosed
	}
	if s.size > 0 && s.size+int64(len(p)) > s.max {
		s.f.Close()
		s.f = nil
		if err := os.Rename(s.path, s.path+".1"); err != nil {
			return 0, err
		}
		if err := s.open(); err != nil {
			return 0, err
		}
	}
	n, err := s.f.Write(p)
	s.size += int64(n)
	return n, err
}

func (s *statsFile) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
