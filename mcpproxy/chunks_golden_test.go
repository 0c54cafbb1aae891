package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tree"
)

// downStore is a chunk store that always fails, with a fixed message.
type downStore struct{}

var errDown = errors.New("connection refused")

func (downStore) Put(ctx context.Context, key string, data []byte) error { return errDown }
func (downStore) Get(ctx context.Context, key string) ([]byte, error)    { return nil, errDown }

// TestChunksGolden pins the engine's in-band text of the chunk path:
// a result fitted with the store down, the chunk replies (whole, with
// structuredContent; split), and every refusal.
func TestChunksGolden(t *testing.T) {
	const file = "testdata/chunks.txtar"
	ctx := context.Background()
	info := toolInfo{outputSchema: true, schema: resolveSchema(mustParse(t, itemsSchemaJSON()))}
	pol := Policy{}
	payload := tree.AppendJSON(nil, tree.Object(tree.Member{Key: "content", Value: tree.Array(
		textBlock(itemsText(30, 0), ""))}, tree.Member{Key: "structuredContent", Value: mustParse(t, itemsText(30, 0))}))
	got := map[string]string{}

	run := func(e *engine, session, conv string, args tree.Value) (string, tree.Value) {
		c, _, answer, _ := e.begin(ctx, "", "items", "generic-client", session, conv, args, info, true)
		if answer != nil {
			return "", *answer
		}
		var rec CallRecord
		out, err := e.finish(ctx, c, pol, payload, &rec)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := tree.Parse(out)
		return rec.Outcome, v
	}
	args := func(kv ...any) tree.Value {
		var ms []tree.Member
		for i := 0; i < len(kv); i += 2 {
			var v tree.Value
			switch x := kv[i+1].(type) {
			case int:
				v = tree.Number(itoa(x))
			case string:
				v = tree.String(x)
			}
			ms = append(ms, tree.Member{Key: kv[i].(string), Value: v})
		}
		return tree.Object(ms...)
	}
	text := func(v tree.Value) string {
		c, _ := v.Get("content")
		s, _ := c.Index(0).Get("text")
		return s.Str() + "\n"
	}

	down := newEngine(chunkOptions(downStore{}))
	_, v := run(down, "s1", "", args("n", 30, "_budget", 300))
	got["store-down.txt"] = text(v)
	_, v = run(down, "s1", "", args("_chunk", "c_0123456789abcdef.1"))
	got["fetch-store-down.txt"] = text(v)

	e := newEngine(chunkOptions(&store.Mem{}))
	_, v = run(e, "s1", "", args("n", 30, "_budget", 300))
	h := handleOf(t, text(v))
	got["result.txt"] = text(v)
	_, v = run(e, "s1", "", args("_chunk", h+".1", "_budget", 100000))
	got["chunk-whole.json"] = string(tree.AppendIndent(nil, v, " ")) + "\n"
	_, v = run(e, "s1", "", args("_chunk", h+".1", "_budget", 300))
	got["chunk-split.json"] = string(tree.AppendIndent(nil, v, " ")) + "\n"
	_, v = run(e, "s2", "", args("_chunk", h+".1"))
	got["refused-session.txt"] = text(v)
	_, v = run(e, "s1", "other", args("_chunk", h+".1"))
	got["refused-conversation.txt"] = text(v)
	_, v = run(e, "s1", "", args("_chunk", "c_0000000000000000.1"))
	got["expired.txt"] = text(v)
	_, v = run(e, "s1", "", args("_chunk", h+".9"))
	got["out-of-range.txt"] = text(v)
	_, v = run(e, "s1", "", args("_chunk", "r1.2"))
	got["not-a-reference.txt"] = text(v)

	ar, err := txtar.ParseFile(file)
	if *update || err != nil {
		if !*update {
			t.Fatal(err)
		}
		ar = &txtar.Archive{Comment: []byte("The engine's in-band text of the chunk path: a 30-item result fitted to\n_budget 300, with the store down and up; chunk replies; refusals.\nGenerated: go test -run ChunksGolden -update.\n")}
		ar.Files = nil
		for _, name := range []string{"result.txt", "chunk-whole.json", "chunk-split.json", "store-down.txt", "fetch-store-down.txt",
			"refused-session.txt", "refused-conversation.txt", "expired.txt", "out-of-range.txt", "not-a-reference.txt"} {
			ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(got[name])})
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, f := range ar.Files {
		if g := got[f.Name]; !bytes.Equal([]byte(g), f.Data) {
			t.Errorf("%s differs from %s (go test -run ChunksGolden -update):\ngot:\n%s\nwant:\n%s", f.Name, file, g, f.Data)
		}
		delete(got, f.Name)
	}
	for name := range got {
		t.Errorf("%s missing from %s", name, file)
	}
}

func mustParse(t testing.TB, s string) tree.Value {
	v, err := tree.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func itemsSchemaJSON() string {
	b, _ := json.Marshal(itemsSchema)
	return string(b)
}

func itoa(n int) string { return strconv.Itoa(n) }
