// Package config reads terse's configuration file and, for compatibility,
// kimbap service manifests.
//
// One TOML file configures all of terse: the tokenizer, output format and
// default budget, the chunk store, dedup, the MCP proxy and gateway,
// history trimming, and per-tool rules (filters, budgets, fit strategies,
// templates). docs/config.md documents every key with its default.
//
// Reading a file has two steps. [Parse] (or [Load]) decodes strictly: an
// unknown key or a value of the wrong type is an error with file:line:col.
// [Config.Validate] then checks meaning (allowed names, ranges, glob and
// path syntax, filter rules) and reports every problem at once, each with
// the position of its key. Load and Parse run both.
//
//	cfg, err := config.Load("terse.toml")
//	...
//	if t := cfg.Tool("github__list_issues"); t != nil {
//		res := t.Rule().Apply(payload, nil)
//	}
//
// Parts consumed by packages that come later in the pipeline (fit,
// dedup, render, the proxy, history) are carried as validated plain data.
//
// [LoadManifest] reads a kimbap service manifest (YAML) unchanged and gives
// each action's response filter as a [filter.Spec].
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/toolname"
	"github.com/terse-dev/terse/tree"
)

// Config is terse's configuration. The zero value is not the default; use
// [Default], or [Parse] which starts from it.
type Config struct {
	// Tokenizer names the counter every budget and report uses:
	// "o200k_base", "cl100k_base" or "estimate".
	Tokenizer string `toml:"tokenizer"`
	// Format is the output format: "auto" (cheapest faithful), "toon" or
	// "json".
	Format string `toml:"format"`
	// Budget is the default token budget per result; 0 means none (client
	// policy in the proxy may still set one).
	Budget int `toml:"budget"`

	Store   Store    `toml:"store"`
	Dedup   Dedup    `toml:"dedup"`
	Proxy   Proxy    `toml:"proxy"`
	Gateway Gateway  `toml:"gateway"`
	Servers []Server `toml:"servers"`
	History History  `toml:"history"`
	API     API      `toml:"api"`
	// Tools are per-tool rules, tried by [Config.Tool].
	Tools []Tool `toml:"tools"`
	// Shape configures the shaping of text results (shape.go).
	Shape Shape `toml:"shape"`

	// Telemetry, Hints and Profiles: see profiles.go.
	Telemetry Telemetry `toml:"telemetry"`
	Hints     Hints     `toml:"hints"`
	Profiles  Profiles  `toml:"profiles"`

	name string   // file name for messages
	pos  posIndex // key positions for validation messages
}

// Store configures the chunk store that keeps elided content retrievable.
type Store struct {
	// Dir is the store directory; "" means the user cache directory.
	Dir string `toml:"dir"`
	// Redis, when set, is the URL of a Redis server that holds the chunks
	// instead of Dir (redis://[user:password@]host:port/db, rediss:// for
	// TLS, or unix:///path): what several gateway replicas behind a load
	// balancer need to serve each other's chunks. At most one of Dir and
	// Redis is set.
	Redis string `toml:"redis"`
	// TTL is the idle time after which stored chunks expire.
	TTL Duration `toml:"ttl"`
	// MaxBytes bounds the bytes the directory store keeps (least
	// recently used out first); 0 means no bound. With Redis, the
	// server's maxmemory and eviction policy bound it.
	MaxBytes int64 `toml:"max_bytes"`
}

// Dedup configures cross-call deduplication (L0).
type Dedup struct {
	Enabled bool `toml:"enabled"`
	// NearRef enables near-references for small scalar deltas of objects.
	NearRef bool `toml:"near_ref"`
	// MutatingTools are globs of tool names whose calls invalidate earlier
	// reads of the same path.
	MutatingTools []string `toml:"mutating_tools"`
	// MaxEntries and MaxBytes bound the per-session cache; 0 means the
	// built-in default.
	MaxEntries int `toml:"max_entries"`
	MaxBytes   int `toml:"max_bytes"`
}

