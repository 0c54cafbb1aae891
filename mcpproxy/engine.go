package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/internal/lru"
	"github.com/terse-dev/terse/profile"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toolname"
	"github.com/terse-dev/terse/tree"
)

// FetchTemplate is how chunk indexes tell the model to fetch a chunk
// through the proxy: the same tool, called with _chunk (accepted on every
// tool, declared or not). Pipelines given to the proxy should use it as
// their terse.Options.Fetch. Its wording is read by models.
const FetchTemplate = `this tool with _chunk "{handle}.{n}"`

// RawHint is what a fitted result says when its chunks could not be
// stored: how to get the whole result anyway. Pipelines given to the
// proxy should use it as their terse.Options.RawHint. Its wording is read
// by models.
const RawHint = `re-run the call with _output_mode: "raw" to get the whole result`

// errInvalidResult is finish's error for a result that does not parse.
var errInvalidResult = errors.New("the result is not valid JSON")

// engine is what the stdio proxy and the gateway share: the reserved
// parameters, raw mode, chunk answers, the client policy, the budget
// rule, invalidation, partitions and stats. Each front end only moves
// bytes: it hands a call's arguments to begin and its raw result to
// finish, and sends what they return.
type engine struct {
	opts Options
	pipe *terse.Pipeline // for tools without a rule of their own
	// sem bounds how many results are transformed at once.
	sem chan struct{}

	mu sync.Mutex
	// sessions holds what the engine keeps per session (sessionState),
	// bounded; nothing is kept for an ephemeral call.
	sessions lru.Cache[string, *sessionState]
	// evicted are the partitions of sessions the bound dropped, reset
	// once e.mu is released (unlockAndReset).
	evicted []string
	// resetHook, when set (tests), sees every partition reset.
	resetHook func(partition string)
	// stageHook, when set (tests), runs as each stage starts: "begin"
	// (the reserved parameters of a call), "finish" (a result), "list"
	// (a tool catalogue); a panic in it stands for a bug there.
	stageHook func(stage string)
	// tokens numbers the progress tokens minted for upstreams.
	tokens atomic.Int64
	// shapes remembers, per chunk handle, the shape of the
	// structuredContent its chunk replies carry (chunkStructured), the
	// least recently used dropped past maxShapes.
	shapes lru.Cache[string, shape]
	// storeErr is the last chunk store failure, "" once a store call
	// succeeds again; storeSince is when it failed.
	storeErr   string
	storeSince time.Time
	// sharedShapes, when set (a gateway with shared state), keeps the
	// shapes of handles for every replica (gateway_scale.go).
	sharedShapes shapeStore
	// scopePrefix leads every chunk scope: the stdio proxy's own random
	// id (its one session is named alike in every process); "" for the
	// gateway, whose session ids are unique and shared by replicas.
	scopePrefix string
}

// progressToken mints a progress token for a request sent upstream:
// clients choose their tokens, so two clients (or sessions) may both send
// 1; the front end maps the minted token back to the client's for the
// request's notifications, and forgets it with the request.
func (e *engine) progressToken() string {
	return "terse-p" + strconv.FormatInt(e.tokens.Add(1), 10)
}

func newEngine(o *Options) *engine {
	e := &engine{opts: o.withDefaults()}
	e.sessions.Max = maxSessions
	e.sessions.OnEvict = func(session string, st *sessionState) {
		e.evicted = append(e.evicted, st.partitions(session)...)
	}
	e.shapes.Max = maxShapes
	e.pipe = e.opts.Pipeline
	if e.pipe == nil {
		// Compact JSON, no store, no dedup: cannot fail.
		e.pipe, _ = terse.New(&terse.Options{Tokenizer: e.opts.Counter, Fetch: FetchTemplate})
	}
	e.sem = make(chan struct{}, e.opts.maxConcurrent())
	return e
}

// pipeline returns the pipeline of a call: its client's profile's, else
// that of the tool's rule, else the default one.
func (e *engine) pipeline(c *call) *terse.Pipeline {
	if c.prof.Pipeline != nil {
		return c.prof.Pipeline
	}
	if e.opts.ForTool != nil {
		if p := e.opts.ForTool(c.tool); p != nil {
			return p
		}
	}
	return e.pipe
}

