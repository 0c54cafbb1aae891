package mcpproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/terse-dev/terse/tree"
)

// JSON-RPC error codes the proxy answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInternalError  = -32603
	// CodeUpstreamUnavailable is the error code of requests the upstream
	// could not answer because it exited, could not be started, or sent a
	// message over the size limit.
	CodeUpstreamUnavailable = -32001
)

// Proxy is a stdio MCP proxy: it relays JSON-RPC between one client and one
// upstream server in wire order, untouched except for tools/list (reserved
// parameters added, outputSchema adjusted to the client's policy, the
// terse_compact tool added) and tools/call (reserved parameters removed and
// acted on, results transformed). Progress tokens are replaced by unique
// upstream tokens and mapped back; cancellations pass through.
//
// A Proxy serves one client; create it with [NewProxy] and run [Proxy.Serve].
type Proxy struct {
	up  Upstream
	eng *engine
	o   *Options

	wmu sync.Mutex
	w   *bufio.Writer

	ctx context.Context
	wg  sync.WaitGroup

	mu          sync.Mutex
	conn        Conn
	gen         int
	dialed      bool
	restarts    []time.Time
	pending     map[string]*pending
	own         map[string]chan tree.Value
	progress    map[string]tree.Value // upstream token -> client token
	nextID      int
	initParams  tree.Value
	hasInit     bool
	initialized bool
	client      string
	pol         Policy
	tools       map[string]toolInfo
}

// pending is a request forwarded upstream and not yet answered.
type pending struct {
	id     tree.Value
	method string
	gen    int
	token  string // minted upstream progress token, if any
	start  time.Time

	// tools/call
	call   *Call
	raw    bool
	budget int
	// tools/list
	firstPage bool
}

// metaClientInfo is the _meta key of the client's Implementation in
// requests of protocol 2026-07-28.
const metaClientInfo = "io.modelcontextprotocol/clientInfo"

// session is the dedup session name of the stdio proxy's one client.
const stdioSession = "stdio"

// shutdownGrace bounds how long Serve waits for requests in flight after
// the client closed its input.
const shutdownGrace = 10 * time.Second

// NewProxy returns a proxy for the given upstream. opts may be nil.
func NewProxy(up Upstream, opts *Options) *Proxy {
	e := newEngine(opts)
	if c, ok := up.(*Command); ok && c.MaxMessageBytes == 0 {
		cc := *c
		cc.MaxMessageBytes = e.opts.maxMessage()
		up = &cc
	}
	return &Proxy{
		up:       up,
		eng:      e,
		o:        &e.opts,
		pending:  map[string]*pending{},
		own:      map[string]chan tree.Value{},
		progress: map[string]tree.Value{},
		tools:    map[string]toolInfo{},
	}
}

// Stats returns the proxy's totals.
func (p *Proxy) Stats() *Stats { return p.o.Stats }

