package main

import (
	"sync"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/mcpproxy"
	"github.com/terse-dev/terse/profile"
)

// pipelines gives proxy and gateway calls their client's profile: the
// effective options profile.Resolve gives for the client and tool, and
// one terse pipeline per distinct set of them (profile.Key: a tool rule
// with a tokenizer, format, template and budget), built once and shared,
// so that their caches serve every call.
type pipelines struct {
	cfg  *config.Config
	base terse.Options // what every pipeline shares: store, key, dedup cache

	mu    sync.Mutex
	pipes map[profile.Key]*terse.Pipeline
	calls map[[2]string]mcpproxy.ClientProfile // by client and tool
}

// maxProfiles bounds the remembered (client, tool) profiles; past it
// they are resolved again on every call (pipelines stay shared).
const maxProfiles = 4096

func newPipelines(cfg *config.Config, base terse.Options) *pipelines {
	return &pipelines{cfg: cfg, base: base, pipes: map[profile.Key]*terse.Pipeline{}, calls: map[[2]string]mcpproxy.ClientProfile{}}
}

// pipeline returns the pipeline of the effective options eff.
func (ps *pipelines) pipeline(eff *profile.Effective) (*terse.Pipeline, error) {
	k := eff.Key()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p := ps.pipes[k]; p != nil {
		return p, nil
	}
	p, err := eff.New(ps.base)
	if err != nil {
		return nil, err
	}
	ps.pipes[k] = p
	return p, nil
}

// rules builds the pipeline of every tool rule now, so that a bad rule
// fails at start.
func (ps *pipelines) rules() error {
	for i := range ps.cfg.Tools {
		te := profile.Resolve(ps.cfg, profile.Context{Tool: ps.cfg.Tools[i].Match})
		if _, err := ps.pipeline(&te); err != nil {
			return err
		}
	}
	return nil
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
		cp.Pipeline, _ = ps.pipeline(&eff)
	}
	ps.mu.Lock()
	if len(ps.calls) < maxProfiles {
		ps.calls[key] = cp
	}
	ps.mu.Unlock()
	return cp
}
