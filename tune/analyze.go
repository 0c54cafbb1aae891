package tune

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/telemetry"
)

// Minimum evidence of the rules over telemetry.
const (
	MinEndpointCalls = 20 // R1, R2
	MinProfileEvents = 50 // R3, R5
	MinBrakeSessions = 3  // R6
)

// Endpoint is the fingerprint of one tool over the telemetry read.
type Endpoint struct {
	Tool  string // name, or salted hash ("t:…")
	Named bool   // Tool is a name (opted in, or recognised from --names)
	Class string
	Calls float64
	// Signal counts calls with a repeat signal; Repeats those that
	// repeated an earlier result of the partition; Distances the results
	// between a repeat and its original.
	Signal, Repeats float64
	Distances       []int
	Shapes          map[string]float64
	Inner           map[string]float64
	TableCols       []int
}

// RepeatRate is Repeats / Signal.
func (e *Endpoint) RepeatRate() float64 {
	if e.Signal == 0 {
		return 0
	}
	return e.Repeats / e.Signal
}

// DominantShape is the most common shape (ties: by name).
func (e *Endpoint) DominantShape() string { return top(e.Shapes, 1)[0] }

// TopInner is the three most common inner formats among those found in at
// least half of the tool's results (a format seen in a few results does
// not describe the endpoint).
func (e *Endpoint) TopInner() []string {
	common := map[string]float64{}
	for k, v := range e.Inner {
		if 2*v >= e.Calls {
			common[k] = v
		}
	}
	return top(common, 3)
}

func top(m map[string]float64, n int) []string {
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(m[b], m[a]) })
	if len(keys) > n {
		keys = keys[:n]
	}
	if len(keys) == 0 && n == 1 {
		return []string{""}
	}
	return keys
}

// SessionProfile aggregates the sessions read.
type SessionProfile struct {
	Sessions    int
	Events      float64
	Compactions float64
	JSONDepths  []int // nesting depth of JSON results
	BytesIn     []int
}

// CompactionRate is compactions per event (events⁻¹).
func (s *SessionProfile) CompactionRate() float64 {
	if s.Events == 0 {
		return 0
	}
	return s.Compactions / s.Events
}

// EventsPerPartition is the mean number of events between compactions.
func (s *SessionProfile) EventsPerPartition() float64 {
	return s.Events / math.Max(1, float64(s.Sessions)+s.Compactions)
}

// EventsPerSession is the mean number of events per session.
func (s *SessionProfile) EventsPerSession() float64 {
	return s.Events / math.Max(1, float64(s.Sessions))
}

// Fingerprints computes the endpoint fingerprints and the session profile
// of a telemetry log. names maps salted tool hashes to names (may be nil).
func Fingerprints(l *telemetry.Log, names map[string]string) (map[string]*Endpoint, *SessionProfile) {
	eps := map[string]*Endpoint{}
	sp := &SessionProfile{}
	type part struct {
		seen map[string]int // fingerprint → ordinal of last occurrence
		n    int
	}
	parts := map[string]*part{}
	maxPart := map[string]int{}
	compacts := map[string]int{}
	for i := range l.Records {
		r := &l.Records[i]
		if r.Chunk {
			continue
		}
		w := r.Weight()
		sp.Events += w
		maxPart[r.Session] = max(maxPart[r.Session], r.Partition)
		compacts[r.Session] += r.Compact
		if r.BytesIn > 0 {
			sp.BytesIn = append(sp.BytesIn, r.BytesIn)
		}
		if r.Shape == "nested_object" || r.Shape == "array_of_objects" {
			sp.JSONDepths = append(sp.JSONDepths, r.Depth)
		}
		tool := r.Tool
		named := tool != "" && !strings.HasPrefix(tool, "t:")
		if n, ok := names[tool]; ok {
			tool, named = n, true
		}
		if tool == "" {
			tool = "(" + r.Class + ")"
		}
		e := eps[tool]
		if e == nil {
			e = &Endpoint{Tool: tool, Named: named, Class: r.Class, Shapes: map[string]float64{}, Inner: map[string]float64{}}
			eps[tool] = e
		}
		e.Calls += w
		if r.Shape != "" {
			e.Shapes[r.Shape] += w
		}
		for _, in := range r.Inner {
			e.Inner[in] += w
		}
		if r.Shape == "markdown_table" {
			e.TableCols = append(e.TableCols, r.Cols)
		}
		key := r.Session + "/" + fmt.Sprint(r.Partition)
		p := parts[key]
		if p == nil {
			p = &part{seen: map[string]int{}}
			parts[key] = p
		}
		p.n++
		switch {
		case r.FP != "":
			e.Signal += w
			if last, ok := p.seen[r.Tool+"/"+r.FP]; ok {
				e.Repeats += w
				e.Distances = append(e.Distances, p.n-last)
			}
			p.seen[r.Tool+"/"+r.FP] = p.n
		case r.Dedup != "":
			e.Signal += w
			if r.Dedup == "hit" || r.Dedup == "near" {
				e.Repeats += w
			}
		}
	}
	sp.Sessions = len(maxPart)
	for s, m := range maxPart {
		sp.Compactions += float64(max(m, compacts[s]))
	}
	return eps, sp
}

