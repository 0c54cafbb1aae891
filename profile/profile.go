// Package profile resolves a configuration for one call into the
// options every surface uses: the profile axes (tokenizer, LLM, data),
// the tool's rule and the hint policy, for a client or model and a tool,
// give one [Effective], and [Effective.Options] gives its pipeline
// options. compact, the MCP proxy and gateway, terse api and the hook
// all resolve this way, so the same config gives the same result and
// Report on every surface.
//
// [Resolve] is a pure function: the same config and context give the same
// [Effective], with no I/O and no state. Entry points call it when a
// session starts (and per tool, for the data axis):
//
//	eff := profile.Resolve(cfg, profile.Context{ModelID: "claude-sonnet-4-5", Tool: "github__list_issues"})
//	opts, err := eff.Options(terse.Options{Store: st}) // tokenizer, format, template, budget, the tool's rule
//	p, err := terse.New(&opts)
//	res, err := p.Process(ctx, data, &terse.Request{Tool: tool, Hints: profile.Gate{E: &eff, C: counter}})
//
// Resolution, axis by axis:
//
//  1. LLM: a named axis picks that variant; "auto" matches the model id,
//     then the client's name, against each variant's globs (file variants
//     first, then built-ins, in order); no match is "default".
//  2. Tokenizer: a named axis wins; "auto" is the LLM variant's tokenizer,
//     except that under the built-in "default" variant (no model or
//     client matched) the config's top-level tokenizer stays in force.
//  3. Data: a named axis applies that variant to every tool; "auto" takes
//     the first variant whose glob matches the tool (or, for an MCP name
//     "server__tool", its bare tool name).
//  4. Rule: the tool's [[tools]] rule (config.Config.Tool), whose budget,
//     when set, is the pipeline's, and whose template applies when the
//     data variant names none.
//  5. Hints: a family is allowed when its rule is enabled, its
//     applies_to_models is empty or matches the model id (the client's
//     name when no model id is known, as for MCP clients), and the data
//     variant (if it lists hints) includes it; MaxPerSession caps it,
//     counted per session by a [HintCounter]. A call's [Gate] is what
//     the pipeline asks (terse.Request.Hints).
package profile

import (
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/toolname"
)

// Context is what is known about a session when options are resolved.
type Context struct {
	// ModelID is the model the client talks to ("claude-sonnet-4-5"), if
	// known; ClientName is the MCP clientInfo name ("claude-code").
	ModelID, ClientName string
	// Tool is the tool whose result is processed ("" for session-wide
	// resolution).
	Tool string
}

// Effective are the resolved options.
type Effective struct {
	LLM           string // LLM variant name
	Tokenizer     string // counter name (config.Tokenizers)
	ContextWindow int    // 0: unknown
	Budget        int    // the client's result budget; 0: none configured
	Data          string // data variant name, "" when none matched
	Format        string // output format
	Template      string // L1 template, "" for none
	// Rule is the tool's rule, nil when none matches (or no tool).
	Rule *config.Tool
	// Hints is the policy per family, in config.HintFamilies order.
	Hints []HintPolicy
}

// HintPolicy is one family's resolved rule.
type HintPolicy struct {
	Family        string
	Allowed       bool
	MaxPerSession int // 0: no cap
}

// Allow reports whether family may be emitted when n hints of it were
// already emitted in the session.
func (e *Effective) Allow(family string, n int) bool {
	h := e.Hint(family)
	return h.Allowed && (h.MaxPerSession == 0 || n < h.MaxPerSession)
}

// Hint returns the policy of family (zero, not allowed, for an unknown
// family).
func (e *Effective) Hint(family string) HintPolicy {
	for _, h := range e.Hints {
		if h.Family == family {
			return h
		}
	}
	return HintPolicy{Family: family}
}

// BuiltinLLMs are the LLM variants shipped with terse, tried after the
// file's, in order (local models first: their ids often start like
// hosted ones). Claude and Gemini have no public tokenizer: their budgets are
// counted with o200k_base, named as such in every report.
var BuiltinLLMs = []config.LLMProfile{
	{Name: "local", Match: []string{"*:*", "llama*", "qwen*", "gemma*", "mistral*", "gpt-oss*"}, Tokenizer: "estimate", ContextWindow: 8_192, Budget: 4_000},
	{Name: "claude", Match: []string{"claude*", "*claude*", "anthropic*", "*sonnet*", "*opus*", "*haiku*"}, Tokenizer: "o200k_base", ContextWindow: 200_000, Budget: 25_000},
	{Name: "gpt-4", Match: []string{"gpt-4", "gpt-4-*", "gpt-3.5*"}, Tokenizer: "cl100k_base", ContextWindow: 128_000},
	{Name: "gpt", Match: []string{"gpt*", "o1*", "o3*", "o4*", "codex*", "*codex*", "chatgpt*"}, Tokenizer: "o200k_base", ContextWindow: 200_000},
	{Name: "gemini", Match: []string{"gemini*", "*gemini*"}, Tokenizer: "o200k_base", ContextWindow: 1_000_000},
	{Name: "default", Tokenizer: "o200k_base"},
}

