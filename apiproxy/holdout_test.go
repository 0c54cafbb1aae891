package apiproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"testing"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/tree"
)

// TestHoldoutAssign: the arm is sticky by conversation (every request of
// a growing conversation, whatever it adds), the held-out share is near
// the configured one, and another seed holds out others.
func TestHoldoutAssign(t *testing.T) {
	h := Holdout{Share: 0.3}
	held, moved := 0, 0
	const n = 2000
	for i := range n {
		var c convo
		c.user(fmt.Sprintf("task %d", i))
		thread, arm := h.assign(c.request(), history.Anthropic)
		for j := range 3 {
			c.call("Bash", fmt.Sprintf(`{"command":"ls %d"}`, j), jsonIssues())
			th2, arm2 := h.assign(c.request(), history.Anthropic)
			if th2 != thread || arm2 != arm {
				t.Fatalf("conversation %d changed arm or thread at request %d", i, j+2)
			}
		}
		if arm == ArmHoldout {
			held++
		}
		if _, other := (&Holdout{Share: 0.3, Seed: "another"}).assign(c.request(), history.Anthropic); other != arm {
			moved++
		}
	}
	if f := float64(held) / n; math.Abs(f-0.3) > 0.04 {
		t.Errorf("held out %.3f of conversations, want 0.3", f)
	}
	if moved == 0 {
		t.Error("another seed holds out the same conversations")
	}
	if th, arm := h.assign([]byte(`{"messages":"no"}`), history.Anthropic); th != "" || arm != "" {
		t.Errorf("undecodable body: %q %q", th, arm)
	}
}

// TestHoldoutProxy: a held-out conversation reaches the upstream byte for
// byte as the client sent it, request after request; a conversation in
// the terse arm gets exactly the bytes it gets with the holdout off (the
// choice changes nothing in-band but whether a request is rewritten);
// the stats lines say each request's arm and thread.
func TestHoldoutProxy(t *testing.T) {
	// Find one conversation in each arm at share 0.5.
	h := Holdout{Share: 0.5}
	convs := map[string]*convo{}
	for i := 0; len(convs) < 2; i++ {
		if i == 1000 {
			t.Fatalf("no conversation in one of the arms: %v", convs)
		}
		c := &convo{}
		c.user(fmt.Sprintf("job %d", i))
		if _, arm := h.assign(c.request(), history.Anthropic); convs[arm] == nil {
			convs[arm] = c
		}
	}
	send := func(hold Holdout) (sent map[string][][]byte, recs []Record) {
		up := newUpstream(t)
		up.handle = func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"usage":{"input_tokens":100,"output_tokens":5}}`)
		}
		var buf bytes.Buffer
		st := NewStats(nil, &buf)
		srv, _ := newProxy(t, up, func(c *Config) { c.Stats = st; c.Holdout = hold })
		sent = map[string][][]byte{}
		for _, arm := range []string{ArmTerse, ArmHoldout} {
			c := *convs[arm]
			c.msgs = append([]tree.Value(nil), c.msgs...)
			for j := range 3 {
				c.call("Bash", fmt.Sprintf(`{"command":"list %d --json"}`, j), jsonIssues())
				body := c.request()
				resp, err := http.Post(srv.URL+"/v1/messages", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := up.last(t).body
				if arm == ArmHoldout && hold.Share > 0 && !bytes.Equal(got, body) {
					t.Fatalf("held-out request %d was changed", j)
				}
				sent[arm] = append(sent[arm], got)
			}
		}
		srv.Close()
		st.Close()
		for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			var r Record
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, r)
		}
		return sent, recs
	}
	off, _ := send(Holdout{})
	on, recs := send(h)
	for j := range off[ArmTerse] {
		if !bytes.Equal(off[ArmTerse][j], on[ArmTerse][j]) {
			t.Fatalf("request %d of the terse arm differs with the holdout on", j)
		}
	}
	if bytes.Equal(off[ArmHoldout][0], on[ArmHoldout][0]) {
		t.Fatal("the held-out conversation's requests are rewritten with the holdout off too: the test shows nothing")
	}
	arms := map[string]int{}
	for _, r := range recs {
		arms[r.Arm]++
		if r.Thread == "" || (r.Arm == ArmHoldout) == r.Rewritten {
			t.Errorf("record %+v", r)
		}
		if r.Arm == ArmHoldout && r.DirectCost != r.Cost {
			t.Errorf("a held-out request's direct cost is its billed cost: %+v", r)
		}
	}
	if arms[ArmTerse] != 3 || arms[ArmHoldout] != 3 {
		t.Errorf("arms %v", arms)
	}
}

// TestCompareArms: the means per request and per conversation, and a
// bootstrap interval that is the same for the same records and seed and
// holds the observed difference.
func TestCompareArms(t *testing.T) {
	var recs []Record
	add := func(arm, conv string, costs ...float64) {
		for _, c := range costs {
			recs = append(recs, Record{Arm: arm, Thread: conv, Usage: Usage{Reported: 1}, Cost: c, DirectCost: c * 1.5})
		}
	}
	add(ArmTerse, "a", 1, 1, 1)
	add(ArmTerse, "b", 2, 2)
	add(ArmTerse, "c", 1)
	add(ArmHoldout, "d", 2, 2, 2)
	add(ArmHoldout, "e", 3, 3)
	recs = append(recs, Record{Usage: Usage{Reported: 1}, Cost: 9}, Record{Arm: ArmTerse, Thread: "a"}) // no arm; no usage
	c := CompareArms(recs, 1000, 1)
	if c.Terse.Requests != 6 || c.Terse.Conversations != 3 || c.Holdout.Requests != 5 || c.Unassigned != 1 {
		t.Fatalf("%+v", c)
	}
	if !near(c.Terse.PerRequest, 8.0/6) || !near(c.Holdout.PerRequest, 12.0/5) || !near(c.Terse.PerConversation, 8.0/3) || !near(c.Holdout.PerConversation, 6) {
		t.Fatalf("means %+v %+v", c.Terse, c.Holdout)
	}
	if !near(c.PerRequest.Diff, 8.0/6-12.0/5) || !(c.PerRequest.Lo <= c.PerRequest.Diff && c.PerRequest.Diff <= c.PerRequest.Hi) {
		t.Errorf("per request %+v", c.PerRequest)
	}
	if !(c.PerConversation.Lo <= c.PerConversation.Diff && c.PerConversation.Diff <= c.PerConversation.Hi) || c.PerConversation.Lo >= c.PerConversation.Hi {
		t.Errorf("per conversation %+v", c.PerConversation)
	}
	if again := CompareArms(recs, 1000, 1); again != c {
		t.Errorf("not deterministic: %+v vs %+v", again, c)
	}
	if one := CompareArms(recs[:6], 1000, 1); one.PerRequest.Bootstrapped || !c.PerRequest.Bootstrapped {
		t.Errorf("an interval without a holdout arm: %+v", one.PerRequest)
	}
}
