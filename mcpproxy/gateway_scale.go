package mcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/tree"
)

// GatewayState is what gateway replicas share besides chunks and dedup
// partitions: compaction counters and the owner of each chunk handle.
// store/redisstore.State implements it on Redis; without one, the gateway
// keeps them in memory. Methods are idempotent.
type GatewayState interface {
	// Generations returns the compaction counters of scopes (0 when
	// never compacted).
	Generations(ctx context.Context, scopes ...string) ([]int, error)
	// Advance moves the counter of scope past seen, once however many
	// replicas advance it from the same value.
	Advance(ctx context.Context, scope string, seen int) error
	// Own adds owner to the owners of handles.
	Own(ctx context.Context, owner string, handles ...string) error
	// Owns reports whether owner is an owner of handle, and whether the
	// handle has any.
	Owns(ctx context.Context, handle, owner string) (owns, known bool, err error)
}

// protocolStateless is the first MCP version whose core needs no session
// held by the server (SEP-2575/2567): requests that declare it are served
// statelessly, so that any replica answers any request.
const protocolStateless = "2026-07-28"

// stateTimeout bounds each call of the shared state made for a request.
const stateTimeout = 500 * time.Millisecond

// gwScale is the gateway's tenancy and shared state.
type gwScale struct {
	mu      sync.RWMutex
	tokens  map[string]string // bearer token -> tenant
	state   GatewayState      // memState unless SetState
	shared  bool              // SetState was called
	errs    *prometheus.CounterVec
	up      prometheus.Gauge
	refused *prometheus.CounterVec
	down    atomic.Bool
}

func newScale(reg prometheus.Registerer) *gwScale {
	s := &gwScale{
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_shared_state_errors_total",
			Help: "Failed operations on the shared state (Redis), by what was attempted; the call went on without it."}, []string{"op"}),
		up: prometheus.NewGauge(prometheus.GaugeOpts{Name: "terse_gateway_shared_state_up",
			Help: "1 when the last operation on the shared state succeeded (or there is none), else 0."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "terse_gateway_chunk_refused_total",
			Help: "Chunk fetches the gateway refused before the engine, by reason (other_owner: the handle was issued only to other tenants or sessions)."}, []string{"reason"}),
	}
	s.up.Set(1)
	s.state = &memState{}
	reg.MustRegister(s.errs, s.up, s.refused)
	for _, op := range []string{"dedup", "generations", "advance", "own", "owner"} {
		s.errs.WithLabelValues(op)
	}
	s.refused.WithLabelValues("other_owner")
	return s
}

// health is "" without shared state, else "up" or "down" as of the last
// operation on it.
func (s *gwScale) health() string {
	s.mu.RLock()
	shared := s.shared
	s.mu.RUnlock()
	if !shared {
		return ""
	}
	if s.down.Load() {
		return "down"
	}
	return "up"
}

func (s *gwScale) failed(op string, err error) {
	if err == nil {
		s.up.Set(1)
		s.down.Store(false)
		return
	}
	s.errs.WithLabelValues(op).Inc()
	s.up.Set(0)
	s.down.Store(true)
}

// SetTokens turns on bearer-token authentication of /mcp: tokens maps each
// accepted token to the tenant it names. Tenants never share dedup state
// or chunks. An empty map turns authentication off. Call it before
// serving.
func (g *Gateway) SetTokens(tokens map[string]string) {
	g.scale.mu.Lock()
	defer g.scale.mu.Unlock()
	g.scale.tokens = tokens
}

// SetState makes the gateway keep compaction counters and chunk owners in
// s, shared with the other replicas. Call it before serving; the dedup
// cache (Options.Dedup) is shared separately (dedup.Cache.SetShared).
func (g *Gateway) SetState(s GatewayState) {
	g.scale.mu.Lock()
	defer g.scale.mu.Unlock()
	g.scale.state, g.scale.shared = s, s != nil
	if s == nil {
		g.scale.state = &memState{}
	}
}

// SharedError counts a failure of the shared dedup partitions; give it to
// dedup.Cache.SetShared.
func (g *Gateway) SharedError(err error) { g.scale.failed("dedup", err) }

// authenticate requires a known bearer token on every request when tokens
// are set; the tenant it names reaches the calls as TokenInfo.UserID.
func (g *Gateway) authenticate(next http.Handler) http.Handler {
	g.scale.mu.RLock()
	on := len(g.scale.tokens) > 0
	g.scale.mu.RUnlock()
	if !on {
		return next
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		g.scale.mu.RLock()
		defer g.scale.mu.RUnlock()
		tenant := ""
		for t, name := range g.scale.tokens {
			if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
				tenant = name
			}
		}
		if tenant == "" {
			return nil, fmt.Errorf("%w: unknown bearer token", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: tenant, Expiration: time.Now().Add(24 * time.Hour)}, nil
	}
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{})(next)
}

