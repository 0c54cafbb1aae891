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
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

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
	nextTok atomic.Int64
	watched sync.Map // session id -> struct{}: sessions whose end is awaited
}

// gwUpstream is one upstream server of a gateway.
type gwUpstream struct {
	g      *Gateway
	spec   ServerSpec
	routes sync.Map // upstream progress token -> func(*mcp.ProgressNotificationParams)

	mu       sync.Mutex
	cs       *mcp.ClientSession
	restarts []time.Time
	tools    map[string]toolInfo // by upstream name
	exposed  []string            // names registered on the gateway server
}

// NewGateway returns a gateway over the given upstreams. opts may be nil.
func NewGateway(servers []ServerSpec, opts *Options) (*Gateway, error) {
	g := &Gateway{eng: newEngine(opts), reg: prometheus.NewRegistry()}
	g.metrics = newGWMetrics(g.reg)
	prev := g.eng.opts.Stats.OnCall
	g.eng.opts.Stats.OnCall = func(r CallRecord) {
		g.metrics.observe(r)
		if prev != nil {
			prev(r)
		}
	}
	g.srv = mcp.NewServer(&mcp.Implementation{Name: "terse-gateway", Version: "1"}, &mcp.ServerOptions{
		HasTools: true,
		Logger:   g.eng.opts.Logger,
	})
	g.srv.AddReceivingMiddleware(g.watchSessions, g.toolsListPolicy)
	g.srv.AddTool(&mcp.Tool{
		Name:        CompactTool,
		Description: compactToolDescription,
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		conv, _ := req.Params.Meta[MetaConversation].(string)
		g.eng.compact(sessionID(req.Session), conv)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok: later results will not refer to earlier ones"}}}, nil
	})
	seen := map[string]bool{}
	for _, s := range servers {
		switch {
		case s.Name == "":
			return nil, errors.New("gateway: a server has no name")
		case seen[s.Name]:
			return nil, fmt.Errorf("gateway: server name %q used twice", s.Name)
		case (s.Command == "") == (s.URL == ""):
			return nil, fmt.Errorf("gateway: server %q needs exactly one of command and url", s.Name)
		}
		seen[s.Name] = true
		g.ups = append(g.ups, &gwUpstream{g: g, spec: s, tools: map[string]toolInfo{}})
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

// Handler serves MCP at /mcp (Streamable HTTP, stateful sessions), health
// at /healthz and Prometheus metrics at /metrics. At /mcp it also accepts
// the notification [CompactNotification], which advances the dedup
// partition of the session named by its Mcp-Session-Id header.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.srv }, nil)
	mux.Handle("/mcp", g.compactNotifications(mcpH))
	mux.HandleFunc("/healthz", g.healthz)
	mux.Handle("/metrics", promhttp.HandlerFor(g.reg, promhttp.HandlerOpts{}))
	return mux
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
		if sid == "" {
			http.Error(w, "Bad Request: "+CompactNotification+" needs the "+sessionHeader+" header of the session to compact", http.StatusBadRequest)
			return
		}
		if !g.hasSession(sid) {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		params, _ := v.Get("params")
		meta, _ := params.Get("_meta")
		conv, _ := meta.Get(MetaConversation)
		g.eng.compact(sid, conv.Str())
		w.WriteHeader(http.StatusAccepted)
	})
}

// hasSession reports whether the gateway serves a session with this id.
func (g *Gateway) hasSession(id string) bool {
	for ss := range g.srv.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	return false
}

