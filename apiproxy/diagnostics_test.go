package apiproxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/tree"
)

// TestAttachDiagnostics: the field goes first in the body, naming the
// previous response or null; a body with diagnostics of its own (at its
// top level only) is left alone; the beta joins the header's others once.
func TestAttachDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name, body, prev, want, how string
		header, wantHeader          []string
	}{
		{"first", `{"model":"m","messages":[]}`, "", `{"diagnostics":{"previous_message_id":null},"model":"m","messages":[]}`, "attached",
			nil, []string{DiagnosticsBeta}},
		{"previous", ` {"model":"m"}`, `msg_01"x`, ` {"diagnostics":{"previous_message_id":"msg_01\"x"},"model":"m"}`, "attached",
			[]string{"a-1, b-2"}, []string{"a-1,b-2," + DiagnosticsBeta}},
		{"empty object", `{ }`, "msg_1", `{"diagnostics":{"previous_message_id":"msg_1"} }`, "attached",
			[]string{DiagnosticsBeta}, []string{DiagnosticsBeta}},
		{"nested key", `{"messages":[{"diagnostics":1,"content":"\"diagnostics\":"}],"x":{"diagnostics":{}}}`, "m",
			`{"diagnostics":{"previous_message_id":"m"},"messages":[{"diagnostics":1,"content":"\"diagnostics\":"}],"x":{"diagnostics":{}}}`, "attached",
			[]string{"a", "b"}, []string{"a,b," + DiagnosticsBeta}},
		{"the client's own", `{"model":"m","diagnostics":{"previous_message_id":"msg_c"}}`, "msg_t",
			`{"model":"m","diagnostics":{"previous_message_id":"msg_c"}}`, "client", []string{"x"}, []string{"x"}},
		{"value not key", `{"model":"diagnostics"}`, "", `{"diagnostics":{"previous_message_id":null},"model":"diagnostics"}`, "attached", nil, []string{DiagnosticsBeta}},
		{"not an object", `[1]`, "m", `[1]`, "", nil, nil},
	} {
		h := http.Header{}
		for _, v := range tc.header {
			h.Add("Anthropic-Beta", v)
		}
		got, how := attachDiagnostics([]byte(tc.body), tc.prev, h)
		if string(got) != tc.want || how != tc.how {
			t.Errorf("%s: got %s (%q), want %s (%q)", tc.name, got, how, tc.want, tc.how)
		}
		if hv := h.Values("Anthropic-Beta"); !equalStrings(hv, tc.wantHeader) {
			t.Errorf("%s: header %q, want %q", tc.name, hv, tc.wantHeader)
		}
		if how == "attached" && !json.Valid(got) {
			t.Errorf("%s: invalid JSON %s", tc.name, got)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzAttachDiagnostics: on any JSON object the result is valid JSON
// with exactly one top-level diagnostics member, the body's own when it
// had one, and every other member as it was.
func FuzzAttachDiagnostics(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"diagnostics":null}`, `{"a":{"diagnostics":1},"b":"\\\"diagnostics\\\""}`, `{"a":[{"b":"}"}]}`, ` { "x" : [ ] } `} {
		f.Add([]byte(s), "msg_1")
	}
	f.Add([]byte(`{"system":"s","messages":[{"role":"user","content":[{"type":"text","text":"]}","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":"a"},3]}`), "")
	f.Add([]byte(`{"messages": [ "x" , {"a":[1,"\\\""]}]}`), "")
	f.Fuzz(func(t *testing.T, body []byte, prev string) {
		got, how := attachDiagnostics(body, prev, http.Header{})
		key := threadKey(body)
		v, err := tree.Parse(body)
		if err != nil || v.Kind() != tree.KindObject || !json.Valid(body) {
			return
		}
		if want := threadKeyOf(v); key != want {
			t.Fatalf("threadKey %q, from the parsed body %q: %s", key, want, body)
		}
		_, had := v.Get(diagnosticsKey)
		if had != (how == "client") {
			t.Fatalf("had diagnostics %v, how %q: %s", had, how, body)
		}
		if had {
			if !bytes.Equal(got, body) {
				t.Fatalf("changed a body with its own diagnostics: %s", got)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("invalid: %s", got)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatal(err)
		}
		var d struct {
			Prev *string `json:"previous_message_id"`
		}
		if err := json.Unmarshal(m[diagnosticsKey], &d); err != nil || (prev == "") != (d.Prev == nil) || d.Prev != nil && *d.Prev != prev {
			if !utf8.ValidString(prev) {
				return // encoding/json replaced invalid UTF-8 (ids come from parsed JSON: never)
			}
			t.Fatalf("diagnostics %s for %q", m[diagnosticsKey], prev)
		}
		w, _ := tree.Parse(got)
		if len(w.Members()) != len(v.Members())+1 {
			t.Fatalf("members %d → %d", len(v.Members()), len(w.Members()))
		}
	})
}

// TestMetaOf: the message id and the diagnostics of a body and of a
// stream's message_start, in every shape the docs give.
func TestMetaOf(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		id       string
		want     *CacheDiagnosis
	}{
		{"body, miss", `{"id":"msg_1","type":"message","usage":{"input_tokens":1},"diagnostics":{"cache_miss_reason":{"type":"tools_changed","cache_missed_input_tokens":321}}}`,
			"msg_1", &CacheDiagnosis{Reported: true, Reason: "tools_changed", Missed: 321}},
		{"body, no divergence", `{"id":"msg_2","type":"message","diagnostics":null}`, "msg_2", &CacheDiagnosis{Reported: true}},
		{"body, pending", `{"id":"msg_3","type":"message","diagnostics":{"cache_miss_reason":null}}`, "msg_3", &CacheDiagnosis{Reported: true, Pending: true}},
		{"body, not asked", `{"id":"msg_4","type":"message","usage":{}}`, "msg_4", nil},
		{"message_start", `{"type":"message_start","message":{"id":"msg_5","type":"message","usage":{"input_tokens":1},"diagnostics":{"cache_miss_reason":{"type":"previous_message_not_found"}}}}`,
			"msg_5", &CacheDiagnosis{Reported: true, Reason: ReasonNotFound}},
		{"delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","diagnostics":{"cache_miss_reason":{"type":"messages_changed","cache_missed_input_tokens":7}}},"usage":{}}`,
			"", &CacheDiagnosis{Reported: true, Reason: "messages_changed", Missed: 7}},
		{"openai", `{"id":"chatcmpl-1","object":"chat.completion","usage":{}}`, "", nil},
	} {
		v, err := tree.ParseString(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		var m respMeta
		metaOf(v, &m)
		// What the official SDK reads from the same message.
		msg := v
		if get(v, "type").Str() == "message_start" {
			msg = get(v, "message")
		}
		if get(msg, "type").Str() == "message" {
			var sdk anthropic.Message
			if err := json.Unmarshal(tree.AppendJSON(nil, msg), &sdk); err != nil {
				t.Fatal(err)
			}
			r := sdk.Diagnostics.CacheMissReason
			if sdk.ID != m.id || m.diag != nil && (r.Type != m.diag.Reason || int(r.CacheMissedInputTokens) != m.diag.Missed) {
				t.Errorf("%s: the SDK reads id %q reason %q (%d tokens), terse %q %+v", tc.name, sdk.ID, r.Type, r.CacheMissedInputTokens, m.id, m.diag)
			}
		}
		if m.id != tc.id || (m.diag == nil) != (tc.want == nil) || m.diag != nil && *m.diag != *tc.want {
			t.Errorf("%s: id %q diag %+v, want %q %+v", tc.name, m.id, m.diag, tc.id, tc.want)
		}
	}
}

func TestMissAt(t *testing.T) {
	for _, tc := range []struct {
		reason string
		terse  bool
		want   string
	}{
		{"messages_changed", true, MissAtTerse},
		{"messages_changed", false, MissAtClient},
		{"system_changed", true, MissAtClient}, // terse never changes the system prompt
		{"tools_changed", true, MissAtClient},
		{"model_changed", false, MissAtClient},
		{ReasonNotFound, true, ""},
		{ReasonUnavailable, false, ""},
		{"", true, ""},
	} {
		if got := missAt(tc.reason, tc.terse); got != tc.want {
			t.Errorf("missAt(%q, %v) = %q, want %q", tc.reason, tc.terse, got, tc.want)
		}
	}
}

// BenchmarkDiagnostics200KB: what --cache-diagnostics adds to a 200 KB
// request (finding its conversation, which decodes the body once more,
// and attaching the field), reported as a share of a warm Rewrite of the
// same body measured in the same run.
func BenchmarkDiagnostics200KB(b *testing.B) {
	body := benchRequest(b)
	rw := NewRewriter(Options{})
	rw.Rewrite(body, history.Anthropic)
	n := b.N
	start := time.Now()
	for range n {
		rw.Rewrite(body, history.Anthropic)
	}
	base := time.Since(start)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range n {
		k := threadKey(body)
		attachDiagnostics(body, k, http.Header{})
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed())/float64(max(base, 1)), "x-warm-rewrite")
}

// threadKeyOf is threadKey computed from the parsed body.
func threadKeyOf(v tree.Value) string {
	ms, ok := v.Get("messages")
	if !ok || ms.Kind() != tree.KindArray || len(ms.Items()) == 0 {
		return ""
	}
	h := sha256.New()
	for i, m := range ms.Items() {
		if i == 2 {
			break
		}
		h.Write(tree.AppendJSON(nil, withoutKey(m, "cache_control")))
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:8])
}

