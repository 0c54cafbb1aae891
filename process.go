package terse

import (
	"context"
	"unsafe"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// process runs the stages in order: filter, the dedup stage (filtered result), encoding (format, templates),
// fitting (budget), and the id line. Each stage's saving is measured in
// tokens of the pipeline's counter, as the difference between the text
// before and after it (see Savings).
//
// A JSON result's text, when given, is the text v was parsed from.
func (p *Pipeline) process(ctx context.Context, req *Request, v tree.Value, text string, isJSON bool) (Result, error) {
	if req == nil {
		req = &Request{}
	}
	r := &processing{p: p, c: p.o.Tokenizer, v: v, text: text, isJSON: isJSON}
	r.callOptions(req)
	r.measureRaw(req)
	r.filter()
	if res, ok := r.dedupHit(req); ok {
		return res, nil
	}
	r.encodeText(ctx, req)
	r.reserveRoom()
	if err := r.fitToBudget(ctx); err != nil {
		return Result{}, err
	}
	if err := r.tryWholeUnmarked(ctx); err != nil {
		return Result{}, err
	}
	if err := r.raiseToNotice(ctx); err != nil {
		return Result{}, err
	}
	if r.res.Stats.Truncated && r.rep.ShapeClass != "" {
		// A shaped text that still needs fitting is fitted as the
		// original: its gap markers and chunks then count the
		// original's lines, and no header declares a rule the fitted
		// text does not follow.
		plain := *req
		plain.noShape = true
		return p.process(ctx, &plain, v, text, isJSON)
	}
	if r.res.Stats.Truncated && req.Hints != nil && !req.Hints.Take("more") {
		// The elision was refused after all (a cap reached by another
		// call of the session meanwhile): the whole result.
		whole := *req
		whole.Hints = noMore{req.Hints}
		return p.process(ctx, &whole, v, text, isJSON)
	}
	r.measureEncoding()
	t1 := r.reportFit()
	out, tout := r.recordShown(req)
	rep, tm, tn, t3, t2 := &r.rep, r.tm, r.tn, r.t3, r.t2
	rep.Saved = Savings{
		Filter:    rep.RawTokens - t1 + tm - tn, // what the filter dropped, less its note
		Encoding:  t1 - t2 - (tm - t3),          // less the marker's cost
		Fitting:   t2 - t3,
		Dedup:     tn - tout, // the id line's cost on a miss
		Estimated: rep.Saved.Estimated,
	}
	res := p.finish(out, tout, *rep)
	res.StoreErr = r.res.StoreErr
	return res, nil
}

// processing is one call of process: the call's options, the text as
// each step leaves it, and the counts the Report's savings are made of.
type processing struct {
	p      *Pipeline
	c      tokens.Counter
	rep    Report
	m      *memo
	v      tree.Value
	text   string
	isJSON bool
	// fo0 is the call's fit options; fo the same, less the room kept
	// for the filter note and the auto marker.
	fo0, fo fit.Options
	// rawText is the result as given (compact JSON or text); content
	// the filtered one; note the filter's note.
	rawText, content, note string
	call                   dedup.Call
	// t2 is the whole result in the output encoding, before fitting
	// (-1: not counted yet).
	t2         int
	textFormat string
	prefix     string
	mark       bool
	reserve    int
	res        fit.Result
	body       string
	// t3 is the fitted text, tm the same marked, tn with the filter note.
	t3, tm, tn int
}

// callOptions sets the call's fit options: the pipeline's, with the
// call's tool and budget; and the Report's tokenizer and budget.
func (r *processing) callOptions(req *Request) {
	p, c := r.p, r.c
	fo0 := p.fo
	fo0.Tool = req.Tool
	fo0.Scope = req.Scope
	if req.Budget > 0 {
		fo0.Budget = req.Budget
	}
	if req.FetchBudget > 0 {
		fo0.FetchBudget = req.FetchBudget
	}
	if req.Hints != nil && !req.Hints.Allow("more") {
		fo0.Budget = unbounded // no elision: see Hints
	}
	r.fo0 = fo0
	r.rep = Report{Tokenizer: c.Name(), Exact: c.Exact(), Budget: fo0.Budget, Tool: req.Tool}
	if fo0.Budget == unbounded {
		r.rep.Budget = 0
	}
}

// measureRaw sets the raw text (compact JSON or the text), the
// provider's pagination and sort, and counts the raw text.
func (r *processing) measureRaw(req *Request) {
	rep := &r.rep
	if r.isJSON {
		r.rawText = compactJSON(r.v, r.text)
		rep.Pagination, rep.Sort = providerMeta(r.v, req.Headers)
	} else {
		r.rawText = r.text
		rep.Pagination, rep.Sort = providerMeta(tree.Value{}, req.Headers)
	}
	rep.RawChars = len(r.rawText)
	// Texts are counted once: the raw text, the filtered one and the
	// fitted one are often the same string. The raw text is counted
	// first, into the pipeline's count cache, where the fitter finds it
	// when it measures the whole compact JSON.
	r.m = &memo{c: r.c}
	r.m.count(r.rawText)
}

// filter applies the pipeline's filter, if any: the content is then the
// filtered result.
func (r *processing) filter() {
	p := r.p
	r.content = r.rawText
	if p.o.Filter != nil {
		var fr filter.Result
		if r.isJSON {
			fr = p.o.Filter.Apply(r.v, nil)
		} else {
			fr = p.o.Filter.ApplyText(r.text, nil)
		}
		r.note = fr.Note
		r.rep.Filtered = fr.Report.Applied
		if fr.IsText {
			r.isJSON, r.text = false, fr.Text
			r.content = r.text
		} else {
			r.v = fr.Value
			r.content = compactJSON(r.v, "")
		}
	}
}

// dedupHit checks the dedup stage: a result the partition has already
// seen in full becomes a reference to it (ok).
func (r *processing) dedupHit(req *Request) (Result, bool) {
	p, rep := r.p, &r.rep
	if p.o.Dedup != nil {
		// The content is neither kept nor changed by the cache: no copy;
		// its fingerprint is computed once, for the check and the record.
		r.call = dedup.Call{Tool: req.Tool, Paths: req.Paths, Content: unsafe.Slice(unsafe.StringData(r.content), len(r.content)),
			Mutating: req.Mutating, Variant: p.variant(r.isJSON)}
		r.call.Sum = dedup.Fingerprint(r.call.Variant, r.call.Content)
		if oc := p.o.Dedup.Check(req.Session, r.call); oc.Kind != dedup.Miss && (req.Hints == nil || req.Hints.Take(refFamily(oc.Kind))) {
			rep.Kind, rep.Format, rep.Dedup, rep.DedupID = kindOf(r.isJSON), "hint", true, oc.ID
			rep.NearRef = oc.Kind == dedup.NearRef
			rep.RawTokens = r.m.count(r.rawText)
			return p.hint(oc.Hint, *rep), true
		}
	}
	return Result{}, false
}

// encodeText encodes a text: JSON documents in it, a shaping, or
// Markdown tables as CSV (csv_from_md) when asked for, or under auto
// when it is cheaper. It sets t2 when the text changes.
func (r *processing) encodeText(ctx context.Context, req *Request) {
	p, rep, m, fo0 := r.p, &r.rep, r.m, &r.fo0
	r.t2 = -1
	r.textFormat = "text"
	if !r.isJSON && p.o.Shape != nil && !req.noShape && p.fmt.Name == "auto" && len(r.text) >= shape.DefaultMinBytes && !p.o.Shape.Off(req.Tool) {
		// JSON documents in a text (see jsondocs.go): each in the auto
		// encoding, verified by decoding, when that saves the margin.
		if docs, ok := splitJSONDocs(r.text); ok {
			if enc, ok := encodeJSONDocs(docs, p.fmt.Append); ok {
				margin := p.o.Shape.Margin
				if margin == 0 {
					margin = shape.DefaultMargin
				}
				if n, n0 := m.count(enc), m.count(r.text); float64(n) <= float64(n0)*(1-max(margin, 0)) && n < n0 && n <= fo0.Budget {
					r.text, r.t2, r.textFormat = enc, n, p.fmt.Name
					m.seed(r.text, r.t2)
					rep.Shape, rep.ShapeClass, rep.ShapeRules = "json", shape.Lossless.String(), []string{"json documents"}
				}
			}
		}
	}
	if !r.isJSON && p.o.Shape != nil && !req.noShape && rep.ShapeClass == "" {
		// A shaped text over the budget would be fitted as the original
		// anyway (see below): it is not shaped.
		if sr := p.shape(ctx, r.text, req, *fo0, m); sr.Class != shape.None && sr.ShapedTokens <= fo0.Budget {
			r.text, r.t2 = sr.Text, sr.ShapedTokens
			m.seed(r.text, r.t2)
			rep.Shape, rep.ShapeClass, rep.ShapeRules = sr.Shape, sr.Class.String(), sr.Rules
			if sr.Class == shape.Elide {
				a := sr.Anchors
				rep.Anchors = &a
			}
		} else {
			rep.Shape = sr.Shape
		}
	}
	if !r.isJSON && rep.ShapeClass == "" && (p.o.Template == string(render.CSVFromMD) || p.fmt.Name == "auto") {
		if enc, ok := render.EncodeMarkdown(r.text); ok {
			if n := m.count(enc); n < m.count(r.content) || p.o.Template == string(render.CSVFromMD) {
				r.text, r.t2, r.textFormat = enc, n, string(render.CSVFromMD)
			}
		}
	}
}

// reserveRoom sets the fit options fo, leaving room for the filter note
// and, for an auto document, its marker line (markAuto): items are
// priced unmarked, and the document the model reads is marked once.
func (r *processing) reserveRoom() {
	p, c := r.p, r.c
	r.fo = r.fo0
	fo := &r.fo
	if r.note != "" {
		r.prefix = r.note + "\n"
		fo.Budget -= c.Count(r.prefix)
	}
	r.mark = r.isJSON && p.auto
	if r.mark {
		r.reserve = c.Count(render.Marker + "\n")
		fo.Budget -= r.reserve
	}
	if r.isJSON {
		// The compact JSON of v: the fitter need not encode it again
		// (strings are never written, so it can be kept), nor the auto
		// format to measure its encoding against it.
		fo.Compact = unsafe.Slice(unsafe.StringData(r.content), len(r.content))
		if p.autoMemo != nil {
			p.autoMemo.knowCompact(r.v, r.content)
		}
	}
}

// show finishes the fitted text res.Text: marked, after the note.
func (r *processing) show() {
	m, c := r.m, r.c
	r.t3 = m.count(r.res.Text)
	doc := r.res.Text
	r.tm = r.t3
	if r.mark {
		if d := r.p.mark(r.res.Text, r.v, r.res.Stats.Truncated); d != doc {
			doc, r.tm = d, c.Count(d)
			if !r.res.Stats.Truncated && r.tm > m.count(r.content) {
				// Auto never costs more than compact JSON, which
				// needs no marker.
				doc, r.tm = r.content, m.count(r.content)
			}
		}
	}
	r.body, r.tn = r.prefix+doc, r.tm
	if r.prefix != "" {
		r.tn = c.Count(r.body)
	}
}

// fitToBudget fits the result, lowering fo's budget until what is
// returned (note, marker and text together) is within the call's.
func (r *processing) fitToBudget(ctx context.Context) error {
	fo, m := &r.fo, r.m
	for range 4 {
		if fo.Budget < 1 {
			fo.Budget = 1
		}
		var err error
		if r.isJSON {
			r.res, err = fit.FitJSON(ctx, r.v, fo)
		} else {
			r.res, err = fit.FitText(ctx, r.text, fo)
		}
		if err != nil {
			return err
		}
		if r.res.Stats.Counted {
			m.seed(r.res.Text, r.res.Stats.Tokens)
		}
		r.show()
		// The note, the marker and the text may tokenize differently
		// together than apart: the budget holds for what is returned.
		if r.tn <= r.fo0.Budget || fo.Budget == 1 {
			break
		}
		fo.Budget -= r.tn - r.fo0.Budget
	}
	return nil
}

// tryWholeUnmarked refits a truncated auto document without the room
// kept for its marker, and keeps the result when it is whole and fits.
func (r *processing) tryWholeUnmarked(ctx context.Context) error {
	p, c := r.p, r.c
	if r.mark && r.res.Stats.Truncated && r.tn <= r.fo0.Budget && !farOver(r.content, r.fo.Budget+r.reserve) {
		// The room kept for the marker may be all that kept the whole
		// document out, and a whole document TOON reads the same needs
		// no marker (nor does compact JSON): try it without the room,
		// when the whole (drafted, as the report counts it) is that
		// small.
		r.t2 = tokens.CountBytes(c, p.measure.Append(nil, r.v))
	}
	if r.mark && r.res.Stats.Truncated && r.tn <= r.fo0.Budget && r.t2 <= r.fo.Budget+r.reserve {
		fw := r.fo
		fw.Budget += r.reserve
		rw, err := fitOnce(ctx, r.v, r.text, r.isJSON, &fw)
		if err != nil {
			return err
		}
		if !rw.Stats.Truncated {
			// Whole, unmarked or as compact JSON, when that fits.
			kept := r.res
			r.res = rw
			if r.show(); r.tn > r.fo0.Budget {
				r.res = kept
				r.show()
			}
		}
	}
	return nil
}

// raiseToNotice raises the budget of a truncated result whose notice
// does not fit in it, and declares the raise in-band.
func (r *processing) raiseToNotice(ctx context.Context) error {
	rep := &r.rep
	if r.res.Stats.Truncated && r.tn > r.fo0.Budget {
		asked := r.fo0.Budget
		// Not even the one-line notice that declares what is left out
		// fits: the budget is raised to that notice, the least text that
		// keeps everything retrievable, and the result is fitted to it
		// (whole, when the whole fits).
		r.fo0.Budget, r.fo.Budget = r.tn, r.t3 // t3: the notice without the filter note or marker
		rep.Budget = r.tn
		var err error
		if r.res, err = fitOnce(ctx, r.v, r.text, r.isJSON, &r.fo); err != nil {
			return err
		}
		r.show()
		if r.tn > rep.Budget {
			// A whole document no larger than the notice, but marked.
			r.fo0.Budget, rep.Budget = r.tn, r.tn
		}
		if r.res.Stats.Truncated {
			// Said in-band, once, with its size: a caller that shares
			// a budget between blocks sees what went past its share.
			d := 0
			r.body, d, rep.Budget = declareRaise(r.c, r.body, r.tn, asked)
			r.t3, r.tm, r.tn = r.t3+d, r.tm+d, r.tn+d
			r.fo0.Budget = rep.Budget
		}
	}
	return nil
}

// measureEncoding sets t2, the whole result in the output encoding, when
// it is not counted yet.
func (r *processing) measureEncoding() {
	p, c, st := r.p, r.c, r.res.Stats
	switch {
	case !st.Truncated:
		r.t2 = r.t3 // the output is the whole encoding
	case r.t2 >= 0:
	case r.isJSON && p.fmt.Name != fit.JSON.Name:
		var ok bool
		if r.t2, ok = p.sampledEncoding(r.v, st.Pointer, r.content, r.fo0.Budget); ok {
			r.rep.Saved.Estimated = true
		} else {
			r.t2 = tokens.CountBytes(c, p.measure.Append(nil, r.v))
		}
	default:
		r.t2 = r.m.count(r.content) // compact JSON or text: the encoding is the content
	}
}

// reportFit sets the Report's format, counts and fitting fields, and
// returns t1, the filtered result's tokens.
func (r *processing) reportFit() int {
	p, rep, st := r.p, &r.rep, r.res.Stats
	rep.Format = r.textFormat
	if r.isJSON {
		rep.Format = p.fmt.Name
	}
	rep.RawTokens = r.m.count(r.rawText)
	t1 := r.m.count(r.content) // the filtered result (compact JSON or text)
	rep.Kind = st.Kind
	rep.Truncated = st.Truncated
	rep.Strategy, rep.StrategySource, rep.Solver = st.Strategy, st.StrategySource, st.Solver
	rep.Handle, rep.Chunks = st.Handle, st.Chunks
	if st.Truncated {
		ptr := st.Pointer
		rep.Pointer = &ptr
		rep.Items = &Items{Unit: st.Unit, Total: st.Total, Kept: st.Full + st.Standard + st.Minimal,
			Full: st.Full, Standard: st.Standard, Minimal: st.Minimal}
	}
	return t1
}

// recordShown records a result shown in full, and its id line leads it
// when the budget has room for it; otherwise it is forgotten again. It
// returns the text and its tokens.
func (r *processing) recordShown(req *Request) (string, int) {
	p, c := r.p, r.c
	out, tout := r.body, r.tn
	if p.o.Dedup != nil && !r.res.Stats.Truncated && (req.Hints == nil || req.Hints.Allow("ref") || req.Hints.Allow("near_ref")) {
		if oc := p.o.Dedup.Record(req.Session, r.call); oc.IDLine != "" {
			with := oc.IDLine + "\n" + r.body
			if n := c.Count(with); n <= r.fo0.Budget {
				out, tout, r.rep.DedupID = with, n, oc.ID
			} else {
				p.o.Dedup.Forget(req.Session, oc.ID)
			}
		}
	}
	return out, tout
}
