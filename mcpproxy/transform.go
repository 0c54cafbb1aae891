package mcpproxy

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/meter"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// transform rewrites what the model reads of a result. A client that shows
// structuredContent (ReadsStructured) reads one copy: when the result has
// structuredContent, structuredContent is dropped (as is the tool's
// outputSchema in tools/list) and the model reads the content's text
// blocks when they carry the same (one is its JSON, or it only wraps their
// texts, as {"content": "<file text>"} does), else one compact text block
// of structuredContent in place of the content's text blocks. Other clients read the content's
// text blocks, each transformed; structuredContent stays for programs. A
// block whose transform would cost the model more tokens than the block
// as the upstream sent it is left as it was.
func (e *engine) transform(ctx context.Context, c *call, pol Policy, result tree.Value, rec *CallRecord) (tree.Value, bool, error) {
	x := e.newTransform(c, pol, result, rec)
	if e.opts.Telemetry != nil {
		defer x.recordEvents()
	}
	x.chooseView()
	x.planBlocks()
	if err := x.processBlocks(ctx); err != nil {
		return result, false, err
	}
	x.holdStructuredLimit()
	facts := x.completeness()
	e.noteResult(c, x.budget, !allComplete(facts))
	if !x.changed {
		return result, false, nil
	}
	return x.rebuild(facts), true, nil
}

// transformRun is one result on its way through transform: the content
// blocks, the view the model reads, the blocks given to the pipeline and
// what each came back as.
type transformRun struct {
	e       *engine
	c       *call
	pol     Policy
	rec     *CallRecord
	pl      *terse.Pipeline
	counter tokens.Counter
	gate    terse.Hints // the session's hint policy (nil: none)
	hints   terse.Hints // gate, or lossless when the tool is braked

	result        tree.Value
	blocks        []tree.Value
	structured    tree.Value
	hasStructured bool
	// one: the client reads structuredContent, so one copy is shown;
	// checkLimit: the content then must not cost more than structured.
	one, checkLimit, changed bool

	jobs, sizes []int // the blocks given to the pipeline, and their sizes
	fixed       int   // tokens of the text blocks too small to process
	budget      int
	shares      []int
	key         dedup.Key
	total       int // tokens of the text blocks the model reads
	limit       int // tokens of structured when checkLimit, else -1
	shown       []shownID
	evs         []pendingEvent
}

// shownID is a block whose text carries an id line, so that the line can
// be taken out again.
type shownID struct {
	block  int
	id     string
	text   string
	format string
	tokens int
}

// pendingEvent is a block's telemetry event, recorded once it is known
// what the model is shown of it (and which hints).
type pendingEvent struct {
	text    string
	r       terse.Result
	err     error
	latency time.Duration
	kept    bool // the model is shown the result's text
	noID    bool // without its id line
}

func (e *engine) newTransform(c *call, pol Policy, result tree.Value, rec *CallRecord) *transformRun {
	x := &transformRun{e: e, c: c, pol: pol, rec: rec, result: result, pl: e.pipeline(c), limit: -1}
	x.gate = e.hintGate(c)
	x.hints = x.gate
	if c.lossless {
		x.hints = lossless{x.gate}
	}
	x.counter = x.pl.Counter()
	content, _ := result.Get("content")
	x.blocks = append([]tree.Value(nil), content.Items()...)
	x.structured, x.hasStructured = result.Get("structuredContent")
	x.one = x.hasStructured && pol.Reads == ReadsStructured
	x.changed = x.one
	x.key = dedupKey(c.session)
	if v, ok := result.Get("isError"); ok && v.Kind() == tree.KindBool && v.Bool() {
		rec.IsError = true
	}
	return x
}

func (x *transformRun) recordEvents() {
	for i := range x.evs {
		p := &x.evs[i]
		x.e.event(x.c, p.text, &p.r, p.err, p.latency, p.kept, p.noID)
	}
}

// chooseView settles what the model reads. When one copy is shown and
// the content carries structuredContent, what the model reads directly
// is structuredContent: the content through terse must not cost more
// (checkLimit). When structured only wraps the block texts, its JSON (the
// texts escaped, with keys) is never fewer tokens than the texts, so the
// blocks' own guard holds. When the content does not carry it, the model
// would have read structuredContent: that, once, as a text block.
func (x *transformRun) chooseView() {
	if !x.one {
		return
	}
	carries, wraps := contentCarries(x.blocks, x.structured)
	x.checkLimit = carries && !wraps
	if carries {
		return
	}
	x.blocks = append(nonText(x.blocks), tree.Object(
		tree.Member{Key: "type", Value: tree.String("text")},
		tree.Member{Key: "text", Value: tree.String(string(tree.AppendJSON(nil, x.structured)))},
	))
}

