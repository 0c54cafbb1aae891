package scale

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse/inband"
)

// firstNote reads the note text opens with, or nil.
func firstNote(text string) inband.Line {
	line, _, _ := strings.Cut(text, "\n")
	v, err := inband.Parse(line)
	if err != nil {
		return nil
	}
	return v
}

// resultID is the id a recorded result is shown with ("> [id: …]").
func resultID(text string) (string, bool) {
	x, ok := firstNote(text).(inband.ID)
	return x.ID, ok
}

// refID is the id a reference names ("> [ref: …, byte-identical]").
func refID(text string) (string, bool) {
	x, ok := firstNote(text).(inband.Ref)
	return x.ID, ok
}

// chunked reads the notes of a trimmed result: the handle its fetch call
// names ("" when it names none) and how many chunks its index or its
// overflow hint counts.
func chunked(text string) (handle string, n int) {
	for line := range strings.Lines(text) {
		v, err := inband.Parse(strings.TrimSuffix(line, "\n"))
		if err != nil {
			continue
		}
		switch x := v.(type) {
		case inband.Index:
			n = x.Chunks
		case inband.IndexFoot:
			handle = handleIn(x.Call)
		case inband.Overflow:
			handle = handleIn(x.Call)
			switch x.How {
			case inband.ByChunk:
				n = x.Chunks
			case inband.OneChunk:
				n = 1
			}
		}
	}
	return handle, n
}

func isID(text string) bool  { _, ok := resultID(text); return ok }
func isRef(text string) bool { _, ok := refID(text); return ok }

// chunkedHandle reports whether text's notes name a fetch call.
func chunkedHandle(text string) bool { h, _ := chunked(text); return h != "" }

// handleIn is the handle a fetch call names: `this tool with _chunk "c_….N"`.
func handleIn(call string) string {
	i := strings.Index(call, "c_")
	if i < 0 {
		return ""
	}
	h := call[i:]
	if j := strings.IndexAny(h, `." `); j >= 0 {
		h = h[:j]
	}
	return h
}

