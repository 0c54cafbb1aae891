package mcpproxy

import (
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/profile"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toolname"
)

// Reads says where a client shows tool results to its model.
type Reads int

const (
	// ReadsContent: the model reads the content blocks. structuredContent
	// is left untouched for programs; the compact text goes into content.
	ReadsContent Reads = iota
	// ReadsStructured: the client shows the model structuredContent when a
	// result carries it (Claude Code, Copilot CLI, Codex, VS Code). The
	// proxy drops structuredContent from transformed results and
	// outputSchema from the same tools in tools/list, so the compact
	// content text is what the model sees.
	ReadsStructured
)

// String returns "content" or "structured".
func (r Reads) String() string {
	if r == ReadsStructured {
		return "structured"
	}
	return "content"
}

// ClientRule sets the policy for clients whose clientInfo.name contains
// Match (case-insensitive). The first matching rule wins; rules in
// [Options.Clients] are tried before the built-in ones.
type ClientRule struct {
	Match string
	Reads Reads
	// Budget is the default token budget per result for these clients;
	// 0 means none.
	Budget int
}

// ClaudeCodeBudget is the default per-result budget for Claude Code, which
// fails MCP results above 25,000 tokens: its entry in the table of client
// limits, fit.Clients.
const ClaudeCodeBudget = fit.ClaudeCodeBudget

// builtinClients are tried after Options.Clients: what each client shows
// its model, matched by the clientInfo.name it sends in initialize. A
// client not here (or not confirmed from its source) is a content reader:
// terse then compacts content and leaves structuredContent to programs,
// which is right for a content reader; a structured reader taken for one
// loses no data but gets no saving on results with structuredContent, and
// its stats count the content's saving, which its model did not get.
//
//   - Claude Code (clientInfo "claude-code", title "Claude Code") replaces
//     a result's text blocks with one text block of structuredContent when
//     it is present and the result is not an error with text (its 2.1.332
//     linux-x64 build from npm, the result-to-model conversion; observed
//     in anthropics/claude-code#79944), and fails results above
//     MAX_MCP_OUTPUT_TOKENS, 25,000 by default.
//   - Copilot CLI forwards only structuredContent when a result has both
//     (github/copilot-cli#3258; its build is a compiled binary whose
//     bundle could not be read), given Claude Code's budget. Its exact
//     clientInfo name is not confirmed from source: any name containing
//     "copilot-cli" or "copilot cli" matches.
//   - Codex (clientInfo "codex-mcp-client") gives the model the JSON of
//     structuredContent when it is present and not null, else the
//     content (codex-rs/protocol/src/models.rs, From<&CallToolResult>
//     for FunctionCallOutputPayload); it keeps about 10,000 tokens of a
//     tool's output, cut in the middle (fit.Clients).
//   - VS Code (GitHub Copilot Chat's agent mode) sends its product's
//     nameLong ("Visual Studio Code", "Visual Studio Code - Insiders",
//     "Code - OSS" for builds from source, "VSCodium") and, when a result
//     has structuredContent, gives the model its JSON in place of every
//     text block (microsoft/vscode
//     src/vs/workbench/contrib/mcp/common/mcpServerRequestHandler.ts,
//     clientInfo; mcpLanguageModelToolContribution.ts, McpToolImplementation
//     invoke). No result limit in that path.
//   - Gemini CLI (clientInfo "gemini-cli-mcp-client") gives the model the
//     content blocks only (transformMcpContentToParts in its mcp-tool.ts):
//     the default, content, needs no rule.
//   - Zed (clientInfo "Zed", crates/context_server/src/context_server.rs)
//     gives the model the concatenated text blocks and ignores
//     structuredContent (crates/agent/src/tools/context_server_registry.rs,
//     ContextServerTool::run): content, no rule. No result limit there.
//   - Cursor ("cursor-vscode") and Windsurf ("windsurf-client") are closed
//     source: their names are what servers log, and which field their
//     model reads and any result limit are not confirmed from a source;
//     they keep the default, content. Reports differ for Cursor
//     (modelcontextprotocol/modelcontextprotocol#1411 says it uses
//     structuredContent when present, server authors report it
//     preferring content); the same thread says Windsurf ignores
//     structuredContent.
//
// Their budgets are not here: a built-in rule's budget is the client's
// Budget in the one table of client limits, fit.Clients.
var builtinClients = []ClientRule{
	{Match: "claude-code", Reads: ReadsStructured},
	{Match: "claude code", Reads: ReadsStructured},
	{Match: "copilot-cli", Reads: ReadsStructured},
	{Match: "copilot cli", Reads: ReadsStructured},
	{Match: "codex", Reads: ReadsStructured},
	{Match: "visual studio code", Reads: ReadsStructured},
	{Match: "code - oss", Reads: ReadsStructured},
	{Match: "vscodium", Reads: ReadsStructured},
}