// hintGate returns the hint policy of a call's results: its profile's
// rules, counted per session. Nil when the call has no profile.
func (e *engine) hintGate(c *call) terse.Hints {
	if c.prof.Hints == nil {
		return nil
	}
	if isEphemeralScope(c.sessionID) {
		// A stateless call without a conversation is a session of its
		// own that no later call continues: counted for itself, kept
		// nowhere.
		return profile.Gate{E: c.prof.Hints, C: new(profile.HintCounter)}
	}
	e.mu.Lock()
	defer e.unlockAndReset()
	st := e.sessionLocked(c.sessionID, true)
	if st.hints == nil {
		st.hints = new(profile.HintCounter)
	}
	return profile.Gate{E: c.prof.Hints, C: st.hints}
}

// giveBack uncounts the hints a result carried that the model is not
// shown after all.
func giveBack(h terse.Hints, rep *terse.Report) {
	g, ok := h.(profile.Gate)
	if !ok {
		return
	}
	switch {
	case rep.Dedup && rep.NearRef:
		g.C.Give("near_ref")
	case rep.Dedup:
		g.C.Give("ref")
	}
	if rep.Truncated {
		g.C.Give("more")
	}
}

// call is one tools/call between begin and finish.
type call struct {
	server, tool string
	client       string
	session      string // partition, see engine.partition
	scope        string // what chunk handles are bound to: session and conversation
	sessionID    string // the session, for telemetry
	pol          Policy
	prof         ClientProfile // the client's profile for the tool
	args         tree.Value
	raw          bool
	budget       int // _budget, 0 when absent
	paths        []string
	mutating     bool
	start        time.Time
	argsKey      string // args as JSON, for the brake
	lossless     bool   // the tool is braked: nothing is left out
	brake        bool   // this call braked the tool
}

// begin reads the reserved parameters of a tools/call of tool (the
// upstream's name) with arguments
// args. It returns the call to forward, its arguments changed only when
// reserved parameters were removed (argsChanged), or, when the call is
// answered here (a chunk, the compact tool, a bad reserved parameter),
// the result to answer with.
func (e *engine) begin(ctx context.Context, server, tool, client, session, conv string, args tree.Value, info toolInfo, known bool) (c *call, argsChanged bool, answer *tree.Value, rec CallRecord) {
	rec = CallRecord{Server: server, Tool: tool}
	e.stage("begin")
	if tool == CompactTool && !known {
		e.compact(session, conv)
		res := tree.Object(tree.Member{Key: "content", Value: tree.Array(tree.Object(
			tree.Member{Key: "type", Value: tree.String("text")},
			tree.Member{Key: "text", Value: tree.String("ok: later results will not refer to earlier ones")},
		))})
		rec.Outcome = "compact"
		return nil, false, &res, rec
	}
	rest, ra, err := splitArgs(args, info)
	c = &call{server: server, tool: tool, client: client, session: e.partition(session, conv), args: rest,
		raw: ra.raw, budget: ra.budget, start: time.Now(), scope: e.scopePrefix + session + "\x00" + conv, sessionID: session,
		pol: e.opts.policy(client)}
	if s, ok := ctx.Value(chunkScopeKey{}).(string); ok {
		c.scope = s // the gateway's, see withChunkScope
	}
	if e.opts.Profile != nil {
		c.prof = e.opts.Profile(client, tool)
	}
	if err != nil {
		res := errorResult("terse: " + err.Error())
		rec.Outcome = "error"
		return nil, false, &res, rec
	}
	if ra.chunk != "" {
		braked, now := e.noteFetch(c)
		c.lossless, c.brake, rec.Brake = braked, now, now
		res := e.chunk(ctx, c, c.pol, info, ra.chunk, &rec)
		if v, ok := res.Get("isError"); !(ok && v.Bool()) && braked && e.tell(c) {
			res = withNotice(res)
		}
		rec.Outcome = "chunk"
		e.recordChunk(c, &rec)
		return nil, false, &res, rec
	}
	c.argsKey = string(tree.AppendJSON(nil, rest))
	c.paths = argPaths(rest)
	c.mutating = info.mutating || toolname.MatchAny(e.opts.MutatingTools, tool)
	c.brake = e.noteCall(c, c.mutating)
	rec.Brake = c.brake
	if c.mutating && e.opts.Dedup != nil {
		// Before forwarding: a read answered after this call must not be
		// a reference to what the write changed.
		e.opts.Dedup.Invalidate(dedupKey(c.session), c.paths...)
	}
	return c, args.Kind() == tree.KindObject && rest.Len() != args.Len(), nil, rec
}

