package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/terse-dev/terse/meter/prom"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/toolname"
	"github.com/terse-dev/terse/tree"
)

// ServerSpec names one gateway upstream: a stdio command or a
// Streamable-HTTP URL (exactly one).
type ServerSpec struct {
	// Name prefixes the server's tools: NAME__TOOL.
	Name    string
	Command string
	Args    []string
	Env     []string // extra "KEY=VALUE" entries
	URL     string
	// Client, for a URL, is the HTTP client (one that adds headers, say);
	// nil means http.DefaultClient.
	Client *http.Client

	// upstream, when set (tests), replaces Command and URL.
	upstream Upstream
}

// Gateway is a Streamable-HTTP MCP server that aggregates several upstream
// servers. Each upstream tool is exposed as "server__tool" with the
// reserved parameters added; results go through the same engine as the
// stdio [Proxy]. A crashed upstream is reconnected on its next call
// (bounded like the proxy's restarts).
//
// Create it with [NewGateway], call [Gateway.Start], serve
// [Gateway.Handler], and [Gateway.Close] at the end.
type Gateway struct {
	eng     *engine
	srv     *mcp.Server
	ups     []*gwUpstream
	reg     *prometheus.Registry
	metrics *gwMetrics
	watched sync.Map // session id -> struct{}: sessions whose end is awaited
	scale   *gwScale // tenants and shared state (gateway_scale.go)
}

// gwUpstream is one upstream server of a gateway.
type gwUpstream struct {
	g       *Gateway
	spec    ServerSpec
	routes  sync.Map // upstream progress token -> *progressRoute
	limiter restartLimiter

	mu      sync.Mutex
	cs      *mcp.ClientSession
	dialing chan struct{} // closed when the dial under way ends
	dialErr error         // of the last dial
	started bool
	tools   map[string]toolInfo // by upstream name
	raw     []tree.Value        // the catalogue as sent, names prefixed
	exposed []string            // names registered on the gateway server
}

// NewGateway returns a gateway over the given upstreams. opts may be nil.
func NewGateway(servers []ServerSpec, opts *Options) (*Gateway, error) {
	g := &Gateway{eng: newEngine(opts), reg: prometheus.NewRegistry()}
	g.metrics = newGWMetrics(g.reg)
	g.scale = newScale(g.reg)
	if g.eng.opts.Stats.Metrics == nil {
		g.eng.opts.Stats.Metrics = g.metrics
	}
	g.srv = mcp.NewServer(&mcp.Implementation{Name: "terse-gateway", Version: "1"}, &mcp.ServerOptions{
		HasTools: true,
		Logger:   sdkLogger(g.eng.opts.Logger),
	})
	g.srv.AddReceivingMiddleware(g.recoverMethods, g.watchSessions, g.serveTools)
	g.srv.AddTool(&mcp.Tool{
		Name:        CompactTool,
		Description: compactToolDescription,
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		conv, _ := metaOf(req)[MetaConversation].(string)
		g.compact(ctx, tenantOf(req), sessionOf(req), conv)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok: later results will not refer to earlier ones"}}}, nil
	})
	seen := map[string]bool{}
	for _, s := range servers {
		switch {
		case s.Name == "":
			return nil, errors.New("gateway: a server has no name")
		case seen[s.Name]:
			return nil, fmt.Errorf("gateway: server name %q used twice", s.Name)
		case (s.Command == "") == (s.URL == "") && s.upstream == nil:
			return nil, fmt.Errorf("gateway: server %q needs exactly one of command and url", s.Name)
		}
		seen[s.Name] = true
		g.ups = append(g.ups, &gwUpstream{g: g, spec: s, tools: map[string]toolInfo{},
			limiter: restartLimiter{max: g.eng.opts.maxRestarts()}})
		g.metrics.server(s.Name)
	}
	return g, nil
}

// Stats returns the gateway's totals.
func (g *Gateway) Stats() *Stats { return g.eng.opts.Stats }