// byVersion serves requests of the stateless protocol (MCP-Protocol-Version
// 2026-07-28 or later) with stateless and the others (2025-11-25,
// 2025-06-18, …, which hold a session) with stateful: the version is
// negotiated per client, per request.
func byVersion(stateful, stateless http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= protocolStateless {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// ephemeral marks the scope of a call that is a partition of its own:
// nothing in it is ever referenced (see SharedDedup).
const ephemeral = "~!"

// SharedDedup wraps the dedup.Shared of a gateway's cache: the partition
// of a stateless call without a conversation, which no later call reads,
// is neither looked up nor recorded (no round trip, no key left in Redis
// until its TTL, and no id line the model could never use).
func SharedDedup(s dedup.Shared) dedup.Shared { return skipEphemeral{s} }

type skipEphemeral struct{ dedup.Shared }

func isEphemeral(k dedup.Key) bool { return strings.Contains(k.Session, ephemeral) }

func (s skipEphemeral) Lookup(ctx context.Context, k dedup.Key, fp [16]byte) (string, bool, error) {
	if isEphemeral(k) {
		return "", false, nil
	}
	return s.Shared.Lookup(ctx, k, fp)
}

func (s skipEphemeral) Add(ctx context.Context, k dedup.Key, e dedup.SharedEntry, max int) error {
	if isEphemeral(k) {
		return dedup.ErrNotRecorded
	}
	return s.Shared.Add(ctx, k, e, max)
}

func (s skipEphemeral) Entries(ctx context.Context, k dedup.Key) ([]dedup.SharedEntry, error) {
	if isEphemeral(k) {
		return nil, nil
	}
	return s.Shared.Entries(ctx, k)
}

func (s skipEphemeral) Remove(ctx context.Context, k dedup.Key, ids ...string) error {
	if isEphemeral(k) {
		return nil
	}
	return s.Shared.Remove(ctx, k, ids...)
}

func (s skipEphemeral) Drop(ctx context.Context, k dedup.Key) error {
	if isEphemeral(k) {
		return nil
	}
	return s.Shared.Drop(ctx, k)
}

// tenantOf returns the tenant of a request: "" without authentication.
func tenantOf(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
		return ex.TokenInfo.UserID
	}
	return ""
}

// chunkScopeKey carries, in a call's context, the scope its chunk
// handles are bound to (fit's Scope) when the front end chooses it.
type chunkScopeKey struct{}

// withChunkScope binds the chunk handles of the call run with ctx to the
// caller's owner and conversation: stable across compactions (unlike the
// session the engine partitions dedup by, which carries the shared
// compaction counters) and the same for every call of a stateless client
// without a conversation (whose dedup partition is per call).
func withChunkScope(ctx context.Context, id identity) context.Context {
	return context.WithValue(ctx, chunkScopeKey{}, "gw\x00"+id.owner+"\x00"+id.rawConv)
}

// identity is who a call belongs to.
type identity struct {
	rawConv string // the conversation the client named
	scope   string // the session given to the engine: dedup partitions
	conv    string // the conversation given to the engine ("" when folded into scope)
	owner   string // what chunk handles are bound to
	key     string // the scope of the shared compaction counter ("": the engine's)
	gen     int    // that counter as read
}

// who names the caller of req; see whoFor.
func (g *Gateway) who(ctx context.Context, req mcp.Request, conv string) identity {
	sid := ""
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		sid = ss.ID()
	}
	return g.whoFor(ctx, tenantOf(req), sid, conv)
}

// whoFor names a caller. A stateful session is its tenant and session id;
// without shared state its partitions are the engine's (counters dropped
// when the session ends). A stateless request (2026-07-28) has no
// session: its conversation (params._meta "terse/conversation") is the
// session; with none, its results are never referenced (each call is a
// partition of its own) and its chunks are the tenant's. With shared
// state, and for stateless requests, the compaction counters are the
// GatewayState's, read on each call and part of the scope given to the
// engine, whose own counters then stay at 0.
func (g *Gateway) whoFor(ctx context.Context, tenant, sid, conv string) identity {
	id := g.whoFor1(ctx, tenant, sid, conv)
	id.rawConv = conv
	return id
}

func (g *Gateway) whoFor1(ctx context.Context, tenant, sid, conv string) identity {
	prefix := ""
	if tenant != "" {
		prefix = tenant + ":"
	}
	g.scale.mu.RLock()
	st, shared := g.scale.state, g.scale.shared
	g.scale.mu.RUnlock()
	if sid != "" && !shared {
		return identity{scope: prefix + sid, conv: conv, owner: prefix + sid}
	}
	var id identity
	switch {
	case sid != "" && conv != "":
		id.owner, id.key = prefix+sid, prefix+sid+"#"+conv
	case sid != "":
		id.owner, id.key = prefix+sid, prefix+sid
	case conv != "":
		id.owner, id.key = prefix+"~#"+conv, prefix+"~#"+conv
	default:
		var b [8]byte
		rand.Read(b[:])
		return identity{scope: prefix + ephemeral + hex.EncodeToString(b[:]), owner: prefix + "~"}
	}
	keys := []string{id.key}
	if sid != "" && conv != "" {
		keys = append(keys, prefix+sid) // the whole session's counter
	}
	sctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	gens, err := st.Generations(sctx, keys...)
	if shared {
		g.scale.failed("generations", err)
	}
	if err != nil {
		gens = make([]int, len(keys))
	}
	id.gen = gens[0]
	id.scope = id.key + "@" + strconv.Itoa(gens[0])
	if len(gens) > 1 {
		id.scope += "." + strconv.Itoa(gens[1])
	}
	return id
}