// Policy is what the proxy does for one client.
type Policy struct {
	Reads  Reads
	Budget int
	// SpillChars is the client's fit.Client.SpillChars: a result longer
	// than this many characters it writes to a file (0: it does not).
	// The catalogue then raises it, per tool terse fits, to what terse
	// sends (see resultCharCap).
	SpillChars int
}

// PolicyFor returns the policy for a client name: the first rule of rules,
// then of the built-in rules, whose Match the name contains (a built-in
// rule with the client's budget from fit.Clients); ReadsContent with no
// budget otherwise.
func PolicyFor(client string, rules []ClientRule) Policy {
	name := strings.ToLower(client)
	c, known := fit.ClientFor(client)
	for _, r := range rules {
		if r.Match != "" && strings.Contains(name, strings.ToLower(r.Match)) {
			return Policy{Reads: r.Reads, Budget: r.Budget, SpillChars: c.SpillChars}
		}
	}
	for _, r := range builtinClients {
		if strings.Contains(name, r.Match) {
			return Policy{Reads: r.Reads, Budget: c.Budget, SpillChars: c.SpillChars}
		}
	}
	if known {
		return Policy{Budget: c.Budget, SpillChars: c.SpillChars}
	}
	return Policy{}
}

// Options configures a [Proxy] or a [Gateway]. The zero value works:
// compact JSON by the terse pipeline, no dedup, nothing stored, the IBM
// plugin's size limits, every tool selected, pipeline errors passed
// through.
type Options struct {
	// Pipeline transforms results of tools without a rule of their own.
	// Build it once (terse.New) with Fetch set to [FetchTemplate]; nil
	// means compact JSON, no store, no dedup.
	Pipeline *terse.Pipeline
	// ForTool, when set, returns the pipeline of a tool's rule (nil: use
	// Pipeline). Return the same *terse.Pipeline for every call of a
	// rule, so that its caches serve every call.
	ForTool func(tool string) *terse.Pipeline
	// Dedup is the dedup cache the pipelines share (terse.Options.Dedup),
	// if any: the proxy invalidates and compacts its partitions.
	Dedup *dedup.Cache
	// Counter counts the tokens of tool catalogues for stats; nil means
	// o200k_base.
	Counter tokens.Counter
	// MaxConcurrent bounds how many results are transformed at once; 0
	// means GOMAXPROCS.
	MaxConcurrent int
	// ShutdownGrace bounds how long the stdio proxy waits for requests in
	// flight once its client closed its input; 0 means 10 s, negative
	// means not at all.
	ShutdownGrace time.Duration
	// IdleTimeout ends a gateway session no request used for this long;
	// 0 means 30 minutes, negative means never.
	IdleTimeout time.Duration

	// MinSizeBytes: text blocks smaller than this are left alone.
	// 0 means 100; negative means no minimum.
	MinSizeBytes int
	// MaxSizeBytes: text blocks larger than this are not re-encoded, only
	// fitted to the budget (never passed raw past the client's limit).
	// 0 means 1 MiB; negative means no maximum.
	MaxSizeBytes int
	// IncludeTools, when non-nil, selects only these tools (exclusions are
	// then ignored: include wins). ExcludeTools are never transformed.
	// Entries are exact names or globs (path.Match syntax).
	IncludeTools []string
	ExcludeTools []string
	// MutatingTools are globs of tools whose calls invalidate the session's
	// dedup memory, in addition to tools annotated as writing
	// (readOnlyHint false, destructiveHint true) or named like writers.
	MutatingTools []string
	// FailOnError turns a pipeline error into a JSON-RPC error for the
	// call. The default (false) is skip_on_error: the original result is
	// passed and the error counted.
	FailOnError bool
	// Clients are client policy rules tried before the built-in ones.
	Clients []ClientRule
	// DefaultBudget applies to clients whose rule sets no budget; 0 means
	// none.
	DefaultBudget int
	// BrakeFetches is the brake on re-fetch storms: once a session
	// fetched more than this many chunks of one tool's results or read
	// again what it left out (the same call again, or a call naming a
	// path, file or URL such a call named, until a write of it), or
	// called the tool again with the same arguments, raw or with a larger
	// budget, after a result that left something out, that tool's
	// results come back whole for the rest of the session, the next one
	// led by [BrakeNotice]. 0 means [DefaultBrakeFetches]; negative
	// turns the brake off.
	BrakeFetches int
	// Profile, when set, resolves a client's profile (package profile)
	// by its clientInfo name, for one tool: the pipeline the tool's
	// results get for that client (built with the profile's tokenizer,
	// format, budget and template) and the hint policy its results are
	// emitted under. It is asked once per call; return the same
	// *terse.Pipeline for the same effective options, so that its caches
	// serve every call. Tool "" asks for the client's budget only.
	Profile func(client, tool string) ClientProfile

	// MaxMessageBytes bounds one JSON-RPC message in either direction.
	// 0 means 64 MiB.
	MaxMessageBytes int
	// MaxRestarts bounds how many times a crashed upstream is restarted
	// within a minute; 0 means 3, negative means never.
	MaxRestarts int

	// Logger receives diagnostics, and one DEBUG record per tools/call;
	// nil discards them. Never stdout.
	Logger *slog.Logger
	// Stats accumulates totals; nil means a private one.
	Stats *Stats
	// Telemetry receives one anonymous event per processed result and
	// chunk fetch (package telemetry); nil (telemetry off) costs nothing.
	// The caller closes it.
	Telemetry *telemetry.Recorder
}

