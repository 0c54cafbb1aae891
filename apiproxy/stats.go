package apiproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/terse-dev/terse/meter"
	"github.com/terse-dev/terse/meter/prom"
	"github.com/terse-dev/terse/tokens"
)

// Totals are summed figures over requests: the Tally counts requests as
// its calls, and their request bodies in the Stats' tokenizer, before and
// after rewriting (after equals before for requests forwarded untouched;
// in a dry run it is what would have been sent).
type Totals struct {
	meter.Tally
	Rewritten     int `json:"rewritten"`
	Untouched     int `json:"untouched"`
	PrefixChanges int `json:"prefix_changes"`
	// InternalErrors counts requests forwarded unchanged because
	// rewriting failed (a recovered panic).
	InternalErrors int   `json:"internal_errors,omitempty"`
	Usage          Usage `json:"usage"`
	// Cost is the billed cost in USD of the requests whose response
	// reported usage (Usage.Reported of them), at the price table's
	// prices; DirectCost the modeled cost of the original requests in
	// their place (see directUsage).
	Cost       float64 `json:"cost"`
	DirectCost float64 `json:"direct_cost"`
	// CacheDiagnostics sums the provider's cache diagnostics (nil: none
	// were asked for or reported).
	CacheDiagnostics *MissCounts `json:"cache_diagnostics,omitempty"`
}

func (t *Totals) add(r *Record) {
	if r.CacheDiagnostics != nil {
		if t.CacheDiagnostics == nil {
			t.CacheDiagnostics = &MissCounts{}
		}
		t.CacheDiagnostics.Add(r.CacheDiagnostics)
	}
	t.Add(r.TokensBefore, r.TokensAfter, r.Saved)
	if r.InternalError {
		t.InternalErrors++
	}
	if r.Rewritten {
		t.Rewritten++
	} else {
		t.Untouched++
	}
	if r.PrefixChanged {
		t.PrefixChanges++
	}
	t.Usage.add(r.Usage)
	t.Cost += r.Cost
	t.DirectCost += r.DirectCost
}

// Record is one request's line in the stats file.
type Record struct {
	Time          time.Time   `json:"time"`
	Path          string      `json:"path"`
	Model         string      `json:"model,omitempty"`
	Conversation  string      `json:"conversation,omitempty"`
	Status        int         `json:"status"`
	Tokenizer     string      `json:"tokenizer"`
	TokensBefore  int         `json:"tokens_before"`
	TokensAfter   int         `json:"tokens_after"`
	Saved         meter.Saved `json:"saved,omitempty"`
	Rewritten     bool        `json:"rewritten"`
	DryRun        bool        `json:"dry_run,omitempty"`
	Skipped       string      `json:"skipped,omitempty"`
	InternalError bool        `json:"internal_error,omitempty"`
	PrefixChanged bool        `json:"prefix_changed"`
	// Batch says why the request made a batch of edits (Result.Batch).
	Batch       string  `json:"batch,omitempty"`
	Boundary    int     `json:"boundary"`
	Window      int     `json:"window,omitempty"`
	Target      float64 `json:"target,omitempty"`
	WindowRatio float64 `json:"window_ratio,omitempty"` // estimated provider tokens per o200k_base token Window was divided by (absent: 1)
	AddedMicros int64   `json:"added_us"`
	Usage       Usage   `json:"usage"`
	// Price names the price-table row the costs use (a "default for …"
	// label when the model matched none); Cost is the billed cost of
	// Usage, Direct the modeled usage of the original request and
	// DirectCost its cost (USD). All absent when the response reported no
	// usage.
	Price      string  `json:"price,omitempty"`
	Cost       float64 `json:"cost,omitempty"`
	Direct     *Usage  `json:"direct,omitempty"`
	DirectCost float64 `json:"direct_cost,omitempty"`
	// Arm is the request's arm of the A/B holdout (ArmTerse or
	// ArmHoldout; absent when the holdout is off) and Thread its
	// conversation as the holdout knows it (a hash of the seed and the
	// first message).
	Arm    string `json:"arm,omitempty"`
	Thread string `json:"thread,omitempty"`
	// CacheDiagnostics is what the provider's cache diagnostics said of
	// the request (absent when none were asked for or reported).
	CacheDiagnostics *CacheDiagnosis `json:"cache_diagnostics,omitempty"`
}

// Stats collects per-request and per-conversation figures. Tokens are
// counted off the request path, in one goroutine.
type Stats struct {
	counter tokens.Counter
	out     io.Writer

	queue chan *exchangeDone
	wg    sync.WaitGroup

	// tokens counts the request tokens and savings by source for the
	// metrics (Handler).
	tokens *prom.Tally

	prices atomic.Pointer[Prices]
	// prevDirect is each conversation's latest modeled original prompt
	// (used by the run goroutine only).
	prevDirect map[string]int

	mu       sync.Mutex
	total    Totals
	sessions map[string]*Totals
	models   map[string]*Totals
	calib    map[string]CalibrationRow
	dropped  int
	closed   bool
}

type exchangeDone struct {
	ex *exchange
	u  Usage
}

// NewStats returns Stats counting with c (nil: o200k_base) that append
// one JSON line per request to out (nil: none). Call Close to flush.
func NewStats(c tokens.Counter, out io.Writer) *Stats {
	if c == nil {
		c = tokens.O200kBase()
	}
	s := &Stats{counter: c, out: out, queue: make(chan *exchangeDone, 256), sessions: make(map[string]*Totals),
		models: make(map[string]*Totals), prevDirect: make(map[string]int), calib: make(map[string]CalibrationRow)}
	tok := prometheus.Labels{"tokenizer": c.Name()}
	s.tokens = prom.NewTally(prom.TallyOpts{
		Before: prometheus.CounterOpts{Name: "terse_api_tokens_before_total", Help: "Request tokens as the client sent them.", ConstLabels: tok},
		After:  prometheus.CounterOpts{Name: "terse_api_tokens_after_total", Help: "Request tokens as sent upstream.", ConstLabels: tok},
		Saved:  prometheus.CounterOpts{Name: "terse_api_tokens_saved_total", Help: "Request tokens saved, by source.", ConstLabels: tok},
		Cost: prometheus.CounterOpts{Name: "terse_api_tokens_cost_total",
			Help: "Request tokens a source added where it saved none, by source; saved minus cost is the net saving.", ConstLabels: tok},
		Sources: sourceNames(),
	})
	s.tokens.Init()
	s.prices.Store(NewPrices(nil))
	s.wg.Add(1)
	go s.run()
	return s
}

// SetPrices sets the price table costs are computed with (the shipped
// table until then).
func (s *Stats) SetPrices(p *Prices) {
	if p != nil {
		s.prices.Store(p)
	}
}

func (s *Stats) record(ex *exchange, u Usage) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	select {
	case s.queue <- &exchangeDone{ex, u}:
	default:
		s.mu.Lock()
		s.dropped++
		s.mu.Unlock()
	}
}

func (s *Stats) run() {
	defer s.wg.Done()
	enc := json.NewEncoder(io.Discard)
	if s.out != nil {
		enc = json.NewEncoder(s.out)
	}
	for d := range s.queue {
		r := s.measureSafe(d)
		if r == nil {
			continue
		}
		s.account(r)
		s.mu.Lock()
		s.total.add(r)
		s.tokens.Add(r.TokensBefore, r.TokensAfter, r.Saved)
		if s.counter.Name() == r.Tokenizer {
			addCalibration(s.calib, r)
		}
		for _, g := range []struct {
			m   map[string]*Totals
			key string
		}{{s.sessions, r.Conversation}, {s.models, r.Model}} {
			if g.key == "" {
				continue
			}
			t := g.m[g.key]
			if t == nil {
				t = &Totals{}
				g.m[g.key] = t
			}
			t.add(r)
		}
		s.mu.Unlock()
		enc.Encode(r)
	}
}

// measureSafe measures d and makes its telemetry event; a panic there
// loses that one request's figures (counted as not measured), not the
// process.
func (s *Stats) measureSafe(d *exchangeDone) (r *Record) {
	defer func() {
		if recover() != nil {
			s.mu.Lock()
			s.dropped++
			s.mu.Unlock()
			r = nil
		}
	}()
	r = s.measure(d.ex, d.u, s.counter)
	if d.ex.rec != nil {
		s.event(d.ex, r)
	}
	return r
}

// measure counts one exchange's tokens.
func (s *Stats) measure(ex *exchange, u Usage, counter tokens.Counter) *Record {
	res := &ex.res
	r := &Record{
		Time: ex.start.UTC(), Path: ex.path, Model: res.Model, Conversation: res.Conversation, Status: ex.status,
		Tokenizer: counter.Name(), DryRun: ex.dryRun, Skipped: ex.skipped, InternalError: ex.internal,
		PrefixChanged: res.PrefixChanged, Batch: res.Batch, Boundary: res.Report.Boundary, Window: res.Window, Target: res.Target,
		WindowRatio: res.Ratio, AddedMicros: ex.added.Microseconds(), Usage: u, Arm: ex.arm, Thread: ex.thread,
	}
	if r.Skipped == "" {
		r.Skipped = res.Skipped
	}
	if ex.diag != nil {
		d := *ex.diag
		sent := ex.after != nil && !ex.dryRun && !ex.held // sent as terse rewrote it
		d.At = missAt(d.Reason, sent && res.PrefixChanged)
		if !d.Reported || d.Pending {
			d.At = ""
		}
		r.CacheDiagnostics = &d
	}
	if ex.before != nil {
		r.TokensBefore = tokens.CountBytes(counter, ex.before)
		r.TokensAfter = r.TokensBefore
	}
	if ex.after != nil {
		r.Rewritten = !ex.dryRun && !ex.held
		r.TokensAfter = tokens.CountBytes(counter, ex.after)
		r.Saved = meter.Saved{}
		for _, e := range res.Edits {
			r.Saved[e.Source.String()] += counter.Count(e.Before) - counter.Count(e.After)
		}
		// What the edits do not explain is history trimming, or, when
		// nothing was trimmed, writing the request as compact JSON.
		key := SourceHistory.String()
		if res.Report.Trimmed == 0 && res.Report.Dropped == 0 && res.Report.ThinkingDropped == 0 {
			key = meter.Envelope
		}
		r.Saved.Settle(r.TokensBefore-r.TokensAfter, key)
	}
	return r
}

