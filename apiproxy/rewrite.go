package apiproxy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/toolname"
	"github.com/terse-dev/terse/tree"
)

// Source is where a saving came from: telemetry's one vocabulary of
// saving sources.
type Source = telemetry.Source

// The sources terse api saves by.
const (
	SourceHistory  = telemetry.SrcHistory  // trimming old turns
	SourceRepeat   = telemetry.SrcDedup    // a result identical to an earlier one
	SourceStale    = telemetry.SrcStale    // a read superseded by a later write
	SourceEncoding = telemetry.SrcEncoding // shaped by the pipeline: text shapers, JSON re-encoded
	SourceFilter   = telemetry.SrcFilter   // a configured per-tool filter
	SourceApplied  = telemetry.SrcApplied  // a write call's payload, applied long ago
	SourceElided   = telemetry.SrcElided   // an old bulky result, left out in a batch
	numSources     = telemetry.NumSources
)

// sources are the sources terse api saves by, in the order its summary
// and metrics list them.
var sources = [...]Source{SourceHistory, SourceRepeat, SourceStale, SourceEncoding, SourceFilter, SourceApplied, SourceElided}

// Options configure a [Rewriter]. The zero value uses the defaults.
type Options struct {
	// Window is the context window in tokens; 0 uses the model's.
	Window int
	// Threshold is the fraction of the window above which history is
	// trimmed; 0 means history.DefaultThreshold.
	Threshold float64
	// StableTurns is how many turns of the observed growth a boundary move
	// leaves room for; 0 means 40.
	StableTurns int
	// MinTarget is the lowest fraction of the window the trim target is
	// set to; 0 means 0.2.
	MinTarget float64
	// MinRepeat is the size in bytes under which an identical result is
	// left as it is; 0 means 200.
	MinRepeat int
	// Include, when not empty, lists the tool-name globs (toolname.Match:
	// a name, or its tool part, by path.Match) whose results may be replaced by references, markers or
	// shaped forms; Exclude lists those whose results never are. History
	// trimming applies to every tool.
	Include, Exclude []string
	// Pipeline returns the pipeline that shapes the results of tool in a
	// conversation of model (the model of its first request): the same
	// pipelines, resolved the same way, as the MCP side's, built once
	// and kept. Nil means the default: JSON in the auto format and
	// lossless text shaping, by the conversation's tokenizer. A nil
	// pipeline leaves the tool's results as they are. See the package's
	// Shaping section.
	Pipeline func(model, tool string) *terse.Pipeline
	// Store, when set, keeps each conversation's trimming state beside
	// memory, so that a restarted proxy (or another replica sharing the
	// store) continues with the same boundary and the cached prefix
	// survives. It is written when the prefix changes.
	Store store.Store
	// NoTrim, NoRepeats, NoStale and NoShape turn one rewriting off;
	// NoEdit turns off the batched edits of applied payloads and old
	// bulky results (stale reads are NoStale's).
	NoTrim, NoRepeats, NoStale, NoShape, NoEdit bool
	// EditAge is the age in requests after which a write call's payload
	// and a bulky result may be left out; 0 means DefaultEditAge.
	EditAge int
	// EditBulky is the size in bytes from which an old result is bulky;
	// 0 means DefaultEditBulky.
	EditBulky int
	// EditShare is the share of the prompt a batch of edits must take
	// out to be applied while the provider's cache is warm; 0 means
	// DefaultEditShare. While it is cold anyway, any saving applies.
	EditShare float64
	// CacheTTL is the provider's prompt-cache lifetime when a request
	// asks for no other (a cache_control "ttl": "1h" means an hour); 0
	// means 5 minutes. A conversation idle longer has a cold cache.
	CacheTTL time.Duration
	// Prices price the batch decision (nil: the shipped table).
	Prices *Prices
	// Now is the clock idle times are measured by (nil: time.Now).
	Now func() time.Time
	// ChunkStore keeps the originals of elided results of calls that may
	// have side effects, under handles bound to the conversation; nil
	// leaves those results as they are (results of calls that only read
	// are elided with "call it again").
	ChunkStore store.Store
	// ChunkFetch is the command that prints chunk {n} of {handle} of
	// scope {scope} from the agent's shell; "" means DefaultChunkFetch.
	ChunkFetch string
	// Profile resolves a model id (the "model" of a conversation's first
	// request) to the conversation's tokenizer (the default pipeline's)
	// and window; nil means o200k_base and the window of ModelWindow. It
	// is called once per conversation and its answer kept with the
	// conversation's state, so that every later request of the
	// conversation is rewritten the same way.
	Profile func(model string) Profile
}

