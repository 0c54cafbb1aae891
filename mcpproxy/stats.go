package mcpproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// CallRecord describes one tools/call that went through the proxy.
type CallRecord struct {
	Server string // gateway upstream name; empty for the stdio proxy
	Tool   string
	// Outcome is "transformed", "passed" (nothing to do, or not selected),
	// "raw" (_output_mode raw), "chunk" (answered from the chunk store),
	// "error" (JSON-RPC error or upstream failure) or "skipped_error" (the
	// transformer failed and the original was passed).
	Outcome      string
	TokensBefore int
	TokensAfter  int
	Saved        map[string]int
	Duration     time.Duration // from request to response written
	Pipeline     time.Duration // time spent in the Transformer
	IsError      bool          // the result had isError
}

// Stats accumulates totals over calls. The zero value is ready; it is safe
// for concurrent use. OnCall, when set before use, sees every record.
type Stats struct {
	OnCall func(CallRecord)

	mu     sync.Mutex
	totals StatsTotals
}

// StatsTotals is the JSON written by --stats-file.
type StatsTotals struct {
	Calls        int            `json:"calls"`
	Transformed  int            `json:"transformed"`
	Errors       int            `json:"errors"`
	TokensBefore int            `json:"tokens_before"`
	TokensAfter  int            `json:"tokens_after"`
	Saved        map[string]int `json:"saved_by_source"`
	Outcomes     map[string]int `json:"outcomes"`
	Restarts     int            `json:"upstream_restarts"`
	Rejected     int            `json:"rejected_messages"`
	Tokenizer    string         `json:"tokenizer,omitempty"`
}

// Add records one call.
func (s *Stats) Add(r CallRecord) {
	s.mu.Lock()
	t := &s.totals
	t.Calls++
	if t.Outcomes == nil {
		t.Outcomes = map[string]int{}
		t.Saved = map[string]int{}
	}
	t.Outcomes[r.Outcome]++
	switch r.Outcome {
	case "transformed":
		t.Transformed++
	case "error", "skipped_error":
		t.Errors++
	}
	t.TokensBefore += r.TokensBefore
	t.TokensAfter += r.TokensAfter
	for k, v := range r.Saved {
		t.Saved[k] += v
	}
	s.mu.Unlock()
	if s.OnCall != nil {
		s.OnCall(r)
	}
}

func (s *Stats) restarted() {
	s.mu.Lock()
	s.totals.Restarts++
	s.mu.Unlock()
}

func (s *Stats) rejected() {
	s.mu.Lock()
	s.totals.Rejected++
	s.mu.Unlock()
}

// Totals returns a copy of the totals so far.
func (s *Stats) Totals() StatsTotals {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.totals
	t.Saved = maps.Clone(t.Saved)
	t.Outcomes = maps.Clone(t.Outcomes)
	if t.Saved == nil {
		t.Saved = map[string]int{}
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

// writeVerbose prints the per-call line of --verbose.
func writeVerbose(w io.Writer, r CallRecord) {
	var b strings.Builder
	b.WriteString("terse: call ")
	if r.Server != "" {
		b.WriteString(r.Server + "__")
	}
	fmt.Fprintf(&b, "%s %s tokens %d->%d", r.Tool, r.Outcome, r.TokensBefore, r.TokensAfter)
	for _, k := range slices.Sorted(maps.Keys(r.Saved)) {
		fmt.Fprintf(&b, " %s=%d", k, r.Saved[k])
	}
	fmt.Fprintf(&b, " took %s pipeline %s", r.Duration.Round(time.Microsecond), r.Pipeline.Round(time.Microsecond))
	if r.IsError {
		b.WriteString(" isError")
	}
	b.WriteByte('\n')
	io.WriteString(w, b.String())
}