// healthz answers 200 with each upstream's state; 503 when none is up.
func (g *Gateway) healthz(w http.ResponseWriter, r *http.Request) {
	type state struct {
		Name  string `json:"name"`
		Up    bool   `json:"up"`
		Tools int    `json:"tools"`
	}
	var out struct {
		OK      bool    `json:"ok"`
		Servers []state `json:"servers"`
	}
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

func sessionID(s *mcp.ServerSession) string {
	if s == nil || s.ID() == "" {
		return "gateway"
	}
	return s.ID()
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
	if p, ok := req.GetParams().(interface{ GetMeta() map[string]any }); ok {
		if ci, ok := p.GetMeta()[metaClientInfo].(map[string]any); ok {
			s, _ := ci["name"].(string)
			return s
		}
	}
	return ""
}

// watchSessions drops a session's dedup partitions when the session ends
// (the client deleted it, or it timed out), so a long-running gateway does
// not keep the state of every client it ever served.
func (g *Gateway) watchSessions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
			id := ss.ID()
			if _, loaded := g.watched.LoadOrStore(id, struct{}{}); !loaded {
				go func() {
					ss.Wait()
					g.eng.forget(id)
					g.watched.Delete(id)
				}()
			}
		}
		return next(ctx, method, req)
	}
}

// toolsListPolicy reconnects upstreams that are down and drops the
// outputSchema of transformed tools for clients that read
// structuredContent, as the stdio proxy does.
func (g *Gateway) toolsListPolicy(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			// Upstreams that are down get a (bounded) reconnect, so their
			// tools come back.
			for _, u := range g.ups {
				u.mu.Lock()
				down := u.cs == nil
				u.mu.Unlock()
				if down {
					u.session(ctx)
				}
			}
		}
		res, err := next(ctx, method, req)
		lt, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok || g.eng.opts.policy(clientName(req)).Reads != ReadsStructured {
			return res, err
		}
		out := *lt
		out.Tools = make([]*mcp.Tool, len(lt.Tools))
		for i, t := range lt.Tools {
			if t.OutputSchema != nil && g.eng.opts.selected(t.Name) {
				c := *t
				c.OutputSchema = nil
				t = &c
			}
			out.Tools[i] = t
		}
		return &out, nil
	}
}

// session returns the upstream's client session, connecting (bounded)
// when there is none.
func (u *gwUpstream) session(ctx context.Context) (*mcp.ClientSession, error) {
	u.mu.Lock()
	if u.cs != nil {
		defer u.mu.Unlock()
		return u.cs, nil
	}
	now := time.Now()
	u.restarts = slices.DeleteFunc(u.restarts, func(t time.Time) bool { return now.Sub(t) >= time.Minute })
	if len(u.restarts) > u.g.eng.opts.maxRestarts() {
		u.mu.Unlock()
		return nil, fmt.Errorf("upstream %s failed %d times in the last minute; not reconnecting before %s", u.spec.Name, len(u.restarts), u.restarts[0].Add(time.Minute).Format(time.TimeOnly))
	}
	u.restarts = append(u.restarts, now)
	u.mu.Unlock()

	var t mcp.Transport
	if u.spec.URL != "" {
		t = &mcp.StreamableClientTransport{Endpoint: u.spec.URL}
	} else {
		cmd := exec.Command(u.spec.Command, u.spec.Args...)
		cmd.Env = append(os.Environ(), u.spec.Env...)
		cmd.Stderr = os.Stderr
		t = &mcp.CommandTransport{Command: cmd}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "terse-gateway", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(ctx context.Context, _ *mcp.ToolListChangedRequest) { go u.resync(context.Background()) },
	})
	cs, err := c.Connect(ctx, progressTap{t, &u.routes}, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", u.spec.Name, err)
	}
	u.mu.Lock()
	u.cs = cs
	u.mu.Unlock()
	go func() {
		cs.Wait()
		u.drop(cs)
	}()
	if err := u.resync(ctx); err != nil {
		return nil, err
	}
	return cs, nil
}

// drop forgets a dead session so that the next call reconnects.
func (u *gwUpstream) drop(cs *mcp.ClientSession) {
	u.mu.Lock()
	if u.cs == cs {
		u.cs = nil
	}
	u.mu.Unlock()
	cs.Close()
}