// call calls a tool of the memory server in conversation conv.
func call(cs *mcp.ClientSession, tool, conv string, args map[string]any) (string, bool, error) {
	if args == nil {
		args = map[string]any{}
	}
	p := &mcp.CallToolParams{Name: "mem__" + tool, Arguments: args}
	if conv != "" {
		p.Meta = mcp.Meta{"terse/conversation": conv}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}

func mustCall(t *testing.T, cs *mcp.ClientSession, tool, conv string, args map[string]any) string {
	t.Helper()
	text, isErr, err := call(cs, tool, conv, args)
	if err != nil || isErr {
		t.Fatalf("%s: %v %.300q", tool, err, text)
	}
	return text
}

// seed fills the memory server with n entities.
func seed(t *testing.T, cs *mcp.ClientSession, n int) {
	var ents []map[string]any
	for i := range n {
		ents = append(ents, map[string]any{"name": fmt.Sprintf("service-%03d", i), "entityType": "service",
			"observations": []string{fmt.Sprintf("runs on node-%d", i%7), fmt.Sprintf("owned by team-%d", i%5), "deployed with the standard pipeline"}})
	}
	mustCall(t, cs, "create_entities", "", map[string]any{"entities": ents})
}

// callsPerReplica is terse_gateway_calls_total of each live replica.
func (c *cluster) callsPerReplica() []float64 {
	var out []float64
	for _, r := range c.replicas {
		if r.cmd == nil {
			continue
		}
		v, _ := metric(r.url(), "terse_gateway_calls_total{")
		out = append(out, v)
	}
	return out
}

// TestCluster: one conversation through haproxy, its calls spread over
// three replicas, then a replica killed and Redis stopped and restarted.
func TestCluster(t *testing.T) {
	c := startCluster(t)
	cs := c.client()
	seed(t, cs, 60)
	conv := "conv-main"

	// 1. Dedup across replicas: the first read shows an id, every later
	// one (on whichever replica) refers to it.
	first := mustCall(t, cs, "read_graph", conv, nil)
	id, hasID := resultID(first)
	if !hasID {
		t.Fatalf("first read_graph has no id line: %.200q", first)
	}
	for i := range 6 {
		got := mustCall(t, cs, "read_graph", conv, nil)
		if r, ok := refID(got); !ok || r != id {
			t.Fatalf("read %d: %.200q, want a reference to %s", i+2, got, id)
		}
	}
	per := c.callsPerReplica()
	for i, v := range per {
		if v == 0 {
			t.Fatalf("replica %d served no call (%v): the balancer did not spread the conversation", i+1, per)
		}
	}
	t.Logf("step 1: 7 reads of one conversation, calls per replica %v, all references after the first", per)

	// 1b. Near-references across replicas: two entities alike but for
	// their names, read one after the other in one conversation (on two
	// replicas): the second is the first plus the changed name.
	long := strings.Repeat("build step completed without warnings; ", 6)
	var jobs []map[string]any
	for _, n := range []string{"job-a", "job-b"} {
		jobs = append(jobs, map[string]any{"name": n, "entityType": "job", "observations": []string{long + "1", long + "2", long + "3"}})
	}
	mustCall(t, cs, "create_entities", "", map[string]any{"entities": jobs})
	n0 := c.callsPerReplica()
	first = mustCall(t, cs, "open_nodes", "conv-near", map[string]any{"names": []string{"job-a"}})
	n1 := c.callsPerReplica()
	id, hasID = resultID(first)
	if !hasID {
		t.Fatalf("open_nodes job-a has no id line: %.200q", first)
	}
	near := mustCall(t, cs, "open_nodes", "conv-near", map[string]any{"names": []string{"job-b"}})
	n2 := c.callsPerReplica()
	if x, ok := firstNote(near).(inband.NearRef); !ok || x.ID != id || !slices.ContainsFunc(x.Changes, func(c inband.Change) bool { return c.Old == "job-a" && c.New == "job-b" }) {
		t.Fatalf("open_nodes job-b: %.300q, want a near-reference to %s", near, id)
	}
	if slices.Equal(replicaOf(n0, n1), replicaOf(n1, n2)) {
		t.Fatalf("both reads on one replica (%v %v %v)", n0, n1, n2)
	}
	t.Logf("step 1b: a near-reference across replicas: %q", near)

	// 2. Chunks across replicas: a trimmed read issues a handle on one
	// replica; each chunk is fetched whole, on whichever replica.
	// (In a conversation of its own: in conv, the read is a reference.)
	conv = "conv-chunks"
	trimmed := mustCall(t, cs, "read_graph", conv, map[string]any{"_budget": 300})
	h, n := chunked(trimmed)
	if h == "" || n < 1 {
		t.Fatalf("trimmed read: handle %q, %d chunks: %q", h, n, trimmed)
	}
	before := c.callsPerReplica()
	for k := 1; k <= n; k++ {
		mustCall(t, cs, "read_graph", conv, map[string]any{"_chunk": fmt.Sprintf("%s.%d", h, k)})
	}
	after := c.callsPerReplica()
	served := 0
	for i := range after {
		if after[i] > before[i] {
			served++
		}
	}
	if n >= 3 && served < 2 {
		t.Fatalf("chunk fetches landed on %d replica(s)", served)
	}
	// Another conversation may not fetch them.
	if text, isErr, err := call(cs, "read_graph", "conv-other", map[string]any{"_chunk": h + ".1"}); err != nil || !isErr || !strings.Contains(text, "belongs to another session") {
		t.Fatalf("chunk fetched from another conversation: %v %v %.200q", err, isErr, text)
	}
	// Nor another tenant, in a conversation of the same name; and a
	// request without a token is refused.
	other := c.clientAs(tokenB)
	if text, isErr, err := call(other, "read_graph", conv, map[string]any{"_chunk": h + ".1"}); err != nil || !isErr || !strings.Contains(text, "belongs to another session") {
		t.Fatalf("chunk fetched by another tenant: %v %v %.200q", err, isErr, text)
	}
	if got := mustCall(t, other, "read_graph", "conv-main", nil); !isID(got) {
		t.Fatalf("another tenant's first read in conv-main: %.100q, want the whole result", got)
	}
	resp, err := http.Post(c.lbURL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a request without a token: HTTP %d, want 401", resp.StatusCode)
	}
	t.Logf("step 2: handle %s, %d chunks fetched on %d replicas; another conversation and another tenant refused; no token, 401", h, n, served)

	sessions(t, c)

	// 3. A replica killed mid-run: calls in flight on it fail with an
	// error, the others and every later call succeed, and no handle is
	// lost.
	// A session opened before the kill outlives it (it is in Redis).
	sess := c.sessionClient("scale-client", "2025-11-25", tokenA)
	sargs := map[string]any{"names": []string{"service-010", "service-011", "service-012"}}
	sid, hasID := resultID(mustCall(t, sess, "open_nodes", "", sargs))
	if !hasID {
		t.Fatal("the session's first read has no id line")
	}
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var errs []string
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wcs := c.client()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, isErr, err := call(wcs, "read_graph", fmt.Sprintf("kill-%d", w), nil)
				if err != nil || isErr {
					failed.Add(1)
					errMu.Lock()
					errs = append(errs, fmt.Sprint(err))
					errMu.Unlock()
					wcs = c.client()
					continue
				}
				ok.Add(1)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	c.kill(c.replicas[0])
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if ok.Load() == 0 {
		t.Fatal("no call succeeded while a replica died")
	}
	if f := failed.Load(); f > 4 {
		t.Fatalf("%d calls failed when one replica died (at most the 4 in flight may): %v", f, errs)
	}
	for i := range 12 {
		mustCall(t, c.client(), "read_graph", fmt.Sprintf("after-kill-%d", i), nil)
	}
	mustCall(t, cs, "read_graph", conv, map[string]any{"_chunk": h + ".1"})
	for i := range 3 {
		if got := mustCall(t, sess, "open_nodes", "", sargs); !strings.HasPrefix(got, inband.Ref{ID: sid}.String()) {
			t.Fatalf("the session's read %d after the kill: %.200q, want a reference to %s", i+1, got, sid)
		}
	}
	t.Logf("step 3: replica 1 killed during %d calls: %d failed in flight (%v); 12 later calls, the old handle and a session opened before (its references too) succeed", ok.Load()+failed.Load(), failed.Load(), errs)

	// 4. Redis stopped: calls succeed, without dedup, and a trimmed
	// result says its chunks cannot be fetched instead of issuing a
	// dead handle.
	c.stopRedis()
	down := c.client()
	for i := range 3 {
		got := mustCall(t, down, "read_graph", "redis-down", nil)
		if strings.HasPrefix(got, "> [") {
			t.Fatalf("read %d with Redis down: %.100q, want the result without id line or reference", i+1, got)
		}
	}
	trimmed = mustCall(t, down, "read_graph", "redis-down", map[string]any{"_budget": 300})
	if h, _ := chunked(trimmed); h != "" || !strings.Contains(trimmed, "not retrievable right now") {
		t.Fatalf("trimmed read with Redis down: %.600q", trimmed)
	}
	text, isErr, err := call(down, "read_graph", conv, map[string]any{"_chunk": h + ".1"})
	if err != nil || !isErr || !strings.Contains(text, "right now") {
		t.Fatalf("chunk fetch with Redis down: %v %v %.200q", err, isErr, text)
	}
	degraded := 0.0
	for _, r := range c.replicas {
		if r.cmd != nil {
			v, _ := metric(r.url(), "terse_gateway_shared_state_errors_total{")
			degraded += v
		}
	}
	if degraded == 0 {
		t.Fatal("no replica counted a shared-state error")
	}
	t.Logf("step 4: Redis down: calls succeed without dedup, trimmed result without handle, chunk fetch refused (%q), %v shared-state errors counted", text, degraded)

	// 5. Redis back (with what it saved): dedup and chunks recover by
	// themselves, and the handle issued before is served again.
	c.startRedis()
	var got string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got = mustCall(t, down, "read_graph", "redis-back", nil)
		if isID(got) || time.Now().After(deadline) {
			break
		}
	}
	if !isID(got) {
		t.Fatalf("after Redis came back: %.100q, want an id line", got)
	}
	if got := mustCall(t, down, "read_graph", "redis-back", nil); !isRef(got) {
		t.Fatalf("after Redis came back, a repeat: %.100q, want a reference", got)
	}
	mustCall(t, cs, "read_graph", conv, map[string]any{"_chunk": h + ".1"})
	t.Logf("step 5: Redis back: dedup and the handle issued before it stopped work again")

	// 6. Every key the run left in Redis is in terse's versioned
	// namespace.
	keys := strings.Fields(c.redis("--scan"))
	if len(keys) == 0 {
		t.Fatal("no key in Redis after the run")
	}
	kinds := map[string]int{}
	for _, k := range keys {
		if !strings.HasPrefix(k, namespace) {
			t.Errorf("key %q is outside %s", k, namespace)
			continue
		}
		kind, _, _ := strings.Cut(strings.TrimPrefix(k, namespace), ":")
		kinds[kind]++
	}
	t.Logf("step 6: %d keys in Redis, all under %s: %v", len(keys), namespace, kinds)
}

