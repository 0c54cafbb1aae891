package mcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/internal/lru"
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
	// PutRecord records value under key until it is idle for the
	// state's TTL: a session of a session-based client (its client's
	// name and version), the client name of a conversation, the shape of
	// a chunk handle's structuredContent.
	PutRecord(ctx context.Context, key, value string) error
	// Record returns the value recorded under key and restarts its idle
	// timer; ok is false when there is none.
	Record(ctx context.Context, key string) (value string, ok bool, err error)
	// DropRecord forgets key.
	DropRecord(ctx context.Context, key string) error
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

	namedMu sync.Mutex
	named   lru.Cache[string, namedAt] // conversation key -> client name this replica recorded

	// sessions are the records of the sessions this replica opened or
	// served, kept in the process as well as in the shared state: with
	// the shared state down, a session keeps its client's policy here.
	sessMu   sync.Mutex
	sessions lru.Cache[string, keptSession] // by sessionKey
}

// keptSession is a session's record as this replica keeps it; unsynced
// says the shared state does not have it yet (it was down when the
// session was opened).
type keptSession struct {
	rec      sessionRecord
	unsynced bool
}

// keepSession records a session in the process (bounded: past
// maxNamed, the least recently used goes).
func (s *gwScale) keepSession(key string, k keptSession) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	s.sessions.Max = maxNamed
	s.sessions.Set(key, k)
}

// keptSession returns the in-process record of a session.
func (s *gwScale) keptSession(key string) (keptSession, bool) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	return s.sessions.Get(key)
}

// dropSession forgets the in-process record of a session.
func (s *gwScale) dropSession(key string) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	s.sessions.Delete(key)
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
	for _, op := range []string{"dedup", "generations", "advance", "own", "owner", "session", "shape"} {
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

// current returns the state and whether it is shared (SetState).
func (s *gwScale) current() (GatewayState, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.state, s.shared
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
		g.eng.sharedShapes = nil
		return
	}
	g.eng.sharedShapes = stateShapes{g.scale}
}

// shapeStore keeps the shapes of chunk handles (engine.rememberShape)
// where every replica finds them.
type shapeStore interface {
	putShape(handle string, s shape)
	shapeOf(handle string) (shape, bool)
}

// stateShapes is the shapeStore of a gateway with shared state: a record
// per handle, "h:HANDLE", written when the handle is minted and read by
// a replica that did not mint it, so that a chunk fetch carries the same
// structuredContent on every replica.
type stateShapes struct{ s *gwScale }

type shapeJSON struct {
	Wrap   bool   `json:"w,omitempty"`
	Key    string `json:"k,omitempty"`
	Origin string `json:"o,omitempty"`
}

func (ss stateShapes) putShape(handle string, sh shape) {
	st, _ := ss.s.current()
	v, _ := json.Marshal(shapeJSON{sh.wrap, sh.key, sh.origin})
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	ss.s.failed("shape", st.PutRecord(ctx, "h:"+handle, string(v)))
}