// resync registers the upstream's tools on the gateway server under
// prefixed names and removes the ones that vanished.
func (u *gwUpstream) resync(ctx context.Context) error {
	u.mu.Lock()
	cs := u.cs
	u.mu.Unlock()
	if cs == nil {
		return nil
	}
	var names []string
	tools := map[string]toolInfo{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing tools of %s: %w", u.spec.Name, err)
		}
		raw, err := json.Marshal(t)
		if err != nil {
			return err
		}
		v, err := tree.Parse(raw)
		if err != nil {
			return err
		}
		name := u.spec.Name + "__" + t.Name
		nv, _, info := rewriteTool(setMember(v, "name", tree.String(name)), Policy{}, &u.g.eng.opts)
		tools[t.Name] = info
		var nt mcp.Tool
		if err := json.Unmarshal(rawJSON(nv), &nt); err != nil {
			return err
		}
		if nt.InputSchema == nil {
			nt.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		u.g.srv.AddTool(&nt, u.forward(t.Name, name))
		names = append(names, name)
	}
	u.mu.Lock()
	var gone []string
	for _, n := range u.exposed {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	u.exposed, u.tools = names, tools
	u.mu.Unlock()
	if len(gone) > 0 {
		u.g.srv.RemoveTools(gone...)
	}
	return nil
}

// forward returns the handler of one exposed tool.
func (u *gwUpstream) forward(tool, exposed string) mcp.ToolHandler {
	g := u.g
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		rec := CallRecord{Server: u.spec.Name, Tool: tool}
		defer func() {
			rec.Duration = time.Since(start)
			g.eng.opts.Stats.Add(rec)
			if g.eng.opts.Verbose != nil {
				writeVerbose(g.eng.opts.Verbose, rec)
			}
		}()
		u.mu.Lock()
		info, ok := u.tools[tool]
		u.mu.Unlock()
		if !ok {
			info = toolInfo{mutating: isMutating(tool, tree.Null())}
		}
		args := tree.Object()
		if len(req.Params.Arguments) > 0 {
			v, err := tree.Parse(req.Params.Arguments)
			if err != nil {
				rec.Outcome = "error"
				return nil, &jsonrpc.Error{Code: codeInvalidRequest, Message: "terse: arguments are not JSON: " + err.Error()}
			}
			args = v
		}
		rest, ra, err := splitArgs(args, info)
		conv, _ := req.Params.Meta[MetaConversation].(string)
		pol := g.eng.opts.policy(clientName(req))
		call := Call{Session: g.eng.partition(sessionID(req.Session), conv), Client: clientName(req), Tool: tool, Arguments: rawJSON(rest)}
		if err != nil {
			rec.Outcome = "error"
			return toResult(errorResult("terse: " + err.Error()))
		}
		if ra.chunk != "" {
			rec.Outcome = "chunk"
			res, err := g.eng.chunk(ctx, &call, ra.chunk)
			if err != nil {
				res = errorResult(fmt.Sprintf("terse: %v. Call %s without _chunk to get a fresh result.", err, exposed))
			}
			return toResult(res)
		}
		if info.mutating || matchAny(g.eng.opts.MutatingTools, tool) {
			g.eng.invalidate(&call)
		}
		cs, err := u.session(ctx)
		if err != nil {
			rec.Outcome = "error"
			return nil, &jsonrpc.Error{Code: CodeUpstreamUnavailable, Message: "terse: " + err.Error()}
		}
		params := &mcp.CallToolParams{Meta: req.Params.Meta, Name: tool, Arguments: json.RawMessage(call.Arguments),
			InputResponses: req.Params.InputResponses, RequestState: req.Params.RequestState}
		if tok := req.Params.GetProgressToken(); tok != nil {
			// Clients choose tokens, so two clients may both send 1: mint a
			// unique upstream token and map it back.
			up := "terse-g" + strconv.FormatInt(g.nextTok.Add(1), 10)
			params.Meta = cloneMeta(req.Params.Meta)
			params.Meta["progressToken"] = up
			u.routes.Store(up, func(p *mcp.ProgressNotificationParams) {
				p.ProgressToken = tok
				req.Session.NotifyProgress(ctx, p) // the downstream request's ctx: see DEPS.md
			})
			defer u.routes.Delete(up)
		}
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			rec.Outcome = "error"
			if _, ok := errors.AsType[*jsonrpc.Error](err); ok || ctx.Err() != nil {
				return nil, err
			}
			// A transport failure: the upstream is gone.
			u.drop(cs)
			return nil, &jsonrpc.Error{Code: CodeUpstreamUnavailable, Message: fmt.Sprintf("terse: upstream %s died while handling %s (%v); it is reconnected on the next call", u.spec.Name, tool, err)}
		}
		if ra.raw {
			rec.Outcome = "raw"
			return res, nil
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		v, err := tree.Parse(raw)
		if err != nil {
			return nil, err
		}
		budget := ra.budget
		if budget == 0 {
			budget = pol.Budget
		}
		out, err := g.eng.transformResult(ctx, call, pol, budget, v, &rec)
		if err != nil {
			return nil, &jsonrpc.Error{Code: codeInternalError, Message: fmt.Sprintf("terse: transforming the result of %s failed: %v", exposed, err)}
		}
		if rec.Outcome != "transformed" {
			return res, nil
		}
		return toResult(out)
	}
}