// replicaOf returns which replicas served calls between two counts.
func replicaOf(before, after []float64) []bool {
	out := make([]bool, len(after))
	for i := range after {
		out[i] = after[i] > before[i]
	}
	return out
}

// namespace is redisstore.Namespace: the harness reads Redis as an
// outsider would.
const namespace = "terse:v1:"

// sessions: session-based clients (2025-11-25, 2025-06-18) through the
// balancer, which does not stick them to a replica: their sessions are in
// Redis. One session's calls land on every replica, with dedup and chunk
// fetches across them and the policy its client name chose (a budget of
// 300 tokens, from [[proxy.clients]]) applied by each; another session of
// the tenant and a session of another tenant may not fetch its chunks; a
// deleted session is gone on every replica.
func sessions(t *testing.T, c *cluster) {
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		s1 := c.sessionClient("budgeted-client", version, tokenA)
		before := c.callsPerReplica()
		args := map[string]any{"names": []string{"service-001", "service-002", "service-003"}}
		first := mustCall(t, s1, "open_nodes", "", args)
		rid, ok := resultID(first)
		if !ok {
			t.Fatalf("%s: first open_nodes has no id line: %.200q", version, first)
		}
		for i := range 3 {
			if got := mustCall(t, s1, "open_nodes", "", args); !strings.HasPrefix(got, inband.Ref{ID: rid}.String()) {
				t.Fatalf("%s: repeat %d: %.200q, want a reference to %s", version, i+1, got, rid)
			}
		}
		// The client's budget on each replica: read_graph, compacted
		// after each read so that none is a reference.
		var h, got string
		for i := range 3 {
			got = mustCall(t, s1, "read_graph", "", nil)
			if h, _ = chunked(got); h == "" {
				t.Fatalf("%s: read %d in a session of budgeted-client: %.200q, want it trimmed to 300 tokens", version, i+1, got)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if _, err := s1.CallTool(ctx, &mcp.CallToolParams{Name: "terse_compact", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
		_, n := chunked(got)
		for k := 1; k <= max(n, 2); k++ {
			mustCall(t, s1, "read_graph", "", map[string]any{"_chunk": fmt.Sprintf("%s.%d", h, k)})
		}
		after := c.callsPerReplica()
		for i := range after {
			if after[i] == before[i] {
				t.Fatalf("%s: replica %d served none of the session's calls (%v → %v)", version, i+1, before, after)
			}
		}
		s2 := c.sessionClient("scale-client", version, tokenA)
		s3 := c.sessionClient("scale-client", version, tokenB)
		for _, other := range []*mcp.ClientSession{s2, s3} {
			text, isErr, err := call(other, "read_graph", "", map[string]any{"_chunk": h + ".1"})
			if err != nil || !isErr || !strings.Contains(text, "belongs to another session") {
				t.Fatalf("%s: another session fetched the chunk: %v %v %.200q", version, err, isErr, text)
			}
		}
		if got := mustCall(t, s2, "read_graph", "", nil); chunkedHandle(got) {
			t.Fatalf("%s: a client without a budget got a trimmed read", version)
		}
		id := s1.ID()
		s1.Close()
		for range 3 { // on every replica
			if code := postInSession(t, c.lbURL, tokenA, id); code != http.StatusNotFound {
				t.Fatalf("%s: a request in a deleted session: HTTP %d, want 404", version, code)
			}
		}
		t.Logf("step 2b: %s session of budgeted-client: calls per replica %v → %v, references across replicas, every read trimmed to its budget, %d chunks of %s fetched; another session and another tenant refused; deleted session 404 everywhere", version, before, after, max(n, 2), h)
	}
}

// postInSession POSTs a tools/list in session sid through the balancer
// and returns the HTTP status.
func postInSession(t *testing.T, base, token, sid string) int {
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
