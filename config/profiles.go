package config

import (
	"cmp"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Telemetry configures the anonymous per-result events terse can write
// (package telemetry). It is off by default; nothing is written unless
// Enabled is true. Events never hold content, arguments, paths or URLs.
type Telemetry struct {
	Enabled bool `toml:"enabled"`
	// Dir holds one JSONL file per session; "" means the user config
	// directory's terse/telemetry.
	Dir string `toml:"dir"`
	// SampleRate is the fraction of events kept, in (0, 1]; sampling is
	// deterministic (every round(1/rate)-th event).
	SampleRate float64 `toml:"sample_rate"`
	// ToolNames writes tool names as they are; by default they are hashed
	// with a per-install salt.
	ToolNames bool `toml:"tool_names"`
	// MaxFileBytes starts a new file of the session once one reaches it;
	// MaxTotalBytes deletes the oldest files once the directory holds
	// more. 0 means the defaults (4 MiB and 64 MiB).
	MaxFileBytes  int `toml:"max_file_bytes"`
	MaxTotalBytes int `toml:"max_total_bytes"`
	// Queue is how many events may wait for the writer; more are dropped
	// (and counted). 0 means 1024.
	Queue int `toml:"queue"`
}

// HintFamilies are the in-band hint families the [Hints] policy governs,
// as written in TOML.
var HintFamilies = []string{"ref", "near_ref", "more", "query", "encoded"}

// Hints is the hint policy: one rule per family, consulted before any hint
// is emitted.
type Hints struct {
	Ref     HintRule `toml:"ref"`
	NearRef HintRule `toml:"near_ref"`
	More    HintRule `toml:"more"`
	Query   HintRule `toml:"query"`
	Encoded HintRule `toml:"encoded"`
}

// Rule returns the rule of family (one of [HintFamilies]), or nil.
func (h *Hints) Rule(family string) *HintRule {
	switch family {
	case "ref":
		return &h.Ref
	case "near_ref":
		return &h.NearRef
	case "more":
		return &h.More
	case "query":
		return &h.Query
	case "encoded":
		return &h.Encoded
	}
	return nil
}

// HintRule governs one hint family.
type HintRule struct {
	Enabled bool `toml:"enabled"`
	// MaxPerSession caps the hints of this family per session; 0 means
	// no cap.
	MaxPerSession int `toml:"max_per_session"`
	// AppliesToModels are case-insensitive globs of model ids the family
	// is emitted for; empty means every model.
	AppliesToModels []string `toml:"applies_to_models"`
}

// Profiles are the four profile axes. Each axis is "auto" (resolved per
// session by package profile) or the name of a variant; user variants
// replace built-in variants of the same name.
type Profiles struct {
	// Tokenizer is "auto" (the LLM profile's tokenizer) or one of
	// Tokenizers.
	Tokenizer string `toml:"tokenizer"`
	// LLM is "auto" (matched from the client's model id or clientInfo
	// name) or an LLM variant name.
	LLM string `toml:"llm"`
	// Agent is deprecated and ignored: no agent axis changes any option.
	// It is accepted so that older files load; Deprecated reports it.
	Agent string `toml:"agent,omitempty"`
	// Data is "auto" (the first data variant whose match fits the tool)
	// or a data variant name, applied to every tool.
	Data string `toml:"data"`

	LLMVariants   []LLMProfile   `toml:"llm_variants"`
	AgentVariants []AgentProfile `toml:"agent_variants,omitempty"` // deprecated and ignored, as Agent
	DataVariants  []DataProfile  `toml:"data_variants"`
}

// LLMProfile describes a receiving model.
type LLMProfile struct {
	Name string `toml:"name"`
	// Match are case-insensitive globs of model ids or client names.
	Match []string `toml:"match"`
	// Tokenizer is the counter budgets use for this model (Tokenizers).
	Tokenizer string `toml:"tokenizer"`
	// ContextWindow is the model's window in tokens; 0 means unknown.
	ContextWindow int `toml:"context_window"`
	// Budget is the default result budget; 0 means the global one.
	Budget int `toml:"budget"`
}

// AgentProfile is a deprecated [[profiles.agent_variants]] entry: its
// keys are accepted so that older files load, and nothing reads them
// (near-references are dedup.near_ref).
type AgentProfile struct {
	Name               string  `toml:"name"`
	RecursionDepth     int     `toml:"recursion_depth"`
	NearRef            bool    `toml:"near_ref"`
	HintAggressiveness float64 `toml:"hint_aggressiveness"`
}

// DataProfile binds tools to an encoding.
type DataProfile struct {
	Name string `toml:"name"`
	// Match is a tool-name glob ("github__list_*").
	Match string `toml:"match"`
	// Format is "", "auto", "toon" or "json" ("" keeps the global one).
	Format string `toml:"format"`
	// Template is an L1 template (Templates) or "".
	Template string `toml:"template"`
	// Hints, when not empty, are the only hint families emitted for the
	// matched tools.
	Hints []string `toml:"hints"`
}

func defaultHints() Hints {
	on := HintRule{Enabled: true}
	return Hints{Ref: on, NearRef: HintRule{Enabled: true, MaxPerSession: 50}, More: on, Query: on, Encoded: HintRule{}}
}

func defaultProfiles() Profiles {
	return Profiles{Tokenizer: "auto", LLM: "auto", Data: "auto"}
}

func defaultTelemetry() Telemetry {
	return Telemetry{SampleRate: 1}
}

// validateProfiles checks [telemetry], [hints] and [profiles].
func (v *validator) validateProfiles() {
	c := v.c
	t := c.Telemetry
	if t.SampleRate <= 0 || t.SampleRate > 1 {
		v.errorf("telemetry.sample_rate", "must be in (0, 1], got %g", t.SampleRate)
	}
	v.nonNegative("telemetry.max_file_bytes", t.MaxFileBytes)
	v.nonNegative("telemetry.max_total_bytes", t.MaxTotalBytes)
	v.nonNegative("telemetry.queue", t.Queue)
	if t.MaxFileBytes > 0 && t.MaxTotalBytes > 0 && t.MaxTotalBytes < t.MaxFileBytes {
		v.errorf("telemetry.max_total_bytes", "must be >= max_file_bytes (%d)", t.MaxFileBytes)
	}
	for _, f := range HintFamilies {
		r := c.Hints.Rule(f)
		v.nonNegative("hints."+f+".max_per_session", r.MaxPerSession)
		v.globs("hints."+f+".applies_to_models", r.AppliesToModels)
	}

	p := c.Profiles
	v.oneOf("profiles.tokenizer", p.Tokenizer, append([]string{"auto"}, Tokenizers...))
	names := func(key string, n int, name func(int) string) map[string]bool {
		seen := map[string]bool{}
		for i := range n {
			k := key + "." + strconv.Itoa(i) + ".name"
			switch nm := name(i); {
			case nm == "" || nm == "auto":
				v.errorf(k, "must be a name other than \"auto\"")
			case seen[nm]:
				v.errorf(k, "duplicate variant %q", nm)
			default:
				seen[nm] = true
			}
		}
		return seen
	}
	llms := names("profiles.llm_variants", len(p.LLMVariants), func(i int) string { return p.LLMVariants[i].Name })
	datas := names("profiles.data_variants", len(p.DataVariants), func(i int) string { return p.DataVariants[i].Name })
	for i, l := range p.LLMVariants {
		k := "profiles.llm_variants." + strconv.Itoa(i)
		v.globs(k+".match", l.Match)
		if l.Tokenizer != "" {
			v.oneOf(k+".tokenizer", l.Tokenizer, Tokenizers)
		}
		v.nonNegative(k+".context_window", l.ContextWindow)
		v.nonNegative(k+".budget", l.Budget)
	}
	for i, d := range p.DataVariants {
		k := "profiles.data_variants." + strconv.Itoa(i)
		if d.Match == "" {
			v.errorf(k+".match", "must not be empty")
		} else if _, err := path.Match(d.Match, ""); err != nil {
			v.errorf(k+".match", "bad glob %q", d.Match)
		}
		if d.Format != "" {
			v.oneOf(k+".format", d.Format, Formats)
		}
		if d.Template != "" {
			v.oneOf(k+".template", d.Template, Templates)
		}
		for j, h := range d.Hints {
			v.oneOf(k+".hints."+strconv.Itoa(j), h, HintFamilies)
		}
	}
	// A named axis must name a known variant (built-in or the file's).
	check := func(key, val string, file map[string]bool, builtin []string) {
		if val == "auto" || file[val] || containsFold(builtin, val) {
			return
		}
		v.errorf(key, "%q is neither \"auto\" nor a variant", val)
	}
	check("profiles.llm", p.LLM, llms, BuiltinLLMs)
	check("profiles.data", p.Data, datas, nil)
}

// BuiltinLLMs are the names of the LLM variants package profile ships.
var BuiltinLLMs = []string{"default", "claude", "gpt", "gpt-4", "gemini", "local"}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// deprecatedKeys are keys a file may still hold that nothing reads, with
// what to do instead.
var deprecatedKeys = []struct{ key, why string }{
	{"profiles.agent", "the agent axis changed no option; remove it"},
	{"profiles.agent_variants", "recursion_depth, near_ref and hint_aggressiveness changed no option; remove the table (near-references: dedup.near_ref)"},
}

// Deprecated lists the keys of the file that are accepted but ignored,
// one warning each ("FILE:LINE:COL: KEY: deprecated, ignored: …"), in
// file order. A config not read from a file has none.
func (c *Config) Deprecated() []string {
	var errs []*Error
	for _, d := range deprecatedKeys {
		line, col, ok := 0, 0, false
		for k, lc := range c.pos {
			if k == d.key || strings.HasPrefix(k, d.key+".") {
				if !ok || lc[0] < line || lc[0] == line && lc[1] < col {
					line, col, ok = lc[0], lc[1], true
				}
			}
		}
		if ok {
			errs = append(errs, &Error{File: c.name, Line: line, Col: col, Key: d.key, Msg: "deprecated, ignored: " + d.why})
		}
	}
	slices.SortFunc(errs, func(a, b *Error) int { return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col)) })
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}
