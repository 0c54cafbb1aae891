package telemetry

import "github.com/terse-dev/terse"

// SetInput fills e's description of the result as the tool sent it: its
// shape, inner formats, depth and columns (Detect) and its fingerprint
// under r (zero when r is nil).
func (e *Event) SetInput(r *Recorder, data []byte) {
	f := Detect(data)
	e.Shape, e.Inner, e.Depth, e.Cols = f.Shape, f.Inner, f.Depth, f.Cols
	e.Fingerprint = r.Fingerprint(data)
}

// SetResult fills e from a pipeline call: its error (class errClass,
// untouched "error"), or its Report (SetReport) with the error class
// "store" when the store failed to keep its chunks. It is the one bridge
// from a pipeline call to an event.
func (e *Event) SetResult(res *terse.Result, err error, errClass string) {
	if err != nil {
		e.Err, e.Untouched = errClass, UntouchedError
		return
	}
	if res.StoreErr != nil {
		e.Err = "store"
	}
	e.SetReport(&res.Report)
}

// SetReport fills e's measurements from the Report of a pipeline call:
// tokenizer, bytes and tokens in and out, the saving by source, the
// format, the text shape and its class, the dedup outcome and the hints
// the Report implies (a reference or near-reference for a dedup hit, an
// id line for a recorded result, an overflow hint for a trimmed or
// elided one). It does not allocate.
func (e *Event) SetReport(rep *terse.Report) {
	e.Tokenizer = rep.Tokenizer
	e.Format = rep.Format
	e.BytesIn, e.BytesOut = rep.RawChars, rep.OutputChars
	e.TokensIn, e.TokensOut = rep.RawTokens, rep.OutputTokens
	e.Saved = BySource(rep.Saved)
	e.TextShape, e.ShapeClass = rep.Shape, rep.ShapeClass
	switch {
	case rep.Dedup && rep.NearRef:
		e.Dedup = DedupNear
		e.Hints[HintNearRef]++
	case rep.Dedup:
		e.Dedup = DedupHit
		e.Hints[HintRef]++
	case rep.DedupID != "":
		e.Dedup = DedupMiss
		e.Hints[HintID]++
	}
	if rep.Truncated || rep.ShapeClass == "elide" {
		e.Hints[HintMore]++
	}
	if e.Untouched == "" && e.Err == "" && rep.RawTokens > 0 && rep.OutputTokens >= rep.RawTokens {
		e.Untouched = UntouchedNoSaving
	}
}

// BySource is s in Event.Saved's order: the pipeline's four sources
// (filter, dedup, encoding, fit), the others zero. It is the one mapping
// of a Report's savings onto the saving sources.
func BySource(s terse.Savings) [NumSources]int {
	var out [NumSources]int
	out[SrcFilter], out[SrcDedup], out[SrcEncoding], out[SrcFit] = s.Filter, s.Dedup, s.Encoding, s.Fitting
	return out
}

// AddSaved adds s to m by source name (SourceNames), all four of the
// pipeline's sources, zero parts included.
func AddSaved(m map[string]int, s terse.Savings) {
	by := BySource(s)
	for _, src := range [...]Source{SrcFilter, SrcDedup, SrcEncoding, SrcFit} {
		m[SourceNames[src]] += by[src]
	}
}