// Start connects every upstream and registers its tools. An upstream that
// fails to connect is logged and retried on the next tools/list or call
// of its tools; Start fails only when none connects.
func (g *Gateway) Start(ctx context.Context) error {
	var errs []error
	for _, u := range g.ups {
		if _, err := u.session(ctx); err != nil {
			g.eng.opts.Logger.Error("gateway upstream unavailable", "server", u.spec.Name, "err", err)
			errs = append(errs, err)
		}
	}
	if len(errs) == len(g.ups) && len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// Close disconnects every upstream.
func (g *Gateway) Close() error {
	for _, u := range g.ups {
		u.mu.Lock()
		if u.cs != nil {
			u.cs.Close()
			u.cs = nil
		}
		u.mu.Unlock()
	}
	return nil
}

// Handler serves MCP at /mcp (Streamable HTTP: stateless for clients of
// protocol 2026-07-28, sessions for earlier ones, held by this process,
// or with shared state (SetState, called before) kept there, so that any
// replica serves any request: see sharedSessions), health
// at /healthz and Prometheus metrics at /metrics. At /mcp it also accepts
// the notification [CompactNotification], which advances the dedup
// partition of the session named by its Mcp-Session-Id header.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: g.eng.opts.idleTimeout()})
	statelessH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.srv },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	var sessions http.Handler = mcpH
	if _, shared := g.scale.current(); shared {
		// Sessions live in the shared state: any replica serves them.
		sessions = g.sharedSessions(statelessH)
	}
	mux.Handle("/mcp", dropInternal(g.authenticate(g.compactNotifications(byVersion(sessions, statelessH)))))
	mux.HandleFunc("/healthz", g.healthz)
	mux.Handle("/metrics", promhttp.HandlerFor(g.reg, promhttp.HandlerOpts{}))
	return g.recoverHTTP(mux)
}

// compactPeek bounds how much of a POST body the gateway reads looking for
// a compaction notification; a larger body cannot be one and goes to the
// MCP handler untouched.
const compactPeek = 4 << 10

// sessionHeader is the Streamable HTTP session header.
const sessionHeader = "Mcp-Session-Id"

// compactNotifications handles [CompactNotification] POSTed to /mcp, which
// the go-sdk server would reject as an unknown method: it advances the
// dedup partition of the session named by the Mcp-Session-Id header (of
// one conversation when params._meta names one under [MetaConversation]),
// exactly like a call of [CompactTool] in that session, and answers 202
// (a stateless client, MCP-Protocol-Version 2026-07-28, names the
// conversation instead of a session)
// Accepted as for any notification. A missing header is a 400, an unknown
// session a 404. Every other message goes to next unchanged.
func (g *Gateway) compactNotifications(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		head, err := io.ReadAll(io.LimitReader(r.Body, compactPeek+1))
		if err != nil {
			http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		var v tree.Value
		if len(head) <= compactPeek && bytes.Contains(head, []byte(CompactNotification)) {
			v, _ = tree.Parse(head)
		}
		method, _ := v.Get("method")
		id, hasID := v.Get("id")
		if method.Str() != CompactNotification || hasID && !id.IsNull() {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
			next.ServeHTTP(w, r)
			return
		}
		sid := r.Header.Get(sessionHeader)
		tenant := ""
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			tenant = ti.UserID
		}
		params, _ := v.Get("params")
		meta, _ := params.Get("_meta")
		conv, _ := meta.Get(MetaConversation)
		// A stateless client (2026-07-28) has no session: it names the
		// conversation to compact.
		stateless := r.Header.Get("Mcp-Protocol-Version") >= protocolStateless
		switch {
		case stateless && conv.Str() == "":
			http.Error(w, "Bad Request: "+CompactNotification+" needs params._meta."+MetaConversation+" naming the conversation to compact", http.StatusBadRequest)
			return
		case stateless:
			sid = ""
		case sid == "":
			http.Error(w, "Bad Request: "+CompactNotification+" needs the "+sessionHeader+" header of the session to compact", http.StatusBadRequest)
			return
		case !g.knownSession(r.Context(), tenant, sid):
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		g.compact(r.Context(), tenant, sid, conv.Str())
		w.WriteHeader(http.StatusAccepted)
	})
}

