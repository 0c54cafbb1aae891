package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/terse-dev/terse/tree"
)

// echoUpstream answers every request with an empty result, in memory.
type echoUpstream struct{}

func (echoUpstream) String() string { return "echo" }
func (echoUpstream) Dial(ctx context.Context) (Conn, error) {
	return &echoConn{out: make(chan []byte, 64), done: make(chan struct{})}, nil
}

type echoConn struct {
	out  chan []byte
	done chan struct{}
	once sync.Once
}

func (c *echoConn) Read() ([]byte, error) {
	select {
	case m := <-c.out:
		return m, nil
	case <-c.done:
		return nil, errors.New("closed")
	}
}

func (c *echoConn) Write(msg []byte) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) == nil && m.ID != nil && m.Method != "" {
		res := `{"content":[{"type":"text","text":"{\"a\": [1, 2, 3], \"b\": \"` + strings.Repeat("x", 120) + `\"}"}]}`
		select {
		case c.out <- []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + res + `}`):
		case <-c.done:
		}
	}
	return nil
}

func (c *echoConn) Close() error { c.once.Do(func() { close(c.done) }); return nil }

// FuzzClientMessages: whatever the client sends, the proxy answers with
// valid JSON-RPC lines and keeps serving.
func FuzzClientMessages(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"_budget":100,"_output_mode":"raw"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"_chunk":"r1.2"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":7},"arguments":{"_budget":"zz"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`,
		`[{"jsonrpc":"2.0"}]`, `{"id":{}}`, `nul`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.ContainsAny(data, "\n\r") {
			return // one message per line
		}
		// The input stays open until the answer to "last" was read, so
		// the proxy never waits out a grace period on real time: requests
		// still unanswered then are abandoned (ShutdownGrace < 0).
		pr, pw := io.Pipe()
		outR, outW := io.Pipe()
		p := NewProxy(echoUpstream{}, &Options{ShutdownGrace: -1})
		served := make(chan error, 1)
		go func() { served <- p.Serve(context.Background(), pr, outW); outW.Close() }()
		go func() {
			io.WriteString(pw, string(data)+"\n"+`{"jsonrpc":"2.0","id":"last","method":"ping"}`+"\n")
		}()
		var out bytes.Buffer
		sc := bufio.NewScanner(io.TeeReader(outR, &out))
		sc.Buffer(nil, 1<<20)
		last := false
		for !last && sc.Scan() {
			// Raw members: a number too large for a float64 (an id the
			// client chose) is valid JSON all the same.
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("invalid JSON to the client: %q", sc.Text())
			}
			last = string(m["id"]) == `"last"`
		}
		pw.Close()
		go io.Copy(io.Discard, outR)
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		if !last {
			t.Fatalf("no answer to the message after %q:\n%s", data, out.String())
		}
	})
}

// FuzzEnvelope: on every JSON object the envelope scan finds the same
// top-level members as a full parse.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\"}\\"}]}}`,
		`{"method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		` { "id" : "x\\\\" , "error" : {"code":-1} } `, `{}`, `{"a":[1,[2,{"b":"]"}]],"id":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := tree.Parse(data)
		env, ok := scanEnvelope(data)
		if err != nil || v.Kind() != tree.KindObject {
			return // the scan need not reject everything a parse rejects
		}
		if !ok {
			t.Fatalf("scanEnvelope rejected a valid object %q", data)
		}
		for key, raw := range map[string][]byte{"id": env.id, "method": env.method, "result": env.result, "error": env.error} {
			want, has := v.Get(key)
			if !has {
				continue // duplicate keys: the parse keeps one, the scan the last
			}
			got, err := tree.Parse(raw)
			if raw == nil || err != nil {
				t.Fatalf("%s: scan gave %q (%v), want %s", key, raw, err, want)
			}
			_ = got
		}
	})
}

// FuzzReadableID: the id of any line is found without panicking, and for
// a message that parses it is the message's own id.
func FuzzReadableID(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"\ud800"}],}}`,
		`{"jsonrpc":"2.0","id":"a\"b","method":"x"}`, `{"id":`, `not JSON`, `{"x":{"id":3},"id":4}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id := readableID(data)
		if !id.IsNull() && !validID(id) {
			t.Fatalf("readableID(%q) = %s, not a valid id", data, id)
		}
		v, err := tree.Parse(data)
		if err != nil || v.Kind() != tree.KindObject {
			return
		}
		want, ok := v.Get("id")
		if ok && validID(want) && string(tree.AppendJSON(nil, want)) != string(tree.AppendJSON(nil, id)) {
			t.Fatalf("readableID(%q) = %s, want %s", data, id, want)
		}
	})
}