// Profile is what a conversation's model resolves to.
type Profile struct {
	// Model is the model id the profile was resolved for (set by the
	// Rewriter): the conversation's pipelines are chosen by it.
	Model string `json:"model,omitempty"`
	// Tokenizer names the counter of the default pipeline (shaped forms
	// are chosen by it) and of the conversation's telemetry ("":
	// o200k_base).
	Tokenizer string `json:"tokenizer,omitempty"`
	// Window is the context window in tokens; 0 means ModelWindow's. It
	// applies when neither Options.Window nor the request sets one.
	Window int `json:"window,omitempty"`
	// NoRefs keeps repeated results as they are (the "ref" hint family
	// is off for the model); MaxRefs, when positive, lets only the first
	// MaxRefs repeats of the conversation, in order, become references.
	NoRefs  bool `json:"no_refs,omitempty"`
	MaxRefs int  `json:"max_refs,omitempty"`
	// Ratio, when above 1, is the estimated provider tokens per
	// o200k_base token the window is held to: the window trimming uses is
	// the model's divided by it (see WindowRatio).
	Ratio float64 `json:"ratio,omitempty"`
}

func (o Options) withDefaults() Options {
	if o.Threshold <= 0 {
		o.Threshold = history.DefaultThreshold
	}
	if o.StableTurns <= 0 {
		o.StableTurns = 40
	}
	if o.MinTarget <= 0 {
		o.MinTarget = 0.2
	}
	if o.MinRepeat <= 0 {
		o.MinRepeat = 200
	}
	if o.EditAge <= 0 {
		o.EditAge = DefaultEditAge
	}
	if o.EditBulky <= 0 {
		o.EditBulky = DefaultEditBulky
	}
	if o.EditShare <= 0 {
		o.EditShare = DefaultEditShare
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = 5 * time.Minute
	}
	if o.Prices == nil {
		o.Prices = NewPrices(nil)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ChunkFetch == "" {
		o.ChunkFetch = DefaultChunkFetch
	}
	return o
}

// Edit is one tool result the rewriter changed (history trimming is
// reported in [Result.Report], not as edits).
type Edit struct {
	Source Source
	CallID string
	Tool   string
	Ref    string // the earlier call a repeat names, the write that made a read stale, or an elision's fetch command
	Before string // the result's text as sent (SourceApplied: the call's input)
	After  string // what replaced it

	msg   int      // the index of the message changed
	lines []string // the earlier calls a result's line references name (Ref is the first)
}

// Result is what [Rewriter.Rewrite] did to one request.
type Result struct {
	// Body is the rewritten request, or nil when the original is to be
	// forwarded (nothing changed, or it did not decode).
	Body []byte
	// Format is the request's format (0 when it did not decode).
	Format history.Format
	// Model is the request's "model".
	Model string
	// Conversation is the key the state was kept under.
	Conversation string
	// Edits are the changed tool results, in request order.
	Edits []Edit
	// Report is history.Reduce's report (zero when trimming is off).
	Report history.Report
	// PrefixChanged is true when this request does not keep the previous
	// one's messages as its prefix: the trimming boundary moved, or stale
	// reads were declared (which happens only when it was about to).
	PrefixChanged bool
	// Window is the window trimming used (in o200k_base tokens: the
	// model's divided by Ratio) and Target the fraction chosen.
	Window int
	Target float64
	// Ratio is the conversation's estimated window ratio (0: none).
	Ratio float64
	// Tokenizer is the conversation's tokenizer (Options.Profile; ""
	// means o200k_base).
	Tokenizer string
	// Skipped says why the body was forwarded untouched ("" when it was
	// rewritten or needed no change).
	Skipped string
	// Batch says why this request moved the conversation's edit
	// boundary, making a batch of edits: "idle", "model" or "trim" (the
	// cache was cold anyway) or "share" (enough of the prompt was
	// reclaimable); "" when it did not.
	Batch string
	// State says how the conversation's state matched the request's
	// history: StateNew, StateContinued or StateForked ("" when the
	// request was not considered).
	State string
	// Err is an internal error (a recovered panic: an [*InternalError]);
	// the body is to be forwarded untouched.
	Err error
}

// Rewriter rewrites requests, keeping per-conversation state. It is safe
// for concurrent use.
type Rewriter struct {
	opt Options

	mu    sync.Mutex
	convs map[string]*conv
	tick  uint64

	memo    shapeMemo
	stashes stashed // originals put in the chunk store
	pmu     sync.Mutex
	pipes   map[string]*terse.Pipeline // the default pipelines, by tokenizer

	hook func(body []byte) // called on the request path, for tests
}

// maxConvs bounds the conversation keys remembered; the least recently
// used is forgotten first.
const maxConvs = 4096

// NewRewriter returns a Rewriter with options o.
func NewRewriter(o Options) *Rewriter {
	return &Rewriter{opt: o.withDefaults(), convs: make(map[string]*conv)}
}

// Rewrite rewrites one request body of format f (0: detect).
func (rw *Rewriter) Rewrite(body []byte, f history.Format) Result {
	return rw.RewriteWindow(body, f, 0)
}

// RewriteWindow is Rewrite with the window the request asked for (0: the
// model's), used when Options.Window is not set.
//
// It fails open: an internal error (a panic included) returns a Result
// with Err set and no Body, so the original is forwarded, and forgets the
// state of the conversation's branch the request was on (it may be
// half updated).
func (rw *Rewriter) RewriteWindow(body []byte, f history.Format, window int) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = Result{Skipped: "internal error", Err: &InternalError{Value: r, Stack: debug.Stack()}}
		}
	}()
	return rw.rewrite(body, f, window)
}