func cloneMeta(m mcp.Meta) mcp.Meta {
	out := mcp.Meta{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func toResult(v tree.Value) (*mcp.CallToolResult, error) {
	var r mcp.CallToolResult
	if err := json.Unmarshal(rawJSON(v), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// progressTap relays upstream progress synchronously from the SDK's read
// loop, so a call's progress cannot be overtaken by its own response (the
// SDK queues notifications but hands responses straight to the caller).
type progressTap struct {
	mcp.Transport
	routes *sync.Map
}

func (t progressTap) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return tapConn{c, t.routes}, nil
}

type tapConn struct {
	mcp.Connection
	routes *sync.Map
}

func (c tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && !r.ID.IsValid() && r.Method == "notifications/progress" {
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(r.Params, &p) == nil {
			if f, ok := c.routes.Load(p.ProgressToken); ok {
				f.(func(*mcp.ProgressNotificationParams))(&p)
			}
		}
	}
	return m, err
}

// gwMetrics are the gateway's Prometheus metrics.
type gwMetrics struct {
	calls     *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	tokensIn  *prometheus.CounterVec
	tokensOut *prometheus.CounterVec
	saved     *prometheus.CounterVec
	cost      *prometheus.CounterVec
	errors    *prometheus.CounterVec
}

func newGWMetrics(reg prometheus.Registerer) *gwMetrics {
	m := &gwMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_calls_total",
			Help: "Tool calls by upstream server, tool and outcome."}, []string{"server", "tool", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "terse_gateway_call_duration_seconds",
			Help: "Tool call latency through the gateway, by server.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"server"}),
		tokensIn: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_tokens_in_total",
			Help: "Tokens of transformed text before the pipeline."}, []string{"server"}),
		tokensOut: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_tokens_out_total",
			Help: "Tokens of transformed text after the pipeline."}, []string{"server"}),
		saved: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_tokens_saved_total",
			Help: "Tokens saved, by source (filter, dedup, encoding, fit)."}, []string{"source"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_tokens_cost_total",
			Help: "Tokens a stage added where it saved none (an id line, a filter note), by source; saved minus cost is the net saving."}, []string{"source"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_errors_total",
			Help: "Failed calls and pipeline errors, by server and outcome."}, []string{"server", "outcome"}),
	}
	reg.MustRegister(m.calls, m.latency, m.tokensIn, m.tokensOut, m.saved, m.cost, m.errors)
	return m
}

func (m *gwMetrics) observe(r CallRecord) {
	m.calls.WithLabelValues(r.Server, r.Tool, r.Outcome).Inc()
	m.latency.WithLabelValues(r.Server).Observe(r.Duration.Seconds())
	m.tokensIn.WithLabelValues(r.Server).Add(float64(r.TokensBefore))
	m.tokensOut.WithLabelValues(r.Server).Add(float64(r.TokensAfter))
	// Counters only go up: a stage's negative saving is counted as cost.
	for k, v := range r.Saved {
		switch {
		case v > 0:
			m.saved.WithLabelValues(k).Add(float64(v))
		case v < 0:
			m.cost.WithLabelValues(k).Add(float64(-v))
		}
	}
	if r.Outcome == "error" || r.Outcome == "skipped_error" {
		m.errors.WithLabelValues(r.Server, r.Outcome).Inc()
	}
}