// Analyze runs rules R1–R6 over a telemetry log.
func Analyze(l *telemetry.Log, names map[string]string) *Plan {
	eps, sp := Fingerprints(l, names)
	p := &Plan{}
	p.Header = []string{
		"terse configuration proposed by `terse tune analyze` (rules R1-R6; see docs/tune.md).",
		fmt.Sprintf("Read %d events of %d sessions from %d files (%d lines skipped).", len(l.Records), sp.Sessions, l.Files, l.Skipped),
	}
	keys := slices.Sorted(maps.Keys(eps))

	need := p.repeats(eps, keys)
	p.templates(eps, keys)
	p.cacheSize(sp, need)
	p.minSize(sp)
	p.brakes(l, names)
	return p
}

// repeats is rule R1: references kept for a tool whose results repeat
// (and the cache size its repeats need, returned), none for one whose
// results do not.
func (p *Plan) repeats(eps map[string]*Endpoint, keys []string) int {
	need := 0
	for _, k := range keys {
		e := eps[k]
		if e.Signal < MinEndpointCalls {
			if e.Calls >= MinEndpointCalls {
				p.note("R1", k, fmt.Sprintf("%.0f calls but only %.0f with a repeat signal (need %d)", e.Calls, e.Signal, MinEndpointCalls))
			}
			continue
		}
		rate := e.RepeatRate()
		ev := fmt.Sprintf("%.0f of %.0f results repeat an earlier one (rate %.2f)", e.Repeats, e.Signal, rate)
		switch {
		case rate >= 0.30:
			d := percentile(e.Distances, 0.90)
			need = max(need, 1+d)
			ev += fmt.Sprintf(", p90 distance %d results", d)
			effect := "keep references; the cache must hold " + fmt.Sprint(1+d) + " results"
			p.fire("R1", k, ev, effect)
		case rate <= 0.05:
			if !e.Named {
				p.note("R1", k, ev+"; would disable references, but the tool is known only by its hash (pass --names or set [telemetry] tool_names = true)")
				continue
			}
			why := p.fire("R1", k, ev, "no reference hints for this tool")
			p.DataVariants = append(p.DataVariants, variant[config.DataProfile]{config.DataProfile{
				Name: "r1_" + ident(k), Match: globQuote(k), Hints: []string{"more", "query", "encoded"}}, why})
		default:
			p.note("R1", k, ev+"; between 0.05 and 0.30: unchanged")
		}
	}
	return need
}

// templates is rule R2: a template for a tool whose results have a shape
// one fits (Markdown tables, CI pipelines, merge request diffs).
func (p *Plan) templates(eps map[string]*Endpoint, keys []string) {
	for _, k := range keys {
		e := eps[k]
		if e.Calls < MinEndpointCalls {
			continue
		}
		shape, inner := e.DominantShape(), e.TopInner()
		cols := mean(e.TableCols)
		tmpl, ev := "", ""
		switch {
		case shape == "markdown_table" && cols >= 2:
			tmpl, ev = "csv_from_md", fmt.Sprintf("dominant shape markdown_table (%.0f of %.0f calls), %.1f columns on average", e.Shapes[shape], e.Calls, cols)
		case slices.Contains(inner, "log") && slices.Contains(inner, "url") && slices.Contains(inner, "hash"):
			tmpl, ev = "ci_pipeline", "inner formats "+strings.Join(inner, "+")
		case slices.Contains(inner, "diff"):
			tmpl, ev = "mr_diff_fence", "inner formats "+strings.Join(inner, "+")
		default:
			continue
		}
		if !e.Named {
			p.note("R2", k, ev+fmt.Sprintf("; would set template %s, but the tool is known only by its hash", tmpl))
			continue
		}
		why := p.fire("R2", k, ev, "template "+tmpl)
		p.Tools = append(p.Tools, variant[config.Tool]{config.Tool{Match: globQuote(k), Template: tmpl}, why})
	}
}