// InternalError is a panic recovered while rewriting.
type InternalError struct {
	Value any    // what was passed to panic
	Stack []byte // the goroutine's stack where it was recovered
}

func (e *InternalError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// rewrite is RewriteWindow without the recovery.
func (rw *Rewriter) rewrite(body []byte, f history.Format, window int) Result {
	req, err := history.Decode(body, f)
	if err != nil {
		return Result{Skipped: "does not decode: " + err.Error()}
	}
	res := Result{Format: req.Format}
	if m, ok := req.Field("model"); ok {
		res.Model = m.Str()
	}
	norm, nrep := history.Normalize(req.Messages, []string{})
	if len(norm) == 0 {
		return res
	}
	res.Conversation = convKey(req.Format, norm)
	chain := prefixChain(norm)
	c := rw.conv(res.Conversation)
	c.mu.Lock()
	defer c.mu.Unlock()
	rw.load(res.Conversation, c)
	br, how := c.branch(chain)
	res.State = how
	defer func() {
		if r := recover(); r != nil {
			c.forget(br)
			panic(r)
		}
	}()
	if rw.hook != nil {
		rw.hook(body)
	}
	if br.prof == nil {
		var p Profile
		if rw.opt.Profile != nil {
			p = rw.opt.Profile(res.Model)
		}
		p.Model = res.Model
		br.prof = &p
	}
	prof := *br.prof
	if prof.Model == "" { // a state kept before profiles named their model
		prof.Model = res.Model
	}
	res.Tokenizer = prof.Tokenizer

	res.Window = rw.opt.Window
	if res.Window <= 0 {
		res.Window = window
	}
	if res.Window <= 0 {
		// The model's context holds the reply too: what the request
		// reserves for it is not the conversation's.
		res.Window = prof.Window
		if res.Window <= 0 {
			res.Window = ModelWindow(res.Model)
		}
		for _, k := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
			if v, ok := req.Field(k); ok {
				if n, err := v.Int(); err == nil && n > 0 && n < int64(res.Window)/2 {
					res.Window -= int(n)
					break
				}
			}
		}
	}
	if prof.Ratio > 1 { // estimated: provider tokens per o200k_base token
		res.Window, res.Ratio = int(float64(res.Window)/prof.Ratio), prof.Ratio
	}
	calls := indexCalls(norm)
	base, encEdits := rw.shapeAll(norm, calls, prof.Model, prof.Tokenizer)

	x := &editCtx{norm: norm, calls: calls, prof: &prof, scope: "api-" + res.Conversation, batches: br.batches}
	edited, edits := rw.declare(base, x, br.stale)
	now := rw.opt.Now()
	if rw.batching() && br.stale < len(norm) {
		// A batch moves the edit boundary to here when that pays.
		cand, candEdits := rw.declare(base, x, len(norm))
		bc := batchCaseOf(base, len(body), edits, candEdits)
		ttl := func() bool { return ttl1h(body) } // scanned only when it matters
		bc.Cold = rw.coldCache(br, res.Model, now, ttl)
		if bc.Cold != "" || bc.Reclaim > 0 && float64(bc.Reclaim) >= rw.opt.EditShare*float64(bc.Prompt) {
			bc.TTL1h = ttl()
		}
		price, _ := rw.opt.Prices.Lookup(res.Model)
		if d := decideBatch(price, bc, rw.opt.EditShare); d.Apply {
			edited, edits = cand, candEdits
			br.batched(len(norm))
			res.PrefixChanged = true
			res.Batch = bc.Cold
			if res.Batch == "" {
				res.Batch = "share"
			}
		}
	}
	br.last, br.model = now, res.Model
	var out []history.Message
	var next history.State
	var rep history.Report
	if rw.opt.NoTrim {
		out = edited
		br.seen = at(chain, len(norm))
		br.covers = at(chain, max(br.st.Boundary, br.stale))
		if res.PrefixChanged {
			rw.save(res.Conversation, c)
		}
	} else {
		est := history.Estimate(edited) + history.ToolOverhead(nil, req.Tools)
		target := rw.target(br.sizes, norm, est, res.Window)
		res.Target = target
		ro := &history.Options{Threshold: rw.opt.Threshold, Target: target, Tools: req.Tools, StripTags: []string{},
			ResultText: func(id string) string { return trimmedText(calls[id], id) }}
		out, next, rep = history.Reduce(edited, res.Window, br.st, ro)
		if rep.CachePrefixChanged && br.stale != len(norm) && rw.batching() {
			// The boundary moves: the prefix changes anyway, so the
			// edits up to here are made now, and trimming runs down
			// to the target even if the declarations alone brought the
			// request under the threshold: the prefix breaks once, for as
			// many turns as a full step buys.
			stale := len(norm)
			edited, edits = rw.declare(base, x, stale)
			force := *ro
			force.Threshold = target
			out, next, rep = history.Reduce(edited, res.Window, br.st, &force)
			br.batched(stale)
			res.PrefixChanged = true
			res.Batch = coldTrim
		}
		res.PrefixChanged = res.PrefixChanged || rep.CachePrefixChanged
		br.record(chain, est, next)
		if res.PrefixChanged {
			rw.save(res.Conversation, c)
		}
		out, edits = finish(out, edited, base, calls, edits)
		if rep.DropBoundary > 0 {
			out = declareDropped(out, norm[:rep.DropBoundary], calls)
		}
	}
	res.Report = rep
	res.Edits = append(encEdits, edits...)
	if len(res.Edits) == 0 && rep.Trimmed == 0 && rep.Dropped == 0 && rep.ThinkingDropped == 0 && nrep.Deduped == 0 {
		return res // nothing to change: forward the original bytes
	}
	req.Messages = out
	b, err := req.AppendJSON(make([]byte, 0, len(body)+len(body)/16))
	if err != nil {
		res.Skipped = "does not encode: " + err.Error()
		res.Edits = nil
		return res
	}
	res.Body = b
	return res
}

