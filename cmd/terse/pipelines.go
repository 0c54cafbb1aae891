package main

import (
	"fmt"
	"sync"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/mcpproxy"
	"github.com/terse-dev/terse/profile"
	"github.com/terse-dev/terse/tokens"
)

// pipelines gives proxy and gateway calls their client's profile: the
// effective options profile.Resolve gives for the client and tool, and
// one terse pipeline per distinct set of them (a tool rule with a
// tokenizer, format, template and budget), built once and shared, so
// that their caches serve every call.
type pipelines struct {
	cfg  *config.Config
	base terse.Options // what every pipeline shares: store, key, dedup cache

	mu    sync.Mutex
	pipes map[pipeKey]*terse.Pipeline
	calls map[[2]string]mcpproxy.ClientProfile // by client and tool
}

// pipeKey is what tells two pipelines apart.
type pipeKey struct {
	rule                        *config.Tool
	tokenizer, format, template string
	budget                      int
}

// maxProfiles bounds the remembered (client, tool) profiles; past it
// they are resolved again on every call (pipelines stay shared).
const maxProfiles = 4096

func newPipelines(cfg *config.Config, base terse.Options) *pipelines {
	return &pipelines{cfg: cfg, base: base, pipes: map[pipeKey]*terse.Pipeline{}, calls: map[[2]string]mcpproxy.ClientProfile{}}
}

// pipeline returns the pipeline of a tool rule (nil: none) under the
// effective options eff.
func (ps *pipelines) pipeline(rule *config.Tool, eff *profile.Effective) (*terse.Pipeline, error) {
	k := pipeKey{rule: rule, tokenizer: eff.Tokenizer, format: eff.Format, template: eff.Template, budget: eff.Budget}
	if rule != nil && rule.Budget > 0 {
		k.budget = rule.Budget
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p := ps.pipes[k]; p != nil {
		return p, nil
	}
	counter, err := tokens.Get(k.tokenizer)
	if err != nil {
		return nil, err
	}
	o := ps.base
	o.Tokenizer, o.Format, o.Template, o.Budget = counter, k.format, k.template, k.budget
	if rule != nil {
		o.Filter = rule.Rule()
		o.Strategy = rule.Strategy
		o.Pointer = rule.Items
		o.DropFields, o.KeepFields = rule.DropFields, rule.KeepFields
	}
	p, err := terse.New(&o)
	if err != nil {
		if rule != nil {
			return nil, fmt.Errorf("tool %s: %w", rule.Match, err)
		}
		return nil, err
	}
	ps.pipes[k] = p
	return p, nil
}

// profile is mcpproxy.Options.Profile: the client's profile for tool.
// MCP clients name no model: the client's name stands for it.
func (ps *pipelines) profile(client, tool string) mcpproxy.ClientProfile {
	key := [2]string{client, tool}
	ps.mu.Lock()
	cp, ok := ps.calls[key]
	ps.mu.Unlock()
	if ok {
		return cp
	}
	eff := profile.Resolve(ps.cfg, profile.Context{ClientName: client, Tool: tool})
	cp = mcpproxy.ClientProfile{Budget: eff.Budget, Hints: &eff}
	if tool != "" {
		// Every set of options was valid at start (the rules' pipelines
		// were built then); a failure keeps the tool's default pipeline.
		cp.Pipeline, _ = ps.pipeline(ps.cfg.Tool(tool), &eff)
	}
	ps.mu.Lock()
	if len(ps.calls) < maxProfiles {
		ps.calls[key] = cp
	}
	ps.mu.Unlock()
	return cp
}