// Resolve collapses c's profiles for the context. A nil c means
// config.Default().
func Resolve(c *config.Config, ctx Context) Effective {
	if c == nil {
		c = config.Default()
	}
	p := &c.Profiles
	var e Effective

	llm := findLLM(p, ctx)
	e.LLM, e.ContextWindow, e.Budget = llm.Name, llm.ContextWindow, c.Budget
	if llm.Budget > 0 && c.Budget == 0 {
		e.Budget = llm.Budget
	}
	switch {
	case p.Tokenizer != "auto" && p.Tokenizer != "":
		e.Tokenizer = p.Tokenizer
	case llm.Name == "default" && c.Tokenizer != "" && !slices.ContainsFunc(p.LLMVariants, func(l config.LLMProfile) bool { return l.Name == "default" }):
		// No known model: the config's own tokenizer stays in force.
		e.Tokenizer = c.Tokenizer
	case llm.Tokenizer != "":
		e.Tokenizer = llm.Tokenizer
	default:
		e.Tokenizer = c.Tokenizer
	}

	e.Format = c.Format
	var data *config.DataProfile
	if ctx.Tool != "" || (p.Data != "auto" && p.Data != "") {
		data = findData(p, ctx.Tool)
	}
	if data != nil {
		e.Data = data.Name
		if data.Format != "" {
			e.Format = data.Format
		}
		e.Template = data.Template
	}
	if ctx.Tool != "" {
		e.Rule = c.Tool(ctx.Tool)
	}
	if e.Rule != nil && e.Template == "" {
		e.Template = e.Rule.Template
	}

	model := strings.ToLower(ctx.ModelID)
	if model == "" {
		model = strings.ToLower(ctx.ClientName) // an MCP client names no model
	}
	for _, f := range config.HintFamilies {
		r := c.Hints.Rule(f)
		ok := r.Enabled
		if ok && len(r.AppliesToModels) > 0 {
			ok = matchAny(r.AppliesToModels, model)
		}
		if ok && data != nil && len(data.Hints) > 0 {
			ok = contains(data.Hints, f)
		}
		e.Hints = append(e.Hints, HintPolicy{Family: f, Allowed: ok, MaxPerSession: r.MaxPerSession})
	}
	return e
}

func findLLM(p *config.Profiles, ctx Context) config.LLMProfile {
	all := append(append([]config.LLMProfile(nil), p.LLMVariants...), BuiltinLLMs...)
	if p.LLM != "auto" && p.LLM != "" {
		for _, l := range all {
			if strings.EqualFold(l.Name, p.LLM) {
				return l
			}
		}
	}
	for _, id := range []string{ctx.ModelID, ctx.ClientName} {
		id = strings.ToLower(id)
		if id == "" {
			continue
		}
		for _, l := range all {
			if matchAny(l.Match, id) {
				return l
			}
		}
	}
	for _, l := range all {
		if l.Name == "default" {
			return l
		}
	}
	return config.LLMProfile{Name: "default"}
}

func findData(p *config.Profiles, tool string) *config.DataProfile {
	if p.Data != "auto" && p.Data != "" {
		for i := range p.DataVariants {
			if p.DataVariants[i].Name == p.Data {
				return &p.DataVariants[i]
			}
		}
		return nil
	}
	for i := range p.DataVariants {
		if toolname.Match(p.DataVariants[i].Match, tool) {
			return &p.DataVariants[i]
		}
	}
	return nil
}

func matchAny(globs []string, s string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(strings.ToLower(g), s); ok {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// HintCounter counts the hints a session emitted by family, to enforce
// max_per_session. Keep one per session; it is safe for concurrent use.
// The zero value is ready.
type HintCounter struct {
	mu sync.Mutex
	n  map[string]int
}

// Take reports whether a hint of family may be emitted now under e, and
// counts it when it may.
func (c *HintCounter) Take(e *Effective, family string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !e.Allow(family, c.n[family]) {
		return false
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[family]++
	return true
}

// Allow reports whether a hint of family may be emitted now under e,
// without counting it.
func (c *HintCounter) Allow(e *Effective, family string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return e.Allow(family, c.n[family])
}

// Give takes back a hint of family counted by Take but not shown after
// all.
func (c *HintCounter) Give(family string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[family] > 0 {
		c.n[family]--
	}
}

// Count is how many hints of family were counted.
func (c *HintCounter) Count(family string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[family]
}

// Gate is the hint policy of one call: the session's counter under the
// call's effective options. It has the methods of terse.Hints.
type Gate struct {
	E *Effective
	C *HintCounter
}

// Allow reports whether a hint of family may be emitted now.
func (g Gate) Allow(family string) bool { return g.C.Allow(g.E, family) }

// Take reports whether a hint of family may be emitted now, counting it
// when it may.
func (g Gate) Take(family string) bool { return g.C.Take(g.E, family) }