// chunk answers a _chunk request ("HANDLE.N", as the chunk index quotes
// it; "HANDLE N" and "HANDLE#N" are accepted too) with a tools/call
// result, within the call's effective budget and in its scope. It is the
// one place chunks are answered. A refusal (another session's handle, an
// expired one, a chunk number out of range) is a tool error whose text is
// fit's, which says what to do. When the tool declares an outputSchema
// the client keeps, the reply carries structuredContent (see
// chunkStructured).
func (e *engine) chunk(ctx context.Context, c *call, pol Policy, info toolInfo, ref string, rec *CallRecord) tree.Value {
	i := strings.LastIndexAny(ref, ". #:/")
	n, err := 0, error(nil)
	if i > 0 {
		n, err = strconv.Atoi(ref[i+1:])
	}
	if i <= 0 || err != nil {
		return errorResult(fmt.Sprintf("terse: %q is not a chunk reference: _chunk takes the handle and the chunk number the chunk index shows, like %q", ref, chunkExample))
	}
	handle := ref[:i]
	pl := e.pipeline(c)
	req := &terse.Request{Tool: c.tool, Budget: chunkBudget(c.budget, pol.Budget), FetchBudget: chunkBudget(0, pol.Budget), Scope: c.scope}
	if c.lossless {
		// Braked: as much as the client takes.
		req.Budget = chunkBudget(math.MaxInt32, pol.Budget)
	}
	start := time.Now()
	ch, err := pl.Chunk(ctx, handle, n, req)
	rec.Pipeline = time.Since(start)
	if err != nil {
		if _, ok := errors.AsType[*fit.StoreError](err); ok {
			rec.StoreFailed = true
			e.storeFailed(err)
			return errorResult(fmt.Sprintf("the chunk store is unavailable right now (%v); re-run the original call, with _output_mode: \"raw\" for the whole result", err))
		}
		return errorResult(err.Error())
	}
	e.storeOK()
	rec.TokensAfter = ch.Tokens
	mems := []tree.Member{{Key: "content", Value: tree.Array(textBlock(ch.Text, "chunk"))}}
	fact := chunkCompleteness(handle, n, req.Budget, &ch)
	if info.outputSchema && pol.Reads != ReadsStructured {
		if sc, ok := e.chunkStructured(ctx, pl, req, info.schema, handle, n, ch); ok {
			mems = append(mems, tree.Member{Key: "structuredContent", Value: sc})
		} else {
			e.opts.Logger.Debug("chunk reply without structuredContent: none valid by the outputSchema", "tool", c.tool)
		}
	}
	return withCompleteness(tree.Object(mems...), fact.value(false))
}

// chunkExample is the handle form the chunk index issues.
const chunkExample = "c_0123456789abcdef.2"

// shape is how a result's structuredContent relates to the text block a
// handle was minted for, so that chunk replies of a tool with an
// outputSchema carry structuredContent of the same shape: the document
// itself (its item array cut to the chunk), or an object wrapping the
// text under key.
type shape struct {
	wrap   bool
	key    string
	origin string // "HANDLE.N" whose whole chunk holds the document, for parts
}

// maxShapes bounds the remembered shapes; past it the least recently
// used goes.
const maxShapes = 4096

