package mcpproxy

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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

	limiter restartLimiter

	mu      sync.Mutex
	conn    Conn
	gen     int
	dialed  bool
	closing bool          // Serve is past its drain: no new work
	drained chan struct{} // closed when pending empties, while draining
	pending map[string]*pending
	own     map[string]chan tree.Value
	// beforeTransform, when set (tests), runs before a result is
	// transformed, off the upstream reader.
	beforeTransform func(tool string)
	progress        map[string]tree.Value // upstream token -> client token
	nextID          int
	initParams      tree.Value
	hasInit         bool
	initialized     bool
	client          string
	pol             Policy
	tools           map[string]toolInfo
}

// pending is a request forwarded upstream and not yet answered.
type pending struct {
	id     tree.Value
	method string
	gen    int
	token  string // minted upstream progress token, if any
	start  time.Time

	// tools/call
	call *call
	// tools/list
	firstPage bool
}

// metaClientInfo is the _meta key of the client's Implementation in
// requests of protocol 2026-07-28.
const metaClientInfo = "io.modelcontextprotocol/clientInfo"

// session is the dedup session name of the stdio proxy's one client.
const stdioSession = "stdio"

// defaultShutdownGrace bounds how long Serve waits for requests in flight
// after the client closed its input (Options.ShutdownGrace).
const defaultShutdownGrace = 10 * time.Second

