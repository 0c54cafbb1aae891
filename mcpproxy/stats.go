package mcpproxy

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/terse-dev/terse/meter"
)

// CallRecord describes one tools/call that went through the proxy.
type CallRecord struct {
	Server string // gateway upstream name; empty for the stdio proxy
	Tool   string
	// Outcome is "transformed", "passed" (nothing to do, or not selected),
	// "raw" (_output_mode raw), "chunk" (answered from the chunk store),
	// "error" (JSON-RPC error or upstream failure) or "skipped_error" (the
	// pipeline failed and the original was passed).
	Outcome      string
	TokensBefore int
	TokensAfter  int
	Saved        meter.Saved
	Duration     time.Duration // from request to response written
	Pipeline     time.Duration // time spent in the terse pipeline
	IsError      bool          // the result had isError
	// StoreFailed: the chunk store failed (or timed out) during the
	// call; the result kept its budget and said the rest is not
	// retrievable right now.
	StoreFailed bool
	// Brake: this call switched its tool to lossless results for the
	// rest of the session (see Options.BrakeFetches).
	Brake bool
}

// Stats accumulates totals over calls. The zero value is ready; it is safe
// for concurrent use. OnCall, when set before use, sees every record.
type Stats struct {
	OnCall func(CallRecord)
	// Metrics, when set before use, sees every record and event.
	Metrics Metrics

	mu     sync.Mutex
	totals StatsTotals
}

// StatsTotals is the JSON written by --stats-file: the calls, their
// tokens and savings by source (meter.Tally; Saved[meter.Catalog] is what
// the catalogues saved), and what else the proxy counts.
type StatsTotals struct {
	meter.Tally
	Transformed  int            `json:"transformed"`
	Errors       int            `json:"errors"`
	Outcomes     map[string]int `json:"outcomes"`
	Restarts     int            `json:"upstream_restarts"`
	Rejected     int            `json:"rejected_messages"`
	UnknownTools int            `json:"unknown_tool_calls"`
	// StoreFailures counts calls during which the chunk store failed.
	StoreFailures int `json:"store_failures"`
	// Brakes counts tools switched to lossless results for the rest of a
	// session by its re-fetches (Options.BrakeFetches).
	Brakes int `json:"brakes"`
	// Panics counts requests whose handling panicked: each was
	// recovered, logged with its stack, and answered with an error or
	// with the upstream's original result.
	Panics int `json:"panics"`
	// CatalogTokensBefore and CatalogTokensAfter count the tool
	// catalogues (tools/list) as the upstreams sent them and as the
	// client got them; Saved["catalog"] is the difference. A catalogue is
	// sent to the model on every turn: this counts each tools/list once.
	CatalogTokensBefore int    `json:"catalog_tokens_before"`
	CatalogTokensAfter  int    `json:"catalog_tokens_after"`
	Tokenizer           string `json:"tokenizer,omitempty"`
}

// Add records one call.
func (s *Stats) Add(r CallRecord) {
	s.mu.Lock()
	t := &s.totals
	t.Add(r.TokensBefore, r.TokensAfter, r.Saved)
	if t.Outcomes == nil {
		t.Outcomes = map[string]int{}
	}
	t.Outcomes[r.Outcome]++
	switch r.Outcome {
	case "transformed":
		t.Transformed++
	case "error", "skipped_error":
		t.Errors++
	}
	if r.StoreFailed {
		t.StoreFailures++
	}
	if r.Brake {
		t.Brakes++
	}
	s.mu.Unlock()
	if s.OnCall != nil {
		s.OnCall(r)
	}
	if s.Metrics != nil {
		s.Metrics.Call(r)
	}
}

// Metrics receives what the proxy and the gateway count, as it happens
// (the gateway's Prometheus metrics implement it). Implementations must
// be safe for concurrent use.
type Metrics interface {
	// Call is one finished tools/call.
	Call(CallRecord)
	// Upstream reports an upstream (by server name; "" for the stdio
	// proxy's one) up or down.
	Upstream(server string, up bool)
	// Restarted counts a restart or reconnection of an upstream.
	Restarted(server string)
	// Rejected counts a malformed or oversized message, from "client"
	// or "upstream".
	Rejected(from string)
	// UnknownTool counts a call of a tool no upstream has.
	UnknownTool(name string)
	// Catalog counts one tools/list answer, in tokens as the upstream
	// sent it and as the client got it.
	Catalog(server string, before, after int)
	// Panicked counts a recovered panic, by where it happened (a
	// request boundary: "client", "upstream", "call", "method", "http",
	// "session", "progress").
	Panicked(where string)
}

func (s *Stats) panicked(where string) {
	s.mu.Lock()
	s.totals.Panics++
	s.mu.Unlock()
	if s.Metrics != nil {
		s.Metrics.Panicked(where)
	}
}

func (s *Stats) restarted(server string) {
	s.mu.Lock()
	s.totals.Restarts++
	s.mu.Unlock()
	if s.Metrics != nil {
		s.Metrics.Restarted(server)
	}
}

func (s *Stats) upstream(server string, up bool) {
	if s.Metrics != nil {
		s.Metrics.Upstream(server, up)
	}
}

func (s *Stats) unknownTool(name string) {
	s.mu.Lock()
	s.totals.UnknownTools++
	s.mu.Unlock()
	if s.Metrics != nil {
		s.Metrics.UnknownTool(name)
	}
}

func (s *Stats) catalog(server string, before, after int) {
	if s.Metrics != nil {
		s.Metrics.Catalog(server, before, after)
	}
	s.mu.Lock()
	t := &s.totals
	t.CatalogTokensBefore += before
	t.CatalogTokensAfter += after
	t.AddSaved(meter.Saved{meter.Catalog: before - after})
	s.mu.Unlock()
}

func (s *Stats) rejected(from string) {
	s.mu.Lock()
	s.totals.Rejected++
	s.mu.Unlock()
	if s.Metrics != nil {
		s.Metrics.Rejected(from)
	}
}

// Totals returns a copy of the totals so far.
func (s *Stats) Totals() StatsTotals {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.totals
	t.Tally = t.Tally.Clone()
	t.Outcomes = maps.Clone(t.Outcomes)
	if t.Outcomes == nil {
		t.Outcomes = map[string]int{}
	}
	return t
}

// WriteFile writes the totals as indented JSON, replacing path atomically.
func (s *Stats) WriteFile(path, tokenizer string) error {
	t := s.Totals()
	t.Tokenizer = tokenizer
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// logCall logs one call at DEBUG (the CLI's --verbose): one slog record
// per tools/call, beside the relay's other records.
func logCall(l *slog.Logger, r CallRecord) {
	if !l.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{slog.String("tool", r.Tool), slog.String("outcome", r.Outcome),
		slog.Int("tokens_before", r.TokensBefore), slog.Int("tokens_after", r.TokensAfter),
		slog.Duration("took", r.Duration), slog.Duration("pipeline", r.Pipeline)}
	if r.Server != "" {
		attrs = append(attrs, slog.String("server", r.Server))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Saved)) {
		attrs = append(attrs, slog.Int("saved_"+k, r.Saved[k]))
	}
	if r.IsError {
		attrs = append(attrs, slog.Bool("is_error", true))
	}
	l.LogAttrs(context.Background(), slog.LevelDebug, "call", attrs...)
}
