package mcpproxy

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tree"
)

// FuzzEngineStateful drives one engine for the whole fuzz run, so that
// what an input leaves behind (dedup partitions, remembered shapes,
// stored chunks and their handles, compaction counters, hint counts) is
// there for the next: a panic that needs state built by earlier calls is
// reachable, as it is in a long-running gateway. Each input is a script:
// ops picks, byte by byte, what happens next (a call whose result is
// built from payload, a reserved parameter, a chunk fetch of a handle an
// earlier result issued, a compaction, a session's end), in which of a
// few sessions, conversations and clients. The engine must never panic:
// finish recovers panics (the client gets the original), so a recovered
// one fails the run too, with its stack.
func FuzzEngineStateful(f *testing.F) {
	for _, s := range []struct {
		ops     []byte
		payload string
	}{
		{[]byte{0, 3, 0, 3, 1, 0, 2}, rowsText(40)},
		{[]byte{0x10, 0x23, 0x40, 0x53, 0x61, 0x02}, `{"content":"` + strings.Repeat(`line of a file\n`, 300) + `"}`},
		{[]byte{4, 4, 3, 5, 0}, `{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`},
		{[]byte{0x80, 0x93, 0xa5, 0xb1, 0xc2}, itemsText(30, 4)},
		{[]byte{0, 0, 0, 3, 3, 3}, "plain text\n" + strings.Repeat("same line\n", 400)},
		{[]byte{5, 0x15, 0x25, 0x35}, `{"_budget":"x","_chunk":12,"_output_mode":"raw"}`},
	} {
		f.Add(s.ops, s.payload)
	}
	var logs syncBuffer
	o := testOptions(func(o *terse.Options) { o.Store = &store.Shared{Store: &store.Mem{MaxBytes: 64 << 20}} })
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	o.Clients = []ClientRule{{Match: "budgeted", Budget: 200}, {Match: "structured", Reads: ReadsStructured, Budget: 400}}
	e := newEngine(o)
	sessions := []string{"s0", "s1", "gw\x00t:s2", ""}
	convs := []string{"", "c1", "c2"}
	clients := []string{"budgeted-client", "structured-client", "generic-client", "claude-code"}
	tools := []string{"read", "rows", "write_note", CompactTool}
	var handles []string // issued by earlier results, across inputs
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, ops []byte, payload string) {
		if len(ops) > 64 || len(payload) > 256<<10 {
			return
		}
		before := e.opts.Stats.Totals().Panics
		for i, b := range ops {
			sess, conv := sessions[int(b>>4)%len(sessions)], convs[int(b>>6)%len(convs)]
			client, tool := clients[(int(b>>2)+i)%len(clients)], tools[int(b>>5)%len(tools)]
			info := toolInfo{mutating: tool == "write_note", outputSchema: b&0x40 != 0}
			var args tree.Value
			switch b % 6 {
			case 0, 4: // a call; its result is payload (4: as the raw result)
				args = tree.Object(tree.Member{Key: "path", Value: tree.String(payload[:min(len(payload), 40)])})
			case 1:
				e.compact(sess, conv)
				continue
			case 2:
				e.forget(sess)
				continue
			case 3: // a chunk of a handle an earlier result issued
				h := "c_0123456789abcdef"
				if len(handles) > 0 {
					h = handles[(int(b)+i)%len(handles)]
				}
				args = tree.Object(tree.Member{Key: ParamChunk, Value: tree.String(h + "." + strconv.Itoa(int(b>>3)%4))})
			case 5: // payload as the arguments
				v, err := tree.ParseString(payload)
				if err != nil {
					v = tree.Object(tree.Member{Key: ParamBudget, Value: tree.Int(int64(b))})
				}
				args = v
			}
			c, _, answer, _ := e.begin(ctx, "", tool, client, sess, conv, args, info, tool != CompactTool)
			if answer != nil {
				handles = remember(handles, tree.AppendJSON(nil, *answer))
				continue
			}
			raw := []byte(payload)
			if b%6 != 4 {
				raw = tree.AppendJSON(nil, tree.Object(
					tree.Member{Key: "content", Value: tree.Array(textBlock(payload, ""))},
					tree.Member{Key: "structuredContent", Value: tree.Object(tree.Member{Key: "content", Value: tree.String(payload)})},
				))
			}
			var rec CallRecord
			out, _ := e.finish(ctx, c, e.opts.policy(client), raw, &rec)
			handles = remember(handles, out)
		}
		if n := e.opts.Stats.Totals().Panics; n != before {
			t.Fatalf("the engine panicked (recovered %d):\n%s", n-before, logs.String())
		}
	})
}

