package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/fit"
)

// Pipeline is the Transformer that runs the terse pipeline (package terse:
// filter, dedup, format, budget fit with a chunk index) on each text block.
// It is also the ChunkStore for _chunk requests (chunks live in
// Options.Store) and keeps dedup state per session partition.
//
// The zero value works: compact JSON, o200k_base, nothing stored (chunk
// indexes then say to ask again with a larger _budget).
type Pipeline struct {
	// Options apply to every call; Tool and Budget are set per call, Fetch
	// defaults to the _chunk parameter.
	Options terse.Options
	// ForTool, when set, adjusts the options for one tool (per-tool rules
	// of the config file: filter, budget, strategy, fields).
	ForTool func(tool string, o *terse.Options)
	// NewDedup returns the dedup state of one session partition. Nil means
	// the built-in exact-repeat check (same tool, arguments and result).
	NewDedup func(session string) terse.Deduper
	// NoDedup turns dedup off.
	NoDedup bool

	mu      sync.Mutex
	dedups  map[string]terse.Deduper
	repeats Compact // built-in repeat memory
}

// FetchTemplate is how the pipeline's chunk indexes tell the model to
// fetch a chunk through the proxy. Its wording is read by models.
const FetchTemplate = `this tool with _chunk "{handle}.{n}"`

func (p *Pipeline) options(call *Call) terse.Options {
	o := p.Options
	o.Tool = call.Tool
	if p.ForTool != nil {
		p.ForTool(call.Tool, &o)
	}
	if call.Budget > 0 && (o.Budget <= 0 || call.Budget < o.Budget) {
		o.Budget = call.Budget
	}
	if o.Fetch == "" {
		o.Fetch = FetchTemplate
	}
	return o
}

// Transform implements [Transformer].
func (p *Pipeline) Transform(ctx context.Context, call *Call, text string) (Output, error) {
	o := p.options(call)
	if call.Session != "" && !call.IsError && !p.NoDedup {
		o.Dedup = p.dedup(call)
	}
	pl, err := terse.New(&o)
	if err != nil {
		return Output{}, err
	}
	res, err := pl.Process(ctx, []byte(text))
	if err != nil {
		return Output{}, err
	}
	r := res.Report
	out := Output{Text: res.Text, TokensBefore: r.RawTokens, TokensAfter: r.OutputTokens}
	if res.Text == text {
		return out, nil
	}
	out.Format = r.Format
	source := "encoding"
	switch {
	case r.Dedup:
		source = "dedup"
	case r.Truncated:
		source = "fit"
	case r.Filtered:
		source = "filter"
	}
	out.Saved = map[string]int{source: r.RawTokens - r.OutputTokens}
	return out, nil
}

func (p *Pipeline) dedup(call *Call) terse.Deduper {
	if p.NewDedup == nil {
		return repeatCheck{c: &p.repeats, call: *call}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dedups == nil {
		p.dedups = map[string]terse.Deduper{}
	}
	d := p.dedups[call.Session]
	if d == nil {
		d = p.NewDedup(call.Session)
		p.dedups[call.Session] = d
	}
	return d
}

// repeatCheck adapts the built-in repeat memory to terse.Deduper.
type repeatCheck struct {
	c    *Compact
	call Call
}

func (r repeatCheck) Check(ctx context.Context, tool string, payload []byte) (string, bool) {
	if r.c.repeat(&r.call, string(payload)) {
		return "> [ref: same result as your earlier " + r.call.Tool + " call with these arguments]", true
	}
	return "", false
}

// Reset implements [SessionHooks].
func (p *Pipeline) Reset(session string) {
	p.mu.Lock()
	delete(p.dedups, session)
	p.mu.Unlock()
	p.repeats.Reset(session)
}

// Invalidate implements [SessionHooks]: a mutating call drops the
// matching reads from the built-in repeat memory (see Compact.Invalidate)
// and the partition's NewDedup state.
func (p *Pipeline) Invalidate(session string, call *Call) {
	p.mu.Lock()
	delete(p.dedups, session)
	p.mu.Unlock()
	p.repeats.Invalidate(session, call)
}

// Chunk implements [ChunkStore]. ref is "HANDLE.N" as the chunk index
// says ("HANDLE N" and "HANDLE#N" are accepted too).
func (p *Pipeline) Chunk(ctx context.Context, session, tool, ref string) (string, error) {
	i := strings.LastIndexAny(ref, ". #:/")
	if i <= 0 {
		return "", fmt.Errorf("%w: %q is not a chunk handle like \"c_0123456789abcdef.2\"", ErrChunkNotFound, ref)
	}
	n, err := strconv.Atoi(ref[i+1:])
	if err != nil {
		return "", fmt.Errorf("%w: %q does not end in a chunk number", ErrChunkNotFound, ref)
	}
	o := p.options(&Call{Session: session, Tool: tool})
	pl, err := terse.New(&o)
	if err != nil {
		return "", err
	}
	text, err := pl.Chunk(ctx, ref[:i], n)
	if _, ok := errors.AsType[*fit.ExpiredError](err); ok {
		return "", fmt.Errorf("%w: %v", ErrChunkNotFound, err)
	}
	return text, err
}
