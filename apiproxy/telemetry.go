package apiproxy

import (
	"strings"

	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tokens"
)

// event records one telemetry event for an exchange measured as r: one
// request, its tokens before and after as the model read them (in the
// conversation's tokenizer), split by source. It holds numbers, the
// conversation key (hashed by the recorder) and fixed names only: no
// content, tool names, arguments, paths or URLs.
func (s *Stats) event(ex *exchange, r *Record) {
	res := &ex.res
	if name := res.Tokenizer; name != "" && name != s.counter.Name() {
		if c, err := tokens.Get(name); err == nil {
			r = s.measure(ex, r.Usage, c)
		}
	}
	ev := telemetry.Event{Time: ex.start, Entry: telemetry.EntryAPI, Session: res.Conversation, Tokenizer: r.Tokenizer,
		Latency: ex.added, Format: "passthrough"}
	if ev.Session == "" {
		ev.Session = "api"
	}
	if ex.before != nil {
		ev.BytesIn, ev.BytesOut = len(ex.before), len(ex.before)
		ev.TokensIn, ev.TokensOut = r.TokensBefore, r.TokensBefore
	}
	switch skipped := r.Skipped; {
	case skipped == "bypass", skipped == "encoded body", skipped == "no rewriter":
		ev.Untouched = telemetry.UntouchedExcluded
	case skipped == "body over the size limit":
		ev.Untouched = telemetry.UntouchedTooLarge
	case strings.HasPrefix(skipped, "request body:"):
		ev.Err, ev.Untouched = "canceled", telemetry.UntouchedError
	case strings.HasPrefix(skipped, "does not decode"):
		ev.Err, ev.Untouched = "parse", telemetry.UntouchedError
	case skipped != "":
		ev.Err, ev.Untouched = "pipeline", telemetry.UntouchedError
	case ex.held:
		ev.Untouched = telemetry.UntouchedExcluded // the A/B holdout's arm
	case ex.after != nil && !ex.dryRun && !ex.held:
		ev.Format = "json"
		ev.BytesOut, ev.TokensOut = len(ex.after), r.TokensAfter
		ev.Saved = r.Saved.BySource() // the envelope (compact JSON) is encoding
		for i := range res.Edits {
			switch res.Edits[i].Source {
			case SourceRepeat:
				ev.Dedup = telemetry.DedupHit
				ev.Hints[telemetry.HintRef]++
			case SourceEncoding, SourceFilter:
				ev.Format = "auto"
			}
		}
	}
	if ev.Untouched == "" && ev.Err == "" && ev.TokensIn > 0 && ev.TokensOut >= ev.TokensIn {
		ev.Untouched = telemetry.UntouchedNoSaving
	}
	if ev.Err == "" && (ex.status == 0 || ex.status >= 500) {
		ev.Err = "upstream"
	}
	ex.rec.Record(&ev)
}