// NewProxy returns a proxy for the given upstream. opts may be nil.
func NewProxy(up Upstream, opts *Options) *Proxy {
	e := newEngine(opts)
	// One client per process: its chunk handles are bound to this
	// process, so that another proxy process cannot read them.
	var id [16]byte
	rand.Read(id[:])
	e.scopePrefix = hex.EncodeToString(id[:]) + "/"
	if c, ok := up.(*Command); ok && c.MaxMessageBytes == 0 {
		cc := *c
		cc.MaxMessageBytes = e.opts.maxMessage()
		up = &cc
	}
	return &Proxy{
		up:       up,
		eng:      e,
		o:        &e.opts,
		limiter:  restartLimiter{max: e.opts.maxRestarts()},
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
				p.o.Stats.rejected("client")
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
	p.mu.Lock()
	var drained chan struct{}
	if len(p.pending) > 0 {
		p.drained = make(chan struct{})
		drained = p.drained
	}
	p.mu.Unlock()
	if grace := p.o.shutdownGrace(); drained != nil && grace > 0 {
		t := time.NewTimer(grace)
		select {
		case <-drained:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	// From here on no answer starts a new transform; those under way
	// finish and are written.
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
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

// unpend removes a pending request (p.mu held) and reports the drain's
// end when it was the last.
func (p *Proxy) unpend(key string, pd *pending) {
	delete(p.pending, key)
	delete(p.progress, pd.token)
	if len(p.pending) == 0 && p.drained != nil {
		close(p.drained)
		p.drained = nil
	}
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

// fromClient handles one message from the client. A panic while handling
// it is recovered (see Options.recovered): a request not yet forwarded is
// answered with an error, and the proxy goes on.
func (p *Proxy) fromClient(frame []byte) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		p.o.recovered("client", r)
		id := readableID(frame)
		p.mu.Lock()
		_, sent := p.pending[idKey(id)]
		p.mu.Unlock()
		if validID(id) && !sent {
			p.reply(id, nil, codeInternalError, "terse: internal error while handling the request (logged); it was not forwarded")
		}
	}()
	v, err := tree.Parse(frame)
	if err != nil {
		p.o.Stats.rejected("client")
		p.o.Logger.Warn("rejected malformed message from client", "err", err)
		// A request whose id is readable is answered with that id (a
		// lone surrogate in a string, say, does not hide the id).
		p.reply(readableID(frame), nil, codeParseError, "terse: parse error: "+err.Error())
		return
	}
	if v.Kind() != tree.KindObject {
		p.o.Stats.rejected("client")
		p.reply(tree.Null(), nil, codeInvalidRequest, "terse: a message must be a JSON-RPC object (batches are not supported)")
		return
	}
	id, hasID := v.Get("id")
	method, hasMethod := v.Get("method")
	switch {
	case hasMethod && method.Kind() == tree.KindString && hasID && !id.IsNull():
		if !validID(id) {
			p.o.Stats.rejected("client")
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
		p.o.Stats.rejected("client")
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
					p.client = strings.Clone(name.Str()) // not the request's bytes
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
		p.client = strings.Clone(name.Str())
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
	args, _ := params.Get("arguments")
	c, changed, answer, rec := p.eng.begin(p.ctx, "", name, client, stdioSession, conv.Str(), args, info, known)
	if answer != nil {
		p.reply(id, answer, 0, "")
		rec.Duration = time.Since(pd.start)
		p.eng.record(rec)
		return v, true
	}
	pd.call = c
	if changed {
		v = setMember(v, "params", setMember(params, "arguments", c.args))
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
	pd.token = p.eng.progressToken()
	p.mu.Lock()
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
			p.unpend(idKey(pd.id), pd)
			p.mu.Unlock()
		}
	}
	if err != nil {
		p.dropToken(pd)
		p.reply(pd.id, nil, CodeUpstreamUnavailable, fmt.Sprintf("terse: upstream %s unavailable: %v", p.up, err))
		if pd.call != nil {
			p.eng.record(CallRecord{Tool: pd.call.tool, Outcome: "error", Duration: time.Since(pd.start)})
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
			p.unpend(idKey(rid), pd)
		}
		p.mu.Unlock()
		if pd != nil && pd.call != nil {
			p.eng.record(CallRecord{Tool: pd.call.tool, Outcome: "cancelled", Duration: time.Since(pd.start)})
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
		if ok, until := p.limiter.allow(); !ok {
			p.mu.Unlock()
			return nil, 0, fmt.Errorf("it exited %d times in the last minute; not restarting it before %s", p.limiter.max, until.Format(time.TimeOnly))
		}
	}
	p.dialed = true
	initParams, hasInit, initialized := p.initParams, p.hasInit, p.initialized
	p.mu.Unlock()

	if restart {
		p.o.Stats.restarted("")
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
	p.o.Stats.upstream("", true)
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
		if err == nil && len(frame) > p.o.maxMessage() {
			// Upstreams that frame their own messages (HTTP) meet the
			// same limit.
			err = &MessageTooLargeError{Limit: p.o.maxMessage(), Prefix: frame[:min(len(frame), 4096)]}
		}
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
	p.o.Stats.rejected("upstream")
	id := idFromPrefix(tl.Prefix)
	p.mu.Lock()
	pd := p.pending[idKey(id)]
	if pd != nil && pd.gen == gen {
		p.unpend(idKey(id), pd)
	} else {
		pd = nil
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
			p.unpend(k, pd)
		}
	}
	for k, ch := range p.own {
		close(ch)
		delete(p.own, k)
	}
	p.mu.Unlock()
	c.Close()
	p.o.Stats.upstream("", false)
	if p.ctx.Err() != nil {
		return
	}
	p.o.Logger.Warn("upstream died", "upstream", p.up.String(), "err", cause, "in_flight", len(failed))
	for _, pd := range failed {
		p.reply(pd.id, nil, CodeUpstreamUnavailable, fmt.Sprintf("terse: upstream %s died while handling %s (%v); it is restarted on the next request", p.up, pd.method, cause))
		if pd.call != nil {
			p.eng.record(CallRecord{Tool: pd.call.tool, Outcome: "error", Duration: time.Since(pd.start)})
		}
	}
}

// malformedFromUpstream drops a message from the upstream that is not
// JSON-RPC; when it was the answer to a request, that request is answered
// with an error rather than left waiting.
func (p *Proxy) malformedFromUpstream(gen int, frame []byte) {
	p.o.Stats.rejected("upstream")
	p.o.Logger.Warn("dropped malformed message from upstream", "prefix", string(frame[:min(len(frame), 80)]))
	id := readableID(frame)
	p.mu.Lock()
	pd := p.pending[idKey(id)]
	if pd != nil && pd.gen == gen && !id.IsNull() {
		p.unpend(idKey(id), pd)
	} else {
		pd = nil
	}
	p.mu.Unlock()
	if pd != nil {
		p.reply(pd.id, nil, CodeUpstreamUnavailable, "terse: the upstream's response was not valid JSON and was dropped")
		if pd.call != nil {
			p.eng.record(CallRecord{Tool: pd.call.tool, Outcome: "error", Duration: time.Since(pd.start)})
		}
	}
}

// upstreamNotification relays a request or notification of the
// upstream, a progress notification with the client's token.
func (p *Proxy) upstreamNotification(env envelope, frame []byte) {
	if string(env.method) != `"notifications/progress"` {
		p.write(frame)
		return
	}
	v, err := tree.Parse(frame)
	if err != nil {
		return
	}
	if nv, ok := p.unmapProgress(v); ok {
		p.write(tree.AppendJSON(nil, nv))
	}
}

// finishList answers a tools/list request with the upstream's catalogue
// as the policy rewrites it.
func (p *Proxy) finishList(pd *pending, pol Policy, id tree.Value, result, frame []byte) {
	res, err := tree.Parse(result)
	if err != nil {
		p.write(frame)
		return
	}
	p.eng.stage("list")
	p.mu.Lock()
	res, before, after := func() (tree.Value, int, int) {
		defer p.mu.Unlock()
		return rewriteToolList(res, pol, p.o, pd.firstPage, p.tools, p.eng.counter())
	}()
	p.o.Stats.catalog("", before, after)
	p.reply(id, &res, 0, "")
}

// fromUpstream handles one message from the upstream. Only the envelope
// is scanned; a result is parsed only when it is rewritten, so relayed
// messages cost a scan, not a parse.
//
// A panic while handling it is recovered (see Options.recovered) and the
// message goes to the client as the upstream sent it.
func (p *Proxy) fromUpstream(gen int, frame []byte) {
	defer p.passOnPanic("upstream", frame)
	env, ok := scanEnvelope(frame)
	if !ok {
		p.malformedFromUpstream(gen, frame)
		return
	}
	if env.method != nil {
		p.upstreamNotification(env, frame)
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
	async := false
	if pd != nil {
		p.unpend(key, pd)
		// A result is transformed off this reader, so that one large
		// result never delays the answers behind it. Serve waits for it
		// to be written, unless it is already past its drain.
		if pd.method == "tools/call" && !p.closing {
			p.wg.Add(1)
			async = true
		}
	}
	pol := p.pol
	p.mu.Unlock()
	if pd == nil {
		p.write(frame) // a late answer to a cancelled request: the client ignores it
		return
	}
	if async {
		go func() {
			defer p.wg.Done()
			defer p.passOnPanic("upstream", frame)
			p.finishCall(pd, pol, id, env.result, frame)
		}()
		return
	}
	switch {
	case pd.method == "tools/list" && env.result != nil:
		p.finishList(pd, pol, id, env.result, frame)
	case pd.method == "tools/call":
		p.finishCall(pd, pol, id, env.result, frame)
	default:
		p.write(frame)
	}
}

// passOnPanic, deferred, recovers a panic in handling a message from the
// upstream and sends the message to the client as it came: whatever
// failed, the client gets the upstream's original answer.
func (p *Proxy) passOnPanic(where string, frame []byte) {
	if r := recover(); r != nil {
		p.o.recovered(where, r)
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
	rec := CallRecord{Tool: pd.call.tool}
	defer func() {
		rec.Duration = time.Since(pd.start)
		p.eng.record(rec)
	}()
	if result == nil {
		rec.Outcome = "error"
		p.write(frame)
		return
	}
	if p.beforeTransform != nil {
		p.beforeTransform(pd.call.tool)
	}
	out, err := p.eng.finish(p.ctx, pd.call, pol, result, &rec)
	switch {
	case errors.Is(err, errInvalidResult):
		// The envelope held, the result does not parse: the client gets
		// an error for its call rather than a line it cannot read.
		p.o.Stats.rejected("upstream")
		p.o.Logger.Warn("dropped malformed result from upstream", "tool", pd.call.tool)
		rec.Outcome = "error"
		p.reply(id, nil, CodeUpstreamUnavailable, "terse: the upstream's response was not valid JSON and was dropped")
	case err != nil:
		p.reply(id, nil, codeInternalError, fmt.Sprintf("terse: transforming the result of %s failed: %v", pd.call.tool, err))
	case out != nil:
		p.write(responseRaw(id, out))
	default:
		p.write(frame)
	}
}

// responseRaw is a JSON-RPC response carrying a result already encoded.
func responseRaw(id tree.Value, result []byte) []byte {
	b := make([]byte, 0, len(result)+64)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = tree.AppendJSON(b, id)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// readableID finds the id of a message that does not parse: from its
// envelope when its structure holds, else from its first bytes. Null when
// there is none.
func readableID(frame []byte) tree.Value {
	if env, ok := scanEnvelope(frame); ok && env.id != nil {
		if id, err := tree.Parse(env.id); err == nil && validID(id) {
			return id
		}
	}
	return idFromPrefix(frame[:min(len(frame), 4096)])
}
