package terse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unsafe"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// Options configure a [Pipeline]: everything that stays the same from one
// call to the next (one Pipeline per tool configuration). What changes per
// call (tool, budget, session partition, paths, headers) is a [Request].
// The zero value works: compact JSON under a 25,000-token budget by
// o200k_base, the strategy resolved from the request's tool, nothing
// stored, no filter and no dedup. Fields added later (new stages) are nil
// or zero by default and leave the behaviour unchanged.
type Options struct {
	// Budget is the largest output in tokens of Tokenizer. Zero means
	// fit.DefaultBudget (25,000: Claude Code rejects larger MCP results).
	// A Request may lower or raise it per call.
	Budget int
	// Tokenizer counts tokens. Nil means o200k_base.
	Tokenizer tokens.Counter
	// Format names the output format for JSON: "json" (compact JSON, also
	// when empty, so that the zero Options change nothing), "toon",
	// "auto" (package render's verified adaptive encoding: the cheapest
	// faithful text by Tokenizer, never more tokens than compact JSON; the
	// CLI's config file defaults to it), or the name of one of Formats.
	// Under "auto", text holding Markdown tables is rewritten with the
	// csv_from_md template when that costs fewer tokens.
	Format string
	// Formats adds output formats (an adaptive renderer, for example), by
	// name; they take precedence over the built-in ones.
	Formats []fit.Format
	// Pointer is the JSON Pointer of the item array. Empty means detected.
	Pointer string
	// Strategy forces a strategy (Report.StrategySource "option");
	// Strategies maps tool names or globs to strategies (configuration,
	// "config"). See fit.Resolve.
	Strategy   string
	Strategies map[string]string
	// DropFields, KeepFields and Identity tune the standard and minimal
	// detail levels (fit.Options.Drop, Keep, Identity).
	DropFields, KeepFields, Identity []string
	// Store keeps full payloads for chunk retrieval. Nil means nothing is
	// stored (hints then say to re-run with a larger budget).
	Store store.Store
	// Fetch is the command shown for fetching a chunk, with {handle} and
	// {n} placeholders. Empty means fit.DefaultFetch.
	Fetch string
	// Key keys chunk handles (fit.Options.Key): 32 random bytes per
	// process make them unguessable. Nil means fit's default.
	Key []byte
	// StoreTimeout bounds each store call (fit.Options.StoreTimeout);
	// zero means fit.DefaultStoreTimeout.
	StoreTimeout time.Duration
	// RawHint says how to get a whole result when its chunks cannot be
	// stored (fit.Options.RawHint); empty means fit.DefaultRawHint.
	RawHint string

	// Filter, when set, is a declared projection applied before fitting;
	// its in-band note precedes the output.
	Filter *filter.Rule

	// Template names an L1 template that steers encoding for this tool:
	// "mr_diff_fence" or "ci_pipeline" (render.Templates, used by the auto
	// format, ignored for a payload they do not apply to) or
	// "csv_from_md" (Markdown tables in text as CSV, in any format).
	Template string

	// Dedup, when set, is the dedup stage (package dedup), run after the
	// filter on the filtered result, in the partition Request.Session
	// names. A result identical to one shown in full earlier in the same
	// partition is replaced by "> [ref: ID, byte-identical]" (or a
	// near-ref, if the cache allows them). A result shown in full and
	// large enough is recorded, and its "> [id: ID]" line leads the
	// output, inside the budget. A trimmed result is never recorded, and a
	// result whose id line would break the budget is shown without it and
	// forgotten again: a reference never points at something the agent
	// did not see. Pipelines may share one Cache.
	Dedup *dedup.Cache

	// Shape, when set, shapes text results (package shape): numbered
	// file reads, path lists, search results and shell output are
	// rewritten losslessly (or to their terminal view, or with a
	// declared, recoverable elision, as its ceiling allows) when that
	// saves tokens by its margin, before fitting. Its Counter is the
	// pipeline's; its Keep, when nil and Store is set, stores an
	// elision's original as chunks of the store. Nil leaves text as it
	// is.
	Shape *shape.Options
}

