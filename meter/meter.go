// Package meter is the one counting core of terse's surfaces: how many
// calls (the MCP proxy and gateway's tools/call, terse api's requests)
// went through, the tokens they carried before and after terse, and the
// tokens saved by source, with the arithmetic that makes the parts add up
// and the line they are written in. The proxy and gateway's --stats-file
// and metrics, terse api's summary and metrics, and the hook's telemetry
// event all count with it.
//
// Sources are telemetry's one vocabulary ([telemetry.SourceNames]) plus two
// that only the proxies have: [Envelope] (a request written as compact
// JSON) and [Catalog] (tool catalogues). The Prometheus rendering is in
// meter/prom, apart, so that a program that counts does not link
// Prometheus.
package meter

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/telemetry"
)

// The sources beyond telemetry's: what writing a request as compact JSON
// saved (terse api) and what shortening tool catalogues saved (the MCP
// proxy and gateway).
const (
	Envelope = "envelope"
	Catalog  = "catalog"
)

// Baseline is the tokens a result shaped by the pipeline counts before
// terse: what its savings are measured against, by the one rule of every
// surface that shapes results (the MCP proxy and gateway, compact, the
// hook): compact JSON of the input (rep.RawTokens; the text itself for
// text), never the indentation of pretty JSON as sent. Only a result
// larger than compact JSON (an id line on a short result) counts against
// the text as sent, sent(), which it must undercut to be used; what
// compacting saved is then the encoding's (Report.SavedAgainst). A result
// left as it was counts as sent, before and after.
func Baseline(rep *terse.Report, sent func() int) int {
	if rep.OutputTokens > rep.RawTokens {
		return sent()
	}
	return rep.RawTokens
}

// Lossless reports whether source leaves every byte of the data in what
// the model can see: re-encoding, and references to a result still in its
// context (encoding, dedup, and the envelope). What the others save (fit,
// filter, history, stale, applied, elided, the catalogue) is left out,
// declared in-band.
func Lossless(source string) bool {
	return source == "encoding" || source == "dedup" || source == Envelope
}

// Saved is tokens saved by source name; a negative part is what its
// source cost (an id line, a note). The zero value (nil) reads as no
// saving; Add and Settle need a non-nil map.
type Saved map[string]int

// Add adds o to s, source by source.
func (s Saved) Add(o Saved) {
	for k, v := range o {
		s[k] += v
	}
}

// Sum is the total of the parts.
func (s Saved) Sum() int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}

// Settle gives source rest what the parts do not explain of total (the
// tokens before minus after), so that the parts add up to it: what is
// counted apart tokenizes a little differently, and what no source
// claimed is the one a surface names (the hook: encoding; terse api:
// history, or the envelope when nothing was trimmed).
func (s Saved) Settle(total int, rest string) {
	if d := total - s.Sum(); d != 0 {
		s[rest] += d
	}
}

// BySource is s in telemetry.Event.Saved's order: Envelope counts as
// encoding (the request written as compact JSON), Catalog and any other
// name not at all.
func (s Saved) BySource() [telemetry.NumSources]int {
	var out [telemetry.NumSources]int
	for k, v := range s {
		if k == Envelope {
			k = telemetry.SrcEncoding.String()
		}
		if src, ok := telemetry.ParseSource(k); ok {
			out[src] += v
		}
	}
	return out
}

// Line writes the parts as " name N" each: every source of order (zero
// included), then the other non-zero parts by name.
func (s Saved) Line(order []string) string {
	var b strings.Builder
	for _, k := range order {
		fmt.Fprintf(&b, " %s %d", k, s[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if s[k] != 0 && !slices.Contains(order, k) {
			fmt.Fprintf(&b, " %s %d", k, s[k])
		}
	}
	return b.String()
}

// Tally counts calls, their tokens before and after terse, and the tokens
// saved by source. Token figures are in one tokenizer, which the holder
// names. The zero value is ready; a Tally is not safe for concurrent use
// (its holder locks).
type Tally struct {
	Calls        int   `json:"calls"`
	TokensBefore int   `json:"tokens_before"`
	TokensAfter  int   `json:"tokens_after"`
	Saved        Saved `json:"saved_by_source"`
}

// Add counts one call of before tokens sent as after, saving saved.
func (t *Tally) Add(before, after int, saved Saved) {
	t.Calls++
	t.TokensBefore += before
	t.TokensAfter += after
	t.AddSaved(saved)
}

// AddSaved adds a saving not tied to a call (a catalogue).
func (t *Tally) AddSaved(saved Saved) {
	if t.Saved == nil {
		t.Saved = Saved{}
	}
	t.Saved.Add(saved)
}

// Clone returns a copy that shares nothing with t; its Saved is never nil.
func (t Tally) Clone() Tally {
	t.Saved = maps.Clone(t.Saved)
	if t.Saved == nil {
		t.Saved = Saved{}
	}
	return t
}

// Pct is the saving (before minus after) as a percentage of the tokens
// before; 0 when there were none.
func (t Tally) Pct() float64 {
	if t.TokensBefore == 0 {
		return 0
	}
	return 100 * float64(t.TokensBefore-t.TokensAfter) / float64(t.TokensBefore)
}
