package apiproxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"sync"

	"github.com/terse-dev/terse/tree"
)

// Anthropic's cache diagnostics: a request that carries
// "diagnostics": {"previous_message_id": ID} (null on a conversation's
// first request) and the beta header gets, in its response (the body, or
// the message of a stream's message_start event), a "diagnostics" object
// whose "cache_miss_reason" says where the request's prefix first
// diverged from the request that got the response ID:
// {"type": "model_changed" | "system_changed" | "tools_changed" |
// "messages_changed" | "previous_message_not_found" | "unavailable",
// "cache_missed_input_tokens": N (the *_changed types only)}. A null
// "diagnostics" means no divergence; a null "cache_miss_reason" that the
// comparison was still running.
const (
	// DiagnosticsBeta is the beta the diagnostics are asked for with.
	DiagnosticsBeta = "cache-diagnosis-2026-04-07"
	diagnosticsKey  = "diagnostics"
)

// The origins of a reported cache miss (CacheDiagnosis.At).
const (
	MissAtTerse  = "terse"  // terse changed the request's cached prefix (a trim or edit point)
	MissAtClient = "client" // the request's prefix was the client's
)

// The reasons that are no comparison (no tokens missed is reported).
const (
	ReasonNotFound    = "previous_message_not_found"
	ReasonUnavailable = "unavailable"
)

// CacheDiagnosis is what one request's cache diagnostics said, in its
// stats line.
type CacheDiagnosis struct {
	// Request is "attached" when terse added the diagnostics field,
	// "client" when the client sent its own ("" when neither, and the
	// response carried a diagnostics object all the same).
	Request string `json:"request,omitempty"`
	// Previous is true when terse named a previous response (false: it
	// sent null, the conversation's first request it saw).
	Previous bool `json:"previous,omitempty"`
	// Reported is true when the response carried a diagnostics object.
	Reported bool `json:"reported,omitempty"`
	// Reason is cache_miss_reason.type ("": no divergence, or Pending).
	Reason string `json:"reason,omitempty"`
	// Pending is true when the comparison was still running.
	Pending bool `json:"pending,omitempty"`
	// Missed is cache_missed_input_tokens.
	Missed int `json:"missed_tokens,omitempty"`
	// At is where a miss belongs: MissAtTerse when the request was sent
	// rewritten with its cached prefix changed by terse (a trim boundary
	// move or a batch of edits) and the reason is messages_changed,
	// MissAtClient for any other miss; "" for no miss and for the
	// reasons that compare nothing (ReasonNotFound, ReasonUnavailable).
	At string `json:"at,omitempty"`
}

// missAt attributes a reported reason.
func missAt(reason string, terseChanged bool) string {
	switch reason {
	case "", ReasonNotFound, ReasonUnavailable:
		return ""
	case "messages_changed":
		if terseChanged {
			return MissAtTerse
		}
	}
	return MissAtClient
}

// respMeta is what a response says besides usage: its message id and
// its cache diagnostics.
type respMeta struct {
	id   string
	diag *CacheDiagnosis // nil: no diagnostics object
}

// metaOf reads a response body or event: the id of an Anthropic message
// (the body's, or a message_start event's message) and its diagnostics.
func metaOf(v tree.Value, m *respMeta) {
	msg := v
	if t, _ := v.Get("type"); t.Str() == "message_start" {
		msg, _ = v.Get("message")
	}
	if msg.Kind() != tree.KindObject {
		return
	}
	if t, _ := msg.Get("type"); t.Str() == "message" {
		if id, ok := msg.Get("id"); ok && id.Kind() == tree.KindString {
			m.id = id.Str()
		}
	}
	d, ok := msg.Get(diagnosticsKey)
	if !ok {
		if d, ok = v.Get("delta"); !ok || d.Kind() != tree.KindObject {
			return
		}
		if d, ok = d.Get(diagnosticsKey); !ok {
			return
		}
	}
	if d.Kind() != tree.KindObject { // null: no divergence
		m.diag = &CacheDiagnosis{Reported: true}
		return
	}
	cd := &CacheDiagnosis{Reported: true}
	r, ok := d.Get("cache_miss_reason")
	if !ok || r.Kind() != tree.KindObject {
		cd.Pending = ok && r.Kind() == tree.KindNull
		m.diag = cd
		return
	}
	if t, ok := r.Get("type"); ok && t.Kind() == tree.KindString {
		cd.Reason = t.Str()
	}
	if n, ok := r.Get("cache_missed_input_tokens"); ok && n.Kind() == tree.KindNumber {
		if x, err := n.Int(); err == nil && x > 0 && x < 1<<40 {
			cd.Missed = int(x)
		}
	}
	m.diag = cd
}

// threadKey names an Anthropic request's conversation for the
// diagnostics: its first two messages (the system prompt is a field of
// its own), so that a client's changed system prompt is compared with
// the request before it (and reported as system_changed) instead of
// starting a conversation anew. The messages are found by scanning the
// body, and only they are parsed, without their cache_control markers
// (which move from request to request); "" when the body holds no
// message or they do not parse.
func threadKey(body []byte) string {
	i, j, ok := topLevelValue(body, "messages")
	if !ok || body[i] != '[' {
		return ""
	}
	h := sha256.New()
	n := 0
	for k := i + 1; k < j && n < 2; {
		for k < j && (body[k] == ' ' || body[k] == '\t' || body[k] == '\r' || body[k] == '\n' || body[k] == ',') {
			k++
		}
		if k >= j || body[k] == ']' {
			break
		}
		end := skipValue(body, k)
		v, err := tree.Parse(body[k:end])
		if err != nil {
			return ""
		}
		h.Write(tree.AppendJSON(nil, withoutKey(v, "cache_control")))
		h.Write([]byte{0})
		n++
		k = end
	}
	if n == 0 {
		return ""
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:8])
}

// withoutKey is v without the members named key, at any depth.
func withoutKey(v tree.Value, key string) tree.Value {
	switch v.Kind() {
	case tree.KindObject:
		ms := make([]tree.Member, 0, len(v.Members()))
		for _, m := range v.Members() {
			if m.Key != key {
				ms = append(ms, tree.Member{Key: m.Key, Value: withoutKey(m.Value, key)})
			}
		}
		return tree.Object(ms...)
	case tree.KindArray:
		items := make([]tree.Value, len(v.Items()))
		for i, x := range v.Items() {
			items[i] = withoutKey(x, key)
		}
		return tree.Array(items...)
	}
	return v
}

// topLevelValue finds the value of the top-level member key of a JSON
// object: body[i:j].
func topLevelValue(body []byte, key string) (i, j int, ok bool) {
	_, k, has, isObj := topLevelKey(body, key)
	if !isObj || !has {
		return 0, 0, false
	}
	for k < len(body) && body[k] != ':' {
		k++
	}
	k++
	for k < len(body) && (body[k] == ' ' || body[k] == '\t' || body[k] == '\r' || body[k] == '\n') {
		k++
	}
	if k >= len(body) {
		return 0, 0, false
	}
	return k, skipValue(body, k), true
}

// lastMessages remembers each conversation's latest response id, the
// previous_message_id of its next request. It is bounded: past
// maxConvs conversations it starts again empty (a conversation then
// sends null once).
type lastMessages struct {
	mu sync.Mutex
	m  map[string]string
}

func (l *lastMessages) get(conv string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[conv]
}

func (l *lastMessages) set(conv, id string) {
	if conv == "" || id == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) >= maxConvs {
		l.m = make(map[string]string)
	}
	l.m[conv] = id
}

// attachDiagnostics returns body with "diagnostics":
// {"previous_message_id": prev} (null when prev is "") added as its first
// member, and sets the beta header. It changes nothing and returns
// "client" when the body has a top-level "diagnostics" of its own, and
// nothing at all ("") when body is not a JSON object.
func attachDiagnostics(body []byte, prev string, h http.Header) ([]byte, string) {
	i, _, has, ok := topLevelKey(body, diagnosticsKey)
	if !ok {
		return body, ""
	}
	if has {
		return body, "client"
	}
	id := []byte("null")
	if prev != "" {
		id, _ = json.Marshal(prev)
	}
	out := make([]byte, 0, len(body)+len(id)+48)
	out = append(out, body[:i+1]...)
	out = append(out, `"diagnostics":{"previous_message_id":`...)
	out = append(out, id...)
	out = append(out, '}')
	if rest := bytes.TrimLeft(body[i+1:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	out = append(out, body[i+1:]...)
	var betas []string
	for _, v := range h.Values("Anthropic-Beta") {
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				betas = append(betas, b)
			}
		}
	}
	for _, b := range betas {
		if b == DiagnosticsBeta {
			return out, "attached"
		}
	}
	h.Set("Anthropic-Beta", strings.Join(append(betas, DiagnosticsBeta), ","))
	return out, "attached"
}

// topLevelKey scans a JSON object for a member named key at its top
// level: open is the index of its '{', keyEnd the index just after the
// key's closing quote when it has one, ok false when body is not an
// object. It does not validate; strings are skipped with their escapes.
func topLevelKey(body []byte, key string) (open, keyEnd int, has, ok bool) {
	open = -1
	for j, c := range body {
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		if c != '{' {
			return -1, 0, false, false
		}
		open = j
		break
	}
	if open < 0 {
		return -1, 0, false, false
	}
	depth, expectKey := 1, true
	for j := open + 1; j < len(body) && depth > 0; j++ {
		switch c := body[j]; c {
		case '"':
			end := stringEnd(body, j)
			if end > len(body) {
				return open, 0, false, true
			}
			if depth == 1 && expectKey && string(body[j+1:end-1]) == key {
				return open, end, true, true
			}
			expectKey = false
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		}
	}
	return open, 0, false, true
}

// stringEnd is the index just after the string that opens at body[i]
// (len(body)+1 when it does not end).
func stringEnd(body []byte, i int) int {
	for k := i + 1; k < len(body); k++ {
		switch body[k] {
		case '\\':
			k++
		case '"':
			return k + 1
		}
	}
	return len(body) + 1
}

// skipValue is the index just after the JSON value that starts at
// body[i] (len(body) when it does not end).
func skipValue(body []byte, i int) int {
	switch body[i] {
	case '"':
		return min(stringEnd(body, i), len(body))
	case '{', '[':
		depth := 0
		for k := i; k < len(body); k++ {
			switch body[k] {
			case '"':
				k = stringEnd(body, k) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return k + 1
				}
			}
		}
		return len(body)
	}
	k := i
	for k < len(body) && !strings.ContainsRune(",]} \t\r\n", rune(body[k])) {
		k++
	}
	return k
}

// diagnose attaches the diagnostics to out, the body going upstream
// (body is the client's), and sets ex to read the response's. It fails
// open: a panic leaves out as it was, logged.
func (p *Proxy) diagnose(ex *exchange, body, out []byte, h http.Header) (sent []byte) {
	defer func() {
		if r := recover(); r != nil {
			p.cfg.ErrorLog.Printf("internal error attaching cache diagnostics, forwarded without them: %v", r)
			sent = out
		}
	}()
	thread := threadKey(body)
	if thread == "" {
		return out
	}
	prev := p.last.get(thread)
	sent, how := attachDiagnostics(out, prev, h)
	if how != "" {
		ex.diag = &CacheDiagnosis{Request: how, Previous: how == "attached" && prev != ""}
	}
	ex.onMeta = p.noteMeta(ex, thread)
	return sent
}

// noteMeta takes what a response said: its diagnostics into ex.diag, and
// its message id as the latest of the conversation thread names (a
// threadKey; "" when diagnostics are off).
func (p *Proxy) noteMeta(ex *exchange, thread string) func(respMeta) {
	return func(m respMeta) {
		p.last.set(thread, m.id) // "" (diagnostics off): nothing
		if m.diag == nil {
			return
		}
		d := *m.diag
		if ex.diag != nil {
			d.Request, d.Previous = ex.diag.Request, ex.diag.Previous
		}
		ex.diag = &d
	}
}

// MissRow sums the misses of one origin and reason.
type MissRow struct {
	Requests int `json:"requests"`
	Missed   int `json:"missed_tokens"`
}

// MissCounts sums requests' cache diagnostics.
type MissCounts struct {
	// Attached counts the requests terse attached diagnostics to, Client
	// those that carried the client's own.
	Attached int `json:"attached"`
	Client   int `json:"client"`
	// Reported counts the responses with a diagnostics object: of them,
	// NoDivergence found none, Pending were still being compared,
	// NoComparison could not compare (by reason), and the rest are
	// Misses, by origin (MissAtTerse, MissAtClient), then reason.
	Reported     int                           `json:"reported"`
	NoDivergence int                           `json:"no_divergence"`
	Pending      int                           `json:"pending"`
	NoComparison map[string]int                `json:"no_comparison,omitempty"`
	Misses       map[string]map[string]MissRow `json:"misses,omitempty"`
}

// Add counts one request's diagnosis (nil: none).
func (m *MissCounts) Add(d *CacheDiagnosis) {
	if d == nil {
		return
	}
	switch d.Request {
	case "attached":
		m.Attached++
	case "client":
		m.Client++
	}
	if !d.Reported {
		return
	}
	m.Reported++
	switch {
	case d.Pending:
		m.Pending++
	case d.Reason == "":
		m.NoDivergence++
	case d.At == "":
		if m.NoComparison == nil {
			m.NoComparison = map[string]int{}
		}
		m.NoComparison[d.Reason]++
	default:
		if m.Misses == nil {
			m.Misses = map[string]map[string]MissRow{}
		}
		if m.Misses[d.At] == nil {
			m.Misses[d.At] = map[string]MissRow{}
		}
		r := m.Misses[d.At][d.Reason]
		r.Requests++
		r.Missed += d.Missed
		m.Misses[d.At][d.Reason] = r
	}
}

// Empty reports whether nothing was counted.
func (m *MissCounts) Empty() bool { return m == nil || m.Attached+m.Client+m.Reported == 0 }

// Total is the misses of one origin ("": both).
func (m *MissCounts) Total(at string) MissRow {
	var t MissRow
	for a, rs := range m.Misses {
		if at != "" && a != at {
			continue
		}
		for _, r := range rs {
			t.Requests += r.Requests
			t.Missed += r.Missed
		}
	}
	return t
}

// clone is a deep copy of m (nil: nil).
func (m *MissCounts) clone() *MissCounts {
	if m == nil {
		return nil
	}
	c := *m
	c.NoComparison = maps.Clone(m.NoComparison)
	if m.Misses != nil {
		c.Misses = make(map[string]map[string]MissRow, len(m.Misses))
		for k, v := range m.Misses {
			c.Misses[k] = maps.Clone(v)
		}
	}
	return &c
}