// Request is what changes from one call of a [Pipeline] to the next. A nil
// *Request is the zero Request.
type Request struct {
	// Tool is the name of the tool that produced the result; it selects
	// the trimming strategy (Options.Strategies, fit.Resolve).
	Tool string
	// ToolInput is the call's arguments as JSON text, if known (a hook
	// event's tool_input): stages that shape a result by what was asked
	// for read it (with Tool, the shape of a text result: a Bash
	// command, a Grep mode). Empty means unknown.
	ToolInput string
	// Budget, when positive, replaces Options.Budget for this call. A
	// budget too small for even the one-line notice that declares what is
	// left out (and its chunk handle) is raised to that notice, or to the
	// whole result when that is smaller: nothing is ever dropped without
	// a handle. Report.Budget is the budget applied.
	Budget int
	// FetchBudget, when positive, is what a chunk fetch without a budget
	// of its own gets on the caller's surface (the client's limit): the
	// chunk index promises it and sizes chunks to it
	// (fit.Options.FetchBudget). Zero means fit.DefaultFetchBudget.
	FetchBudget int
	// Session is the dedup partition (session and context) of the call;
	// the zero Key is a partition like any other.
	Session dedup.Key
	// Scope is what the call's chunk handles are bound to (the session
	// and conversation, fit.Options.Scope): a chunk stored under one
	// scope is refused to a fetch under another.
	Scope string
	// Paths are the file paths the call reads or writes (from its
	// arguments), if any: a mutating call invalidates the partition's
	// earlier reads of them and of paths under them.
	Paths []string
	// Mutating marks a call that writes Paths even when its tool is not
	// one of the dedup cache's mutating tools (per-tool configuration).
	Mutating bool
	// Headers are the provider's response headers, if any; pagination
	// headers (X-Total, X-Total-Pages, X-Page, X-Per-Page, X-Next-Page,
	// Link) are passed through to the Report.
	Headers Header
	// WorkDir is the agent's working directory, if known: paths under it
	// may be written relative to it (declared once in-band).
	WorkDir string
	// Hints, when set, gates the in-band hints of the call (the
	// configuration's [hints] policy, resolved by package profile). Nil
	// emits every hint. See [Hints] for what each family governs.
	Hints Hints

	// noShape: the text is not shaped (it is being fitted as it is).
	noShape bool
}

// Hints decides which in-band hint families a call may emit: "ref" (a
// result byte-identical to one shown earlier becomes "> [ref: …]"),
// "near_ref" (one differing by a small delta becomes "> [near-ref: …]")
// and "more" (an elided result: the notices that declare what is left
// out, and its chunk index). A refused reference shows the result in
// full. A refused "more" does not elide: the result is not fitted at all
// and comes back whole, over the budget if it must be (Report.Budget is
// then 0), because nothing is ever left out without a handle to it. The
// "> [id: …]" line a later reference points at is shown only while
// Allow allows "ref" or "near_ref". Families the pipeline does not emit
// are never asked about.
type Hints interface {
	// Allow reports whether a hint of family may be emitted now, without
	// counting it.
	Allow(family string) bool
	// Take reports whether a hint of family may be emitted now and, when
	// it may, counts it as emitted.
	Take(family string) bool
}

// noMore refuses "more" and passes the other families on.
type noMore struct{ Hints }

func (h noMore) Allow(f string) bool { return f != "more" && h.Hints.Allow(f) }
func (h noMore) Take(f string) bool  { return f != "more" && h.Hints.Take(f) }

// unbounded is the fit budget of a call that may not elide.
const unbounded = math.MaxInt32

// Result is what a Pipeline returns: the text for the model and the Report.
type Result struct {
	Text   string
	Report Report
	// StoreErr is the *fit.StoreError of a store that failed to keep the
	// chunks of a trimmed result: Text still fits the budget and says
	// that the rest is not retrievable right now.
	StoreErr error
}

