package telemetry

import (
	"cmp"
	"slices"
)

// Baseline names what every saving is measured against.
const Baseline = "compact JSON of the input (or the input text)"

// Row is one line of a Summary breakdown. Figures are weighted by the
// sample rate (an event kept at rate 0.5 counts twice).
type Row struct {
	Key       string  `json:"key"`
	Calls     float64 `json:"calls"`
	TokensIn  float64 `json:"tokens_in"`
	TokensOut float64 `json:"tokens_out"`
	Saved     float64 `json:"saved"`
}

// Pct is the saving as a percentage of TokensIn.
func (r Row) Pct() float64 {
	if r.TokensIn == 0 {
		return 0
	}
	return 100 * r.Saved / r.TokensIn
}

// Untouched counts, for one tool, why its results were left alone.
type Untouched struct {
	Tool    string             `json:"tool"`
	Class   string             `json:"class"`
	Calls   float64            `json:"calls"`
	Reasons map[string]float64 `json:"reasons"`
}

// Summary is what `terse stats` prints.
type Summary struct {
	Events     int      `json:"events"`
	Sessions   int      `json:"sessions"`
	Files      int      `json:"files"`
	Skipped    int      `json:"skipped_lines"`
	Tokenizers []string `json:"tokenizers"`
	Baseline   string   `json:"baseline"`
	Total      Row      `json:"total"`
	// BySource splits Total.Saved by stage; negative parts are costs
	// (reference id lines, notes), already netted out of Total.
	BySource map[string]float64 `json:"by_source"`
	// Hints counts emitted hints by family; their tokens are part of
	// TokensOut, so every saving is net of them.
	Hints map[string]float64 `json:"hints"`
	// HintCost is the tokens stages spent on in-band lines (the negative
	// parts of BySource).
	HintCost float64 `json:"hint_cost"`
	ByTool   []Row   `json:"by_tool"`
	ByClass  []Row   `json:"by_class"`
	ByFormat []Row   `json:"by_format"`
	// ByTextShape breaks text results down by the shape the shaping stage
	// found and the class it shaped them in ("grep lossless", "test
	// elide", "log unshaped"); ByShapeClass sums them by class, so that
	// what declared elisions left out (recoverable) is told apart from
	// what lossless and display shapings saved.
	ByTextShape  []Row              `json:"by_text_shape"`
	ByShapeClass []Row              `json:"by_shape_class"`
	BySession    []Row              `json:"by_session"`
	Sinks        []Row              `json:"sinks"` // tools by tokens the model read
	Untouched    []Untouched        `json:"untouched"`
	Errors       map[string]float64 `json:"errors"`
	ChunkFetches float64            `json:"chunk_fetches"`
	Brakes       float64            `json:"brakes"` // tools switched to lossless for a session
	Compactions  float64            `json:"compactions"`
	DedupHits    float64            `json:"dedup_hits"`
	DedupMisses  float64            `json:"dedup_misses"`
}

// Summarize aggregates records. Rows are sorted by saving, then key, so
// that the output is deterministic.
func Summarize(l *Log) *Summary {
	m := &summing{s: &Summary{Files: l.Files, Skipped: l.Skipped, Baseline: Baseline, BySource: map[string]float64{},
		Hints: map[string]float64{}, Errors: map[string]float64{}, Total: Row{Key: "total"}},
		tools: map[string]*Row{}, classes: map[string]*Row{}, formats: map[string]*Row{}, sessions: map[string]*Row{},
		textShapes: map[string]*Row{}, shapeClasses: map[string]*Row{}, untouched: map[string]*Untouched{},
		toks: map[string]bool{}, maxPart: map[string]int{}, compacts: map[string]float64{}}
	for i := range l.Records {
		r := &l.Records[i]
		w := r.Weight()
		m.count(r, w)
		if r.Chunk {
			continue // a chunk fetch is not a result
		}
		m.addResult(r, w)
	}
	m.finish()
	return m.s
}

// summing is a Summary being made, with its rows by key.
type summing struct {
	s                                 *Summary
	tools, classes, formats, sessions map[string]*Row
	textShapes, shapeClasses          map[string]*Row
	untouched                         map[string]*Untouched
	toks                              map[string]bool
	maxPart                           map[string]int
	compacts                          map[string]float64
}

// addRow adds record r, of weight w and saving saved, to the row k of m.
func addRow(m map[string]*Row, k string, w float64, r *Record, saved float64) {
	row := m[k]
	if row == nil {
		row = &Row{Key: k}
		m[k] = row
	}
	row.Calls += w
	row.TokensIn += w * float64(r.TokensIn)
	row.TokensOut += w * float64(r.TokensOut)
	row.Saved += w * saved
}

