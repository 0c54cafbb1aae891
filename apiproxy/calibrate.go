package apiproxy

import (
	"strings"
)

// CalibrationRow relates, for one model family, the input tokens the
// provider reported to terse's o200k_base count of the same requests as
// they were sent. Ratio (provider / terse) is an estimate: it folds in
// how the provider renders a request (roles, tool definitions, its own
// system text) as well as its tokenizer.
type CalibrationRow struct {
	Requests int     `json:"requests"`
	Provider int     `json:"provider_tokens"`
	Terse    int     `json:"terse_tokens"`
	Ratio    float64 `json:"ratio"`
}

// Family is a model id without its date suffix ("claude-sonnet-4-5" for
// "claude-sonnet-4-5-20250929", "gpt-4o" for "gpt-4o-2024-08-06"):
// the unit tokenizer calibration is kept per.
func Family(model string) string {
	m := strings.ToLower(model)
	// -YYYYMMDD, then -YYYY-MM-DD.
	if i := strings.LastIndexByte(m, '-'); i > 0 && len(m)-i-1 == 8 && digits(m[i+1:]) {
		return m[:i]
	}
	if n := len(m); n > 11 && m[n-11] == '-' && digits(m[n-10:n-6]) && m[n-6] == '-' && digits(m[n-5:n-3]) && m[n-3] == '-' && digits(m[n-2:]) {
		return m[:n-11]
	}
	return m
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// calibrates reports whether r can calibrate: a response that reported
// usage, to a request terse counted with o200k_base.
func calibrates(r *Record) (provider, terse int, ok bool) {
	if r.Usage.Reported == 0 || r.Model == "" || r.Tokenizer != "o200k_base" || r.Status/100 != 2 {
		return 0, 0, false
	}
	terse = r.TokensBefore // what was sent, unless it was rewritten
	if r.Rewritten {
		terse = r.TokensAfter
	}
	provider = r.Usage.Prompt()
	return provider, terse, terse > 0 && provider > 0
}

// Calibrate learns, per model family, the ratio of provider-reported
// input tokens to terse's o200k_base count, from records (stats-file
// lines).
func Calibrate(records []Record) map[string]CalibrationRow {
	out := map[string]CalibrationRow{}
	for i := range records {
		addCalibration(out, &records[i])
	}
	return out
}

func addCalibration(m map[string]CalibrationRow, r *Record) {
	p, t, ok := calibrates(r)
	if !ok {
		return
	}
	f := Family(r.Model)
	c := m[f]
	c.Requests++
	c.Provider += p
	c.Terse += t
	c.Ratio = float64(c.Provider) / float64(c.Terse)
	m[f] = c
}

// Window ratios. The window arithmetic of a conversation estimates
// o200k_base tokens (history.Estimate); for a model whose provider counts
// more tokens for the same request, the window it is held to is the
// model's window divided by the ratio (the same as counting the estimate
// × ratio against it). The
// ratio is an estimate and is labelled so wherever it is shown.
const (
	// NewTokenizerRatio is the ratio a model with Anthropic's newer
	// tokenizer (Claude from Opus 4.7 on) is held to before its family
	// has a learnt one: the upper end of Anthropic's 1.0–1.35× range, so
	// that a request is trimmed a little early rather than refused by the
	// provider as too long.
	NewTokenizerRatio = 1.35
	// MinCalibrationRequests is how many requests with usage a family's
	// learnt ratio needs before it replaces the default.
	MinCalibrationRequests = 10
	// MaxWindowRatio bounds a learnt ratio: a larger one says more about
	// a request the provider rendered oddly than about its tokenizer.
	MaxWindowRatio = 2.0
)

// NewTokenizer reports whether model is a Claude model from Opus 4.7 on
// (version 4.7 or later, any tier), whose tokenizer counts 1.0–1.35×
// the tokens of the earlier one. It accepts provider prefixes
// ("us.anthropic.claude-opus-4-7-v1:0") and suffixes ("[1m]", dates).
func NewTokenizer(model string) bool {
	m := strings.ToLower(model)
	i := strings.Index(m, "claude-")
	if i < 0 {
		return false
	}
	m = m[i+len("claude-"):]
	if j := strings.IndexByte(m, '['); j >= 0 {
		m = m[:j]
	}
	major, minor := -1, 0
	for _, p := range strings.FieldsFunc(m, func(r rune) bool { return r == '-' || r == '.' || r == ':' || r == '@' }) {
		if !digits(p) || len(p) > 2 { // a tier, "v1", a date
			if major >= 0 {
				break
			}
			continue
		}
		n := 0
		for _, c := range p {
			n = n*10 + int(c-'0')
		}
		if major < 0 {
			major = n
			continue
		}
		minor = n
		break
	}
	return major > 4 || major == 4 && minor >= 7
}

// WindowRatio is the estimated ratio of provider tokens to o200k_base
// tokens a conversation of model is held to in its window arithmetic,
// and where it comes from: the family's learnt ratio (learnt, bounded
// to 1–MaxWindowRatio) once it rests on MinCalibrationRequests
// requests; before that NewTokenizerRatio for NewTokenizer models and 1
// (o200k_base as it is) for the others. A ratio is never below 1: a
// learnt one below it would trim later than counting o200k_base does.
func WindowRatio(model string, learnt map[string]CalibrationRow) (ratio float64, source string) {
	if c, ok := learnt[Family(model)]; ok && c.Requests >= MinCalibrationRequests && c.Ratio > 0 {
		return min(max(c.Ratio, 1), MaxWindowRatio), "learnt"
	}
	if NewTokenizer(model) {
		return NewTokenizerRatio, "default"
	}
	return 1, "default"
}

// Calibrated wraps a profile resolver (nil: the zero profile) so that
// each conversation's profile carries the window ratio of its model,
// from what s has learnt when the conversation starts (WindowRatio). The
// profile is resolved once per conversation and kept with its state, so
// the ratio is frozen for the conversation: a ratio learnt later applies
// to conversations that start later, and never changes the bytes of an
// already-sent prefix.
func Calibrated(base func(model string) Profile, s *Stats) func(model string) Profile {
	return func(model string) Profile {
		var p Profile
		if base != nil {
			p = base(model)
		}
		var learnt map[string]CalibrationRow
		if s != nil {
			learnt = s.Calibration()
		}
		if r, _ := WindowRatio(model, learnt); r != 1 {
			p.Ratio = r
		}
		return p
	}
}

// SeedCalibration adds rows learnt earlier (from a stats file, with
// Calibrate) to what s learns, so that a restarted proxy keeps its
// ratios.
func (s *Stats) SeedCalibration(rows map[string]CalibrationRow) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for f, r := range rows {
		c := s.calib[f]
		c.Requests += r.Requests
		c.Provider += r.Provider
		c.Terse += r.Terse
		if c.Terse > 0 {
			c.Ratio = float64(c.Provider) / float64(c.Terse)
		}
		s.calib[f] = c
	}
}