// Pipeline processes tool results under fixed options. Build it once per
// tool configuration and keep it: it remembers the token counts and auto
// encodings of the last few long texts it handled (at most a few dozen,
// behind a lock), so that no stage counts or encodes them again, within a
// call or across calls. It is safe for concurrent use when its Store is.
type Pipeline struct {
	o   Options
	fmt fit.Format
	fo  fit.Options
	// measure encodes a whole result only to count its tokens (the
	// encoding saving of a trimmed result): fmt, unverified for auto.
	measure fit.Format
	// auto is set when fmt is the built-in auto format: JSON results
	// are then marked (markAuto) where TOON would read them differently.
	auto bool
	// autoMemo is the built-in auto format's memo (when auto is set):
	// told each document's compact JSON, which the call already holds.
	autoMemo *autoMemo
}

// TOON is the TOON v4 output format, numbers written exactly as in the
// source.
var TOON = fit.Format{Name: "toon", Append: func(dst []byte, v tree.Value) []byte {
	return toon.Append(dst, v, &toon.EncodeOptions{ExactNumbers: true})
}}

// Auto returns the auto output format: render.Encode measured by c (nil
// means o200k_base), steered by template when it names a JSON template
// (render.Templates) that applies, verified by decoding. It is never more
// tokens than compact JSON by c; an encoding error (a bug in render)
// falls back to compact JSON. [New] provides it as Format "auto". The
// format remembers its last two verified encodings, so that encoding the
// same value again costs nothing; it is safe for concurrent use.
func Auto(c tokens.Counter, template string) fit.Format {
	f, _ := newAuto(c, template)
	return f
}

// newAuto is Auto and its memo.
func newAuto(c tokens.Counter, template string) (fit.Format, *autoMemo) {
	if c == nil {
		c = tokens.O200kBase()
	}
	// Unmarked: the fitter prices items one by one, and a marker line on
	// each would overstate every item's cost. A Pipeline marks the text
	// it returns (the whole document or the fitted one) instead.
	ro := render.Options{Counter: c, Unmarked: true}
	if _, ok := render.TemplateByName(render.Format(template)); ok {
		ro.Template = render.Format(template)
	}
	// The fitter drafts candidate selections unverified (they are only
	// counted) and renders the text it returns with the verified encoder.
	m := &autoMemo{}
	return fit.Format{Name: "auto", Append: m.encoder(ro, false), Draft: m.encoder(ro, true)}, m
}