// remember adds the handles in out to hs, keeping the last 64.
func remember(hs []string, out []byte) []string {
	for _, h := range handleRE.FindAll(out, -1) {
		hs = append(hs, string(h))
	}
	if len(hs) > 64 {
		hs = append([]string(nil), hs[len(hs)-64:]...)
	}
	return hs
}

// FuzzGatewayStateful sends requests to one gateway (shared state in
// memory, as with Redis; an in-memory upstream) for the whole fuzz run,
// in one session, in sessions opened by earlier inputs, or statelessly:
// a request's method and params are the input, any of them absent. No
// request may reach a panic (the gateway recovers them: a recovered one
// fails the run, with its stack), and every request is answered.
func FuzzGatewayStateful(f *testing.F) {
	for _, s := range []struct {
		method, params string
		mode           uint8
	}{
		{"tools/list", "", 0},
		{"tools/list", "null", 1},
		{"tools/call", `{"name":"s__read"}`, 0},
		{"tools/call", `{"name":"s__read","arguments":{"_budget":5}}`, 2},
		{"tools/call", `{"name":"terse_compact","_meta":{"terse/conversation":"c"}}`, 1},
		{"tools/call", `{"name":"s__read","arguments":{"_chunk":"c_0123456789abcdef.1"}}`, 0},
		{"ping", "", 0},
		{"initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"1"}}`, 3},
		{"notifications/cancelled", `{"requestId":1}`, 0},
		{CompactNotification, `{"_meta":{"terse/conversation":"c"}}`, 2},
	} {
		f.Add(s.method, s.params, s.mode)
	}
	var logs syncBuffer
	opts := testOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	opts.Clients = []ClientRule{{Match: "claude", Budget: 300}}
	up := &scriptServer{result: soakFile(64<<10, 1)}
	g, err := NewGateway([]ServerSpec{{Name: "s", upstream: up}}, opts)
	if err != nil {
		f.Fatal(err)
	}
	g.SetState(&memState{})
	if err := g.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	f.Cleanup(func() { srv.Close(); g.Close() })
	var sessions []string
	id := 0
	f.Fuzz(func(t *testing.T, method, params string, mode uint8) {
		if len(params) > 64<<10 {
			return
		}
		c := &rawClient{t: t, url: srv.URL, version: "2025-11-25"}
		switch {
		case mode%4 == 1:
			c.version = protocolStateless
		case mode%4 == 3 || len(sessions) == 0:
			c.version = ""
			c.post(`{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"1"}},"jsonrpc":"2.0","id":0}`)
			c.version = "2025-11-25"
			if c.session != "" {
				sessions = append(sessions, c.session)
				if len(sessions) > 16 {
					sessions = sessions[1:]
				}
			}
		default:
			c.session = sessions[int(mode/4)%len(sessions)]
		}
		id++
		msg := []tree.Member{{Key: "method", Value: tree.String(method)}}
		if p, err := tree.ParseString(params); err == nil && params != "" {
			msg = append(msg, tree.Member{Key: "params", Value: p})
		}
		msg = append(msg, tree.Member{Key: "jsonrpc", Value: tree.String("2.0")})
		if !strings.HasPrefix(method, "notifications/") {
			msg = append(msg, tree.Member{Key: "id", Value: tree.Int(int64(id))})
		}
		before := g.Stats().Totals().Panics
		code, msgs := c.post(string(tree.AppendJSON(nil, tree.Object(msg...))))
		if n := g.Stats().Totals().Panics; n != before {
			t.Fatalf("%s %s: a request reached a panic (recovered):\n%s", method, params, logs.String())
		}
		if code >= 500 {
			t.Fatalf("%s %s: HTTP %d %v", method, params, code, msgs)
		}
	})
}
