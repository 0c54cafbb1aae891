package apiproxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCacheDiagnostics: with cache diagnostics on, each rewritten
// Messages request names the conversation's previous response
// (null on the first) under the beta header, the client's body is
// otherwise what the rewriter made, and the misses the responses report
// are counted by reason, apart at terse's edit points.
func TestCacheDiagnostics(t *testing.T) {
	up := newUpstream(t)
	n := 0
	up.handle = func(w http.ResponseWriter, r *http.Request) {
		n++
		w.Header().Set("Content-Type", "text/event-stream")
		miss := ""
		if n == 2 {
			miss = `,"diagnostics":{"cache_miss_reason":{"type":"messages_changed","cache_missed_input_tokens":120}}`
		}
		fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_%d\",\"type\":\"message\",\"role\":\"assistant\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}%s}}\n\n", n, miss)
		io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}
	srv, st := newProxy(t, up, func(c *Config) { c.CacheDiagnostics = true })
	var c convo
	c.user("list")
	c.call("Bash", `{"command":"list --json"}`, jsonIssues())
	post := func(body []byte) seenRequest {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", bytes.NewReader(body))
		req.Header.Set("Anthropic-Version", "2023-06-01")
		req.Header.Set("Anthropic-Beta", "context-management-2025-06-27")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		return up.last(t)
	}
	first := post(c.request())
	if !bytes.Contains(first.body, []byte(`{"diagnostics":{"previous_message_id":null},"model"`)) {
		t.Fatalf("first request: %.200s", first.body)
	}
	if h := first.header.Get("Anthropic-Beta"); h != "context-management-2025-06-27,"+DiagnosticsBeta {
		t.Fatalf("beta header %q", h)
	}
	c.call("Bash", `{"command":"echo ok"}`, "ok")
	second := post(c.request())
	if !bytes.Contains(second.body, []byte(`{"diagnostics":{"previous_message_id":"msg_1"},`)) {
		t.Fatalf("second request: %.200s", second.body)
	}
	st.Close()
	total, _ := st.Snapshot()
	if total.CacheMisses["client:messages_changed"] != 1 || len(total.CacheMisses) != 1 {
		t.Fatalf("misses %v", total.CacheMisses)
	}
	if s := st.Summary(); !strings.Contains(s, "cache misses (provider diagnostics): the client's messages_changed 1;") {
		t.Fatalf("summary:\n%s", s)
	}
	// Off by default: nothing is added.
	srv2, _ := newProxy(t, up, nil)
	req, _ := http.NewRequest("POST", srv2.URL+"/v1/messages", bytes.NewReader(c.request()))
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := up.last(t); bytes.Contains(got.body, []byte(`"diagnostics"`)) || strings.Contains(got.header.Get("Anthropic-Beta"), DiagnosticsBeta) {
		t.Fatal("diagnostics asked for while off")
	}
}
