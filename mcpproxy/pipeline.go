package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/tokens"
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
	// Dedup, when set, is the dedup stage: results the agent has seen in
	// the same session partition become "> [ref: ID, ...]" hints, and
	// results shown in full carry their "> [id: ID]" line. Nil (with
	// NewDedup nil) means the built-in exact-repeat check (same tool,
	// arguments and result).
	Dedup *dedup.Cache
	// NewDedup returns the dedup state of one session partition for the
	// pipeline's Deduper hook; it is used when Dedup is nil.
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
		if p.Dedup != nil {
			// The pipeline's dedup stage: a repeat in this session
			// partition becomes a reference hint, a result shown in full
			// carries its id line inside the budget.
			o.DedupCache = p.Dedup
			o.Session = dedupKey(call.Session)
			o.Path = firstPath(call.Arguments)
		} else {
			o.Dedup = p.dedup(call)
		}
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
	if out.Text == text {
		return out, nil
	}
	out.Format = r.Format
	if r.Dedup {
		out.Format = "ref"
	}
	out.Saved = map[string]int{}
	for source, n := range map[string]int{"filter": r.Saved.Filter, "dedup": r.Saved.Dedup,
		"encoding": r.Saved.Encoding, "fit": r.Saved.Fitting} {
		if n != 0 {
			out.Saved[source] = n
		}
	}
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

// dedupKey maps a proxy session partition to a dedup key.
func dedupKey(session string) dedup.Key {
	return dedup.Key{Session: storeSession(session), Partition: session}
}

func firstPath(args []byte) string {
	if ps := argPaths(args); len(ps) > 0 {
		return ps[0]
	}
	return ""
}

// Reset implements [SessionHooks].
func (p *Pipeline) Reset(session string) {
	if p.Dedup != nil {
		p.Dedup.Compact(dedupKey(session))
	}
	p.mu.Lock()
	delete(p.dedups, session)
	p.mu.Unlock()
	p.repeats.Reset(session)
}

// Invalidate implements [SessionHooks]: a mutating call drops the
// matching reads from the built-in repeat memory (see Compact.Invalidate)
// and the partition's NewDedup state.
func (p *Pipeline) Invalidate(session string, call *Call) {
	if p.Dedup != nil {
		paths := argPaths(call.Arguments)
		if len(paths) == 0 {
			p.Dedup.Compact(dedupKey(session))
		}
		for _, path := range paths {
			p.Dedup.Invalidate(dedupKey(session), path)
		}
	}
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

// counterOf is the pipeline's tokenizer (terse.New's default when unset).
func counterOf(o *terse.Options) tokens.Counter {
	if o.Tokenizer != nil {
		return o.Tokenizer
	}
	return tokens.O200kBase()
}