func (ss stateShapes) shapeOf(handle string) (shape, bool) {
	st, _ := ss.s.current()
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	v, ok, err := st.Record(ctx, "h:"+handle)
	ss.s.failed("shape", err)
	var j shapeJSON
	if !ok || json.Unmarshal([]byte(v), &j) != nil {
		return shape{}, false
	}
	return shape{wrap: j.Wrap, key: j.Key, origin: j.Origin}, true
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

// SharedDedup wraps the dedup.Shared of a gateway's cache: the partition
// of a stateless call without a conversation, which no later call reads,
// is neither looked up nor recorded (no round trip, no key left in Redis
// until its TTL, and no id line the model could never use).
func SharedDedup(s dedup.Shared) dedup.Shared { return skipEphemeral{s} }

type skipEphemeral struct{ dedup.Shared }

func isEphemeral(k dedup.Key) bool { return isEphemeralScope(k.Session) }

// isEphemeralScope reports whether a session scope is that of a stateless
// call without a conversation: one call, never continued, for which the
// engine keeps nothing.
func isEphemeralScope(scope string) bool { return strings.Contains(scope, ephemeral) }

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

func (s skipEphemeral) LookupNear(ctx context.Context, k dedup.Key, fp [16]byte, skel string) (string, bool, *dedup.SharedEntry, []byte, error) {
	if isEphemeral(k) {
		return "", false, nil, nil, nil
	}
	if ns, ok := s.Shared.(dedup.NearShared); ok {
		return ns.LookupNear(ctx, k, fp, skel)
	}
	id, ok, err := s.Shared.Lookup(ctx, k, fp)
	return id, ok, nil, nil, err
}

func (s skipEphemeral) AddNear(ctx context.Context, k dedup.Key, e dedup.SharedEntry, content []byte, max int) error {
	if isEphemeral(k) {
		return dedup.ErrNotRecorded
	}
	if ns, ok := s.Shared.(dedup.NearShared); ok {
		return ns.AddNear(ctx, k, e, content, max)
	}
	e.Skel = ""
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
	return context.WithValue(ctx, chunkScopeKey{}, id.who.chunkScope())
}

// identity is who a call belongs to.
type identity struct {
	who   Scope
	scope string // the session given to the engine: dedup partitions
	conv  string // the conversation given to the engine ("" when folded into scope)
	key   string // the key of the shared compaction counter ("": the engine's)
	gen   int    // that counter as read
}

// who names the caller of req; see whoFor.
func (g *Gateway) who(ctx context.Context, req mcp.Request, conv string) identity {
	return g.whoFor(ctx, tenantOf(req), sessionOf(req), conv)
}

// namedAt is a client name a replica recorded, and when.
type namedAt struct {
	name string
	at   time.Time
}

// renameAfter is how long a replica trusts its record of a
// conversation's client name to be in the shared state: well within any
// TTL it is configured with, so that the record of a conversation whose
// requests all carry the name does not expire.
const renameAfter = time.Minute

// maxNamed bounds the conversations whose client name a replica
// remembers having recorded; past it, it forgets the least recently used
// (and records it again, idempotently, when it comes back).
const maxNamed = 1 << 16

// clientFor returns the name of the client of a call, from which its
// policy (where it shows results, its budget, its profile) is chosen
// alike on every replica, which share the configuration. A session's
// request names it (or its session's record does, see sharedSessions). A
// stateless request (2026-07-28) SHOULD carry clientInfo in _meta; one
// that does not, in a conversation, gets the name an earlier request of
// the conversation carried, on whichever replica: each replica records
// the name of a conversation in the shared state once a minute at most
// (one SET), and a request without a name reads it (one GETEX).
func (g *Gateway) clientFor(ctx context.Context, req mcp.Request, id identity) string {
	name := clientName(req)
	st, shared := g.scale.current()
	if !shared || id.who.Conversation == "" || sessionOf(req) != "" || id.who.Ephemeral() {
		return name
	}
	key := id.who.clientKey()
	sctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	if name == "" {
		v, _, err := st.Record(sctx, key)
		g.scale.failed("session", err)
		if err != nil {
			// The shared state is down: the name this replica
			// recorded, if any.
			g.scale.namedMu.Lock()
			n, _ := g.scale.named.Get(key)
			v = n.name
			g.scale.namedMu.Unlock()
		}
		return v
	}
	now := time.Now()
	g.scale.namedMu.Lock()
	n, _ := g.scale.named.Get(key)
	done := n.name == name && now.Sub(n.at) < renameAfter
	if !done {
		g.scale.named.Max = maxNamed
		g.scale.named.Set(key, namedAt{name, now})
	}
	g.scale.namedMu.Unlock()
	if !done {
		err := st.PutRecord(sctx, key, name)
		g.scale.failed("session", err)
		if err != nil {
			g.scale.namedMu.Lock()
			g.scale.named.Delete(key)
			g.scale.namedMu.Unlock()
		}
	}
	return name
}

// sessionOf returns the session of a request: the SDK's (a session held
// by this process), else the one sharedSessions found in the shared
// state; "" for a stateless request.
func sessionOf(req mcp.Request) string {
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
		return ss.ID()
	}
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		return ex.Header.Get(hdrSession)
	}
	return ""
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
	who := Scope{Tenant: tenant, Session: sid, Conversation: conv}
	g.scale.mu.RLock()
	st, shared := g.scale.state, g.scale.shared
	g.scale.mu.RUnlock()
	switch {
	case sid != "" && !shared:
		return identity{who: who, scope: who.String(), conv: conv}
	case who.Ephemeral():
		return identity{who: who, scope: who.ephemeralSession()}
	}
	id := identity{who: who, key: who.Counter()}
	keys := []string{id.key}
	if sid != "" && conv != "" {
		keys = append(keys, who.String()) // the whole session's counter
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
	id.scope = who.Generation(gens)
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
	if err := st.Own(sctx, id.who.String(), handles...); shared {
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
	owns, known, err := st.Owns(sctx, h, id.who.String())
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
// memory, bounded (the least recently used entry out).
type memState struct {
	mu sync.Mutex
	// entries holds the compaction counters ("g"+scope), the owners of a
	// chunk handle ("o"+handle) and the session records ("s"+key).
	entries lru.Cache[string, memEntry]
}

// memEntry is one entry of a memState: the field its key's kind uses.
type memEntry struct {
	gen    int
	owners []string
	record string
}

const maxMemState = 1 << 16

func (m *memState) get(k string) (memEntry, bool) {
	m.entries.Max = maxMemState
	return m.entries.Get(k)
}

func (m *memState) Generations(_ context.Context, scopes ...string) ([]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int, len(scopes))
	for i, s := range scopes {
		e, _ := m.get("g" + s)
		out[i] = e.gen
	}
	return out, nil
}

func (m *memState) Advance(_ context.Context, scope string, seen int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, _ := m.get("g" + scope)
	if e.gen <= seen {
		e.gen = seen + 1
	}
	m.entries.Set("g"+scope, e)
	return nil
}

func (m *memState) Own(_ context.Context, owner string, handles ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, h := range handles {
		e, _ := m.get("o" + h)
		if !slices.Contains(e.owners, owner) {
			e.owners = append(e.owners, owner)
		}
		m.entries.Set("o"+h, e)
	}
	return nil
}

func (m *memState) Owns(_ context.Context, h, owner string) (bool, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, known := m.get("o" + h)
	return slices.Contains(e.owners, owner), known, nil
}

func (m *memState) PutRecord(_ context.Context, k, v string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.get("s" + k)
	m.entries.Set("s"+k, memEntry{record: v})
	return nil
}

func (m *memState) Record(_ context.Context, k string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.get("s" + k)
	return e.record, ok, nil
}

func (m *memState) DropRecord(_ context.Context, k string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries.Delete("s" + k)
	return nil
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

// Headers the gateway sets on a request it found in the shared state, for
// the method handlers, after deleting any a client sent: the session
// (hdrSession) and the client's name as its initialize named it
// (hdrClient).
const (
	hdrSession = "Terse-Internal-Session"
	hdrClient  = "Terse-Internal-Client"
)

// sessionRecord is what the shared state keeps of a session of a
// session-based client (protocol 2025-11-25, 2025-06-18, …): the client
// policy is chosen from its name on every replica alike.
type sessionRecord struct {
	Client  string `json:"client,omitempty"`
	Version string `json:"version,omitempty"`
}

// sessionKey is the key of a session's record: its tenant's.
func sessionKey(tenant, sid string) string {
	return Scope{Tenant: tenant, Session: sid}.recordKey()
}

// validSessionID reports whether id can be a session id the gateway
// minted (rand.Text: base32), so that no header reaches a key unchecked.
func validSessionID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// initPeek bounds how much of a POST body without a session the gateway
// reads looking for an initialize request.
const initPeek = 64 << 10

// sharedSessions serves session-based clients (protocol before
// 2026-07-28) with sessions kept in the shared state instead of in this
// process, so that any replica serves any request of a session and no
// balancer stickiness is needed. The go-sdk has no such mode (its
// stateful handler holds each session in the process that created it,
// and its stateless one ignores Mcp-Session-Id), so the gateway does the
// minimum on top of the stateless handler next: an initialize POST gets
// a fresh session id in Mcp-Session-Id and a record (the client's name
// and version) in the shared state; a later request must name a
// recorded session of its tenant (404 otherwise, after which the client
// initializes again, as the specification says), which re-arms its idle
// timer, and reaches the method handlers with the session and the
// client's name (hdrSession, hdrClient); DELETE forgets the session.
// The replica that serves a session keeps its record in the process too:
// with the shared state down, the session keeps its client's policy there
// (a session opened then is recorded in the shared state once it is
// back). GET
// (a standalone stream for server-initiated messages) is refused with 405
// by next, as the specification allows: such a session gets no
// tools/list_changed and no server-to-client requests.
func (g *Gateway) sharedSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant := ""
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			tenant = ti.UserID
		}
		st, _ := g.scale.current()
		sid := r.Header.Get(sessionHeader)
		if sid == "" {
			if r.Method != http.MethodPost || r.Body == nil {
				next.ServeHTTP(w, r)
				return
			}
			head, err := io.ReadAll(io.LimitReader(r.Body, initPeek+1))
			if err != nil {
				http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
			rec, ok := initializeOf(head)
			if !ok {
				next.ServeHTTP(w, r) // served as a request of its own
				return
			}
			sid = rand.Text()
			val, _ := json.Marshal(rec)
			// Kept here too: with the shared state down (now or later),
			// this replica still knows the session and its client.
			sctx, cancel := context.WithTimeout(r.Context(), stateTimeout)
			err = st.PutRecord(sctx, sessionKey(tenant, sid), string(val))
			cancel()
			g.scale.failed("session", err)
			g.scale.keepSession(sessionKey(tenant, sid), keptSession{rec, err != nil})
			w.Header().Set(sessionHeader, sid)
			next.ServeHTTP(w, r)
			return
		}
		if !validSessionID(sid) {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		sctx, cancel := context.WithTimeout(r.Context(), stateTimeout)
		val, known, err := st.Record(sctx, sessionKey(tenant, sid))
		cancel()
		g.scale.failed("session", err)
		key := sessionKey(tenant, sid)
		kept, isKept := g.scale.keptSession(key)
		var rec sessionRecord
		switch {
		case err != nil:
			// The shared state is down: the session cannot be checked,
			// and nothing it would give is available either (dedup,
			// chunks). Serve the request as the session's, with its
			// client's policy when this replica knows the session, else
			// the default one, rather than fail it.
			rec = kept.rec
		case !known && isKept && kept.unsynced:
			// Opened here while the shared state was down: recorded
			// there now, for the other replicas.
			rec = kept.rec
			val, _ := json.Marshal(rec)
			sctx, cancel := context.WithTimeout(r.Context(), stateTimeout)
			err := st.PutRecord(sctx, key, string(val))
			cancel()
			g.scale.failed("session", err)
			if err == nil {
				g.scale.keepSession(key, keptSession{rec: rec})
			}
		case !known:
			g.scale.dropSession(key) // deleted, or expired, in the shared state
			http.Error(w, "session not found", http.StatusNotFound)
			return
		default:
			json.Unmarshal([]byte(val), &rec)
			if !isKept || kept != (keptSession{rec: rec}) {
				g.scale.keepSession(key, keptSession{rec: rec})
			}
		}
		if r.Method == http.MethodDelete {
			g.scale.dropSession(key)
			sctx, cancel := context.WithTimeout(r.Context(), stateTimeout)
			err := st.DropRecord(sctx, key)
			cancel()
			g.scale.failed("session", err)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		r.Header.Set(hdrSession, sid)
		if rec.Client != "" {
			r.Header.Set(hdrClient, rec.Client)
		}
		next.ServeHTTP(w, r)
	})
}

// initializeOf returns the record of the session an initialize request
// (alone in body) opens.
func initializeOf(body []byte) (sessionRecord, bool) {
	if len(body) > initPeek || !bytes.Contains(body, []byte(`"initialize"`)) {
		return sessionRecord{}, false
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
			ClientInfo      struct {
				Name string `json:"name"`
			} `json:"clientInfo"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "initialize" {
		return sessionRecord{}, false
	}
	return sessionRecord{Client: msg.Params.ClientInfo.Name, Version: msg.Params.ProtocolVersion}, true
}

// dropInternal deletes the internal headers a client may have sent.
func dropInternal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(hdrSession)
		r.Header.Del(hdrClient)
		next.ServeHTTP(w, r)
	})
}