// knownSession reports whether the gateway serves a session of tenant
// with this id: in the shared state, with one (when it cannot answer,
// yes); else held by this process.
func (g *Gateway) knownSession(ctx context.Context, tenant, id string) bool {
	st, shared := g.scale.current()
	if !shared {
		return g.hasSession(id)
	}
	if !validSessionID(id) {
		return false
	}
	sctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	_, ok, err := st.Record(sctx, sessionKey(tenant, id))
	g.scale.failed("session", err)
	return ok || err != nil
}

// hasSession reports whether this process holds a session with this id.
func (g *Gateway) hasSession(id string) bool {
	for ss := range g.srv.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	return false
}

// healthz answers 200 with each upstream's state, the chunk store's
// ("degraded" after a store call failed, until one succeeds) and the
// shared state's; 503 when no upstream is up.
func (g *Gateway) healthz(w http.ResponseWriter, r *http.Request) {
	type state struct {
		Name  string `json:"name"`
		Up    bool   `json:"up"`
		Tools int    `json:"tools"`
	}
	var out struct {
		OK      bool        `json:"ok"`
		Servers []state     `json:"servers"`
		Store   StoreHealth `json:"store"`
		// SharedState is "up" or "down" with shared state (Redis): down,
		// calls go on without dedup and chunks, so it does not make the
		// gateway unhealthy.
		SharedState string `json:"shared_state,omitempty"`
	}
	out.Store = g.eng.storeHealth()
	out.SharedState = g.scale.health()
	for _, u := range g.ups {
		u.mu.Lock()
		s := state{Name: u.spec.Name, Up: u.cs != nil, Tools: len(u.exposed)}
		u.mu.Unlock()
		out.OK = out.OK || s.Up
		out.Servers = append(out.Servers, s)
	}
	w.Header().Set("Content-Type", "application/json")
	if !out.OK {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(out)
}

// clientName finds the client's name for a request.
func clientName(req mcp.Request) string {
	if cr, ok := req.(*mcp.CallToolRequest); ok {
		if ci := cr.ClientInfo(); ci != nil {
			return ci.Name
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
			return p.ClientInfo.Name
		}
	}
	if ci, ok := metaOf(req)[metaClientInfo].(map[string]any); ok {
		s, _ := ci["name"].(string)
		return s
	}
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		return ex.Header.Get(hdrClient) // a session in the shared state
	}
	return ""
}

// metaOf returns the _meta of a request's params: nil when the request
// has no params at all, as a tools/list, ping or other list request may
// not (the SDK then holds a nil pointer of the params' type, whose
// promoted GetMeta would dereference it).
func metaOf(req mcp.Request) map[string]any {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// recoverMethods answers a request whose handler panicked with an
// internal error, logged and counted (see Options.recovered): the SDK
// runs handlers on goroutines of their own, where a panic would end the
// process, every tenant and call in flight with it.
func (g *Gateway) recoverMethods(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if r := recover(); r != nil {
				g.eng.opts.recovered("method", r, "method", method)
				res, err = nil, &jsonrpc.Error{Code: codeInternalError, Message: "terse: internal error while handling " + method + " (logged); the request was not completed"}
			}
		}()
		return next(ctx, method, req)
	}
}

// recoverHTTP answers a request whose HTTP handling panicked with a 500
// when nothing was written yet, logged and counted; the server goes on.
func (g *Gateway) recoverHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				g.eng.opts.recovered("http", v, "path", r.URL.Path)
				http.Error(w, "terse: internal error (logged)", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// watchSessions drops a session's dedup partitions when the session ends
// (the client deleted it, or it timed out), so a long-running gateway does
// not keep the state of every client it ever served.
func (g *Gateway) watchSessions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
			id := ss.ID()
			if _, loaded := g.watched.LoadOrStore(id, struct{}{}); !loaded {
				scope := Scope{Tenant: tenantOf(req), Session: id}.String()
				go func() {
					defer g.watched.Delete(id)
					defer func() {
						if r := recover(); r != nil {
							g.eng.opts.recovered("session", r)
						}
					}()
					ss.Wait()
					g.eng.forget(scope)
				}()
			}
		}
		return next(ctx, method, req)
	}
}

