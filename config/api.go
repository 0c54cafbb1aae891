package config

import "net"

// API configures `terse api`, the proxy in front of the model APIs.
type API struct {
	// Listen is the proxy's address (HOST:PORT).
	Listen string `toml:"listen"`
	// AnthropicUpstream and OpenAIUpstream are the providers' base URLs;
	// "" means the official endpoints.
	AnthropicUpstream string `toml:"anthropic_upstream"`
	OpenAIUpstream    string `toml:"openai_upstream"`
	// Window is the context window in tokens; 0 means the model's.
	Window int `toml:"window"`
	// StatsFile receives one JSON line per request ("": none).
	StatsFile string `toml:"stats_file"`
	// DryRun forwards the original requests and only reports savings.
	DryRun bool `toml:"dry_run"`
	// MaxBodyBytes is the largest request rewritten; larger ones pass
	// through untouched. 0 means 16 MiB.
	MaxBodyBytes int `toml:"max_body_bytes"`
	// IncludeTools, when not empty, lists the tool-name globs whose
	// results may be replaced by references, markers or re-encodings;
	// ExcludeTools lists those whose results never are.
	IncludeTools []string `toml:"include_tools"`
	ExcludeTools []string `toml:"exclude_tools"`
	// StableTurns is how many turns of observed growth one trimming step
	// leaves room for; 0 means 40.
	StableTurns int `toml:"stable_turns"`
}

// DefaultAPIListen is the proxy's default address.
const DefaultAPIListen = "127.0.0.1:8788"

func (v *validator) api(a *API) {
	if a.Listen != "" {
		if _, _, err := net.SplitHostPort(a.Listen); err != nil {
			v.errorf("api.listen", "%q is not HOST:PORT", a.Listen)
		}
	}
	v.nonNegative("api.window", a.Window)
	v.nonNegative("api.max_body_bytes", a.MaxBodyBytes)
	v.nonNegative("api.stable_turns", a.StableTurns)
	v.globs("api.include_tools", a.IncludeTools)
	v.globs("api.exclude_tools", a.ExcludeTools)
}