// batching reports whether any batched edit is on.
func (rw *Rewriter) batching() bool { return !rw.opt.NoStale || !rw.opt.NoEdit }

// growthSamples is how many recent request sizes the growth is taken from.
const growthSamples = 16

// target chooses the trim target: low enough that the observed growth per
// turn fits StableTurns turns between the target and the threshold.
func (rw *Rewriter) target(sizes []sample, norm []history.Message, est, window int) float64 {
	if window <= 0 {
		return rw.opt.Threshold
	}
	var g float64
	if n := len(sizes); n >= 4 && est >= sizes[0].Size {
		g = float64(est-sizes[0].Size) / float64(n)
	} else {
		turns := 0
		for i := range norm {
			if norm[i].Role == history.RoleAssistant {
				turns++
			}
		}
		g = float64(est) / float64(max(turns, 1))
	}
	t := rw.opt.Threshold - g*float64(rw.opt.StableTurns)/float64(window)
	return min(max(t, rw.opt.MinTarget), rw.opt.Threshold)
}

// convKey names a conversation by its format and first two messages.
func convKey(f history.Format, norm []history.Message) string {
	h := sha256.New()
	h.Write([]byte(f.String()))
	for i := 0; i < len(norm) && i < 2; i++ {
		h.Write([]byte(history.Fingerprint(&norm[i])))
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:8])
}

// ModelWindow is the context window of a model by name, 200,000 when
// unknown.
func ModelWindow(model string) int {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "[1m]"):
		return 1_000_000
	case strings.HasPrefix(m, "gpt-4.1"):
		return 1_047_576
	case strings.HasPrefix(m, "gpt-5"):
		return 400_000
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "gpt-4-turbo"):
		return 128_000
	case strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return 200_000
	}
	return 200_000
}