// serveTools answers tools/list and the tools/call of upstream tools
// through the engine, with raw JSON: upstream results keep their bytes.
// Everything else (the compact tool, other methods) goes to next.
func (g *Gateway) serveTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			return g.listTools(ctx, req)
		case "tools/call":
			cr, ok := req.(*mcp.CallToolRequest)
			if !ok || cr.Params == nil {
				break
			}
			server, tool := toolname.Split(cr.Params.Name)
			for _, u := range g.ups {
				if server != "" && u.spec.Name == server {
					return u.call(ctx, cr, tool)
				}
			}
			if cr.Params.Name != CompactTool {
				g.eng.opts.Stats.unknownTool(cr.Params.Name)
			}
		}
		return next(ctx, method, req)
	}
}

// listTools answers tools/list with every upstream's catalogue, names
// prefixed, rewritten for the client's policy (rewriteToolList). Upstreams
// that are down get a (bounded) reconnect first, so their tools come back.
func (g *Gateway) listTools(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	var all []tree.Value
	for _, u := range g.ups {
		u.mu.Lock()
		down := u.cs == nil
		u.mu.Unlock()
		if down {
			u.session(ctx)
		}
		u.mu.Lock()
		all = append(all, u.raw...)
		u.mu.Unlock()
	}
	pol := g.eng.opts.policy(clientName(req))
	g.eng.stage("list")
	res, before, after := rewriteToolList(tree.Object(tree.Member{Key: "tools", Value: tree.Array(all...)}),
		pol, &g.eng.opts, true, map[string]toolInfo{}, g.eng.counter())
	g.eng.opts.Stats.catalog("", before, after)
	return &rawListResult{ListToolsResult: &mcp.ListToolsResult{}, raw: tree.AppendJSON(nil, res)}, nil
}

