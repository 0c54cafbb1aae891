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