// Proxy configures the MCP proxy and gateway pipeline controls.
type Proxy struct {
	// MinSizeBytes: smaller results are passed untouched.
	MinSizeBytes int `toml:"min_size_bytes"`
	// MaxSizeBytes: larger results are only fitted to the budget, not
	// re-encoded. 0 means the proxy default; negative means no maximum.
	MaxSizeBytes int `toml:"max_size_bytes"`
	// IncludeTools, when not empty, selects the only tools transformed
	// (include wins over exclude). Entries are globs.
	IncludeTools []string `toml:"include_tools"`
	// ExcludeTools are never transformed. Entries are globs.
	ExcludeTools []string `toml:"exclude_tools"`
	// SkipOnError passes the original result when the pipeline fails.
	SkipOnError bool `toml:"skip_on_error"`
	// BrakeFetches: past this many chunk fetches of one tool's results in
	// a session, that tool's results come back whole for the rest of the
	// session (0: the default, 8; negative: never).
	BrakeFetches int `toml:"brake_fetches"`
	// Clients are per-client policies tried before the built-in ones.
	Clients []Client `toml:"clients"`
}

// Client is a per-client policy, chosen by clientInfo.name.
type Client struct {
	// Match is a case-insensitive substring of the client's name.
	Match string `toml:"match"`
	// Reads says where the client shows results to its model: "content"
	// or "structured" (structuredContent when present).
	Reads string `toml:"reads"`
	// Budget is the default token budget for this client; 0 means none.
	Budget int `toml:"budget"`
}

// Gateway configures `terse gateway`.
type Gateway struct {
	// Listen is the address to serve Streamable HTTP on.
	Listen string `toml:"listen"`
	// IdleTimeout ends a client session unused for this long ("30m");
	// 0 means the gateway default (30 minutes).
	IdleTimeout Duration `toml:"idle_timeout"`
	// Tokens, when set, turns on bearer-token authentication of clients:
	// each key is a tenant and its value the token that names it. Tenants
	// never share dedup state or chunks. The environment variable
	// TERSE_GATEWAY_TOKENS ("tenant=token,…") adds to it.
	Tokens map[string]string `toml:"tokens"`
}

// Server is a gateway upstream. Its tools are exposed as NAME__TOOL.
// Exactly one of Command and URL is set.
type Server struct {
	Name    string   `toml:"name"`
	Command string   `toml:"command"` // stdio upstream: program to run
	Args    []string `toml:"args"`
	Env     []string `toml:"env"` // extra environment, "KEY=VALUE"
	URL     string   `toml:"url"` // Streamable-HTTP upstream
	// Headers are sent with every request to URL (Authorization, say);
	// ${VAR} in a value is the environment variable's value.
	Headers map[string]string `toml:"headers"`
}

// History configures conversation trimming.
type History struct {
	// Format is the request format: "anthropic" or "openai".
	Format string `toml:"format"`
	// Window is the context window in tokens; 0 means the model's.
	Window int `toml:"window"`
	// Threshold is the fraction of the window above which trimming runs.
	Threshold float64 `toml:"threshold"`
	// Target is the fraction trimmed down to (hysteresis); at most
	// Threshold.
	Target float64 `toml:"target"`
	// KeepAssistant is how many recent assistant messages are kept intact
	// (best effort).
	KeepAssistant int `toml:"keep_assistant"`
}

// Tool is a per-tool rule. Filter keys build a [filter.Spec]; the others
// are read by the fit, render and dedup stages.
type Tool struct {
	// Match is an exact tool name or a glob (path.Match syntax).
	Match string `toml:"match"`

	// Filter: see filter.Spec.
	Root      string        `toml:"root"`
	Select    []string      `toml:"select"` // "out=path" or "path"
	Exclude   []string      `toml:"exclude"`
	MaxItems  int           `toml:"max_items"`
	DropNulls bool          `toml:"drop_nulls"`
	DropEmpty bool          `toml:"drop_empty"`
	Text      *TextFilter   `toml:"text"`
	Compact   *CompactRules `toml:"compact"`

	// Budget is this tool's token budget; 0 means the global one.
	Budget int `toml:"budget"`
	// Strategy is the fit value strategy (see Strategies).
	Strategy string `toml:"strategy"`
	// Items is the JSON Pointer of the item array the fit stage trims.
	Items string `toml:"items"`
	// DropFields are extra fields dropped at the fit "standard" level.
	DropFields []string `toml:"drop_fields"`
	// KeepFields are identity fields kept at the fit "minimal" level.
	KeepFields []string `toml:"keep_fields"`
	// Template is the L1 render template (see Templates).
	Template string `toml:"template"`
	// Mutating marks a tool that writes, for dedup invalidation.
	Mutating bool `toml:"mutating"`

	rule *filter.Rule
}

// TextFilter is the text part of a tool's filter; see filter.TextSpec.
type TextFilter struct {
	Include   []string `toml:"include"`
	Exclude   []string `toml:"exclude"`
	Head      int      `toml:"head"`
	Tail      int      `toml:"tail"`
	Collapse  bool     `toml:"collapse"`
	StripANSI bool     `toml:"strip_ansi"`
	OnEmpty   string   `toml:"on_empty"`
}

