package terse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/terse-dev/terse/filter"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// Options configure a [Pipeline]. The zero value works: compact JSON under
// a 25,000-token budget by o200k_base, the strategy resolved from Tool,
// nothing stored. Fields added later (new stages) are nil or zero by
// default and leave the behaviour unchanged.
type Options struct {
	// Budget is the largest output in tokens of Tokenizer. Zero means
	// fit.DefaultBudget (25,000: Claude Code rejects larger MCP results).
	Budget int
	// Tokenizer counts tokens. Nil means o200k_base.
	Tokenizer tokens.Counter
	// Format names the output format for JSON: "json" (compact JSON, also
	// when empty), "toon", or the name of one of Formats.
	Format string
	// Formats adds output formats (an adaptive renderer, for example), by
	// name; they take precedence over the built-in ones.
	Formats []fit.Format
	// Tool is the name of the tool that produced the result; it selects
	// the trimming strategy.
	Tool string
	// Pointer is the JSON Pointer of the item array. Empty means detected.
	Pointer string
	// Strategy forces a strategy; Strategies maps tool names to strategies
	// (configuration). See fit.Resolve.
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
	// Headers are the provider's response headers, if any; pagination
	// headers (X-Total, X-Total-Pages, X-Page, X-Per-Page, X-Next-Page,
	// Link) are passed through to the Report.
	Headers http.Header

	// Filter, when set, is a declared projection applied before fitting;
	// its in-band note precedes the output.
	Filter *filter.Rule
	// Dedup, when set, is asked before fitting whether the agent has
	// already seen this result; its reference hint then replaces the
	// output.
	Dedup Deduper
}

// Deduper recognises results the agent has already seen. Check returns a
// one-line reference hint and true for a repeat.
type Deduper interface {
	Check(ctx context.Context, tool string, payload []byte) (hint string, ok bool)
}

// Result is what a Pipeline returns: the text for the model and the Report.
type Result struct {
	Text   string
	Report Report
}

// Pipeline processes tool results under fixed options.
type Pipeline struct {
	o   Options
	fmt fit.Format
	fo  fit.Options
}

// TOON is the TOON v4 output format, numbers written exactly as in the
// source.
var TOON = fit.Format{Name: "toon", Append: func(dst []byte, v tree.Value) []byte {
	return toon.Append(dst, v, &toon.EncodeOptions{ExactNumbers: true})
}}

// New returns a Pipeline. It fails on an unknown format or strategy.
func New(opts *Options) (*Pipeline, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Tokenizer == nil {
		o.Tokenizer = tokens.O200kBase()
	}
	formats := append(append([]fit.Format(nil), o.Formats...), fit.JSON, TOON)
	name := o.Format
	if name == "" {
		name = "json"
	}
	p := &Pipeline{o: o}
	found := false
	for _, f := range formats {
		if f.Name == name && f.Append != nil {
			p.fmt, found = f, true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("terse: unknown format %q (want json or toon)", name)
	}
	if o.Strategy != "" {
		if _, _, err := checkStrategy(o.Strategy); err != nil {
			return nil, err
		}
	}
	p.fo = fit.Options{
		Budget: o.Budget, Counter: o.Tokenizer, Format: p.fmt, Formats: formats, Pointer: o.Pointer,
		Tool: o.Tool, Strategy: o.Strategy, Strategies: o.Strategies,
		Drop: o.DropFields, Keep: o.KeepFields, Identity: o.Identity, Store: o.Store, Fetch: o.Fetch,
	}
	if p.fo.Budget <= 0 {
		p.fo.Budget = fit.DefaultBudget
	}
	return p, nil
}

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
// is an error: a *tree.SyntaxError with its position.
func (p *Pipeline) Process(ctx context.Context, data []byte) (Result, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		v, err := tree.Parse(data)
		if err == nil {
			return p.process(ctx, data, v, "", true)
		}
		if se, ok := errors.AsType[*tree.SyntaxError](err); !ok || trimmed[0] == '{' || se.Line > 1 {
			return Result{}, err
		}
	}
	return p.process(ctx, data, tree.Value{}, string(data), false)
}

// ProcessValue processes a parsed JSON result.
func (p *Pipeline) ProcessValue(ctx context.Context, v tree.Value) (Result, error) {
	return p.process(ctx, nil, v, "", true)
}

// ProcessText processes a text result.
func (p *Pipeline) ProcessText(ctx context.Context, s string) (Result, error) {
	return p.process(ctx, nil, tree.Value{}, s, false)
}

func (p *Pipeline) process(ctx context.Context, raw []byte, v tree.Value, text string, isJSON bool) (Result, error) {
	c := p.o.Tokenizer
	rep := Report{Tokenizer: c.Name(), Exact: c.Exact(), Budget: p.fo.Budget, Tool: p.o.Tool}
	var rawText string
	if isJSON {
		rawText = string(tree.AppendJSON(nil, v))
		rep.Pagination, rep.Sort = providerMeta(v, p.o.Headers)
	} else {
		rawText = text
		rep.Pagination, rep.Sort = providerMeta(tree.Value{}, p.o.Headers)
	}
	rep.RawChars = len(rawText)
	rep.RawTokens = c.Count(rawText)

	if p.o.Dedup != nil {
		payload := raw
		if payload == nil {
			payload = []byte(rawText)
		}
		if hint, ok := p.o.Dedup.Check(ctx, p.o.Tool, payload); ok {
			rep.Kind, rep.Format, rep.Dedup = kindOf(isJSON), "hint", true
			return p.finish(hint, rep), nil
		}
	}

	note := ""
	if p.o.Filter != nil {
		var fr filter.Result
		if isJSON {
			fr = p.o.Filter.Apply(v, nil)
		} else {
			fr = p.o.Filter.ApplyText(text, nil)
		}
		note = fr.Note
		rep.Filtered = fr.Report.Applied
		if fr.IsText {
			isJSON, text = false, fr.Text
		} else {
			v = fr.Value
		}
	}
	fo := p.fo
	prefix := ""
	if note != "" {
		prefix = note + "\n"
		fo.Budget -= c.Count(prefix)
		if fo.Budget < 1 {
			fo.Budget = 1
		}
	}
	var res fit.Result
	var err error
	if isJSON {
		res, err = fit.FitJSON(ctx, v, &fo)
		rep.Format = p.fmt.Name
	} else {
		res, err = fit.FitText(ctx, text, &fo)
		rep.Format = "text"
	}
	if err != nil {
		return Result{}, err
	}
	st := res.Stats
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
	return p.finish(prefix+res.Text, rep), nil
}

func kindOf(isJSON bool) string {
	if isJSON {
		return "json"
	}
	return "text"
}

func (p *Pipeline) finish(text string, rep Report) Result {
	rep.OutputChars = len(text)
	rep.OutputTokens = p.o.Tokenizer.Count(text)
	if rep.RawTokens > 0 {
		rep.Ratio = float64(rep.OutputTokens) / float64(rep.RawTokens)
	}
	return Result{Text: text, Report: rep}
}

// Chunk returns chunk n (1-based) of a result stored under handle. An
// unknown or expired handle is a *fit.ExpiredError whose message says how
// to get the data again.
func (p *Pipeline) Chunk(ctx context.Context, handle string, n int) (string, error) {
	return fit.Chunk(ctx, handle, n, &p.fo)
}