// cacheSize is rule R3: the dedup cache sized by the sessions' profile,
// or by the repeats R1 measured (need).
func (p *Plan) cacheSize(sp *SessionProfile, need int) {
	if sp.Events < MinProfileEvents {
		p.note("R3", "session profile", fmt.Sprintf("%.0f events (need %d)", sp.Events, MinProfileEvents))
	} else {
		rate := sp.CompactionRate()
		ev := fmt.Sprintf("%.0f compactions over %.0f events (rate %.4f per event), %.1f events per session, %.1f per partition",
			sp.Compactions, sp.Events, rate, sp.EventsPerSession(), sp.EventsPerPartition())
		var n int
		switch {
		case rate > 0.05:
			n = max(10, int(math.Ceil(0.2*sp.EventsPerPartition())))
		case sp.EventsPerSession() < 20:
			n = 3
		default:
			n = 5
		}
		effect := fmt.Sprintf("cache of %d results", n)
		if need > n {
			effect += fmt.Sprintf(", raised to %d for the repeats R1 measured", need)
			n = need
		}
		p.MaxEntries, p.MaxEntriesRule = n, 3
		p.maxEntriesWhy = p.fire("R3", "session profile", ev, effect)
	}
	if p.MaxEntries == 0 && need > dedup.DefaultMaxEntries {
		p.MaxEntries = need
		p.maxEntriesWhy = fmt.Sprintf("R1: repeats need a cache of %d results (default %d)", need, dedup.DefaultMaxEntries)
	}
}

// minSize is rule R5: min_size_bytes from the sessions' input sizes.
func (p *Plan) minSize(sp *SessionProfile) {
	if len(sp.BytesIn) < MinProfileEvents {
		p.note("R5", "session profile", fmt.Sprintf("%d sized results (need %d)", len(sp.BytesIn), MinProfileEvents))
	} else {
		p25 := percentile(sp.BytesIn, 0.25)
		n := min(max(p25, 100), 500)
		p.MinSizeBytes = n
		p.minSizeWhy = p.fire("R5", "session profile", fmt.Sprintf("p25 input size %d bytes over %d results", p25, len(sp.BytesIn)), fmt.Sprintf("min_size_bytes %d", n))
	}
}

// brakes is rule R6: a tool whose results the sessions kept fetching
// again (the proxy's brake switched it to whole results, telemetry's
// "brake") in at least MinBrakeSessions sessions and a fifth of the
// sessions that used it gets a data variant without the "more" hint:
// its results come back whole from the start.
func (p *Plan) brakes(l *telemetry.Log, names map[string]string) {
	used, braked := map[string]map[string]bool{}, map[string]map[string]bool{}
	add := func(m map[string]map[string]bool, tool, session string) {
		if m[tool] == nil {
			m[tool] = map[string]bool{}
		}
		m[tool][session] = true
	}
	named := map[string]bool{}
	for i := range l.Records {
		r := &l.Records[i]
		tool := r.Tool
		if tool == "" {
			continue
		}
		isNamed := !strings.HasPrefix(tool, "t:")
		if n, ok := names[tool]; ok {
			tool, isNamed = n, true
		}
		named[tool] = isNamed
		add(used, tool, r.Session)
		if r.Brake {
			add(braked, tool, r.Session)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(braked)) {
		b, u := len(braked[k]), len(used[k])
		ev := fmt.Sprintf("re-fetches switched the tool to whole results in %d of %d sessions", b, u)
		switch {
		case b < MinBrakeSessions:
			p.note("R6", k, ev+fmt.Sprintf(" (need %d)", MinBrakeSessions))
		case 5*b < u:
			p.note("R6", k, ev+"; under a fifth: unchanged")
		case !named[k]:
			p.note("R6", k, ev+"; would make its results whole (lossless only), but the tool is known only by its hash (pass --names or set [telemetry] tool_names = true)")
		default:
			why := p.fire("R6", k, ev, "lossless only: no \"more\" hint, results whole")
			p.DataVariants = append(p.DataVariants, variant[config.DataProfile]{config.DataProfile{
				Name: "r6_" + ident(k), Match: globQuote(k), Hints: []string{"ref", "near_ref", "query", "encoded"}}, why})
		}
	}
}

// percentile is the nearest-rank percentile of xs (0 for none).
func percentile(xs []int, q float64) int {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func mean(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0
	for _, x := range xs {
		t += x
	}
	return float64(t) / float64(len(xs))
}

// ident makes a variant name from a tool name.
func ident(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	return strings.Trim(b.String(), "_")
}
