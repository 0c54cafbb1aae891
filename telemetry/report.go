package telemetry

import "github.com/terse-dev/terse"

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
	e.Saved[SrcFilter] = rep.Saved.Filter
	e.Saved[SrcDedup] = rep.Saved.Dedup
	e.Saved[SrcEncoding] = rep.Saved.Encoding
	e.Saved[SrcFit] = rep.Saved.Fitting
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