// nonText keeps the blocks that are not text, in place.
func nonText(blocks []tree.Value) []tree.Value {
	kept := blocks[:0]
	for _, b := range blocks {
		if !isText(b) {
			kept = append(kept, b)
		}
	}
	return kept
}

// planBlocks picks the text blocks worth processing, counts the others,
// and splits the call's budget among the picked ones by size.
func (x *transformRun) planBlocks() {
	o := &x.e.opts
	for i, b := range x.blocks {
		if !isText(b) {
			continue
		}
		tv, _ := b.Get("text")
		if len(tv.Str()) < o.minSize() {
			x.fixed += x.counter.Count(tv.Str())
			x.e.untouched(x.c, tv.Str(), telemetry.UntouchedTooSmall)
			continue
		}
		x.jobs = append(x.jobs, i)
		x.sizes = append(x.sizes, len(tv.Str()))
	}
	x.budget = effectiveBudget(x.c.budget, x.pol.Budget, x.pl.Budget())
	x.shares = split(x.budget, x.fixed, x.sizes)
	x.total = x.fixed
}

// ev returns the event of blocks[block], or nil.
func (x *transformRun) ev(block int) *pendingEvent {
	for i := range x.evs {
		if x.jobs[i] == block {
			return &x.evs[i]
		}
	}
	return nil
}

// dropped takes back the hints of a block the model is not shown.
func (x *transformRun) dropped(block int) {
	if p := x.ev(block); p != nil && p.kept {
		p.kept = false
		if x.gate != nil && p.err == nil {
			giveBack(x.gate, &p.r.Report)
		}
	}
}

// processBlocks runs each picked block through the pipeline; the errors
// of all of them are joined.
func (x *transformRun) processBlocks(ctx context.Context) error {
	var errs error
	for k, i := range x.jobs {
		if err := x.processBlock(ctx, k, i); err != nil {
			errs = errors.Join(errs, err)
		}
	}
	return errs
}

// processBlock runs block i (job k) through the pipeline and keeps what
// it returns when that is not more than the model reads directly.
func (x *transformRun) processBlock(ctx context.Context, k, i int) error {
	o, rec := &x.e.opts, x.rec
	tv, _ := x.blocks[i].Get("text")
	text := tv.Str()
	req := &terse.Request{Tool: x.c.tool, Budget: x.shares[k], FetchBudget: chunkBudget(0, x.pol.Budget), Session: x.key, Paths: x.c.paths, Mutating: x.c.mutating, Scope: x.c.scope, Hints: x.hints}
	var r terse.Result
	var err error
	t0 := time.Now()
	if len(text) > o.maxSize() {
		// Too large to re-encode: only fitted, as text.
		r, err = x.pl.ProcessText(ctx, text, req)
	} else {
		r, err = x.pl.ProcessString(ctx, text, req)
	}
	x.evs = append(x.evs, pendingEvent{text: text, r: r, err: err, latency: time.Since(t0), kept: true})
	if err != nil {
		return err
	}
	rep := r.Report
	x.noteStore(r, text)
	if r.Text == text {
		n := x.counter.Count(text)
		rec.TokensBefore += n
		rec.TokensAfter += n
		x.total += n
		return nil
	}
	// RawTokens counts compact JSON of the input, never more than the
	// text as sent; only a result that grew is counted as sent.
	direct := meter.Baseline(&rep, func() int { return x.counter.Count(text) })
	if rep.OutputTokens > direct {
		// More than the model reads directly (an id line on a short
		// text): leave the block, and forget the id the model will
		// not see.
		if rep.DedupID != "" && !rep.Dedup && o.Dedup != nil {
			o.Dedup.Forget(x.key, rep.DedupID)
		}
		x.dropped(i)
		rec.TokensBefore += direct
		rec.TokensAfter += direct
		x.total += direct
		return nil
	}
	if rep.DedupID != "" && !rep.Dedup {
		x.shown = append(x.shown, shownID{i, rep.DedupID, r.Text, rep.Format, rep.OutputTokens})
	}
	x.total += rep.OutputTokens
	rec.TokensBefore += direct
	rec.TokensAfter += rep.OutputTokens
	if rec.Saved == nil {
		rec.Saved = meter.Saved{}
	}
	// The parts sum to RawTokens − OutputTokens; what compacting the
	// text as sent saved beyond that is the encoding's.
	telemetry.AddSaved(rec.Saved, rep.SavedAgainst(direct))
	format := rep.Format
	if rep.Dedup {
		format = "ref"
	}
	x.blocks[i] = replaceText(x.blocks[i], r.Text, format)
	x.changed = true
	return nil
}