// TestThreadKey: a conversation keeps its key when its system prompt
// changes, when cache_control markers move and as it grows; another
// first message is another conversation.
func TestThreadKey(t *testing.T) {
	base := `{"model":"m","system":%q,"messages":[{"role":"user","content":[{"type":"text","text":"Fix it."%s}]},{"role":"assistant","content":"On it."}%s]}`
	cc := `,"cache_control":{"type":"ephemeral"}`
	k := threadKey([]byte(fmt.Sprintf(base, "You are a coding agent.", cc, "")))
	if k == "" {
		t.Fatal("no key")
	}
	for _, same := range []string{
		fmt.Sprintf(base, "You are a careful coding agent.", cc, ""),
		fmt.Sprintf(base, "You are a coding agent.", "", `,{"role":"user","content":"next"}`),
	} {
		if got := threadKey([]byte(same)); got != k {
			t.Errorf("key changed for %s", same)
		}
	}
	other := strings.Replace(fmt.Sprintf(base, "s", "", ""), "Fix it.", "Fix that.", 1)
	if threadKey([]byte(other)) == k {
		t.Error("another first message kept the key")
	}
	for _, none := range []string{`{"messages":[]}`, `{"model":"m"}`, `[]`, `{"messages":"x"}`, `{"messages":[{"role":`} {
		if got := threadKey([]byte(none)); got != "" {
			t.Errorf("threadKey(%s) = %q", none, got)
		}
	}
}

// TestDiagnoseFailsOpen: a panic while attaching the diagnostics
// forwards the body as it was and logs one line.
func TestDiagnoseFailsOpen(t *testing.T) {
	var logged syncBuffer
	p, err := New(Config{CacheDiagnostics: true, ErrorLog: log.New(&logged, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	out := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	got := p.diagnose(nil, out, out, http.Header{}) // no exchange: it panics
	if !bytes.Equal(got, out) || !strings.Contains(logged.String(), "internal error attaching cache diagnostics") {
		t.Errorf("sent %s, logged %q", got, logged.String())
	}
}