// call is a tool call found in the conversation.
type call struct {
	id, name, args string
	msg            int
}

// indexCalls maps each call id to its first call.
func indexCalls(msgs []history.Message) map[string]call {
	calls := make(map[string]call)
	for i := range msgs {
		for _, p := range msgs[i].Parts {
			if p.Kind == history.ToolCall {
				if _, ok := calls[p.ID]; !ok {
					calls[p.ID] = call{id: p.ID, name: p.Name, args: p.Args, msg: i}
				}
			}
		}
	}
	return calls
}

// excluded reports whether a tool's results are left alone.
func (rw *Rewriter) excluded(name string) bool {
	return toolname.MatchAny(rw.opt.Exclude, name) || (len(rw.opt.Include) > 0 && !toolname.MatchAny(rw.opt.Include, name))
}

// resultText is a tool result's content when it is all text (joined by
// newlines).
func resultText(p *history.Part) (string, bool) {
	switch len(p.Content) {
	case 0:
		return "", true
	case 1:
		if p.Content[0].Kind == history.Text {
			return p.Content[0].Text, true
		}
		return "", false
	}
	var b strings.Builder
	for i, q := range p.Content {
		if q.Kind != history.Text {
			return "", false
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(q.Text)
	}
	return b.String(), true
}

// withText returns p with its content replaced by text, keeping the first
// text block (and so its provider fields) when there is one.
func withText(p history.Part, text string) history.Part {
	if len(p.Content) >= 1 && p.Content[0].Kind == history.Text {
		c := p.Content[0]
		c.Text = text
		p.Content = []history.Part{c}
		return p
	}
	p.Content = []history.Part{{Kind: history.Text, Text: text}}
	return p
}

// mapResults returns msgs with fn applied to every tool result; fn returns
// the replacement and whether it changed. Unchanged messages are shared.
func mapResults(msgs []history.Message, fn func(i int, p *history.Part) (history.Part, bool)) []history.Message {
	return mapParts(msgs, history.ToolResult, fn)
}

// mapParts is mapResults for the parts of kind k.
func mapParts(msgs []history.Message, k history.Kind, fn func(i int, p *history.Part) (history.Part, bool)) []history.Message {
	var out []history.Message
	for i := range msgs {
		var parts []history.Part
		for j := range msgs[i].Parts {
			p := &msgs[i].Parts[j]
			if p.Kind != k {
				continue
			}
			q, ok := fn(i, p)
			if !ok {
				continue
			}
			if parts == nil {
				parts = append([]history.Part(nil), msgs[i].Parts...)
			}
			parts[j] = q
		}
		if parts != nil {
			if out == nil {
				out = append([]history.Message(nil), msgs...)
			}
			out[i].Parts = parts
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// argsSummary is a short description of a call's arguments: the first of
// the usual naming arguments, cut at 80 bytes.
func argsSummary(args string) string {
	v, _ := tree.ParseString(args)
	return argsSummaryOf(v)
}

// argsSummaryOf is argsSummary of the parsed arguments.
func argsSummaryOf(v tree.Value) string {
	if v.Kind() != tree.KindObject {
		return ""
	}
	for _, k := range []string{"file_path", "notebook_path", "path", "command", "cmd", "pattern", "url", "query", "description"} {
		x, ok := v.Get(k)
		if !ok {
			continue
		}
		var s string
		switch x.Kind() {
		case tree.KindString:
			s = x.Str()
		case tree.KindArray:
			var parts []string
			for _, it := range x.Items() {
				parts = append(parts, it.Str())
			}
			s = strings.Join(parts, " ")
		default:
			continue
		}
		s = strings.Join(strings.Fields(s), " ")
		if len(s) > 80 {
			cut := 80
			for cut > 0 && s[cut]&0xC0 == 0x80 {
				cut--
			}
			s = s[:cut] + "…"
		}
		return k + "=" + s
	}
	return ""
}

// describe names a call for a marker: `Read call toolu_1 (file_path=a.go)`.
func describe(c call, id string) inband.ToolCall {
	v, _ := tree.ParseString(c.args)
	return describeArgs(c, id, v)
}

// describeArgs is describe with the call's arguments parsed.
func describeArgs(c call, id string, args tree.Value) inband.ToolCall {
	name := c.name
	if name == "" {
		name = "tool"
	}
	return inband.ToolCall{Tool: name, ID: id, Args: argsSummaryOf(args)}
}