// noteStore records how the chunk store did for a block's result, and
// the shape of structuredContent the result's chunk replies carry.
func (x *transformRun) noteStore(r terse.Result, text string) {
	rep := &r.Report
	if r.StoreErr != nil {
		x.rec.StoreFailed = true
		x.e.storeFailed(r.StoreErr)
	} else if rep.Handle != "" {
		x.e.storeOK()
	}
	if rep.Handle == "" || !x.hasStructured || x.one {
		return
	}
	sh := shape{}
	if x.structured.Kind() == tree.KindObject {
		for _, m := range x.structured.Members() {
			if m.Value.Kind() == tree.KindString && m.Value.Str() == text {
				sh = shape{wrap: true, key: m.Key}
				break
			}
		}
	}
	x.e.rememberShape(rep.Handle, sh)
}

// holdStructuredLimit keeps the content within what the model would
// have read of structuredContent: first without the id lines, else
// structuredContent itself, once; and counts the savings against it.
func (x *transformRun) holdStructuredLimit() {
	if x.checkLimit {
		x.limit = x.counter.Count(string(tree.AppendJSON(nil, x.structured)))
	}
	if x.limit >= 0 && x.total > x.limit && len(x.shown) > 0 {
		x.dropIDLines()
	}
	switch {
	case x.limit >= 0 && x.total > x.limit:
		x.fallBackToStructured()
	case x.one && x.hasStructured:
		x.countAgainstStructured()
	}
}

// dropIDLines takes the id lines out of the blocks that carry one (and
// forgets those results again): the content is over what the model
// would have read only by them.
func (x *transformRun) dropIDLines() {
	o, rec := &x.e.opts, x.rec
	for _, s := range x.shown {
		body := strings.TrimPrefix(s.text, dedup.IDLine(s.id)+"\n")
		n := x.counter.Count(body)
		x.total += n - s.tokens
		rec.TokensAfter += n - s.tokens
		if rec.Saved != nil {
			rec.Saved["dedup"] -= n - s.tokens
		}
		x.blocks[s.block] = replaceText(x.blocks[s.block], body, s.format)
		if o.Dedup != nil {
			o.Dedup.Forget(x.key, s.id)
		}
		if p := x.ev(s.block); p != nil {
			p.noID = true
		}
	}
	x.shown = nil
}

// fallBackToStructured replaces the text blocks by structuredContent,
// once, as it is: the content's blocks cost more than it.
func (x *transformRun) fallBackToStructured() {
	o := &x.e.opts
	for _, s := range x.shown {
		if o.Dedup != nil {
			o.Dedup.Forget(x.key, s.id)
		}
	}
	for _, i := range x.jobs {
		x.dropped(i)
	}
	x.blocks = append(nonText(x.blocks), textBlock(string(tree.AppendJSON(nil, x.structured)), "json"))
	x.rec.TokensBefore, x.rec.TokensAfter, x.rec.Saved = x.limit, x.limit, nil
}

// countAgainstStructured counts the savings from structuredContent as
// JSON, which the model would have read directly, not the content's
// texts. The difference (the content's pretty printing the model never
// saw, or the escaping of texts structuredContent wraps) is the
// encoding's.
func (x *transformRun) countAgainstStructured() {
	sdirect := x.limit
	if sdirect < 0 {
		sdirect = x.counter.Count(string(tree.AppendJSON(nil, x.structured)))
	}
	if d := sdirect - x.rec.TokensBefore; d != 0 {
		x.rec.TokensBefore = sdirect
		if x.rec.Saved == nil {
			x.rec.Saved = meter.Saved{}
		}
		x.rec.Saved["encoding"] += d
	}
}

// completeness says, per processed block, whether the model is shown it
// whole.
func (x *transformRun) completeness() []completeness {
	facts := make([]completeness, 0, len(x.evs))
	for k := range x.evs {
		f := completeness{complete: true}
		if x.evs[k].kept && x.evs[k].err == nil {
			f = reportCompleteness(&x.evs[k].r.Report)
		}
		f.block = x.jobs[k]
		facts = append(facts, f)
	}
	return facts
}

func allComplete(facts []completeness) bool {
	for _, f := range facts {
		if !f.complete {
			return false
		}
	}
	return true
}

// rebuild writes the result with the new content blocks (and without
// structuredContent when one copy is shown) and its completeness.
func (x *transformRun) rebuild(facts []completeness) tree.Value {
	mems := make([]tree.Member, 0, len(x.result.Members())+1)
	for _, m := range x.result.Members() {
		switch m.Key {
		case "content":
			m.Value = tree.Array(x.blocks...)
		case "structuredContent":
			if x.one {
				continue
			}
		}
		mems = append(mems, m)
	}
	if !x.result.Has("content") {
		mems = append(mems, tree.Member{Key: "content", Value: tree.Array(x.blocks...)})
	}
	return withCompleteness(tree.Object(mems...), completenessValue(facts))
}