// count adds what every record counts (a chunk fetch too): events,
// tokenizers, dedup, errors, hints and the savings by source.
func (m *summing) count(r *Record, w float64) {
	m.s.Events++
	if r.Tokenizer != "" {
		m.toks[r.Tokenizer] = true
	}
	m.s.ChunkFetches += b2f(r.Chunk) * w
	m.s.Brakes += b2f(r.Brake) * w
	m.compacts[r.Session] += float64(r.Compact) * w
	m.maxPart[r.Session] = max(m.maxPart[r.Session], r.Partition)
	switch r.Dedup {
	case "hit", "near":
		m.s.DedupHits += w
	case "miss":
		m.s.DedupMisses += w
	}
	if r.Err != "" {
		m.s.Errors[r.Err] += w
	}
	for k, v := range r.Hints {
		m.s.Hints[k] += w * float64(v)
	}
	for k, v := range r.Saved {
		m.s.BySource[k] += w * float64(v)
		if v < 0 {
			m.s.HintCost -= w * float64(v)
		}
	}
}

// addResult adds a result to its rows (by tool, class, format, session,
// text shape) and the total, and to its tool's reasons for being left
// untouched.
func (m *summing) addResult(r *Record, w float64) {
	saved := float64(r.TokensIn - r.TokensOut)
	tool := r.Tool
	if tool == "" {
		tool = "(" + cmp.Or(r.Class, "unknown") + ")"
	}
	addRow(m.tools, tool, w, r, saved)
	addRow(m.classes, cmp.Or(r.Class, "other"), w, r, saved)
	addRow(m.formats, cmp.Or(r.Format, "none"), w, r, saved)
	addRow(m.sessions, r.Session, w, r, saved)
	if r.TextShape != "" {
		class := cmp.Or(r.TClass, "unshaped")
		addRow(m.textShapes, r.TextShape+" "+class, w, r, saved)
		addRow(m.shapeClasses, class, w, r, saved)
	}
	m.s.Total.Calls += w
	m.s.Total.TokensIn += w * float64(r.TokensIn)
	m.s.Total.TokensOut += w * float64(r.TokensOut)
	m.s.Total.Saved += w * saved
	reason := r.Skip
	if reason == "" && r.Err != "" {
		reason = UntouchedError
	}
	if reason == "" && r.TokensIn > 0 && r.TokensOut >= r.TokensIn {
		reason = UntouchedNoSaving
	}
	u := m.untouched[tool]
	if u == nil {
		u = &Untouched{Tool: tool, Class: r.Class, Reasons: map[string]float64{}}
		m.untouched[tool] = u
	}
	u.Calls += w
	if reason != "" {
		u.Reasons[reason] += w
	}
}

// finish sets the sessions, compactions and tokenizers, sorts the rows
// and lists the tools left untouched.
func (m *summing) finish() {
	m.s.Sessions = len(m.sessions)
	// A session's compactions: those recorded with events, or its last
	// partition number, whichever is larger (sampling may drop the event
	// that carried one).
	for k, part := range m.maxPart {
		m.s.Compactions += max(float64(part), m.compacts[k])
	}
	for t := range m.toks {
		m.s.Tokenizers = append(m.s.Tokenizers, t)
	}
	slices.Sort(m.s.Tokenizers)
	m.s.ByTool, m.s.ByClass, m.s.ByFormat, m.s.BySession = rows(m.tools), rows(m.classes), rows(m.formats), rows(m.sessions)
	m.s.ByTextShape, m.s.ByShapeClass = rows(m.textShapes), rows(m.shapeClasses)
	m.s.Sinks = slices.Clone(m.s.ByTool)
	slices.SortStableFunc(m.s.Sinks, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.TokensOut, a.TokensOut), cmp.Compare(a.Key, b.Key))
	})
	// A tool is "left untouched" when none of its results saved anything.
	for _, u := range m.untouched {
		n := 0.0
		for _, v := range u.Reasons {
			n += v
		}
		if n >= u.Calls && n > 0 {
			m.s.Untouched = append(m.s.Untouched, *u)
		}
	}
	slices.SortFunc(m.s.Untouched, func(a, b Untouched) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Tool, b.Tool))
	})
}

func rows(m map[string]*Row) []Row {
	out := make([]Row, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.Saved, a.Saved), cmp.Compare(b.TokensIn, a.TokensIn), cmp.Compare(a.Key, b.Key))
	})
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