func cloneMeta(m mcp.Meta) mcp.Meta {
	out := mcp.Meta{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// session returns the upstream's client session, connecting when there
// is none. One dial at a time: concurrent callers wait for it (and share
// its error). Reconnections are bounded by the restart limiter.
func (u *gwUpstream) session(ctx context.Context) (*mcp.ClientSession, error) {
	u.mu.Lock()
	for u.cs == nil && u.dialing != nil {
		ch := u.dialing
		u.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		u.mu.Lock()
		if u.cs == nil && u.dialErr != nil {
			err := u.dialErr
			u.mu.Unlock()
			return nil, err
		}
	}
	if u.cs != nil {
		defer u.mu.Unlock()
		return u.cs, nil
	}
	restart := u.started
	if restart {
		if ok, until := u.limiter.allow(); !ok {
			u.mu.Unlock()
			return nil, fmt.Errorf("upstream %s failed %d times in the last minute; not reconnecting before %s", u.spec.Name, u.limiter.max, until.Format(time.TimeOnly))
		}
	}
	u.started = true
	ch := make(chan struct{})
	u.dialing, u.dialErr = ch, nil
	u.mu.Unlock()

	o := &u.g.eng.opts
	if restart {
		o.Stats.restarted(u.spec.Name)
		o.Logger.Info("reconnecting upstream", "server", u.spec.Name)
	}
	cs, err := u.dial(ctx)
	u.mu.Lock()
	u.dialing, u.dialErr = nil, err
	if err == nil {
		u.cs = cs
	}
	u.mu.Unlock()
	close(ch)
	if err != nil {
		return nil, err
	}
	o.Stats.upstream(u.spec.Name, true)
	go func() {
		err := cs.Wait()
		if u.drop(cs) {
			o.Logger.Warn("upstream died", "server", u.spec.Name, "err", err)
		}
	}()
	if err := u.resync(ctx); err != nil {
		return nil, err
	}
	return cs, nil
}

// dial connects a client to the upstream over the relay's own framing
// (message limit, malformed lines dropped and counted).
func (u *gwUpstream) dial(ctx context.Context) (*mcp.ClientSession, error) {
	up := u.spec.upstream
	o := &u.g.eng.opts
	switch {
	case up != nil:
	case u.spec.URL != "":
		up = &HTTP{URL: u.spec.URL, Client: u.spec.Client}
	default:
		up = &Command{Path: u.spec.Command, Args: u.spec.Args, Env: append(os.Environ(), u.spec.Env...),
			Stderr: os.Stderr, MaxMessageBytes: o.maxMessage()}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "terse-gateway", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(ctx context.Context, _ *mcp.ToolListChangedRequest) { go u.resync(context.Background()) },
	})
	cs, err := c.Connect(ctx, &rawTransport{up: up, u: u}, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", u.spec.Name, err)
	}
	return cs, nil
}

// drop forgets a dead session so that the next call reconnects. It
// reports whether cs was the live session.
func (u *gwUpstream) drop(cs *mcp.ClientSession) bool {
	u.mu.Lock()
	live := u.cs == cs
	if live {
		u.cs = nil
	}
	u.mu.Unlock()
	cs.Close()
	if live {
		u.g.eng.opts.Stats.upstream(u.spec.Name, false)
	}
	return live
}

// resync reads the upstream's tool catalogue, as raw JSON, and registers
// its tools on the gateway server under prefixed names (so that clients
// are told when the list changes); the gateway answers tools/list itself
// from the raw catalogue.
func (u *gwUpstream) resync(ctx context.Context) error {
	u.mu.Lock()
	cs := u.cs
	u.mu.Unlock()
	if cs == nil {
		return nil
	}
	var raw []tree.Value
	tools := map[string]toolInfo{}
	cursor := ""
	for {
		slot := &rawSlot{}
		res, err := cs.ListTools(withSlot(ctx, slot), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return fmt.Errorf("listing tools of %s: %w", u.spec.Name, err)
		}
		v, err := tree.Parse(slot.raw)
		if err != nil {
			return fmt.Errorf("listing tools of %s: %w", u.spec.Name, err)
		}
		list, _ := v.Get("tools")
		for _, t := range list.Items() {
			_, name, info := rewriteTool(t, Policy{}, &Options{IncludeTools: []string{}})
			tools[name] = info
			raw = append(raw, setMember(t, "name", tree.String(u.spec.Name+toolname.Sep+name)))
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	var names []string
	for _, t := range raw {
		n, _ := t.Get("name")
		names = append(names, n.Str())
		u.g.srv.AddTool(&mcp.Tool{Name: n.Str(), InputSchema: json.RawMessage(`{"type":"object"}`)}, notServed)
	}
	u.mu.Lock()
	var gone []string
	for _, n := range u.exposed {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	u.exposed, u.tools, u.raw = names, tools, raw
	u.mu.Unlock()
	if len(gone) > 0 {
		u.g.srv.RemoveTools(gone...)
	}
	return nil
}

// notServed is the handler of the registered upstream tools: the
// gateway's middleware answers their calls before it is reached.
func notServed(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, &jsonrpc.Error{Code: codeInternalError, Message: "terse: tool not served"}
}

// call relays one tools/call of an upstream tool through the engine and
// returns the result as raw JSON.
func (u *gwUpstream) call(ctx context.Context, req *mcp.CallToolRequest, tool string) (mcp.Result, error) {
	g := u.g
	e := g.eng
	params := req.Params
	rec := CallRecord{Server: u.spec.Name, Tool: tool}
	start := time.Now()
	defer func() {
		rec.Duration = time.Since(start)
		e.record(rec)
	}()
	u.mu.Lock()
	info, known := u.tools[tool]
	u.mu.Unlock()
	if !known {
		info = toolInfo{mutating: isMutating(tool, tree.Null())}
	}
	args := tree.Object()
	if len(params.Arguments) > 0 {
		v, err := tree.Parse(params.Arguments)
		if err != nil {
			rec.Outcome = "error"
			return nil, &jsonrpc.Error{Code: codeInvalidRequest, Message: "terse: arguments are not JSON: " + err.Error()}
		}
		args = v
	}
	conv, _ := params.Meta[MetaConversation].(string)
	who := g.who(ctx, req, conv)
	client := g.clientFor(ctx, req, who)
	pol := e.opts.policy(client)
	if refused := g.checkChunk(ctx, who, args); refused != nil {
		rec.Outcome = "chunk"
		return rawCallResult(tree.AppendJSON(nil, *refused)), nil
	}
	c, changed, answer, brec := e.begin(withChunkScope(ctx, who), u.spec.Name, tool, client, who.scope, who.conv, args, info, true)
	if answer != nil {
		rec = brec
		out := tree.AppendJSON(nil, *answer)
		g.own(ctx, who, out, nil)
		return rawCallResult(out), nil
	}
	cs, err := u.session(ctx)
	if err != nil {
		rec.Outcome = "error"
		return nil, &jsonrpc.Error{Code: CodeUpstreamUnavailable, Message: "terse: " + err.Error()}
	}
	fwd := &mcp.CallToolParams{Meta: params.Meta, Name: tool, Arguments: params.Arguments}
	if changed {
		fwd.Arguments = json.RawMessage(rawJSON(c.args))
	}
	if tok := params.GetProgressToken(); tok != nil {
		up := e.progressToken()
		fwd.Meta = cloneMeta(params.Meta)
		fwd.Meta["progressToken"] = up
		r := newProgressRoute(ctx, &e.opts, req.Session, tok)
		u.routes.Store(up, r)
		defer func() {
			u.routes.Delete(up)
			r.close() // progress queued before the result goes first
		}()
	}
	slot := &rawSlot{}
	_, err = cs.CallTool(withSlot(ctx, slot), fwd)
	if err != nil {
		rec.Outcome = "error"
		if _, ok := errors.AsType[*jsonrpc.Error](err); ok || ctx.Err() != nil {
			return nil, err
		}
		// A transport failure: the upstream is gone.
		if u.drop(cs) {
			e.opts.Logger.Warn("upstream died", "server", u.spec.Name, "err", err)
		}
		return nil, &jsonrpc.Error{Code: CodeUpstreamUnavailable, Message: fmt.Sprintf("terse: upstream %s died while handling %s (%v); it is reconnected on the next call", u.spec.Name, tool, err)}
	}
	out, err := e.finish(ctx, c, pol, slot.raw, &rec)
	if err != nil {
		return nil, &jsonrpc.Error{Code: codeInternalError, Message: fmt.Sprintf("terse: transforming the result of %s failed: %v", params.Name, err)}
	}
	if out == nil {
		out = slot.raw
	} else {
		g.own(ctx, who, out, slot.raw)
	}
	return rawCallResult(out), nil
}

// gwMetrics are the gateway's Prometheus metrics (with the Go and process
// collectors). Every series of a known label set exists from the start, at
// zero.
type gwMetrics struct {
	calls      *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	tokens     *prom.Tally
	errors     *prometheus.CounterVec
	up         *prometheus.GaugeVec
	restarts   *prometheus.CounterVec
	rejected   *prometheus.CounterVec
	unknown    prometheus.Counter
	catalogIn  prometheus.Counter
	catalogOut prometheus.Counter
	storeFail  prometheus.Counter
	panics     *prometheus.CounterVec
}

// savingSources are the sources of Saved in a CallRecord.
var savingSources = telemetry.SourceNames[:telemetry.SrcHistory]

func newGWMetrics(reg prometheus.Registerer) *gwMetrics {
	m := &gwMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_calls_total",
			Help: "Tool calls by upstream server, tool and outcome."}, []string{"server", "tool", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "terse_gateway_call_duration_seconds",
			Help: "Tool call latency through the gateway, by server.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"server"}),
		tokens: prom.NewTally(prom.TallyOpts{
			Before: prometheus.CounterOpts{Name: "terse_gateway_tokens_in_total",
				Help: "Tokens of results as the model would read them directly, by server and tool."},
			After: prometheus.CounterOpts{Name: "terse_gateway_tokens_out_total",
				Help: "Tokens of results as the model reads them through terse, by server and tool."},
			Saved: prometheus.CounterOpts{Name: "terse_gateway_tokens_saved_total",
				Help: "Tokens saved, by server, tool and source (filter, dedup, encoding, fit)."},
			Cost: prometheus.CounterOpts{Name: "terse_gateway_tokens_cost_total",
				Help: "Tokens a stage added where it saved none (an id line, a filter note), by server, tool and source; saved minus cost is the net saving."},
			Labels: []string{"server", "tool"}, Sources: savingSources,
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_errors_total",
			Help: "Failed calls and pipeline errors, by server and outcome."}, []string{"server", "outcome"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "terse_gateway_upstream_up",
			Help: "1 when the upstream server is connected, else 0."}, []string{"server"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_upstream_restarts_total",
			Help: "Reconnections of an upstream server after it died."}, []string{"server"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_rejected_messages_total",
			Help: "Malformed or oversized messages dropped, by where they came from (client, upstream)."}, []string{"from"}),
		unknown: prometheus.NewCounter(prometheus.CounterOpts{Name: "terse_gateway_unknown_tool_calls_total",
			Help: "Calls of tools no upstream has."}),
		catalogIn: prometheus.NewCounter(prometheus.CounterOpts{Name: "terse_gateway_catalog_tokens_in_total",
			Help: "Tokens of tools/list answers as the upstreams sent them."}),
		catalogOut: prometheus.NewCounter(prometheus.CounterOpts{Name: "terse_gateway_catalog_tokens_out_total",
			Help: "Tokens of tools/list answers as the clients got them."}),
		storeFail: prometheus.NewCounter(prometheus.CounterOpts{Name: "terse_gateway_store_failures_total",
			Help: "Calls during which the chunk store failed or timed out (the result kept its budget)."}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_panics_total",
			Help: "Panics recovered at a request boundary, by where (the request got an error or its original result; the stack is logged)."}, []string{"where"}),
	}
	reg.MustRegister(m.tokens.Collectors()...)
	reg.MustRegister(m.calls, m.latency, m.errors, m.up, m.restarts,
		m.rejected, m.unknown, m.catalogIn, m.catalogOut, m.storeFail, m.panics,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, from := range []string{"client", "upstream"} {
		m.rejected.WithLabelValues(from)
	}
	for _, where := range []string{"call", "method", "http", "session", "progress"} {
		m.panics.WithLabelValues(where)
	}
	return m
}

// server creates the series of one upstream at zero.
func (m *gwMetrics) server(name string) {
	m.up.WithLabelValues(name)
	m.restarts.WithLabelValues(name)
	m.latency.WithLabelValues(name)
	for _, o := range []string{"error", "skipped_error"} {
		m.errors.WithLabelValues(name, o)
	}
}

// Call implements [Metrics].
func (m *gwMetrics) Call(r CallRecord) {
	m.calls.WithLabelValues(r.Server, r.Tool, r.Outcome).Inc()
	m.latency.WithLabelValues(r.Server).Observe(r.Duration.Seconds())
	m.tokens.Add(r.TokensBefore, r.TokensAfter, r.Saved, r.Server, r.Tool)
	if r.Outcome == "error" || r.Outcome == "skipped_error" {
		m.errors.WithLabelValues(r.Server, r.Outcome).Inc()
	}
	if r.StoreFailed {
		m.storeFail.Inc()
	}
}

// Upstream implements [Metrics].
func (m *gwMetrics) Upstream(server string, up bool) {
	v := 0.0
	if up {
		v = 1
	}
	m.up.WithLabelValues(server).Set(v)
}

// Restarted implements [Metrics].
func (m *gwMetrics) Restarted(server string) { m.restarts.WithLabelValues(server).Inc() }

// Rejected implements [Metrics].
func (m *gwMetrics) Rejected(from string) { m.rejected.WithLabelValues(from).Inc() }

// UnknownTool implements [Metrics].
func (m *gwMetrics) UnknownTool(string) { m.unknown.Inc() }

// Catalog implements [Metrics].
func (m *gwMetrics) Catalog(_ string, before, after int) {
	m.catalogIn.Add(float64(before))
	m.catalogOut.Add(float64(after))
}

// Panicked implements [Metrics].
func (m *gwMetrics) Panicked(where string) { m.panics.WithLabelValues(where).Inc() }