func (o *Options) minSize() int {
	switch {
	case o.MinSizeBytes == 0:
		return 100
	case o.MinSizeBytes < 0:
		return 0
	}
	return o.MinSizeBytes
}

func (o *Options) maxSize() int {
	switch {
	case o.MaxSizeBytes == 0:
		return 1 << 20
	case o.MaxSizeBytes < 0:
		return int(^uint(0) >> 1)
	}
	return o.MaxSizeBytes
}

func (o *Options) maxMessage() int {
	if o.MaxMessageBytes <= 0 {
		return 64 << 20
	}
	return o.MaxMessageBytes
}

func (o *Options) shutdownGrace() time.Duration {
	switch {
	case o.ShutdownGrace == 0:
		return defaultShutdownGrace
	case o.ShutdownGrace < 0:
		return 0
	}
	return o.ShutdownGrace
}

func (o *Options) maxConcurrent() int {
	if o.MaxConcurrent <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.MaxConcurrent
}

func (o *Options) idleTimeout() time.Duration {
	switch {
	case o.IdleTimeout == 0:
		return 30 * time.Minute
	case o.IdleTimeout < 0:
		return 0
	}
	return o.IdleTimeout
}

func (o *Options) maxRestarts() int {
	switch {
	case o.MaxRestarts == 0:
		return 3
	case o.MaxRestarts < 0:
		return 0
	}
	return o.MaxRestarts
}

// selected reports whether tool results are transformed: include wins over
// exclude, as in the IBM plugin.
func (o *Options) selected(tool string) bool {
	if o.IncludeTools != nil {
		return toolname.MatchAny(o.IncludeTools, tool)
	}
	return !toolname.MatchAny(o.ExcludeTools, tool)
}

// ClientProfile is what a client's profile sets for one tool.
type ClientProfile struct {
	// Pipeline processes the tool's results for the client; nil means
	// the tool's rule's (Options.ForTool) or Options.Pipeline.
	Pipeline *terse.Pipeline
	// Budget is the client's budget; it applies when the client's rule
	// sets none, before Options.DefaultBudget, when positive.
	Budget int
	// Hints is the hint policy (the [hints] rules as they resolve for the
	// client and tool); nil emits every hint. Hints are counted per
	// session (max_per_session) by the proxy or gateway process: gateway
	// replicas sharing a store each count their own.
	Hints *profile.Effective
}

func (o *Options) policy(client string) Policy {
	p := PolicyFor(client, o.Clients)
	if p.Budget == 0 && o.Profile != nil {
		p.Budget = o.Profile(client, "").Budget
	}
	if p.Budget == 0 {
		p.Budget = o.DefaultBudget
	}
	return p
}

// withDefaults returns a copy with nil fields filled.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Counter == nil {
		c.Counter = tokens.O200kBase()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Stats == nil {
		c.Stats = new(Stats)
	}
	return c
}