// New returns a Pipeline. It fails on an unknown format, strategy or
// template.
func New(opts *Options) (*Pipeline, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Tokenizer == nil {
		o.Tokenizer = tokens.O200kBase()
	}
	// Every stage counts with one cache: the same texts are counted by
	// render, the fitter and the Report.
	o.Tokenizer = newCountCache(o.Tokenizer)
	if o.Template != "" {
		if _, ok := render.TemplateByName(render.Format(o.Template)); !ok && o.Template != string(render.CSVFromMD) {
			return nil, fmt.Errorf("terse: unknown template %q (want %s, %s or %s)", o.Template, render.CSVFromMD, render.MRDiffFence, render.CIPipeline)
		}
	}
	auto, memo := newAuto(o.Tokenizer, o.Template)
	formats := append(append([]fit.Format(nil), o.Formats...), fit.JSON, TOON, auto)
	name := o.Format
	if name == "" {
		name = "json"
	}
	p := &Pipeline{o: o}
	found := false
	for i, f := range formats {
		if f.Name == name && f.Append != nil {
			p.fmt, p.measure, found = f, f, true
			if i == len(formats)-1 { // the built-in auto
				p.measure.Append = f.Draft
				p.auto, p.autoMemo = true, memo
			}
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("terse: unknown format %q (want json, toon or auto)", name)
	}
	if o.Strategy != "" {
		if _, _, err := checkStrategy(o.Strategy); err != nil {
			return nil, err
		}
	}
	p.fo = fit.Options{
		Budget: o.Budget, Counter: o.Tokenizer, Format: p.fmt, Formats: formats, Pointer: o.Pointer,
		Strategy: o.Strategy, Strategies: o.Strategies,
		Drop: o.DropFields, Keep: o.KeepFields, Identity: o.Identity, Store: o.Store, Fetch: o.Fetch,
		Key: o.Key, StoreTimeout: o.StoreTimeout, RawHint: o.RawHint,
	}
	if p.fo.Budget <= 0 {
		p.fo.Budget = fit.DefaultBudget
	}
	return p, nil
}

// Budget is the pipeline's budget: Options.Budget, or fit.DefaultBudget.
func (p *Pipeline) Budget() int { return p.fo.Budget }

// Counter is the pipeline's tokenizer (with its count cache).
func (p *Pipeline) Counter() tokens.Counter { return p.o.Tokenizer }

func checkStrategy(s string) (string, string, error) {
	for _, k := range fit.Strategies {
		if k == s {
			return s, "option", nil
		}
	}
	return "", "", fmt.Errorf("terse: unknown strategy %q (want one of %s)", s, strings.Join(fit.Strategies, ", "))
}

// Process processes one tool result. Input that parses as JSON is fitted
// as JSON; other input is fitted as text (logs, diffs, prose). Input that
// starts like JSON ("{", or "[" followed by more lines) but does not parse
// is an error: a *tree.SyntaxError with its position, unless it is JSON
// Lines (one value per line), which is text. The result shares no memory
// with data.
func (p *Pipeline) Process(ctx context.Context, data []byte, req *Request) (Result, error) {
	return p.ProcessString(ctx, string(data), req)
}

// ProcessString is Process on a string, without copying it: the result
// may share s's memory. A caller holding a large result it reads once (a
// file, a response body) saves a copy of it, and of its compact JSON when
// it is compact JSON already.
func (p *Pipeline) ProcessString(ctx context.Context, s string, req *Request) (Result, error) {
	trimmed := strings.TrimLeft(s, " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		v, err := tree.ParseString(s)
		if err == nil {
			return p.process(ctx, req, v, s, true)
		}
		if se, ok := errors.AsType[*tree.SyntaxError](err); !ok || (trimmed[0] == '{' || se.Line > 1) && !isJSONLines(trimmed) {
			return Result{}, err
		}
	}
	return p.process(ctx, req, tree.Value{}, s, false)
}

// isJSONLines reports whether data is JSON Lines (a log of one JSON value
// per line, as "go test -json" writes): its first line is a JSON value on
// its own and more lines follow. Such input is text.
func isJSONLines(data string) bool {
	line, rest, ok := strings.Cut(data, "\n")
	if !ok || len(strings.TrimSpace(rest)) == 0 {
		return false
	}
	_, err := tree.ParseString(line)
	return err == nil
}

// ProcessValue processes a parsed JSON result.
func (p *Pipeline) ProcessValue(ctx context.Context, v tree.Value, req *Request) (Result, error) {
	return p.process(ctx, req, v, "", true)
}

// ProcessText processes a text result.
func (p *Pipeline) ProcessText(ctx context.Context, s string, req *Request) (Result, error) {
	return p.process(ctx, req, tree.Value{}, s, false)
}

// declareRaise appends to body, a result whose budget (asked) was
// raised to the notice that declares what it leaves out, the line that
// says so, and returns the text, the tokens the line added (n was the
// text's count) and the budget raised to, the line included:
//
//	> [budget raised from 20 to 64 tokens: the least that declares what is left out]
func declareRaise(c tokens.Counter, body string, n, asked int) (string, int, int) {
	sep, end := "\n", ""
	if strings.HasSuffix(body, "\n") {
		sep, end = "", "\n"
	}
	raised, text, m := n, body, n
	for range 4 {
		text = body + sep + inband.BudgetRaised{From: asked, To: raised}.String() + end
		if m = c.Count(text); m <= raised {
			break
		}
		raised = m
	}
	return text, m - n, raised
}

// farOver reports whether a result of this compact JSON is far too large
// for budget: real JSON averages well under 40 bytes per token (the rule
// fit.FitJSON uses to skip encoding such a result whole).
func farOver(compact string, budget int) bool { return len(compact) > 40*budget }

// sampledEncoding estimates the tokens of the whole encoding of v, a
// result far over budget that was trimmed by the items at ptr, from 32
// of them spread evenly, encoded together: tokens per compact JSON byte
// of the sample, times the bytes of the whole. Writing out the whole
// encoding of such a result only to split its savings between encoding
// and fitting would cost more time and memory than the fit. ok is false
// when v is not such a result.
func (p *Pipeline) sampledEncoding(v tree.Value, ptr string, compact string, budget int) (int, bool) {
	if !farOver(compact, budget) {
		return 0, false
	}
	arr, err := tree.Lookup(v, tree.Pointer(ptr))
	if err != nil || arr.Kind() != tree.KindArray || arr.Len() < 64 {
		return 0, false
	}
	items := arr.Items()
	const n = 32
	sample := make([]tree.Value, n)
	for k := range sample {
		sample[k] = items[k*len(items)/n]
	}
	sv := tree.Array(sample...)
	size := tree.JSONLen(sv)
	if size == 0 {
		return 0, false
	}
	t := tokens.CountBytes(p.o.Tokenizer, p.measure.Append(nil, sv))
	return int(math.Ceil(float64(t) * float64(len(compact)) / float64(size))), true
}

// shape runs the shaping stage on a text result: package shape under the
// pipeline's counter, an elision's original kept in the store as chunks
// of the given line ranges.
//
// Shaping fails open: a shaper that panics (a bug) leaves the text as it
// is.
func (p *Pipeline) shape(ctx context.Context, text string, req *Request, fo fit.Options, m *memo) (res shape.Result) {
	defer func() {
		if r := recover(); r != nil {
			res = shape.Result{Text: text, Why: fmt.Sprintf("internal error: %v", r)}
		}
	}()
	so := *p.o.Shape
	// Counted through the call's memo: the original is counted once.
	so.Counter = m
	if so.Keep == nil && p.o.Store != nil {
		so.Keep = func(orig string, ranges [][2]int) (string, error) {
			h, err := fit.StoreLines(ctx, orig, ranges, &fo)
			if err != nil {
				return "", err
			}
			return fit.FetchCommand(&fo, h), nil
		}
	}
	if req.Hints != nil && !req.Hints.Allow("more") {
		so.Keep = nil // an elision is a "more" hint: refused, nothing is elided
	}
	call := shape.Call{Tool: req.Tool, Input: []byte(req.ToolInput), WorkDir: req.WorkDir}
	res = shape.Shape(text, call, &so)
	if res.Class == shape.Elide && req.Hints != nil && !req.Hints.Take("more") {
		so.Keep = nil // refused after all (a cap reached meanwhile)
		res = shape.Shape(text, call, &so)
	}
	return res
}

// fitOnce fits v (isJSON) or text under fo.
func fitOnce(ctx context.Context, v tree.Value, text string, isJSON bool, fo *fit.Options) (fit.Result, error) {
	if isJSON {
		return fit.FitJSON(ctx, v, fo)
	}
	return fit.FitText(ctx, text, fo)
}

// mark is markAuto, sparing the decoding that the auto format's check of
// a whole document already made (autoMemo.readsAsTOON).
func (p *Pipeline) mark(text string, v tree.Value, truncated bool) string {
	if !truncated && p.autoMemo != nil {
		if known, toon := p.autoMemo.readsAsTOON(v, text); known {
			return render.MarkKnown(text, v, toon)
		}
	}
	return markAuto(text, v, truncated)
}

// markAuto opens text, the built-in auto format's output for v, with the
// render.Marker line when a TOON reader would read it differently
// (render.Mark). A fitted text is a document (the shown part of v) and
// the in-band notes after it (lines opening with "> [", and the chunk
// index from its "[chunks] " line on): it is marked unless its document
// is compact JSON, or TOON reads the whole text, notes included, as that
// document. The marker is the document's first line, so that the text
// with the notes cut off decodes (render.Decode, terse decode) to the
// shown part. Text with no document (only notes) is returned as it is.
func markAuto(text string, v tree.Value, truncated bool) string {
	if !truncated {
		return render.Mark(text, v)
	}
	doc, dv, ok := shownDoc(text)
	if !ok {
		return text
	}
	if doc[0] == '{' || doc[0] == '[' {
		if doc == compactJSON(dv, "") {
			return text
		}
	}
	return render.Mark(text, dv)
}

// shownDoc splits the document off a fitted auto text: the longest text
// before a note line that decodes, and its value. ok is false when no
// document opens the text.
func shownDoc(text string) (doc string, v tree.Value, ok bool) {
	for k := range inband.Notes(text) {
		if v, err := render.Decode(text[:k-1]); err == nil {
			return text[:k-1], v, true
		}
	}
	if inband.IsNote(text) {
		return "", tree.Value{}, false
	}
	v, err := render.Decode(text)
	return text, v, err == nil
}

// memo counts tokens, remembering the last few texts counted.
type memo struct {
	c tokens.Counter
	s []string
	n []int
}

func (m *memo) count(s string) int {
	for i, x := range m.s {
		if len(x) == len(s) && x == s {
			return m.n[i]
		}
	}
	n := m.c.Count(s)
	m.seed(s, n)
	return n
}

// Name, Count and Exact make a memo a tokens.Counter: the shaping stage
// counts through it, and finds the original already counted.
func (m *memo) Name() string       { return m.c.Name() }
func (m *memo) Count(s string) int { return m.count(s) }
func (m *memo) Exact() bool        { return m.c.Exact() }

func (m *memo) seed(s string, n int) {
	m.s = append(m.s, s)
	m.n = append(m.n, n)
}

// variant names the rendering of a dedup stage result: results are
// identical for dedup only if shown the same way.
func (p *Pipeline) variant(isJSON bool) string {
	if !isJSON {
		sh := ""
		if p.o.Shape != nil {
			sh = "/shaped"
		}
		return "text/" + p.fmt.Name + "/" + p.o.Template + "/" + p.o.Tokenizer.Name() + sh
	}
	return p.fmt.Name + "/" + p.o.Template + "/" + p.o.Tokenizer.Name()
}

// hint finishes a result a reference hint replaces: all of the saving is
// dedup's.
func (p *Pipeline) hint(text string, rep Report) Result {
	n := p.o.Tokenizer.Count(text)
	rep.Saved = Savings{Dedup: rep.RawTokens - n}
	return p.finish(text, n, rep)
}

func (p *Pipeline) finish(text string, n int, rep Report) Result {
	rep.OutputChars = len(text)
	rep.OutputTokens = n
	if rep.RawTokens > 0 {
		rep.Ratio = float64(rep.OutputTokens) / float64(rep.RawTokens)
	}
	return Result{Text: text, Report: rep}
}

// compactJSON returns v as compact JSON: src, the text v was parsed from,
// when that is compact JSON already (no copy), else v written once into
// memory of its own (no growing buffer, no copy into a string).
func compactJSON(v tree.Value, src string) string {
	if s := strings.Trim(src, " \t\r\n"); s != "" && tree.IsCompact(s, v) {
		return s
	}
	b := tree.AppendJSON(make([]byte, 0, tree.JSONLen(v)), v)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// refFamily is the hint family of a dedup outcome.
func refFamily(k dedup.Kind) string {
	if k == dedup.NearRef {
		return "near_ref"
	}
	return "ref"
}

func kindOf(isJSON bool) string {
	if isJSON {
		return "json"
	}
	return "text"
}

// Chunk returns chunk n (1-based) of a result stored under handle, within
// req's budget (the pipeline's when req is nil or sets none) and in req's
// scope: fit.FetchChunk. A handle of another scope is a *fit.ScopeError,
// an unknown or expired one a *fit.ExpiredError, a chunk number out of
// range a *fit.ChunkRangeError, a failing store a *fit.StoreError; each
// message says what to do.
func (p *Pipeline) Chunk(ctx context.Context, handle string, n int, req *Request) (fit.ChunkResult, error) {
	fo := p.fo
	if req != nil {
		fo.Tool, fo.Scope = req.Tool, req.Scope
		if req.Budget > 0 {
			fo.Budget = req.Budget
		}
		if req.FetchBudget > 0 {
			fo.FetchBudget = req.FetchBudget
		}
	}
	return fit.FetchChunk(ctx, handle, n, &fo)
}
