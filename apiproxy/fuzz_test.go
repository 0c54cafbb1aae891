package apiproxy

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tree"
)

func seedRequests() [][]byte {
	var c convo
	c.user("hi")
	c.call("Read", `{"file_path":"/a"}`, fileText("a", 5))
	c.call("Bash", `{"command":"x"}`, `{"a": [1, 2, 3], "b": {"c": "d"}, "e": "a long enough string to pass the minimum"}`)
	c.call("Read", `{"file_path":"/a"}`, fileText("a", 5))
	return [][]byte{
		c.request(),
		editConvo(4).request(),
		[]byte(`{"model":"gpt-4o","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"[1,2,3]"}]}`),
		[]byte(`{"messages":[{"role":"user","content":[{"type":"mystery","x":1}]}]}`),
		[]byte(`{"model":"gpt-5","instructions":"i","input":[{"role":"user","content":"hi"},{"type":"reasoning","encrypted_content":"e"},{"type":"function_call","call_id":"c","name":"shell","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28]"}]}`),
		[]byte(`{not json`),
		[]byte(`[]`),
	}
}

// FuzzRewrite feeds arbitrary bodies to the request decoders: never a
// panic; a rewritten body is JSON, and the same input in a fresh state
// gives the same bytes.
func FuzzRewrite(f *testing.F) {
	for _, s := range seedRequests() {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, body []byte, flags uint8) {
		format := []history.Format{history.Anthropic, history.OpenAI, history.Responses, history.Anthropic}[flags&3]
		o := Options{Window: 2_000 + 50_000*int(flags>>2&1), EditAge: 1 + int(flags>>3&3)*4, ChunkStore: &store.Mem{}}
		a := NewRewriter(o).Rewrite(body, format)
		b := NewRewriter(o).Rewrite(body, format)
		if a.Err != nil {
			t.Fatalf("%v\n%s", a.Err, a.Err.(*InternalError).Stack)
		}
		if !bytes.Equal(a.Body, b.Body) {
			t.Fatal("not deterministic")
		}
		if a.Body != nil {
			if _, err := tree.Parse(a.Body); err != nil {
				t.Fatalf("rewritten body is not JSON: %v", err)
			}
		}
	})
}

// FuzzUsageReader: the usage scanner passes any body through unchanged,
// however it is cut into reads.
func FuzzUsageReader(f *testing.F) {
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n"), uint8(7), true)
	f.Add([]byte(`{"usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":1}}}`), uint8(3), false)
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8, sse bool) {
		var got Usage
		r := newUsageReader(io.NopCloser(&chunkReader{b: body, n: int(chunk%32) + 1}), sse, func(u Usage) { got = u })
		out, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(out, body) {
			t.Fatalf("body changed: %q → %q (%v)", body, out, err)
		}
		_ = got
	})
}

type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// FuzzRewriteStateful drives one Rewriter (and its store) for the whole
// fuzz run with sequences of related requests built from each input:
// conversations that all start alike grow, rewind, fork, change format,
// and restart the rewriter from its store. State carried from earlier
// inputs and requests is what such sequences exercise: never a panic
// (recovered or not), a rewritten body is JSON, and an Anthropic request
// keeps its user text and tool pairing.
func FuzzRewriteStateful(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0})
	f.Add([]byte{4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 0x82, 1, 3, 0x47, 0, 0})
	f.Add([]byte{0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x22, 0x33, 0x44, 0x0b, 0x01})
	var (
		mu sync.Mutex
		st = &store.Mem{}
		o  = Options{Window: 4_000, Store: st}
		rw = NewRewriter(o)
	)
	f.Fuzz(func(t *testing.T, ops []byte) {
		mu.Lock()
		defer mu.Unlock()
		if len(ops) > 24 {
			ops = ops[:24]
		}
		var c convo
		c.user("go through the files")
		fm := formats[0]
		for i, op := range ops {
			arg := int(op >> 2)
			switch op & 3 {
			case 0, 1: // grow
				tool := []string{"Read", "Bash", "Edit", "Grep"}[arg&3]
				file := fmt.Sprintf("/f%d", arg>>2)
				c.call(tool, fmt.Sprintf(`{"file_path":%q,"command":"cat %s"}`, file, file), fileText(fmt.Sprintf("f%d_", arg>>2), 10+arg))
			case 2: // rewind
				c.msgs = c.msgs[:1+arg%len(c.msgs)]
			case 3:
				switch arg & 3 {
				case 0: // restart from the store
					rw = NewRewriter(o)
				case 1: // another format
					fm = formats[(arg>>2)%len(formats)]
				default: // fork: an earlier message changes
					k := (arg >> 2) % len(c.msgs)
					c.msgs[k] = obj("role", get(c.msgs[k], "role").Str(), "content", fmt.Sprintf("edited %d", i))
				}
				continue
			}
			body := fm.conv(t, c.request())
			res := rw.Rewrite(body, fm.f)
			if res.Err != nil {
				t.Fatalf("request %d: %v\n%s", i, res.Err, res.Err.(*InternalError).Stack)
			}
			if res.Body == nil {
				continue
			}
			if _, err := tree.Parse(res.Body); err != nil {
				t.Fatalf("request %d: rewritten body is not JSON: %v", i, err)
			}
			if fm.f == history.Anthropic {
				for _, v := range checkRequest(body, res.Body, false) {
					t.Errorf("request %d: %s", i, v)
				}
			}
		}
	})
}

// FuzzAppliedArgs: a write call's input with its payloads left out is a
// JSON object with the same keys, in order, every other field unchanged,
// each changed field a shorter marker naming the call; the same input
// gives the same bytes.
func FuzzAppliedArgs(f *testing.F) {
	f.Add(`{"file_path":"/a","content":"` + strings.Repeat("x", 400) + `"}`)
	f.Add(`{"file_path":"/a","old_string":"` + strings.Repeat("o", 300) + `","new_string":"n"}`)
	f.Add(`{"file_path":"/a","edits":[{"old_string":"` + strings.Repeat("o", 300) + `","new_string":"` + strings.Repeat("n", 300) + `"}]}`)
	f.Add(`[1,2]`)
	f.Add(`{"content":1}`)
	f.Fuzz(func(t *testing.T, args string) {
		c := call{id: "toolu_1", name: "Write", args: args}
		out, ok := appliedArgs(c, c.id, args)
		again, _ := appliedArgs(c, c.id, args)
		if out != again {
			t.Fatal("not deterministic")
		}
		if !ok {
			if out != args {
				t.Fatal("unchanged input rewritten")
			}
			return
		}
		d, err := tree.ParseString(args)
		if err != nil {
			t.Fatalf("changed an input that does not decode")
		}
		o, err := tree.ParseString(out)
		if err != nil {
			t.Fatalf("output does not decode: %v", err)
		}
		if v := checkApplied(c.id, d, o, 0); v != "" {
			t.Fatalf("%s\n%s\n→ %s", v, args, out)
		}
	})
}
