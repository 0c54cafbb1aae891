package apiproxy

import (
	"math"
	"path"
	"strings"
)

// Price is a model's price in USD per million tokens, by the classes the
// providers bill input in ([Usage]).
type Price struct {
	Input        float64 `json:"input"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
	Output       float64 `json:"output"`
}

// Cost is what u costs at p, in USD. Cache writes the provider did not
// split by TTL are billed at the 5-minute price.
func (p Price) Cost(u Usage) float64 {
	w1h := min(max(u.CacheCreation1h, 0), u.CacheCreation)
	return (float64(u.Input)*p.Input + float64(u.CacheCreation-w1h)*p.CacheWrite5m + float64(w1h)*p.CacheWrite1h +
		float64(u.CacheRead)*p.CacheRead + float64(u.Output)*p.Output) / 1e6
}

// PriceRow prices the models Model matches: a model id, which also
// matches that id with a date or version suffix ("claude-sonnet-4-5"
// matches "claude-sonnet-4-5-20250929"), or a glob with "*".
type PriceRow struct {
	Model string
	Price
}

func (r PriceRow) matches(model string) bool {
	if strings.Contains(r.Model, "*") {
		ok, _ := path.Match(r.Model, model)
		return ok
	}
	if model == r.Model {
		return true
	}
	rest, ok := strings.CutPrefix(model, r.Model)
	if !ok || len(rest) < 2 || (rest[0] != '-' && rest[0] != '@') {
		return false
	}
	// A suffix of digits, dashes and "latest" only: a date or a snapshot,
	// never another model ("claude-opus-4" must not price "claude-opus-4-7").
	rest = strings.TrimSuffix(rest[1:], "latest")
	for _, c := range rest {
		if (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return len(rest) == 0 || len(rest) >= 6
}

// anthropicPrice is an Anthropic price list row: cache writes at 1.25×
// (5 min) and 2× (1 h) the input price, cache reads at 0.1×.
func anthropicPrice(model string, input, output float64) PriceRow {
	return PriceRow{model, Price{Input: input, CacheWrite5m: input * 1.25, CacheWrite1h: input * 2, CacheRead: input / 10, Output: output}}
}

// openaiPrice is an OpenAI price list row: no cache write premium (a
// write costs the input price), cached input at the listed price.
func openaiPrice(model string, input, cached, output float64) PriceRow {
	return PriceRow{model, Price{Input: input, CacheWrite5m: input, CacheWrite1h: input, CacheRead: cached, Output: output}}
}

// PricesDate is the day DefaultPrices was compiled from the providers'
// price lists.
const PricesDate = "2026-11-26"

// DefaultPrices is the shipped price table (USD per million tokens,
// standard tier, no batch discount or long-context surcharge), compiled
// on PricesDate. docs/api.md lists it.
var DefaultPrices = []PriceRow{
	anthropicPrice("claude-opus-4-8", 5, 25),
	anthropicPrice("claude-opus-4-7", 5, 25),
	anthropicPrice("claude-opus-4-6", 5, 25),
	anthropicPrice("claude-opus-4-5", 5, 25),
	anthropicPrice("claude-opus-4-1", 15, 75),
	anthropicPrice("claude-opus-4-0", 15, 75),
	anthropicPrice("claude-opus-4", 15, 75),
	anthropicPrice("claude-3-opus", 15, 75),
	anthropicPrice("claude-sonnet-4-6", 3, 15),
	anthropicPrice("claude-sonnet-4-5", 3, 15),
	anthropicPrice("claude-sonnet-4-0", 3, 15),
	anthropicPrice("claude-sonnet-4", 3, 15),
	anthropicPrice("claude-3-7-sonnet", 3, 15),
	anthropicPrice("claude-3-5-sonnet", 3, 15),
	anthropicPrice("claude-haiku-4-5", 1, 5),
	{"claude-3-5-haiku", Price{Input: 0.80, CacheWrite5m: 1, CacheWrite1h: 1.6, CacheRead: 0.08, Output: 4}},
	{"claude-3-haiku", Price{Input: 0.25, CacheWrite5m: 0.30, CacheWrite1h: 0.50, CacheRead: 0.03, Output: 1.25}},
	openaiPrice("gpt-5", 1.25, 0.125, 10),
	openaiPrice("gpt-5-codex", 1.25, 0.125, 10),
	openaiPrice("gpt-5.1", 1.25, 0.125, 10),
	openaiPrice("gpt-5.1-codex", 1.25, 0.125, 10),
	openaiPrice("gpt-5-mini", 0.25, 0.025, 2),
	openaiPrice("gpt-5-nano", 0.05, 0.005, 0.40),
	openaiPrice("gpt-5.2", 1.75, 0.175, 14),
	openaiPrice("gpt-4.1", 2, 0.50, 8),
	openaiPrice("gpt-4.1-mini", 0.40, 0.10, 1.60),
	openaiPrice("gpt-4.1-nano", 0.10, 0.025, 0.40),
	openaiPrice("gpt-4o", 2.50, 1.25, 10),
	openaiPrice("gpt-4o-mini", 0.15, 0.075, 0.60),
	openaiPrice("o3", 2, 0.50, 8),
	openaiPrice("o4-mini", 1.10, 0.275, 4.40),
}

// familyDefaults price a model no row matches, by the first prefix of
// its id that fits; the last is the default for any other model.
var familyDefaults = []PriceRow{
	anthropicPrice("claude-opus", 5, 25),
	anthropicPrice("claude-haiku", 1, 5),
	anthropicPrice("claude", 3, 15), // Sonnet's price
	openaiPrice("gpt", 1.25, 0.125, 10),
	openaiPrice("o", 2, 0.50, 8),
	anthropicPrice("", 3, 15),
}

// Prices finds a model's price: the configured rows first, then
// DefaultPrices, then the default of the model's family.
type Prices struct {
	rows []PriceRow
}

// NewPrices returns Prices that try rows (from the config) before the
// shipped table.
func NewPrices(rows []PriceRow) *Prices {
	return &Prices{rows: append(append([]PriceRow(nil), rows...), DefaultPrices...)}
}

// Lookup returns model's price and what it is: the matching row's model,
// or "default for claude-opus models" (and so on) when no row matches:
// an assumption, labelled as such wherever it is shown.
func (p *Prices) Lookup(model string) (Price, string) {
	model = strings.ToLower(model)
	for _, r := range p.rows {
		if r.matches(model) {
			return r.Price, r.Model
		}
	}
	for _, f := range familyDefaults {
		if strings.HasPrefix(model, f.Model) {
			if f.Model == "" {
				return f.Price, "default for unknown models"
			}
			return f.Price, "default for " + f.Model + " models"
		}
	}
	panic("unreachable: the last family default matches every model")
}

// directUsage models what the original request would have been billed
// (the counterfactual direct cost) from the usage of the request sent in
// its place, under the same cache model:
//
//   - its prompt is the sent prompt scaled by the ratio of the two
//     request bodies' token counts (before/after, counted by terse), so
//     the provider's own tokenizer stays in the figure;
//   - the uncached input (the request's new tail, which terse does not
//     change) and the output are the sent request's;
//   - when the sent request broke the cached prefix (prefixChanged) and
//     wrote to the cache, the original would have read from the cache all
//     of that write but the conversation's growth since its previous
//     request (prevDirect, the previous original prompt; 0 when unknown,
//     which credits nothing);
//   - the tokens the original has in addition are read from the cache
//     when the sent request read from it (the cache was warm), else
//     written to it when the sent request wrote (cold), else uncached.
//
// A request sent as the client sent it (not rewritten, a dry run) is
// billed as it was. The model is an estimate: the A/B holdout measures.
func directUsage(sent Usage, before, after int, prefixChanged bool, prevDirect int) Usage {
	if sent.Reported == 0 || before <= 0 || after <= 0 || before == after {
		return sent
	}
	p := sent.Prompt()
	d := sent
	if p == 0 {
		return d
	}
	direct := int(math.Round(float64(p) * float64(before) / float64(after)))
	if prefixChanged && d.CacheCreation > 0 {
		keep := min(max(direct-prevDirect, 0), d.CacheCreation)
		if prevDirect <= 0 {
			keep = d.CacheCreation
		}
		d.CacheCreation1h = scaleShare(sent.CacheCreation1h, keep, sent.CacheCreation)
		d.CacheRead += d.CacheCreation - keep
		d.CacheCreation = keep
	}
	extra := direct - p
	switch {
	case extra < 0:
		// The original is smaller (never by design): take the difference
		// off the cache reads, then the writes, then the uncached input.
		for _, f := range []*int{&d.CacheRead, &d.CacheCreation, &d.Input} {
			take := min(*f, -extra)
			*f -= take
			extra += take
		}
		d.CacheCreation1h = min(d.CacheCreation1h, d.CacheCreation)
	case d.CacheRead > 0:
		d.CacheRead += extra
	case d.CacheCreation > 0:
		n := d.CacheCreation + extra
		d.CacheCreation1h = scaleShare(d.CacheCreation1h, n, d.CacheCreation)
		d.CacheCreation = n
	default:
		d.Input += extra
	}
	return d
}

// scaleShare is part's share of whole applied to n.
func scaleShare(part, n, whole int) int {
	if whole <= 0 {
		return 0
	}
	return int(math.Round(float64(part) * float64(n) / float64(whole)))
}