// compact advances the dedup partition of a caller: of its conversation
// when it names one, else of its whole session (and so of every
// conversation in it).
func (g *Gateway) compact(ctx context.Context, tenant, sid, conv string) {
	id := g.whoFor(ctx, tenant, sid, conv)
	if id.key == "" {
		if sid != "" {
			g.eng.compact(id.scope, conv)
		}
		return
	}
	g.scale.mu.RLock()
	st, shared := g.scale.state, g.scale.shared
	g.scale.mu.RUnlock()
	sctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	err := st.Advance(sctx, id.key, id.gen)
	if shared {
		g.scale.failed("advance", err)
	}
	// What the partition had seen is dropped now (else it expires).
	g.eng.reset([]string{id.scope + "/0"})
}

// own records the caller as an owner of the chunk handles in out, the
// result it is sent, except those already in upstream, the bytes the
// upstream sent: a handle is owned by whoever was shown it by terse, and
// a result that only quotes one (data planted to claim another session's
// chunks) earns nothing.
func (g *Gateway) own(ctx context.Context, id identity, out, upstream []byte) {
	hs := handleRE.FindAll(out, -1)
	if len(hs) == 0 {
		return
	}
	handles := make([]string, 0, len(hs))
	for _, h := range hs {
		if !bytes.Contains(upstream, h) && !slices.Contains(handles, string(h)) {
			handles = append(handles, string(h))
		}
	}
	if len(handles) == 0 {
		return
	}
	g.scale.mu.RLock()
	st, shared := g.scale.state, g.scale.shared
	g.scale.mu.RUnlock()
	sctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	if err := st.Own(sctx, id.owner, handles...); shared {
		g.scale.failed("own", err)
	}
}

// checkChunk refuses a _chunk fetch of a handle issued only to other
// tenants or sessions, with fit's refusal; it returns the result to
// answer with, or nil to go on to the engine, which binds handles to
// their scope too and says what else is wrong (an unknown or expired
// handle, a store that is down).
func (g *Gateway) checkChunk(ctx context.Context, id identity, args tree.Value) *tree.Value {
	v, ok := args.Get(ParamChunk)
	if !ok {
		return nil
	}
	h := handleRE.FindString(v.Str() + v.Num())
	if h == "" {
		return nil // not a handle: the engine says so
	}
	g.scale.mu.RLock()
	st, shared := g.scale.state, g.scale.shared
	g.scale.mu.RUnlock()
	sctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	owns, known, err := st.Owns(sctx, h, id.owner)
	if shared {
		g.scale.failed("owner", err)
	}
	if err != nil || owns || !known {
		return nil
	}
	g.scale.refused.WithLabelValues("other_owner").Inc()
	res := errorResult((&fit.ScopeError{Handle: h}).Error())
	return &res
}

// memState is the GatewayState of a gateway without shared state: in
// memory, bounded (oldest first out).
type memState struct {
	mu    sync.Mutex
	gens  map[string]int
	own   map[string][]string
	order []string // keys of gens ("g"+k) and own ("o"+k), oldest first
}

const maxMemState = 1 << 16

func (m *memState) add(k string) {
	m.order = append(m.order, k)
	for len(m.order) > maxMemState {
		old := m.order[0]
		m.order = m.order[1:]
		if old[0] == 'g' {
			delete(m.gens, old[1:])
		} else {
			delete(m.own, old[1:])
		}
	}
}

func (m *memState) Generations(_ context.Context, scopes ...string) ([]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int, len(scopes))
	for i, s := range scopes {
		out[i] = m.gens[s]
	}
	return out, nil
}

func (m *memState) Advance(_ context.Context, scope string, seen int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gens == nil {
		m.gens = map[string]int{}
	}
	if _, ok := m.gens[scope]; !ok {
		m.add("g" + scope)
	}
	if m.gens[scope] <= seen {
		m.gens[scope] = seen + 1
	}
	return nil
}

func (m *memState) Own(_ context.Context, owner string, handles ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.own == nil {
		m.own = map[string][]string{}
	}
	for _, h := range handles {
		os, ok := m.own[h]
		if !ok {
			m.add("o" + h)
		}
		if !slices.Contains(os, owner) {
			m.own[h] = append(os, owner)
		}
	}
	return nil
}

func (m *memState) Owns(_ context.Context, h, owner string) (bool, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	os, known := m.own[h]
	return slices.Contains(os, owner), known, nil
}

// sdkLogger is the logger given to the go-sdk server: l at WARN and above.
// At INFO the SDK logs the start and end of every session, which for a
// stateless client is every request.
func sdkLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(minLevel{l.Handler(), slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }
