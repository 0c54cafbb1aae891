package apiproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/terse-dev/terse/tree"
)

// diagProvider is a local Anthropic endpoint that speaks the cache
// diagnostics' wire format: for a request carrying diagnostics it keeps
// the request's fingerprint under its response id and compares the next
// request naming that id with it (model, system, tools, then the
// messages), as the provider documents; it answers streamed and whole
// responses by turns.
type diagProvider struct {
	mu    sync.Mutex
	n     int
	kept  map[string]fingerprint
	asked []diagAsked // what each request asked for
}

type fingerprint struct {
	model, system, tools string
	messages             []string
}

type diagAsked struct {
	has     bool   // the request carried diagnostics
	prev    string // its previous_message_id ("" for null)
	beta    string // its Anthropic-Beta header
	message string // the response id
	diag    string // the diagnostics answered
}

func fingerprintOf(v tree.Value) fingerprint {
	f := fingerprint{model: get(v, "model").Str(), system: string(tree.AppendJSON(nil, get(v, "system"))), tools: string(tree.AppendJSON(nil, get(v, "tools")))}
	for _, m := range get(v, "messages").Items() {
		f.messages = append(f.messages, string(tree.AppendJSON(nil, m)))
	}
	return f
}

// compare is the diagnostics object of cur against the fingerprint prev.
func compare(prev, cur fingerprint) string {
	miss := func(typ string, after []string) string {
		n := 0
		for _, m := range after {
			n += len(m) / 4
		}
		return fmt.Sprintf(`{"cache_miss_reason":{"type":%q,"cache_missed_input_tokens":%d}}`, typ, n)
	}
	switch {
	case prev.model != cur.model:
		return miss("model_changed", cur.messages)
	case prev.system != cur.system:
		return miss("system_changed", cur.messages)
	case prev.tools != cur.tools:
		return miss("tools_changed", cur.messages)
	}
	for i, m := range prev.messages {
		if i >= len(cur.messages) || cur.messages[i] != m {
			return miss("messages_changed", cur.messages[min(i, len(cur.messages)):])
		}
	}
	return "null"
}

func (d *diagProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	v, err := tree.Parse(body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	d.mu.Lock()
	d.n++
	id := fmt.Sprintf("msg_%02d", d.n)
	stream := d.n%2 == 0
	a := diagAsked{message: id, beta: strings.Join(r.Header.Values("Anthropic-Beta"), ";")}
	diag := ""
	if dv, ok := v.Get("diagnostics"); ok {
		a.has = true
		cur := fingerprintOf(v)
		diag = "null"
		if p := get(dv, "previous_message_id"); p.Kind() == tree.KindString {
			a.prev = p.Str()
			if prev, ok := d.kept[a.prev]; ok {
				diag = compare(prev, cur)
			} else {
				diag = `{"cache_miss_reason":{"type":"previous_message_not_found"}}`
			}
		}
		if d.kept == nil {
			d.kept = map[string]fingerprint{}
		}
		d.kept[id] = cur
	}
	a.diag = diag
	d.asked = append(d.asked, a)
	d.mu.Unlock()
	msg := fmt.Sprintf(`{"id":%q,"type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"usage":{"input_tokens":10,"cache_read_input_tokens":1000,"cache_creation_input_tokens":0,"output_tokens":1}`, id)
	if diag != "" {
		msg += `,"diagnostics":` + diag
	}
	msg += "}"
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":%s}\n\n", msg)
	io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
}

func (d *diagProvider) last() diagAsked {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked[len(d.asked)-1]
}

// TestCacheDiagnostics: with the option, each Anthropic request names
// its conversation's previous response (null first) under the beta
// header, joined to the client's betas; the misses the provider reports
// are recorded by reason, a trim boundary move's as terse's, the
// client's changed system prompt and edited history as the client's.
// Without the option neither the field nor the header is sent, and
// OpenAI requests never get them.
func TestCacheDiagnostics(t *testing.T) {
	prov := &diagProvider{}
	up := httptest.NewServer(prov)
	defer up.Close()
	var buf syncBuffer
	st := NewStats(nil, &buf)
	p, err := New(Config{Anthropic: up.URL, OpenAI: up.URL, Stats: st, CacheDiagnostics: true,
		Rewriter: NewRewriter(Options{Window: 20_000, MinTarget: 0.5})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	post := func(body []byte, path string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
		req.Header.Set("Anthropic-Beta", "fine-grained-tool-streaming-2025-05-14")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	withSystem := func(body []byte, system string) []byte {
		v, _ := tree.Parse(body)
		var ms []tree.Member
		for _, m := range v.Members() {
			if m.Key == "system" {
				m.Value = tree.String(system)
			}
			ms = append(ms, m)
		}
		return tree.AppendJSON(nil, tree.Object(ms...))
	}

	// A conversation that grows until trimming moves its boundary.
	var a convo
	a.user("Find the callers.")
	sent, trimAt := 0, 0
	for i := 0; i < 80 && trimAt == 0; i++ {
		a.call("Grep", fmt.Sprintf(`{"pattern":"p%d"}`, i), fileText(fmt.Sprintf("g%d_", i), 40))
		prevID := ""
		if sent > 0 {
			prevID = prov.last().message
		}
		post(a.request(), "/v1/messages")
		sent++
		got := prov.last()
		if !got.has || got.prev != prevID || got.beta != "fine-grained-tool-streaming-2025-05-14,"+DiagnosticsBeta {
			t.Fatalf("request %d asked %+v, want previous %q and both betas", sent, got, prevID)
		}
		if strings.Contains(got.diag, "messages_changed") {
			trimAt = sent
		}
	}
	if trimAt == 0 {
		t.Fatal("trimming never moved the boundary: the test shows nothing")
	}
	// The client changes its system prompt, then edits an earlier result.
	a.call("Grep", `{"pattern":"sys"}`, "no matches")
	post(withSystem(a.request(), "You are a careful coding agent."), "/v1/messages")
	a.call("Grep", `{"pattern":"after"}`, "no matches")
	post(withSystem(a.request(), "You are a careful coding agent."), "/v1/messages")

	var b convo
	b.user("Summarize the log.")
	b.call("Read", `{"file_path":"/var/log/x"}`, "one\ntwo\n")
	post(b.request(), "/v1/messages")
	b.call("Read", `{"file_path":"/var/log/y"}`, "three\n")
	post(b.request(), "/v1/messages")
	b.msgs[4] = obj("role", "user", "content", []tree.Value{obj("type", "tool_result", "tool_use_id", "toolu_02", "content", "three, edited by the client\n")})
	post(b.request(), "/v1/messages")

	openaiBody := []byte(`{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`)
	post(openaiBody, "/v1/chat/completions")
	if s := prov.last(); s.has || strings.Contains(s.beta, DiagnosticsBeta) {
		t.Errorf("an OpenAI request got diagnostics: %+v", s)
	}
	st.Close()

	recs := records(t, buf.String())
	var counts MissCounts
	for _, r := range recs {
		counts.Add(r.CacheDiagnostics)
	}
	if counts.Misses[MissAtTerse]["messages_changed"].Requests != 1 {
		t.Errorf("misses at terse's trim point: %+v (trim at request %d)", counts.Misses, trimAt)
	}
	if counts.Misses[MissAtClient]["system_changed"].Requests != 1 || counts.Misses[MissAtClient]["messages_changed"].Requests != 1 {
		t.Errorf("the client's misses: %+v", counts.Misses[MissAtClient])
	}
	if counts.Attached != sent+5 || counts.Reported != sent+5 || counts.NoDivergence != sent+5-3 || len(counts.NoComparison) != 0 {
		t.Errorf("counts %+v, want %d attached", counts, sent+5)
	}
	w := httptest.NewRecorder()
	st.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`terse_api_cache_misses_total{at="terse",reason="messages_changed"} 1`,
		`terse_api_cache_misses_total{at="client",reason="system_changed"} 1`, `terse_api_cache_misses_total{at="client",reason="messages_changed"} 1`} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if sum := st.Summary(); !strings.Contains(sum, "misses at terse's prefix changes 1 (") || !strings.Contains(sum, "the client's own 2 (") {
		t.Errorf("summary:\n%s", sum)
	}
	if r := recs[trimAt-1]; !r.PrefixChanged || r.CacheDiagnostics == nil || r.CacheDiagnostics.At != MissAtTerse || r.CacheDiagnostics.Missed == 0 || !r.CacheDiagnostics.Previous {
		t.Errorf("the trim request: prefix changed %v, diagnosis %+v", r.PrefixChanged, r.CacheDiagnostics)
	}
	for i, r := range recs[:trimAt-1] {
		if r.PrefixChanged {
			t.Errorf("request %d changed the prefix before the first miss", i+1)
		}
	}
}

// records reads stats lines.
func records(t *testing.T, s string) []Record {
	t.Helper()
	var out []Record
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestNoCacheDiagnosticsByDefault: without the option no request gets
// the diagnostics field or the beta, and a client's own diagnostics pass
// as they are and are still read from the response.
func TestNoCacheDiagnosticsByDefault(t *testing.T) {
	prov := &diagProvider{}
	up := httptest.NewServer(prov)
	defer up.Close()
	var buf syncBuffer
	st := NewStats(nil, &buf)
	p, err := New(Config{Anthropic: up.URL, OpenAI: up.URL, Stats: st, Rewriter: NewRewriter(Options{})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	var c convo
	c.user("Summarize the log.")
	for i := range 3 {
		c.call("Read", fmt.Sprintf(`{"file_path":"/var/log/%d"}`, i), "one\ntwo\n")
		body := c.request()
		if i == 2 { // the client asks for its own, naming a response the provider kept nothing for
			body = append([]byte(`{"diagnostics":{"previous_message_id":"msg_01"},`), body[1:]...)
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", bytes.NewReader(body))
		req.Header.Set("Anthropic-Beta", "x-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got := prov.last()
		if got.beta != "x-1" || got.has != (i == 2) || i == 2 && got.prev != "msg_01" {
			t.Fatalf("request %d: %+v", i, got)
		}
	}
	st.Close()
	recs := records(t, buf.String())
	for i, r := range recs {
		if d := r.CacheDiagnostics; (i == 2) != (d != nil) || d != nil && (d.Request != "" || !d.Reported || d.At != "" || d.Reason != ReasonNotFound) {
			t.Errorf("record %d: %+v", i, d)
		}
	}
}