// CompactRules are a tool's compact templates; see filter.CompactSpec.
type CompactRules struct {
	Header string `toml:"header" yaml:"header"`
	Item   string `toml:"item" yaml:"item"`
	Footer string `toml:"footer" yaml:"footer"`
}

// Duration is a time.Duration written as a Go duration string ("30m").
type Duration struct{ time.Duration }

// UnmarshalText parses a duration such as "30m" or "1h30m".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q (want e.g. \"30m\" or \"1h\")", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Accepted names for string-valued keys. Later stages own these names;
// they are listed here so that a typo fails at load time.
var (
	Tokenizers = []string{"o200k_base", "cl100k_base", "estimate"}
	Formats    = []string{"auto", "toon", "json"}
	Strategies = []string{"element_count", "cascading", "size_proportional", "thread_level", "head_tail", "default"}
	Templates  = []string{"csv_from_md", "mr_diff_fence", "ci_pipeline"}
	Reads      = []string{"content", "structured"}
	Histories  = []string{"anthropic", "openai"}
)

// Default returns the configuration used when no file is given.
func Default() *Config {
	return &Config{
		Tokenizer: "o200k_base",
		Format:    "auto",
		Store:     Store{TTL: Duration{30 * time.Minute}, MaxBytes: 1 << 30},
		Dedup:     Dedup{Enabled: true, MutatingTools: []string{"write_*", "edit_*"}},
		Proxy:     Proxy{MinSizeBytes: 100, SkipOnError: true},
		History:   History{Format: "anthropic", Threshold: 0.8, Target: 0.6},
		Telemetry: defaultTelemetry(),
		Hints:     defaultHints(),
		Profiles:  defaultProfiles(),
		API:       API{Listen: DefaultAPIListen},
		Shape:     Shape{Enabled: true, Class: "elide"},
	}
}

// Load reads, decodes and validates the file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse decodes data (named name in messages) over [Default] and
// validates the result. Decoding errors are a [*Error] with position;
// validation errors are a [*ValidationError].
func Parse(data []byte, name string) (*Config, error) {
	c := Default()
	c.name = name
	// Arrays in the file replace the defaults rather than extend them.
	c.pos = indexPositions(data)
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return nil, decodeError(name, c.pos, err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Error is a decoding error at a position in a config file. Its text is
// one line, "FILE:LINE:COL: message".
type Error struct {
	File      string
	Line, Col int
	Key       string // dotted key, when known
	Msg       string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col)
	}
	if e.Key != "" {
		return loc + ": " + e.Key + ": " + e.Msg
	}
	return loc + ": " + e.Msg
}

func decodeError(name string, pos posIndex, err error) error {
	// go-toml's keys leave out array-of-tables indexes ("tools.selct");
	// the position index has the full key ("tools.2.selct").
	key := func(de *toml.DecodeError) string {
		line, col := de.Position()
		if k := pos.at(line, col); k != "" {
			return k
		}
		return strings.Join(de.Key(), ".")
	}
	if sm, ok := errors.AsType[*toml.StrictMissingError](err); ok {
		errs := make([]error, len(sm.Errors))
		for i := range sm.Errors {
			de := &sm.Errors[i]
			line, col := de.Position()
			errs[i] = &Error{File: name, Line: line, Col: col, Key: key(de), Msg: "unknown key"}
		}
		if len(errs) == 1 {
			return errs[0]
		}
		return &ValidationError{Errs: errs}
	}
	if de, ok := errors.AsType[*toml.DecodeError](err); ok {
		line, col := de.Position()
		return &Error{File: name, Line: line, Col: col, Key: key(de), Msg: strings.TrimPrefix(de.Error(), "toml: ")}
	}
	return &Error{File: name, Msg: err.Error()}
}