// account prices a measured request: its billed cost from the provider's
// usage, and the modeled usage and cost of the original in its place.
func (s *Stats) account(r *Record) {
	if r.Usage.Reported == 0 {
		return
	}
	price, label := s.prices.Load().Lookup(r.Model)
	r.Price = label
	r.Cost = price.Cost(r.Usage)
	direct := r.Usage
	if r.Rewritten {
		direct = directUsage(r.Usage, r.TokensBefore, r.TokensAfter, r.PrefixChanged, s.prevDirect[r.Conversation])
	}
	r.Direct = &direct
	r.DirectCost = price.Cost(direct)
	if r.Conversation != "" {
		s.prevDirect[r.Conversation] = direct.Prompt()
	}
}

// Close waits for the figures of finished requests and stops recording.
func (s *Stats) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	close(s.queue)
	s.wg.Wait()
}

// Calibration returns, per model family, the ratio of provider-reported
// input tokens to this Stats' o200k_base count of the requests sent.
func (s *Stats) Calibration() map[string]CalibrationRow {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calib)
}

// Models returns the totals per model id.
func (s *Stats) Models() map[string]Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Totals, len(s.models))
	for k, v := range s.models {
		t := *v
		t.Tally = t.Tally.Clone()
		t.CacheDiagnostics = t.CacheDiagnostics.clone()
		out[k] = t
	}
	return out
}

// Snapshot returns the totals and the per-conversation totals.
func (s *Stats) Snapshot() (Totals, map[string]Totals) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := s.total
	total.Tally = total.Tally.Clone()
	total.CacheDiagnostics = total.CacheDiagnostics.clone()
	sess := make(map[string]Totals, len(s.sessions))
	for k, v := range s.sessions {
		t := *v
		t.Tally = t.Tally.Clone()
		t.CacheDiagnostics = t.CacheDiagnostics.clone()
		sess[k] = t
	}
	return total, sess
}

// Summary is a one-screen account of the totals.
func (s *Stats) Summary() string {
	t, sess := s.Snapshot()
	var b strings.Builder
	fmt.Fprintf(&b, "terse api: %d requests (%d rewritten, %d untouched) in %d conversations\n", t.Calls, t.Rewritten, t.Untouched, len(sess))
	fmt.Fprintf(&b, "  request tokens (%s): %d before, %d after, %d saved (%.1f %%)\n", s.counter.Name(), t.TokensBefore, t.TokensAfter, t.TokensBefore-t.TokensAfter, t.Pct())
	fmt.Fprintf(&b, "  saved by source:%s\n", t.Saved.Line(sourceNames()))
	fmt.Fprintf(&b, "  prefix changes: %d of %d requests\n", t.PrefixChanges, t.Calls)
	if t.InternalErrors > 0 {
		fmt.Fprintf(&b, "  internal errors: %d requests forwarded unchanged (see the log)\n", t.InternalErrors)
	}
	fmt.Fprintf(&b, "  provider usage: input %d, cache read %d, cache write %d, output %d\n",
		t.Usage.Input, t.Usage.CacheRead, t.Usage.CacheCreation, t.Usage.Output)
	if t.Usage.Reported > 0 {
		fmt.Fprintf(&b, "  cost of the %d requests with usage: billed $%.4f, original requests (modeled) $%.4f\n",
			t.Usage.Reported, t.Cost, t.DirectCost)
		models := s.Models()
		for _, m := range slices.Sorted(maps.Keys(models)) {
			x := models[m]
			if x.Usage.Reported == 0 {
				continue
			}
			_, label := s.prices.Load().Lookup(m)
			fmt.Fprintf(&b, "    %s (price: %s): %d requests, billed $%.4f, modeled original $%.4f\n", m, label, x.Usage.Reported, x.Cost, x.DirectCost)
		}
	}
	if d := t.CacheDiagnostics; !d.Empty() {
		fmt.Fprintf(&b, "  cache diagnostics: %d requests attached, %d the client's; %d reported: %d no divergence, %d pending, %d no comparison, misses at terse's prefix changes %d (%d tokens), the client's own %d (%d tokens)\n",
			d.Attached, d.Client, d.Reported, d.NoDivergence, d.Pending, sumInts(d.NoComparison),
			d.Total(MissAtTerse).Requests, d.Total(MissAtTerse).Missed, d.Total(MissAtClient).Requests, d.Total(MissAtClient).Missed)
	}
	calib := s.Calibration()
	for _, f := range slices.Sorted(maps.Keys(calib)) {
		c := calib[f]
		fmt.Fprintf(&b, "  tokenizer calibration (estimated): %s: %.3f provider input tokens per %s token of the request (%d requests)\n",
			f, c.Ratio, s.counter.Name(), c.Requests)
	}
	for _, m := range slices.Sorted(maps.Keys(s.Models())) {
		if r, src := WindowRatio(m, calib); r != 1 {
			fmt.Fprintf(&b, "  window ratio (estimated, %s) for new conversations of %s: %.3f\n", src, m, r)
		}
	}
	keys := make([]string, 0, len(sess))
	for k := range sess {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return sess[keys[i]].TokensBefore > sess[keys[j]].TokensBefore })
	for i, k := range keys {
		if i == 8 {
			fmt.Fprintf(&b, "  … %d more conversations\n", len(keys)-i)
			break
		}
		x := sess[k]
		fmt.Fprintf(&b, "  conversation %s: %d requests, %d → %d tokens\n", k, x.Calls, x.TokensBefore, x.TokensAfter)
	}
	s.mu.Lock()
	if s.dropped > 0 {
		fmt.Fprintf(&b, "  (%d requests not measured: the stats queue was full, or measuring failed)\n", s.dropped)
	}
	s.mu.Unlock()
	return b.String()
}