// Serve relays between the client on r/w and the upstream until r ends or
// ctx is done. It starts the upstream at once and restarts it (bounded by
// MaxRestarts per minute) on the next request after it dies.
func (p *Proxy) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.ctx = ctx
	p.w = bufio.NewWriterSize(w, 64<<10)
	if _, _, err := p.upstream(); err != nil {
		return err
	}
	frames := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			f, err := readFrame(br, p.o.maxMessage())
			if tl, ok := errors.AsType[*MessageTooLargeError](err); ok {
				p.o.Stats.rejected()
				p.reply(idFromPrefix(tl.Prefix), nil, codeInvalidRequest, fmt.Sprintf("terse: message rejected: larger than %d bytes", tl.Limit))
				continue
			}
			if err != nil {
				readErr <- err
				return
			}
			select {
			case frames <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	var err error
loop:
	for {
		select {
		case f := <-frames:
			p.fromClient(f)
		case err = <-readErr:
			if err == io.EOF {
				err = nil
			}
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	// The client closed its side: let requests in flight finish (bounded),
	// as a server would before exiting.
	for deadline := time.Now().Add(shutdownGrace); ctx.Err() == nil && time.Now().Before(deadline); {
		p.mu.Lock()
		n := len(p.pending)
		p.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.wg.Wait()
	p.mu.Lock()
	c := p.conn
	p.conn = nil
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
	return err
}

// write sends one message to the client.
func (p *Proxy) write(msg []byte) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.w.Write(msg)
	p.w.WriteByte('\n')
	p.w.Flush()
}

// reply sends a response with a result (when res is non-nil) or an error.
func (p *Proxy) reply(id tree.Value, res *tree.Value, code int, msg string) {
	p.write(response(id, res, code, msg))
}

func response(id tree.Value, res *tree.Value, code int, msg string) []byte {
	mems := []tree.Member{{Key: "jsonrpc", Value: tree.String("2.0")}, {Key: "id", Value: id}}
	if res != nil {
		mems = append(mems, tree.Member{Key: "result", Value: *res})
	} else {
		mems = append(mems, tree.Member{Key: "error", Value: tree.Object(
			tree.Member{Key: "code", Value: tree.Int(int64(code))},
			tree.Member{Key: "message", Value: tree.String(msg)},
		)})
	}
	return tree.AppendJSON(nil, tree.Object(mems...))
}

// idKey identifies a request id in maps (compact JSON of the id).
func idKey(id tree.Value) string { return string(tree.AppendJSON(nil, id)) }

func validID(id tree.Value) bool {
	return id.Kind() == tree.KindString || id.Kind() == tree.KindNumber
}

// fromClient handles one message from the client.
func (p *Proxy) fromClient(frame []byte) {
	v, err := tree.Parse(frame)
	if err != nil {
		p.o.Stats.rejected()
		p.o.Logger.Warn("rejected malformed message from client", "err", err)
		p.reply(tree.Null(), nil, codeParseError, "terse: parse error: "+err.Error())
		return
	}
	if v.Kind() != tree.KindObject {
		p.o.Stats.rejected()
		p.reply(tree.Null(), nil, codeInvalidRequest, "terse: a message must be a JSON-RPC object (batches are not supported)")
		return
	}
	id, hasID := v.Get("id")
	method, hasMethod := v.Get("method")
	switch {
	case hasMethod && method.Kind() == tree.KindString && hasID && !id.IsNull():
		if !validID(id) {
			p.o.Stats.rejected()
			p.reply(tree.Null(), nil, codeInvalidRequest, "terse: request id must be a string or a number")
			return
		}
		p.request(v, id, method.Str(), frame)
	case hasMethod && method.Kind() == tree.KindString:
		p.notification(v, method.Str(), frame)
	case hasID && (v.Has("result") || v.Has("error")):
		// A response to a request of the server: relay as is.
		p.mu.Lock()
		c := p.conn
		p.mu.Unlock()
		if c != nil {
			c.Write(frame)
		}
	default:
		p.o.Stats.rejected()
		if !validID(id) {
			id = tree.Null()
		}
		p.reply(id, nil, codeInvalidRequest, "terse: not a JSON-RPC request, notification or response")
	}
}

func (p *Proxy) request(v, id tree.Value, method string, frame []byte) {
	params, _ := v.Get("params")
	pd := &pending{id: id, method: method, start: time.Now()}
	if meta, ok := params.Get("_meta"); ok {
		// Protocol 2026-07-28 has no initialize: each request names its client.
		if ci, ok := meta.Get(metaClientInfo); ok {
			if name, ok := ci.Get("name"); ok {
				p.mu.Lock()
				if p.client != name.Str() {
					p.client = name.Str()
					p.pol = p.o.policy(p.client)
				}
				p.mu.Unlock()
			}
		}
	}
	switch method {
	case "initialize":
		ci, _ := params.Get("clientInfo")
		name, _ := ci.Get("name")
		p.mu.Lock()
		p.initParams, p.hasInit = params, true
		p.client = name.Str()
		p.pol = p.o.policy(p.client)
		p.mu.Unlock()
	case "tools/list":
		pd.firstPage = !params.Has("cursor")
	case "tools/call":
		nv, done := p.prepareCall(v, id, params, pd)
		if done {
			return
		}
		if nv != v {
			v, frame = nv, nil
		}
	}
	if nv, changed := p.mintProgress(v, pd); changed {
		v, frame = nv, nil
	}
	if frame == nil {
		frame = tree.AppendJSON(nil, v)
	}
	p.send(pd, frame)
}

// prepareCall handles the reserved parameters of a tools/call. It returns
// the message to forward, or done when the call was answered locally.
func (p *Proxy) prepareCall(v, id, params tree.Value, pd *pending) (tree.Value, bool) {
	nameV, _ := params.Get("name")
	name := nameV.Str()
	meta, _ := params.Get("_meta")
	conv, _ := meta.Get(MetaConversation)
	p.mu.Lock()
	client := p.client
	info, known := p.tools[name]
	p.mu.Unlock()
	if !known {
		info = toolInfo{mutating: isMutating(name, tree.Null())}
	}
	if name == CompactTool && !known {
		p.eng.compact(stdioSession, conv.Str())
		res := tree.Object(tree.Member{Key: "content", Value: tree.Array(tree.Object(
			tree.Member{Key: "type", Value: tree.String("text")},
			tree.Member{Key: "text", Value: tree.String("ok: later results will not refer to earlier ones")},
		))})
		p.reply(id, &res, 0, "")
		return v, true
	}
	args, _ := params.Get("arguments")
	rest, ra, err := splitArgs(args, info)
	call := &Call{Session: p.eng.partition(stdioSession, conv.Str()), Client: client, Tool: name}
	if rest.Kind() == tree.KindObject {
		call.Arguments = rawJSON(rest)
	}
	if err != nil {
		res := errorResult("terse: " + err.Error())
		p.reply(id, &res, 0, "")
		p.record(CallRecord{Tool: name, Outcome: "error", Duration: time.Since(pd.start)})
		return v, true
	}
	if ra.chunk != "" {
		res, err := p.eng.chunk(p.ctx, call, ra.chunk)
		if err != nil {
			res = errorResult(fmt.Sprintf("terse: %v. Call %s without _chunk to get a fresh result.", err, name))
		}
		p.reply(id, &res, 0, "")
		p.record(CallRecord{Tool: name, Outcome: "chunk", Duration: time.Since(pd.start)})
		return v, true
	}
	if info.mutating || matchAny(p.o.MutatingTools, name) {
		p.eng.invalidate(call)
	}
	pd.call, pd.raw, pd.budget = call, ra.raw, ra.budget
	if args.Kind() == tree.KindObject && rest.Len() != args.Len() {
		v = setMember(v, "params", setMember(params, "arguments", rest))
	}
	return v, false
}

// mintProgress replaces a client progress token by a unique upstream one.
func (p *Proxy) mintProgress(v tree.Value, pd *pending) (tree.Value, bool) {
	params, _ := v.Get("params")
	meta, _ := params.Get("_meta")
	tok, ok := meta.Get("progressToken")
	if !ok {
		return v, false
	}
	p.mu.Lock()
	p.nextID++
	pd.token = "terse-p" + strconv.Itoa(p.nextID)
	p.progress[pd.token] = tok
	p.mu.Unlock()
	meta = setMember(meta, "progressToken", tree.String(pd.token))
	return setMember(v, "params", setMember(params, "_meta", meta)), true
}

// setMember returns obj with key set to val (replaced in place, or
// appended).
func setMember(obj tree.Value, key string, val tree.Value) tree.Value {
	mems := make([]tree.Member, 0, len(obj.Members())+1)
	found := false
	for _, m := range obj.Members() {
		if m.Key == key {
			m.Value, found = val, true
		}
		mems = append(mems, m)
	}
	if !found {
		mems = append(mems, tree.Member{Key: key, Value: val})
	}
	return tree.Object(mems...)
}

// send forwards a request upstream, starting the upstream if needed.
func (p *Proxy) send(pd *pending, frame []byte) {
	c, gen, err := p.upstream()
	if err == nil {
		p.mu.Lock()
		pd.gen = gen
		p.pending[idKey(pd.id)] = pd
		p.mu.Unlock()
		err = c.Write(frame)
		if err != nil {
			p.mu.Lock()
			delete(p.pending, idKey(pd.id))
			p.mu.Unlock()
		}
	}
	if err != nil {
		p.dropToken(pd)
		p.reply(pd.id, nil, CodeUpstreamUnavailable, fmt.Sprintf("terse: upstream %s unavailable: %v", p.up, err))
		if pd.call != nil {
			p.record(CallRecord{Tool: pd.call.Tool, Outcome: "error", Duration: time.Since(pd.start)})
		}
	}
}

func (p *Proxy) dropToken(pd *pending) {
	if pd.token != "" {
		p.mu.Lock()
		delete(p.progress, pd.token)
		p.mu.Unlock()
	}
}

func (p *Proxy) notification(v tree.Value, method string, frame []byte) {
	switch method {
	case CompactNotification:
		params, _ := v.Get("params")
		meta, _ := params.Get("_meta")
		conv, _ := meta.Get(MetaConversation)
		p.eng.compact(stdioSession, conv.Str())
		return
	case "notifications/initialized":
		p.mu.Lock()
		p.initialized = true
		p.mu.Unlock()
	case "notifications/cancelled":
		params, _ := v.Get("params")
		rid, _ := params.Get("requestId")
		p.mu.Lock()
		pd := p.pending[idKey(rid)]
		if pd != nil {
			delete(p.pending, idKey(rid))
			delete(p.progress, pd.token)
		}
		p.mu.Unlock()
		if pd != nil && pd.call != nil {
			p.record(CallRecord{Tool: pd.call.Tool, Outcome: "cancelled", Duration: time.Since(pd.start)})
		}
	}
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	if c != nil {
		c.Write(frame)
	}
}

// upstream returns the live upstream connection, dialing (and replaying
// the client's initialize) when the previous one died.
func (p *Proxy) upstream() (Conn, int, error) {
	p.mu.Lock()
	if p.conn != nil {
		defer p.mu.Unlock()
		return p.conn, p.gen, nil
	}
	restart := p.dialed
	if restart {
		now := time.Now()
		kept := p.restarts[:0]
		for _, t := range p.restarts {
			if now.Sub(t) < time.Minute {
				kept = append(kept, t)
			}
		}
		p.restarts = kept
		if len(kept) >= p.o.maxRestarts() {
			p.mu.Unlock()
			return nil, 0, fmt.Errorf("it exited %d times in the last minute; not restarting it before %s", len(kept), kept[0].Add(time.Minute).Format(time.TimeOnly))
		}
		p.restarts = append(p.restarts, now)
	}
	p.dialed = true
	initParams, hasInit, initialized := p.initParams, p.hasInit, p.initialized
	p.mu.Unlock()

	if restart {
		p.o.Stats.restarted()
		p.o.Logger.Info("restarting upstream", "upstream", p.up.String())
	}
	c, err := p.up.Dial(p.ctx)
	if err != nil {
		return nil, 0, err
	}
	p.mu.Lock()
	p.gen++
	gen := p.gen
	p.conn = c
	p.mu.Unlock()
	go p.readUpstream(c, gen)
	if restart && hasInit {
		if err := p.replayInit(c, initParams, initialized); err != nil {
			p.gone(gen, err)
			return nil, 0, fmt.Errorf("re-initializing after a restart: %w", err)
		}
	}
	return c, gen, nil
}

// replayInit sends the client's initialize to a restarted upstream and
// waits for its answer.
func (p *Proxy) replayInit(c Conn, params tree.Value, initialized bool) error {
	p.mu.Lock()
	p.nextID++
	id := tree.String("terse-init-" + strconv.Itoa(p.nextID))
	ch := make(chan tree.Value, 1)
	p.own[idKey(id)] = ch
	p.mu.Unlock()
	msg := tree.Object(
		tree.Member{Key: "jsonrpc", Value: tree.String("2.0")},
		tree.Member{Key: "id", Value: id},
		tree.Member{Key: "method", Value: tree.String("initialize")},
		tree.Member{Key: "params", Value: params},
	)
	if err := c.Write(tree.AppendJSON(nil, msg)); err != nil {
		return err
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return errors.New("upstream exited during initialize")
		}
		if e, ok := resp.Get("error"); ok {
			return fmt.Errorf("initialize failed: %s", e)
		}
	case <-time.After(30 * time.Second):
		return errors.New("no answer to initialize within 30s")
	case <-p.ctx.Done():
		return p.ctx.Err()
	}
	if initialized {
		return c.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	return nil
}

func (p *Proxy) readUpstream(c Conn, gen int) {
	for {
		frame, err := c.Read()
		if tl, ok := errors.AsType[*MessageTooLargeError](err); ok {
			p.tooLarge(gen, tl)
			continue
		}
		if err != nil {
			p.gone(gen, err)
			return
		}
		p.fromUpstream(gen, frame)
	}
}

// tooLarge answers the request whose response exceeded the limit.
func (p *Proxy) tooLarge(gen int, tl *MessageTooLargeError) {
	p.o.Stats.rejected()
	id := idFromPrefix(tl.Prefix)
	p.mu.Lock()
	pd := p.pending[idKey(id)]
	if pd != nil && pd.gen == gen {
		delete(p.pending, idKey(id))
		delete(p.progress, pd.token)
	}
	p.mu.Unlock()
	p.o.Logger.Warn("dropped oversized message from upstream", "limit", tl.Limit)
	if pd != nil {
		p.reply(pd.id, nil, CodeUpstreamUnavailable, fmt.Sprintf("terse: the upstream's response was larger than %d bytes and was dropped", tl.Limit))
	}
}

// idFromPrefix finds the id of a message from its first bytes, best
// effort: a top-level "id" member before the cut.
func idFromPrefix(prefix []byte) tree.Value {
	s := string(prefix)
	for i := 0; i < len(s); {
		j := indexFrom(s, `"id"`, i)
		if j < 0 {
			break
		}
		k := j + 4
		for k < len(s) && (s[k] == ' ' || s[k] == ':') {
			k++
		}
		end := k
		if k < len(s) && s[k] == '"' {
			end = indexFrom(s, `"`, k+1) + 1
		} else {
			for end < len(s) && (s[end] == '-' || s[end] >= '0' && s[end] <= '9') {
				end++
			}
		}
		if end > k {
			if v, err := tree.ParseString(s[k:end]); err == nil && validID(v) {
				return v
			}
		}
		i = j + 4
	}
	return tree.Null()
}

func indexFrom(s, sub string, from int) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// gone fails the requests in flight on a dead upstream connection.
func (p *Proxy) gone(gen int, cause error) {
	p.mu.Lock()
	if p.gen != gen || p.conn == nil {
		p.mu.Unlock()
		return
	}
	c := p.conn
	p.conn = nil
	var failed []*pending
	for k, pd := range p.pending {
		if pd.gen == gen {
			failed = append(failed, pd)
			delete(p.pending, k)
			delete(p.progress, pd.token)
		}
	}
	for k, ch := range p.own {
		close(ch)
		delete(p.own, k)
	}
	p.mu.Unlock()
	c.Close()
	if p.ctx.Err() != nil {
		return
	}
	p.o.Logger.Warn("upstream died", "upstream", p.up.String(), "err", cause, "in_flight", len(failed))
	for _, pd := range failed {
		p.reply(pd.id, nil, CodeUpstreamUnavailable, fmt.Sprintf("terse: upstream %s died while handling %s (%v); it is restarted on the next request", p.up, pd.method, cause))
		if pd.call != nil {
			p.record(CallRecord{Tool: pd.call.Tool, Outcome: "error", Duration: time.Since(pd.start)})
		}
	}
}

// fromUpstream handles one message from the upstream. Only the envelope
// is scanned; a result is parsed only when it is rewritten, so relayed
// messages cost a scan, not a parse.
func (p *Proxy) fromUpstream(gen int, frame []byte) {
	env, ok := scanEnvelope(frame)
	if !ok {
		p.o.Stats.rejected()
		p.o.Logger.Warn("dropped malformed message from upstream", "prefix", string(frame[:min(len(frame), 80)]))
		return
	}
	if env.method != nil {
		if string(env.method) == `"notifications/progress"` {
			v, err := tree.Parse(frame)
			if err != nil {
				return
			}
			if nv, ok := p.unmapProgress(v); ok {
				p.write(tree.AppendJSON(nil, nv))
			}
			return
		}
		p.write(frame)
		return
	}
	id, err := tree.Parse(env.id)
	if err != nil {
		p.write(frame)
		return
	}
	key := idKey(id)
	p.mu.Lock()
	if ch, ok := p.own[key]; ok {
		delete(p.own, key)
		p.mu.Unlock()
		v, _ := tree.Parse(frame)
		ch <- v
		return
	}
	pd := p.pending[key]
	if pd != nil {
		delete(p.pending, key)
		delete(p.progress, pd.token)
		// Serve waits for this answer to be written before it returns.
		p.wg.Add(1)
		defer p.wg.Done()
	}
	pol := p.pol
	p.mu.Unlock()
	if pd == nil {
		p.write(frame) // a late answer to a cancelled request: the client ignores it
		return
	}
	switch {
	case pd.method == "tools/list" && env.result != nil:
		res, err := tree.Parse(env.result)
		if err != nil {
			p.write(frame)
			return
		}
		p.mu.Lock()
		res = rewriteToolList(res, pol, p.o, pd.firstPage, p.tools)
		p.mu.Unlock()
		p.reply(id, &res, 0, "")
	case pd.method == "tools/call":
		// Inline, not in a goroutine: the client gets messages in the
		// upstream's order, and dedup sees results in that order too
		// (so which of two identical results carries the id is fixed).
		p.finishCall(pd, pol, id, env.result, frame)
	default:
		p.write(frame)
	}
}

// unmapProgress restores the client's progress token. ok is false for
// progress of a request that is no longer in flight.
func (p *Proxy) unmapProgress(v tree.Value) (tree.Value, bool) {
	params, _ := v.Get("params")
	tok, _ := params.Get("progressToken")
	p.mu.Lock()
	orig, ok := p.progress[tok.Str()]
	p.mu.Unlock()
	if tok.Kind() != tree.KindString || !ok {
		return v, false
	}
	return setMember(v, "params", setMember(params, "progressToken", orig)), true
}

// finishCall transforms a tools/call response and sends it to the client.
// result is the raw "result" member, nil for an error response.
func (p *Proxy) finishCall(pd *pending, pol Policy, id tree.Value, result, frame []byte) {
	rec := CallRecord{Tool: pd.call.Tool}
	defer func() {
		rec.Duration = time.Since(pd.start)
		p.record(rec)
	}()
	switch {
	case result == nil:
		rec.Outcome = "error"
		p.write(frame)
		return
	case pd.raw:
		rec.Outcome = "raw"
		p.write(frame)
		return
	}
	res, err := tree.Parse(result)
	if err != nil {
		rec.Outcome = "passed"
		p.write(frame)
		return
	}
	budget := pd.budget
	if budget == 0 {
		budget = pol.Budget
	}
	out, err := p.eng.transformResult(p.ctx, *pd.call, pol, budget, res, &rec)
	switch {
	case err != nil:
		p.reply(id, nil, codeInternalError, fmt.Sprintf("terse: transforming the result of %s failed: %v", pd.call.Tool, err))
	case rec.Outcome == "transformed":
		p.reply(id, &out, 0, "")
	default:
		p.write(frame)
	}
}

func (p *Proxy) record(r CallRecord) {
	p.o.Stats.Add(r)
	if p.o.Verbose != nil {
		writeVerbose(p.o.Verbose, r)
	}
}