// ValidationError lists every problem in a config, one [*Error] each, in
// file order of the keys.
type ValidationError struct {
	Errs []error
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the individual errors.
func (e *ValidationError) Unwrap() []error { return e.Errs }

// Validate checks the meaning of every key and compiles the tool filters.
// It reports all problems at once.
func (c *Config) Validate() error {
	v := &validator{c: c}
	v.oneOf("tokenizer", c.Tokenizer, Tokenizers)
	v.oneOf("format", c.Format, Formats)
	v.nonNegative("budget", c.Budget)
	v.store(c)
	v.globs("dedup.mutating_tools", c.Dedup.MutatingTools)
	v.nonNegative("dedup.max_entries", c.Dedup.MaxEntries)
	v.nonNegative("dedup.max_bytes", c.Dedup.MaxBytes)
	v.proxy(c)
	v.gateway(c)
	v.servers(c)
	v.history(c)
	v.api(&c.API)
	for i := range c.Tools {
		v.tool(i, &c.Tools[i])
	}
	v.validateProfiles()
	v.shape(&c.Shape)
	if len(v.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(v.errs, func(a, b error) int {
		ea, eb := a.(*Error), b.(*Error)
		if ea.Line != eb.Line {
			return ea.Line - eb.Line
		}
		return ea.Col - eb.Col
	})
	return &ValidationError{Errs: v.errs}
}

type validator struct {
	c    *Config
	errs []error
}

// store checks [store].
func (v *validator) store(c *Config) {
	if c.Store.TTL.Duration <= 0 {
		v.errorf("store.ttl", "must be positive, got %s", c.Store.TTL)
	}
	if c.Store.MaxBytes < 0 {
		v.errorf("store.max_bytes", "must not be negative, got %d", c.Store.MaxBytes)
	}
	if r := c.Store.Redis; r != "" {
		if err := checkRedisURL(r); err != nil {
			v.errorf("store.redis", "%s", err)
		} else if c.Store.Dir != "" {
			v.errorf("store.redis", "set at most one of dir and redis")
		}
	}
}

// proxy checks [proxy] and its clients.
func (v *validator) proxy(c *Config) {
	v.nonNegative("proxy.min_size_bytes", c.Proxy.MinSizeBytes)
	v.globs("proxy.include_tools", c.Proxy.IncludeTools)
	v.globs("proxy.exclude_tools", c.Proxy.ExcludeTools)
	for i, cl := range c.Proxy.Clients {
		k := "proxy.clients." + strconv.Itoa(i)
		if cl.Match == "" {
			v.errorf(k+".match", "must not be empty")
		}
		v.oneOf(k+".reads", cl.Reads, Reads)
		v.nonNegative(k+".budget", cl.Budget)
	}
}

// gateway checks [gateway]: tenants, tokens and the listen address.
func (v *validator) gateway(c *Config) {
	tokens := map[string]string{}
	for tenant, tok := range c.Gateway.Tokens {
		k := "gateway.tokens." + tenant
		switch {
		case !ValidTenant(tenant):
			v.errorf(k, "tenant names are 1 to 64 characters from [A-Za-z0-9_.-]")
		case len(tok) < 16:
			v.errorf(k, "a token must be at least 16 characters")
		case tokens[tok] != "":
			v.errorf(k, "same token as tenant %s", tokens[tok])
		}
		tokens[tok] = tenant
	}
	if l := c.Gateway.Listen; l != "" {
		if _, _, err := net.SplitHostPort(l); err != nil {
			v.errorf("gateway.listen", "%q is not HOST:PORT", l)
		}
	}
}

// servers checks [[servers]]: names, command or url, environment.
func (v *validator) servers(c *Config) {
	seen := map[string]bool{}
	for i, s := range c.Servers {
		k := "servers." + strconv.Itoa(i)
		switch {
		case s.Name == "":
			v.errorf(k+".name", "must not be empty")
		case strings.Contains(s.Name, toolname.Sep):
			v.errorf(k+".name", "%q must not contain \"__\" (it separates server and tool names)", s.Name)
		case s.Name == "mcp":
			v.errorf(k+".name", "\"mcp\" is reserved: Claude Code names MCP tools mcp__SERVER__TOOL")
		case seen[s.Name]:
			v.errorf(k+".name", "duplicate server name %q", s.Name)
		}
		seen[s.Name] = true
		if (s.Command == "") == (s.URL == "") {
			v.errorf(k, "set exactly one of command and url")
		}
		for j, e := range s.Env {
			if k2, _, ok := strings.Cut(e, "="); !ok || k2 == "" {
				v.errorf(k+".env."+strconv.Itoa(j), "%q is not KEY=VALUE", e)
			}
		}
	}
}

// history checks [history].
func (v *validator) history(c *Config) {
	v.oneOf("history.format", c.History.Format, Histories)
	v.nonNegative("history.window", c.History.Window)
	if t := c.History.Threshold; t <= 0 || t > 1 {
		v.errorf("history.threshold", "must be in (0, 1], got %g", t)
	}
	if t := c.History.Target; t <= 0 || t > c.History.Threshold {
		v.errorf("history.target", "must be in (0, threshold], got %g", t)
	}
	v.nonNegative("history.keep_assistant", c.History.KeepAssistant)
}

func (v *validator) errorf(key, format string, args ...any) {
	line, col := v.c.pos.find(key)
	v.errs = append(v.errs, &Error{File: v.c.name, Line: line, Col: col, Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) oneOf(key, val string, allowed []string) {
	if !slices.Contains(allowed, val) {
		v.errorf(key, "%q is not one of %s", val, strings.Join(allowed, ", "))
	}
}

func (v *validator) nonNegative(key string, n int) {
	if n < 0 {
		v.errorf(key, "must be >= 0, got %d", n)
	}
}

func (v *validator) globs(key string, pats []string) {
	for i, p := range pats {
		if p == "" {
			v.errorf(key+"."+strconv.Itoa(i), "empty pattern")
		} else if _, err := path.Match(p, ""); err != nil {
			v.errorf(key+"."+strconv.Itoa(i), "bad glob %q", p)
		}
	}
}

func (v *validator) tool(i int, t *Tool) {
	k := "tools." + strconv.Itoa(i)
	if t.Match == "" {
		v.errorf(k+".match", "must not be empty")
	} else if _, err := path.Match(t.Match, ""); err != nil {
		v.errorf(k+".match", "bad glob %q", t.Match)
	}
	if t.Strategy != "" {
		v.oneOf(k+".strategy", t.Strategy, Strategies)
	}
	if t.Template != "" {
		v.oneOf(k+".template", t.Template, Templates)
	}
	v.nonNegative(k+".budget", t.Budget)
	if t.Items != "" {
		if _, err := tree.Pointer(t.Items).Tokens(); err != nil {
			v.errorf(k+".items", "%v", err)
		}
	}
	for j, f := range t.DropFields {
		if f == "" {
			v.errorf(k+".drop_fields."+strconv.Itoa(j), "empty field")
		}
	}
	for j, f := range t.KeepFields {
		if f == "" {
			v.errorf(k+".keep_fields."+strconv.Itoa(j), "empty field")
		}
	}
	for j, s := range t.Select {
		if _, err := filter.ParseField(s); err != nil {
			v.errorf(k+".select."+strconv.Itoa(j), "%v", err)
		}
	}
	rule, err := filter.Compile(t.FilterSpec())
	if err != nil {
		ce, _ := errors.AsType[*filter.CompileError](err)
		if ce == nil {
			v.errorf(k, "%v", err)
			return
		}
		for _, e := range ce.Errs {
			v.errorf(v.filterKey(k, t, e), "%v", e)
		}
		return
	}
	t.rule = rule
}

// filterKey finds the key a filter compile error belongs to, for its
// position.
func (v *validator) filterKey(k string, t *Tool, err error) string {
	if pe, ok := errors.AsType[*filter.PathError](err); ok {
		switch pe.Field {
		case "root":
			return k + ".root"
		case "exclude":
			if j := slices.Index(t.Exclude, pe.Path); j >= 0 {
				return k + ".exclude." + strconv.Itoa(j)
			}
			return k + ".exclude"
		case "select":
			for j, s := range t.Select {
				f, _ := filter.ParseField(s)
				if f.Path == pe.Path || f.Out == pe.Path {
					return k + ".select." + strconv.Itoa(j)
				}
			}
			return k + ".select"
		}
	}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "max_items"):
		return k + ".max_items"
	case strings.HasPrefix(msg, "text.") && t.Text != nil:
		field, _, _ := strings.Cut(strings.TrimPrefix(msg, "text."), " ")
		field = strings.TrimSuffix(field, ":")
		pats := map[string][]string{"include": t.Text.Include, "exclude": t.Text.Exclude}[field]
		for j, p := range pats {
			if strings.Contains(msg, strconv.Quote(p)) || p == "" && strings.Contains(msg, "empty pattern") {
				return k + ".text." + field + "." + strconv.Itoa(j)
			}
		}
		return k + ".text." + field
	case strings.HasPrefix(msg, "compact."):
		field, _, _ := strings.Cut(strings.TrimPrefix(msg, "compact."), ":")
		return k + ".compact." + field
	}
	return k
}

// FilterSpec returns the tool's filter as a [filter.Spec].
func (t *Tool) FilterSpec() filter.Spec {
	s := filter.Spec{
		Root:      t.Root,
		Exclude:   slices.Clone(t.Exclude),
		MaxItems:  t.MaxItems,
		DropNulls: t.DropNulls,
		DropEmpty: t.DropEmpty,
	}
	for _, f := range t.Select {
		fl, _ := filter.ParseField(f) // Validate reports the error
		s.Select = append(s.Select, fl)
	}
	if t.Text != nil {
		s.Text = &filter.TextSpec{
			Include:   slices.Clone(t.Text.Include),
			Exclude:   slices.Clone(t.Text.Exclude),
			Head:      t.Text.Head,
			Tail:      t.Text.Tail,
			Collapse:  t.Text.Collapse,
			StripANSI: t.Text.StripANSI,
			OnEmpty:   t.Text.OnEmpty,
		}
	}
	if t.Compact != nil {
		s.Compact = &filter.CompactSpec{Header: t.Compact.Header, Item: t.Compact.Item, Footer: t.Compact.Footer}
	}
	return s
}

// Rule returns the tool's compiled filter. It is nil until the Config has
// been validated ([Parse] and [Load] do that).
func (t *Tool) Rule() *filter.Rule { return t.rule }

// Tool returns the rule for the tool called name, or nil. An exact match
// wins; then the first glob in file order; then the same two steps for the
// name with an MCP server prefix removed (toolname.Tool: "list_issues" of
// "github__list_issues" or "mcp__github__list_issues").
func (c *Config) Tool(name string) *Tool {
	if t := c.tool(name); t != nil {
		return t
	}
	if short := toolname.Tool(name); short != name {
		return c.tool(short)
	}
	return nil
}

func (c *Config) tool(name string) *Tool {
	for i := range c.Tools {
		if c.Tools[i].Match == name {
			return &c.Tools[i]
		}
	}
	for i := range c.Tools {
		if ok, _ := path.Match(c.Tools[i].Match, name); ok {
			return &c.Tools[i]
		}
	}
	return nil
}

// posIndex maps dotted keys ("tools.2.select.1") to their position in the
// file, for validation messages.
type posIndex map[string][2]int

func (p posIndex) find(key string) (line, col int) {
	for key != "" {
		if lc, ok := p[key]; ok {
			return lc[0], lc[1]
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0, 0
}

// at returns the longest key at line:col, or "".
func (p posIndex) at(line, col int) string {
	best := ""
	for k, lc := range p {
		if lc[0] == line && lc[1] == col && (len(k) > len(best) || len(k) == len(best) && k < best) {
			best = k
		}
	}
	return best
}

func indexPositions(data []byte) posIndex {
	idx := posIndex{}
	var p unstable.Parser
	p.Reset(data)
	prefix := ""
	arrays := map[string]int{}
	at := func(n *unstable.Node) [2]int {
		s := p.Shape(n.Raw)
		return [2]int{s.Start.Line, s.Start.Column}
	}
	keyOf := func(n *unstable.Node) (string, *unstable.Node) {
		var parts []string
		var first *unstable.Node
		it := n.Key()
		for it.Next() {
			if first == nil {
				first = it.Node()
			}
			parts = append(parts, string(it.Node().Data))
		}
		return strings.Join(parts, "."), first
	}
	var value func(key string, v *unstable.Node)
	value = func(key string, v *unstable.Node) {
		switch v.Kind {
		case unstable.Array:
			i := 0
			for it := v.Children(); it.Next(); i++ {
				k := key + "." + strconv.Itoa(i)
				idx[k] = at(it.Node())
				value(k, it.Node())
			}
		case unstable.InlineTable:
			for it := v.Children(); it.Next(); {
				kv := it.Node()
				k, first := keyOf(kv)
				k = key + "." + k
				if first != nil {
					idx[k] = at(first)
				}
				value(k, kv.Value())
			}
		}
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			k, first := keyOf(e)
			prefix = k
			if first != nil {
				idx[k] = at(first)
			}
		case unstable.ArrayTable:
			k, first := keyOf(e)
			n := arrays[k]
			arrays[k] = n + 1
			prefix = k + "." + strconv.Itoa(n)
			if first != nil {
				idx[prefix] = at(first)
			}
		case unstable.KeyValue:
			k, first := keyOf(e)
			if prefix != "" {
				k = prefix + "." + k
			}
			if first != nil {
				idx[k] = at(first)
			}
			value(k, e.Value())
		}
	}
	return idx
}

// ValidTenant reports whether s can name a gateway tenant: 1 to 64
// characters from [A-Za-z0-9_.-].
func ValidTenant(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}