// Handler serves the totals in the Prometheus text format.
func (s *Stats) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	counter := func(name, help string, labels prometheus.Labels, f func(t *Totals) int) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, func() float64 {
			s.mu.Lock()
			defer s.mu.Unlock()
			return float64(f(&s.total))
		}))
	}
	counter("terse_api_requests_total", "Requests rewritten or considered for rewriting.", nil, func(t *Totals) int { return t.Calls })
	counter("terse_api_rewritten_total", "Requests sent rewritten.", nil, func(t *Totals) int { return t.Rewritten })
	reg.MustRegister(s.tokens.Collectors()...)
	counter("terse_api_internal_errors_total", "Requests forwarded unchanged because rewriting failed.", nil, func(t *Totals) int { return t.InternalErrors })
	counter("terse_api_prefix_changes_total", "Requests that changed the cached prefix.", nil, func(t *Totals) int { return t.PrefixChanges })
	counter("terse_api_provider_input_tokens_total", "Input tokens the provider reported.", nil, func(t *Totals) int { return t.Usage.Input })
	counter("terse_api_provider_cache_read_tokens_total", "Cache-read input tokens the provider reported.", nil, func(t *Totals) int { return t.Usage.CacheRead })
	counter("terse_api_provider_cache_write_tokens_total", "Cache-write input tokens the provider reported.", nil, func(t *Totals) int { return t.Usage.CacheCreation })
	counter("terse_api_provider_output_tokens_total", "Output tokens the provider reported.", nil, func(t *Totals) int { return t.Usage.Output })
	for _, k := range []struct {
		kind string
		f    func(t *Totals) float64
	}{{"billed", func(t *Totals) float64 { return t.Cost }}, {"direct_modeled", func(t *Totals) float64 { return t.DirectCost }}} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "terse_api_cost_usd_total",
			Help: "Cost in USD of the requests with provider usage: billed, and the original requests as modeled.", ConstLabels: prometheus.Labels{"kind": k.kind}},
			func() float64 {
				s.mu.Lock()
				defer s.mu.Unlock()
				return k.f(&s.total)
			}))
	}
	for _, at := range []string{MissAtTerse, MissAtClient} {
		for _, reason := range []string{"model_changed", "system_changed", "tools_changed", "messages_changed"} {
			if missAt(reason, at == MissAtTerse) != at {
				continue
			}
			counter("terse_api_cache_misses_total", "Cache misses the provider's cache diagnostics reported, by where they belong and reason.",
				prometheus.Labels{"at": at, "reason": reason}, func(t *Totals) int {
					if t.CacheDiagnostics == nil {
						return 0
					}
					return t.CacheDiagnostics.Misses[at][reason].Requests
				})
		}
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

func sumInts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// sourceNames are the names of the sources terse api saves by, in the
// order its summary and metrics list them.
func sourceNames() []string {
	out := make([]string, len(sources))
	for i, src := range sources {
		out[i] = src.String()
	}
	return out
}
