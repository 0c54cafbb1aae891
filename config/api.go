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
	// Prices are [[api.prices]] rows, tried before the shipped price
	// table when costs are computed from the provider's usage.
	Prices []APIPrice `toml:"prices"`
	// Holdout is the share (0 to 1) of conversations forwarded untouched,
	// for an A/B comparison; HoldoutSeed picks which ones ("": a fixed
	// default seed).
	Holdout     float64 `toml:"holdout"`
	HoldoutSeed string  `toml:"holdout_seed"`
	// NoEdit turns off the batched edits of applied write payloads and
	// old bulky results (stale reads stay).
	NoEdit bool `toml:"no_edit"`
	// EditAge is the age in requests after which a write's payload and a
	// bulky result may be left out; 0 means 6.
	EditAge int `toml:"edit_age"`
	// EditBulkyBytes is the size from which an old result is bulky; 0
	// means 1024.
	EditBulkyBytes int `toml:"edit_bulky_bytes"`
	// EditShare is the share of the prompt (0 to 1) a batch of edits must
	// take out to be made while the cache is warm; 0 means 0.30.
	EditShare float64 `toml:"edit_share"`
	// CacheTTL is the provider's prompt-cache lifetime for requests that
	// ask for no other; 0 means 5 minutes.
	CacheTTL Duration `toml:"cache_ttl"`
	// CacheDiagnostics attaches Anthropic's cache diagnostics to
	// Anthropic requests (the field and its beta header; never without
	// it) and counts the misses they report.
	CacheDiagnostics bool `toml:"cache_diagnostics"`
}

// APIPrice is a model's price in USD per million tokens. Model is a
// model id (which also matches that id with a date suffix) or a glob.
// Unset prices default to: cache_write_5m the input price,
// cache_write_1h cache_write_5m, cache_read the input price.
type APIPrice struct {
	Model        string   `toml:"model"`
	Input        float64  `toml:"input"`
	CacheWrite5m *float64 `toml:"cache_write_5m"`
	CacheWrite1h *float64 `toml:"cache_write_1h"`
	CacheRead    *float64 `toml:"cache_read"`
	Output       float64  `toml:"output"`
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
	v.nonNegative("api.edit_age", a.EditAge)
	v.nonNegative("api.edit_bulky_bytes", a.EditBulkyBytes)
	if a.EditShare < 0 || a.EditShare > 1 {
		v.errorf("api.edit_share", "%v is not a share between 0 and 1", a.EditShare)
	}
	if a.CacheTTL.Duration < 0 {
		v.errorf("api.cache_ttl", "%v is negative", a.CacheTTL.Duration)
	}
	if a.Holdout < 0 || a.Holdout > 1 {
		v.errorf("api.holdout", "%v is not a share between 0 and 1", a.Holdout)
	}
	for i, p := range a.Prices {
		if p.Model == "" {
			v.errorf("api.prices", "row %d has no model", i+1)
		}
		for _, x := range []*float64{&p.Input, p.CacheWrite5m, p.CacheWrite1h, p.CacheRead, &p.Output} {
			if x != nil && *x < 0 {
				v.errorf("api.prices", "row %d (%s) has a negative price", i+1, p.Model)
				break
			}
		}
	}
}