func (e *engine) rememberShape(handle string, s shape) {
	// Kept past the call: copies, never substrings of the upstream's
	// response or of a chunk's text, which they would keep alive whole.
	handle, s.key, s.origin = strings.Clone(handle), strings.Clone(s.key), strings.Clone(s.origin)
	if e.sharedShapes != nil {
		e.sharedShapes.putShape(handle, s)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.shapes.Set(handle, s)
}

func (e *engine) shapeOf(handle string) (shape, bool) {
	e.mu.Lock()
	s, ok := e.shapes.Get(handle)
	e.mu.Unlock()
	if !ok && e.sharedShapes != nil {
		s, ok = e.sharedShapes.shapeOf(handle)
	}
	return s, ok
}

// handleRE matches the chunk handles fit issues.
var handleRE = regexp.MustCompile(`c_[0-9a-f]{16}`)

// chunkStructured returns the structuredContent of a chunk reply: for a
// result whose structuredContent wraps its text, the same wrapper around
// the reply's text; otherwise the source document with its item array
// cut to the chunk (fit.ChunkResult.Doc), of the chunk itself when it
// came back whole, else of the whole chunk (or, for a part of one item
// too large for the budget, of the chunk holding that item). Handles the
// reply lists inherit the shape. Without a shape to follow (a handle this
// process did not mint) it is the document when there is one.
func (e *engine) chunkStructured(ctx context.Context, pl *terse.Pipeline, req *terse.Request, sch *outSchema, handle string, n int, ch fit.ChunkResult) (tree.Value, bool) {
	sh, known := e.shapeOf(handle)
	defer func() {
		if !known {
			return
		}
		for _, h := range handleRE.FindAllString(ch.Text, -1) {
			if h != handle {
				e.rememberShape(h, sh)
			}
		}
	}()
	if sh.wrap {
		return sch.fit(tree.Object(tree.Member{Key: sh.key, Value: tree.String(ch.Text)}))
	}
	if ch.Whole && ch.Doc.Kind() == tree.KindObject {
		if v, ok := sch.fit(ch.Doc); ok {
			return v, true
		}
	}
	whole := *req
	whole.Budget = math.MaxInt32
	if w, err := pl.Chunk(ctx, handle, n, &whole); err == nil && w.Doc.Kind() == tree.KindObject {
		if known {
			sh.origin = handle + "." + strconv.Itoa(n)
		}
		if v, ok := sch.fit(w.Doc); ok {
			return v, true
		}
	}
	if sh.origin != "" {
		h, m, _ := strings.Cut(sh.origin, ".")
		k, _ := strconv.Atoi(m)
		if w, err := pl.Chunk(ctx, h, k, &whole); err == nil && w.Doc.Kind() == tree.KindObject {
			return sch.fit(w.Doc)
		}
	}
	return tree.Value{}, false
}

// storeFailed marks the chunk store degraded; storeOK marks it working.
func (e *engine) storeFailed(err error) {
	e.mu.Lock()
	e.storeErr, e.storeSince = err.Error(), time.Now()
	e.mu.Unlock()
}

func (e *engine) storeOK() {
	e.mu.Lock()
	e.storeErr = ""
	e.mu.Unlock()
}

// StoreHealth is the state of the chunk store as the last call saw it.
type StoreHealth struct {
	// State is "ok", or "degraded" after a store call failed (or timed
	// out), until one succeeds again.
	State string    `json:"state"`
	OK    bool      `json:"ok"`
	Error string    `json:"error,omitempty"`
	Since time.Time `json:"since,omitzero"`
}

func (e *engine) storeHealth() StoreHealth {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.storeErr == "" {
		return StoreHealth{State: "ok", OK: true}
	}
	return StoreHealth{State: "degraded", Error: e.storeErr, Since: e.storeSince}
}

// Budget is the one budget rule. The effective budget of a call's result
// is the smallest positive one of: the call's _budget, the client's
// budget (its policy's, else Options.DefaultBudget), and the budget of
// the tool's pipeline (its rule, else the configuration's). The result's
// text blocks share it by size (see split): their sum never exceeds it.
func effectiveBudget(callBudget, clientBudget, pipelineBudget int) int {
	b := pipelineBudget
	for _, x := range []int{callBudget, clientBudget} {
		if x > 0 && (b <= 0 || x < b) {
			b = x
		}
	}
	return b
}

// chunkBudget is the budget of a chunk fetch: what the chunk index
// promises a fetch without _budget (fit.DefaultFetchBudget), or the
// call's _budget, up to the client's own limit (its policy's budget,
// else fit.DefaultBudget). The pipeline's budget for results does not
// apply: a chunk comes back as the index said it would.
func chunkBudget(callBudget, clientBudget int) int {
	limit := clientBudget
	if limit <= 0 {
		limit = fit.DefaultBudget
	}
	b := fit.DefaultFetchBudget
	if callBudget > 0 {
		b = callBudget
	}
	return min(b, limit)
}

// split shares budget between blocks of the given sizes (bytes) after
// reserving fixed tokens for the text blocks left as they are, so that
// the shares and fixed sum to at most budget. A share is at least 1.
func split(budget, fixed int, sizes []int) []int {
	room := budget - fixed
	total := 0
	for _, s := range sizes {
		total += s
	}
	out := make([]int, len(sizes))
	for i, s := range sizes {
		if total > 0 {
			out[i] = int(int64(room) * int64(s) / int64(total))
		}
		out[i] = max(out[i], 1)
	}
	return out
}

// finish transforms a tools/call result: raw is the JSON of the
// upstream's "result" member. It returns the result to send, or nil when
// the upstream's bytes go out unchanged (raw mode, nothing to do, or a
// transform that would not make what the model reads smaller).
func (e *engine) finish(ctx context.Context, c *call, pol Policy, raw []byte, rec *CallRecord) (out []byte, err error) {
	rec.Outcome = "passed"
	rec.Brake = c.brake // a call that braked its tool is counted once, here
	if !utf8.Valid(raw) {
		// Bytes that are not UTF-8 (a server writing Latin-1, a string
		// cut mid-character): read as a client's JSON decoder reads them,
		// each one as U+FFFD, and sent so even when nothing else changes.
		raw = validUTF8(raw)
		defer func() {
			if out == nil && err == nil {
				out = raw
			}
		}()
	}
	defer func() {
		// Fail open: the client gets the upstream's result as sent.
		if r := recover(); r != nil {
			e.opts.recovered("call", r, "tool", c.tool)
			rec.Outcome = "skipped_error"
			out, err = nil, nil
		}
	}()
	e.stage("finish")
	if c.raw || !e.opts.selected(c.tool) {
		// Relayed as sent: the front end checked the envelope's
		// structure, and the bytes are the upstream's.
		if c.raw {
			rec.Outcome = "raw"
		} else if e.opts.Telemetry != nil {
			e.untouched(c, string(raw), telemetry.UntouchedExcluded)
		}
		return nil, nil
	}
	res, err := tree.Parse(raw)
	if err != nil {
		return nil, errInvalidResult
	}
	if res.Kind() != tree.KindObject {
		return nil, nil
	}
	select {
	case e.sem <- struct{}{}:
		defer func() { <-e.sem }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	start := time.Now()
	v, changed, err := e.transform(ctx, c, pol, res, rec)
	rec.Pipeline = time.Since(start)
	if err != nil {
		if e.opts.FailOnError {
			rec.Outcome = "error"
			return nil, err
		}
		e.opts.Logger.Warn("transform failed; passing the original result", "tool", c.tool, "err", err)
		rec.Outcome = "skipped_error"
		return nil, nil
	}
	if e.tell(c) {
		if !changed {
			v = res
		}
		v, changed = withNotice(v), true
	}
	if !changed {
		return nil, nil
	}
	rec.Outcome = "transformed"
	return tree.AppendJSON(nil, v), nil
}

func isText(b tree.Value) bool {
	t, _ := b.Get("type")
	s, ok := b.Get("text")
	return t.Str() == "text" && ok && s.Kind() == tree.KindString
}

// validUTF8 returns b with each byte that does not start a valid UTF-8
// sequence replaced by U+FFFD, as encoding/json decodes a string.
func validUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

// stage runs the test hook of a stage, if any.
func (e *engine) stage(name string) {
	if e.stageHook != nil {
		e.stageHook(name)
	}
}

// record counts a finished call once: stats, metrics, the DEBUG log.
func (e *engine) record(r CallRecord) {
	e.opts.Stats.Add(r)
	logCall(e.opts.Logger, r)
}

// dedupKey maps a partition name to a dedup key: the session (without
// its compaction generation) and the partition.
func dedupKey(partition string) dedup.Key {
	s := partition
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	return dedup.Key{Session: s, Partition: partition}
}

// pathKeys are argument names that name what a call reads or writes.
var pathKeys = []string{"path", "paths", "file", "files", "filename", "source", "destination", "uri", "url", "key", "name", "names", "entityname", "id"}

// argPaths returns the string values of path-like top-level arguments
// (and of arrays of strings under such keys).
func argPaths(v tree.Value) []string {
	if v.Kind() != tree.KindObject {
		return nil
	}
	var out []string
	for _, m := range v.Members() {
		k := strings.ToLower(m.Key)
		if !slices.Contains(pathKeys, k) && !strings.HasSuffix(k, "path") {
			continue
		}
		switch m.Value.Kind() {
		case tree.KindString:
			out = append(out, m.Value.Str())
		case tree.KindArray:
			for _, it := range m.Value.Items() {
				if it.Kind() == tree.KindString {
					out = append(out, it.Str())
				}
			}
		}
	}
	return out
}

// restartLimiter bounds how often an upstream is started again: at most
// max starts within a minute after the first. One limiter per upstream,
// for the stdio proxy and the gateway alike.
type restartLimiter struct {
	max int
	now func() time.Time

	mu    sync.Mutex
	times []time.Time
}

// allow records a restart and reports whether it may happen; when not, it
// says until when.
func (l *restartLimiter) allow() (bool, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.now != nil {
		now = l.now()
	}
	l.times = slices.DeleteFunc(l.times, func(t time.Time) bool { return now.Sub(t) >= time.Minute })
	if len(l.times) >= l.max {
		return false, l.times[0].Add(time.Minute)
	}
	l.times = append(l.times, now)
	return true, time.Time{}
}

// partition returns the dedup partition name of a session (and
// conversation, when the client names one): "SESSION/N" where N counts
// the session's compactions, or "SESSION#CONVERSATION/N" and
// "SESSION#CONVERSATION/N.M" once the conversation itself was compacted M
// times. A name is never reused after a compaction while the session is
// kept; a session the bound drops has its partitions reset first.
func (e *engine) partition(session, conversation string) string {
	e.mu.Lock()
	defer e.unlockAndReset()
	if conversation == "" {
		return partitionName(session, conversation, e.sessionLocked(session, false))
	}
	st := e.sessionLocked(session, true)
	if !slices.Contains(st.convs, conversation) {
		// A copy: the name may be a substring of the request it came in.
		st.convs = append(st.convs, strings.Clone(conversation))
	}
	return partitionName(session, conversation, st)
}

// compact advances the partition of one conversation of a session, or,
// when conversation is "", of the whole session and every conversation in
// it, and drops the dedup state of the partitions left behind.
func (e *engine) compact(session, conversation string) {
	e.mu.Lock()
	st := e.sessionLocked(session, true)
	var old []string
	if conversation != "" {
		old = append(old, partitionName(session, conversation, st))
		if st.convGens == nil {
			st.convGens = map[string]int{}
		}
		st.convGens[strings.Clone(conversation)]++
	} else {
		old = st.partitions(session)
		st.gen++
	}
	e.evicted = append(e.evicted, old...)
	e.unlockAndReset()
}

// forget drops an ended session: its partitions and those of its
// conversations are reset and everything kept for it deleted.
func (e *engine) forget(session string) {
	e.mu.Lock()
	st := e.sessionLocked(session, false)
	e.evicted = append(e.evicted, st.partitions(session)...)
	e.sessions.Delete(session)
	e.unlockAndReset()
}

// unlockAndReset releases e.mu and then resets the partitions waiting
// in e.evicted.
func (e *engine) unlockAndReset() {
	old := e.evicted
	e.evicted = nil
	e.mu.Unlock()
	e.reset(old)
}

func (e *engine) reset(partitions []string) {
	for _, p := range partitions {
		if e.resetHook != nil {
			e.resetHook(p)
		}
		if e.opts.Dedup != nil {
			e.opts.Dedup.Compact(dedupKey(p))
		}
	}
}

// counter is the tokenizer of the stats and of the catalogue.
func (e *engine) counter() tokens.Counter { return e.opts.Counter }

// contentCarries reports whether the content blocks already hold what
// structured holds: one block is structured as JSON, or structured is an
// object that only wraps block texts or the blocks themselves (as in
// {"content": "<file text>"} or {"content": [<the blocks>]}); wraps says
// it is the latter.
func contentCarries(blocks []tree.Value, structured tree.Value) (carries, wraps bool) {
	if structured.Kind() == tree.KindObject && structured.Len() > 0 {
		wraps := true
		for _, m := range structured.Members() {
			found := m.Value.Kind() == tree.KindArray && sameValue(m.Value, tree.Array(blocks...))
			for _, b := range blocks {
				if s, ok := b.Get("text"); ok && m.Value.Kind() == tree.KindString && s.Str() == m.Value.Str() {
					found = true
					break
				}
			}
			wraps = wraps && found
		}
		if wraps {
			return true, true
		}
	}
	for _, b := range blocks {
		if s, ok := b.Get("text"); ok && s.Kind() == tree.KindString {
			if v, err := tree.ParseString(s.Str()); err == nil && sameValue(v, structured) {
				return true, false
			}
		}
	}
	return false, false
}

// sameValue is tree.Equal except that object members may come in any
// order: servers often serialize structuredContent from a map.
func sameValue(a, b tree.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case tree.KindArray:
		if a.Len() != b.Len() {
			return false
		}
		for i, x := range a.Items() {
			if !sameValue(x, b.Index(i)) {
				return false
			}
		}
		return true
	case tree.KindObject:
		if a.Len() != b.Len() {
			return false
		}
		for _, m := range a.Members() {
			y, ok := b.Get(m.Key)
			if !ok || !sameValue(m.Value, y) {
				return false
			}
		}
		return true
	}
	return tree.Equal(a, b)
}

// event records one telemetry event for a text block of a call's result
// that went through the pipeline (r, or its error err). Nothing is done
// (not even the shape detection) when telemetry is off.
//
// A result whose text the model is not shown after all (!kept: it was
// left as it was, or the structuredContent replaced it) counts as passed
// with no saving and no hints; noID says its id line was taken out.
func (e *engine) event(c *call, text string, r *terse.Result, err error, latency time.Duration, kept, noID bool) {
	rec := e.opts.Telemetry
	if rec == nil {
		return
	}
	ev := e.baseEvent(c)
	ev.Latency = latency
	ev.SetInput(rec, []byte(text))
	ev.SetResult(r, err, "pipeline")
	if err == nil {
		if noID {
			ev.Hints[telemetry.HintID] = 0
		}
		if !kept {
			ev.Hints = [telemetry.NumHints]uint16{}
			ev.Saved = [telemetry.NumSources]int{}
			// Left as it was: counted as sent, before and after, as
			// the call's stats count it (meter.Baseline), not as
			// compact JSON.
			n := e.pipeline(c).Counter().Count(text)
			ev.BytesIn, ev.TokensIn = len(text), n
			ev.BytesOut, ev.TokensOut, ev.Format = ev.BytesIn, ev.TokensIn, "passthrough"
			if ev.Dedup == telemetry.DedupHit || ev.Dedup == telemetry.DedupNear {
				ev.Dedup = telemetry.DedupMiss
			}
			if ev.Untouched == "" {
				ev.Untouched = telemetry.UntouchedNoSaving
			}
		}
	}
	rec.Record(&ev)
}

// untouched records a result passed as it was, and why.
func (e *engine) untouched(c *call, text string, why string) {
	rec := e.opts.Telemetry
	if rec == nil {
		return
	}
	ev := e.baseEvent(c)
	f := telemetry.Detect([]byte(text))
	ev.Shape, ev.Inner, ev.Depth, ev.Cols = f.Shape, f.Inner, f.Depth, f.Cols
	n := e.counter().Count(text)
	ev.Tokenizer = e.counter().Name()
	ev.BytesIn, ev.BytesOut, ev.TokensIn, ev.TokensOut = len(text), len(text), n, n
	ev.Untouched = why
	rec.Record(&ev)
}

// recordChunk records a chunk fetch.
func (e *engine) recordChunk(c *call, r *CallRecord) {
	rec := e.opts.Telemetry
	if rec == nil {
		return
	}
	ev := e.baseEvent(c)
	ev.ChunkFetch = true
	ev.Tokenizer = e.pipeline(c).Counter().Name()
	ev.TokensOut = r.TokensAfter
	ev.Latency = r.Pipeline
	if r.StoreFailed {
		ev.Err = "store"
	}
	rec.Record(&ev)
}

func (e *engine) baseEvent(c *call) telemetry.Event {
	entry, tool := telemetry.EntryProxy, c.tool
	if c.server != "" {
		entry, tool = telemetry.EntryGateway, c.server+toolname.Sep+c.tool
	}
	e.mu.Lock()
	part := e.sessionLocked(c.sessionID, false).gen
	e.mu.Unlock()
	return telemetry.Event{Entry: entry, Session: c.sessionID, Partition: part, Tool: tool, Brake: c.brake}
}
