package mcpproxy

// End-to-end tests of the chunk path (docs/chunks.md) through the stdio
// proxy and the gateway, driven by the go-sdk client: every elided part
// comes back whole through its handles, handles are bound to their
// session and conversation, and a failing store keeps the budget.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/store/redisstore"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// chunkOptions are proxy options whose pipeline keeps chunks in st.
func chunkOptions(st store.Store) *Options {
	p, err := terse.New(&terse.Options{Store: st, Fetch: FetchTemplate, RawHint: RawHint,
		Key: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		panic(err)
	}
	// The brake off: these tests walk every chunk of a result, often
	// twice (brake_test.go turns it on).
	return &Options{Pipeline: p, BrakeFetches: -1}
}

// front is one way to reach the fake upstream: through the stdio proxy
// or the gateway (whose tool names are prefixed).
type front struct {
	name   string
	cs     *mcp.ClientSession
	prefix string
	conv   string // terse/conversation of every call, when set
	// schema validates structuredContent of the items tool, as a client
	// that keeps outputSchema does (the TypeScript SDK rejects a result
	// without structuredContent, or with one that does not validate).
	schema *jsonschema.Resolved
	stats  *Stats
	health func() StoreHealth
	url    string // the gateway's
}

func (f *front) call(t testing.TB, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: f.prefix + tool, Arguments: args}
	if f.conv != "" {
		p.Meta = mcp.Meta{MetaConversation: f.conv}
	}
	res, err := f.cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return res
}

func itemsSchemaResolved(t testing.TB) *jsonschema.Resolved {
	b, _ := json.Marshal(itemsSchema)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fronts starts the fake upstream behind a stdio proxy and behind a
// gateway, each with its own options from mk, and connects a generic
// client (one that keeps outputSchema) to each.
func fronts(t *testing.T, mk func() *Options) []*front {
	po := mk()
	h := connect(t, fakeUpstream(t), po, "generic-client")
	h.tools(t) // as clients do: the proxy learns the outputSchemas
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	go2 := mk()
	g, srv := serveGateway(t, []ServerSpec{{Name: "fake", Command: exe, Env: []string{"TERSE_FAKE_UPSTREAM=1"}}}, go2)
	cs, _ := gatewayClient(t, srv.URL, "generic-client")
	rs := itemsSchemaResolved(t)
	return []*front{
		{name: "proxy", cs: h.cs, schema: rs, stats: h.p.Stats(), health: h.p.eng.storeHealth},
		{name: "gateway", cs: cs, prefix: "fake__", schema: rs, stats: g.Stats(), url: srv.URL,
			health: func() StoreHealth { return gatewayHealth(t, srv.URL) }},
	}
}

func gatewayHealth(t testing.TB, url string) StoreHealth {
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var h struct{ Store StoreHealth }
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("/healthz: %v: %s", err, b)
	}
	return h.Store
}

// chunkFetch is what a result or a chunk reply says about fetching its
// chunks, read with inband's parser: the handle its fetch call names (in
// an overflow hint, or the closing line of a chunk index or of a split
// chunk's index), whether that call takes any chunk number N (else it
// fetches chunk 1), and the chunks the index lists.
type chunkFetch struct {
	handle string
	byN    bool
	chunks []int
}

// isChunk reports whether v is the first line of chunk n fetched whole.
func isChunk(v inband.Line, n int) bool {
	h, ok := v.(inband.ChunkHead)
	return ok && h.N == n
}

// readChunkFetch reads the chunk fetch a text declares.
func readChunkFetch(text string) chunkFetch {
	var x chunkFetch
	call := func(c string) {
		pre, _, _ := strings.Cut(FetchTemplate, "{handle}")
		if rest, ok := strings.CutPrefix(c, pre); ok {
			h, n, _ := strings.Cut(rest, ".")
			x.handle, x.byN = h, n == `N"`
		}
	}
	for _, l := range strings.Split(text, "\n") {
		v, err := inband.Parse(l)
		if err != nil {
			continue
		}
		switch v := v.(type) {
		case inband.Overflow:
			if v.How == inband.OneChunk || v.How == inband.ByChunk {
				call(v.Call)
			}
		case inband.IndexFoot:
			if v.How == inband.FetchWhole {
				call(v.Call)
			}
		case inband.SubFoot:
			call(v.Call)
		case inband.IndexChunk:
			x.chunks = append(x.chunks, v.N)
		case inband.SubChunk:
			x.chunks = append(x.chunks, v.N)
		}
	}
	return x
}

// fetcher fetches chunks recursively and checks every reply.
type fetcher struct {
	t    testing.TB
	f    *front
	tool string
	json bool // the source is JSON: whole chunks hold item arrays
	// structured: check structuredContent by the front's schema.
	structured bool
	budget     int
	calls      int
}

// all fetches every chunk of handle (1 to the first that does not
// exist) and returns the units they hold: the compact JSON of each item,
// or each line.
func (x *fetcher) all(handle string) []string {
	var out []string
	for n := 1; ; n++ {
		units, ok := x.fetch(handle, n)
		if !ok {
			if n == 1 {
				x.t.Fatalf("%s: chunk 1 of %s does not exist", x.f.name, handle)
			}
			return out
		}
		out = append(out, units...)
	}
}

// fetch fetches chunk n of handle; ok is false when it does not exist.
func (x *fetcher) fetch(handle string, n int) (units []string, ok bool) {
	t := x.t
	t.Helper()
	x.calls++
	if x.calls > 2000 {
		t.Fatal("more than 2000 chunk fetches")
	}
	res := x.f.call(t, x.tool, map[string]any{"_chunk": fmt.Sprintf("%s.%d", handle, n), "_budget": x.budget})
	text := textOf(t, res)
	if res.IsError {
		if !strings.Contains(text, "does not exist") {
			t.Fatalf("%s: chunk %s.%d: %s", x.f.name, handle, n, text)
		}
		return nil, false
	}
	if got, limit := tokens.O200kBase().Count(text), max(x.budget, fit.MinBudget); got > limit {
		t.Errorf("%s: chunk %s.%d is %d tokens, over the budget of %d", x.f.name, handle, n, got, limit)
	}
	if x.structured {
		x.checkStructured(res, handle, n)
	}
	head, body, _ := strings.Cut(text, "\n")
	hv, _ := inband.Parse(head)
	switch h, whole := hv.(inband.ChunkHead); {
	case whole && h.Parts:
		return []string{"\x00" + body}, true // a part
	case whole:
		if !x.json {
			return strings.Split(body, "\n"), true
		}
		v, err := tree.ParseString(body)
		if err != nil {
			t.Fatalf("%s: chunk %s.%d body is not JSON: %v\n%s", x.f.name, handle, n, err, text)
		}
		return unitsOf(v), true
	}
	// Split into smaller chunks: fetch each.
	split, _ := hv.(inband.SplitHead)
	sub := readChunkFetch(body)
	if split.Handle != handle || !sub.byN || len(sub.chunks) == 0 {
		t.Fatalf("%s: chunk %s.%d is neither whole nor an index:\n%s", x.f.name, handle, n, text)
	}
	var parts []string
	for _, k := range sub.chunks {
		u, ok := x.fetch(sub.handle, k)
		if !ok {
			t.Fatalf("%s: declared chunk %s.%d does not exist", x.f.name, sub.handle, k)
		}
		for _, s := range u {
			if strings.HasPrefix(s, "\x00") {
				parts = append(parts, s[1:])
			} else {
				units = append(units, s)
			}
		}
	}
	if len(parts) > 0 {
		if len(units) > 0 {
			t.Fatalf("%s: chunk %s.%d mixes parts and units", x.f.name, handle, n)
		}
		joined := strings.Join(parts, "")
		if strings.HasPrefix(split.Intro, "bytes ") {
			// A byte range split further: still a part.
			return []string{"\x00" + joined}, true
		}
		if x.json {
			v, err := tree.ParseString(joined)
			if err != nil {
				t.Fatalf("%s: the parts of %s.%d do not join to JSON: %v", x.f.name, handle, n, err)
			}
			if v.Kind() == tree.KindObject && strings.Contains(split.Intro, "member") {
				return unitsOf(v), true
			}
			joined = string(tree.AppendJSON(nil, v))
		}
		units = append(units, joined)
	}
	return units, true
}

// unitsOf returns the units of a whole chunk's body: the items of an
// item array; for members of the root object, the items of its arrays and
// the other members as they are ("member:" and their JSON).
func unitsOf(v tree.Value) []string {
	var units []string
	if v.Kind() == tree.KindObject {
		for _, m := range v.Members() {
			if m.Value.Kind() != tree.KindArray {
				units = append(units, "member:"+string(tree.AppendJSON(nil, tree.Object(m))))
				continue
			}
			units = append(units, unitsOf(m.Value)...)
		}
		return units
	}
	for _, it := range v.Items() {
		units = append(units, string(tree.AppendJSON(nil, it)))
	}
	return units
}

// checkStructured checks a chunk reply of the items tool the way a client
// that keeps its outputSchema does.
func (x *fetcher) checkStructured(res *mcp.CallToolResult, handle string, n int) {
	if res.StructuredContent == nil {
		x.t.Errorf("%s: chunk %s.%d has no structuredContent, though the tool declares an outputSchema the client keeps", x.f.name, handle, n)
		return
	}
	b, _ := json.Marshal(res.StructuredContent)
	var v map[string]any
	json.Unmarshal(b, &v)
	if err := x.f.schema.Validate(v); err != nil {
		x.t.Errorf("%s: chunk %s.%d structuredContent does not validate: %v", x.f.name, handle, n, err)
	}
}

// originalItems is the compact JSON of each item of the items tool.
func originalItems(n, big int) []string {
	v, _ := tree.ParseString(itemsText(n, big))
	items, _ := v.Get("items")
	var out []string
	for _, it := range items.Items() {
		out = append(out, string(tree.AppendJSON(nil, it)))
	}
	return out
}

// handleOf returns the handle a fitted result names.
func handleOf(t testing.TB, text string) string {
	t.Helper()
	h := readChunkFetch(text).handle
	if h == "" {
		t.Fatalf("no chunk handle in:\n%s", text)
	}
	return h
}

func sameUnits(t testing.TB, what string, got, want []string) {
	t.Helper()
	got = slices.DeleteFunc(got, func(s string) bool { return strings.HasPrefix(s, "member:") })
	if len(got) != len(want) {
		t.Errorf("%s: %d units, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s: unit %d = %.80q…, want %.80q…", what, i+1, got[i], want[i])
			return
		}
	}
}

func TestChunksComeBackWhole(t *testing.T) {
	for _, f := range fronts(t, func() *Options { return chunkOptions(&store.Mem{}) }) {
		t.Run(f.name, func(t *testing.T) {
			want := originalItems(30, 0)
			res := f.call(t, "items", map[string]any{"n": 30, "_budget": 300})
			text := textOf(t, res)
			if n := tokens.O200kBase().Count(text); n > 300 {
				t.Errorf("result is %d tokens, over _budget 300", n)
			}
			h := handleOf(t, text)
			// Every declared chunk, fetched with a budget it fits, in one
			// call each; their union is the original array.
			x := &fetcher{t: t, f: f, tool: "items", json: true, structured: true, budget: 100000}
			got := x.all(h)
			sameUnits(t, "chunks at budget 100000", got, want)
			if x.calls > 10 {
				t.Errorf("%d calls to fetch the chunks with a budget they fit, want one each", x.calls)
			}
			// At the original budget too, through smaller chunks.
			x = &fetcher{t: t, f: f, tool: "items", json: true, structured: true, budget: 300}
			sameUnits(t, "chunks at budget 300", x.all(h), want)

			// _budget 10: the hint alone, with a working handle.
			res = f.call(t, "items", map[string]any{"n": 30, "_budget": 10})
			h = handleOf(t, textOf(t, res))
			x = &fetcher{t: t, f: f, tool: "items", json: true, structured: true, budget: 10}
			sameUnits(t, "chunks of the _budget 10 result", x.all(h), want)

			// An item larger than the budget comes back whole, in parts.
			want = originalItems(30, 17)
			res = f.call(t, "items", map[string]any{"n": 30, "big": 17, "_budget": 300})
			h = handleOf(t, textOf(t, res))
			x = &fetcher{t: t, f: f, tool: "items", json: true, structured: true, budget: 300}
			sameUnits(t, "chunks with a large item", x.all(h), want)

			// A 300 KB single line comes back whole through its handles.
			line := longLine(300 << 10)
			res = f.call(t, "line", map[string]any{"n": 300 << 10, "_budget": 200})
			text = textOf(t, res)
			if n := tokens.O200kBase().Count(text); n > 200 {
				t.Errorf("line result is %d tokens, over _budget 200", n)
			}
			x = &fetcher{t: t, f: f, tool: "line", budget: 20000}
			got = x.all(handleOf(t, text))
			if len(got) != 1 || got[0] != line {
				t.Errorf("the 300 KB line came back as %d units (%d bytes in the first), want it whole", len(got), len(got[0]))
			}
		})
	}
}

func TestChunkScope(t *testing.T) {
	st := &store.Mem{}
	t.Run("gateway sessions", func(t *testing.T) {
		exe, _ := os.Executable()
		_, srv := serveGateway(t, []ServerSpec{{Name: "fake", Command: exe, Env: []string{"TERSE_FAKE_UPSTREAM=1"}}}, chunkOptions(st))
		a, _ := gatewayClient(t, srv.URL, "generic-client")
		b, _ := gatewayClient(t, srv.URL, "generic-client")
		fa, fb := &front{name: "a", cs: a, prefix: "fake__"}, &front{name: "b", cs: b, prefix: "fake__"}
		h := handleOf(t, textOf(t, fa.call(t, "items", map[string]any{"n": 30, "_budget": 300})))
		refused(t, fb.call(t, "items", map[string]any{"_chunk": h + ".1"}), h)
		if res := fa.call(t, "items", map[string]any{"_chunk": h + ".1"}); res.IsError {
			t.Errorf("own session refused: %s", textOf(t, res))
		}
	})
	t.Run("conversations", func(t *testing.T) {
		hp := connect(t, fakeUpstream(t), chunkOptions(st), "generic-client")
		f1 := &front{name: "conv1", cs: hp.cs, conv: "one"}
		f2 := &front{name: "conv2", cs: hp.cs, conv: "two"}
		h := handleOf(t, textOf(t, f1.call(t, "items", map[string]any{"n": 30, "_budget": 300})))
		refused(t, f2.call(t, "items", map[string]any{"_chunk": h + ".1"}), h)
		if res := f1.call(t, "items", map[string]any{"_chunk": h + ".1"}); res.IsError {
			t.Errorf("own conversation refused: %s", textOf(t, res))
		}
	})
	t.Run("proxy processes", func(t *testing.T) {
		// Two proxies on one store (one directory, or one Redis): one's
		// handles are refused to the other.
		p1 := connect(t, fakeUpstream(t), chunkOptions(st), "generic-client")
		p2 := connect(t, fakeUpstream(t), chunkOptions(st), "generic-client")
		f1, f2 := &front{name: "p1", cs: p1.cs}, &front{name: "p2", cs: p2.cs}
		h := handleOf(t, textOf(t, f1.call(t, "items", map[string]any{"n": 30, "_budget": 300})))
		refused(t, f2.call(t, "items", map[string]any{"_chunk": h + ".1"}), h)
	})
}

func refused(t testing.TB, res *mcp.CallToolResult, h string) {
	t.Helper()
	want := (&fit.ScopeError{Handle: h}).Error()
	if got := textOf(t, res); !res.IsError || got != want {
		t.Errorf("fetch from another scope = %q (isError %v), want the refusal %q", got, res.IsError, want)
	}
}

// failingStores are stores that cannot keep chunks: a directory that
// cannot be created, and Redis at a closed port.
func failingStores(t *testing.T) map[string]func() store.Store {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	return map[string]func() store.Store{
		"dir": func() store.Store { return &store.Dir{Path: filepath.Join(file, "chunks")} },
		"redis": func() store.Store {
			r, err := redisstore.New("redis://127.0.0.1:1/0", 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return r
		},
	}
}

func TestStoreDown(t *testing.T) {
	for name, mk := range failingStores(t) {
		t.Run(name, func(t *testing.T) {
			for _, f := range fronts(t, func() *Options { return chunkOptions(mk()) }) {
				if h := f.health(); !h.OK {
					t.Errorf("%s: health before any call = %+v", f.name, h)
				}
				res := f.call(t, "items", map[string]any{"n": 30, "_budget": 300})
				text := textOf(t, res)
				if n := tokens.O200kBase().Count(text); n > 300 {
					t.Errorf("%s: result is %d tokens with the store down, over _budget 300", f.name, n)
				}
				if !strings.Contains(text, "not retrievable right now") || !strings.Contains(text, RawHint) {
					t.Errorf("%s: result does not say the rest is not retrievable and how to get it:\n%s", f.name, text)
				}
				if h := f.health(); h.OK || h.State != "degraded" || h.Error == "" {
					t.Errorf("%s: health with the store down = %+v, want degraded", f.name, h)
				}
				for i := 0; i < 100 && f.stats.Totals().StoreFailures == 0; i++ {
					time.Sleep(20 * time.Millisecond) // the proxy records after it answers
				}
				if n := f.stats.Totals().StoreFailures; n != 1 {
					t.Errorf("%s: store_failures = %d, want 1", f.name, n)
				}
				if f.url != "" {
					resp, err := http.Get(f.url + "/metrics")
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if !strings.Contains(string(b), "\nterse_gateway_store_failures_total 1\n") {
						t.Errorf("/metrics does not count the store failure")
					}
				}
				// The raw result is whole.
				raw := f.call(t, "items", map[string]any{"n": 30, "_output_mode": "raw"})
				if got := textOf(t, raw); got != itemsText(30, 0) {
					t.Errorf("%s: raw result differs from the server's", f.name)
				}
			}
		})
	}
}

// TestE2EChunksFilesystem reads a 30-item JSON list and a 300 KB
// single-line file through the real filesystem server, whose
// read_text_file declares an outputSchema ({content: string}), through
// the proxy and the gateway: every chunk comes back, with valid
// structuredContent.
func TestE2EChunksFilesystem(t *testing.T) {
	bin := npmServer(t, "mcp-server-filesystem")
	dir := t.TempDir()
	list, line := filepath.Join(dir, "list.json"), filepath.Join(dir, "line.txt")
	os.WriteFile(list, []byte(itemsText(30, 17)), 0o644)
	os.WriteFile(line, []byte(longLine(300<<10)), 0o644)
	h := connect(t, &Command{Path: bin, Args: []string{dir}, Env: os.Environ()}, chunkOptions(&store.Mem{}), "generic-client")
	_, srv := serveGateway(t, []ServerSpec{{Name: "fs", Command: bin, Args: []string{dir}}}, chunkOptions(&store.Mem{}))
	gcs, _ := gatewayClient(t, srv.URL, "generic-client")
	for _, f := range []*front{{name: "proxy", cs: h.cs}, {name: "gateway", cs: gcs, prefix: "fs__"}} {
		t.Run(f.name, func(t *testing.T) {
			lt, err := f.cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range lt.Tools {
				if tl.Name == f.prefix+"read_text_file" {
					b, _ := json.Marshal(tl.OutputSchema)
					var s jsonschema.Schema
					json.Unmarshal(b, &s)
					if f.schema, err = s.Resolve(nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			if f.schema == nil {
				t.Fatal("read_text_file declares no outputSchema")
			}
			res := f.call(t, "read_text_file", map[string]any{"path": list, "_budget": 300})
			text := textOf(t, res)
			if n := tokens.O200kBase().Count(text); n > 300 {
				t.Errorf("list is %d tokens, over _budget 300", n)
			}
			x := &fetcher{t: t, f: f, tool: "read_text_file", json: true, structured: true, budget: 300}
			sameUnits(t, "list chunks", x.all(handleOf(t, text)), originalItems(30, 17))

			res = f.call(t, "read_text_file", map[string]any{"path": line, "_budget": 200})
			text = textOf(t, res)
			if n := tokens.O200kBase().Count(text); n > 200 {
				t.Errorf("line is %d tokens, over _budget 200", n)
			}
			x = &fetcher{t: t, f: f, tool: "read_text_file", structured: true, budget: 20000}
			got := x.all(handleOf(t, text))
			if len(got) != 1 || got[0] != longLine(300<<10) {
				t.Errorf("the 300 KB line came back as %d units, want it whole", len(got))
			}
		})
	}
}

// TestChunksRedis fetches every chunk of a trimmed result back through
// both front ends with the chunks in a real Redis (TERSE_REDIS_URL), and
// checks that a second gateway on the same Redis refuses them to its own
// sessions.
func TestChunksRedis(t *testing.T) {
	u := os.Getenv("TERSE_REDIS_URL")
	if u == "" {
		t.Skip("TERSE_REDIS_URL is not set; set it to a scratch Redis (e.g. redis://127.0.0.1:6399/0) to run the Redis tests")
	}
	mk := func() *Options {
		r, err := redisstore.New(u, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return chunkOptions(r)
	}
	var h string
	for _, f := range fronts(t, mk) {
		res := f.call(t, "items", map[string]any{"n": 30, "_budget": 300})
		h = handleOf(t, textOf(t, res))
		x := &fetcher{t: t, f: f, tool: "items", json: true, structured: true, budget: 300}
		sameUnits(t, f.name+" chunks from Redis", x.all(h), originalItems(30, 0))
		if hs := f.health(); !hs.OK {
			t.Errorf("%s: health = %+v", f.name, hs)
		}
	}
	exe, _ := os.Executable()
	_, srv := serveGateway(t, []ServerSpec{{Name: "fake", Command: exe, Env: []string{"TERSE_FAKE_UPSTREAM=1"}}}, mk())
	cs, _ := gatewayClient(t, srv.URL, "generic-client")
	refused(t, (&front{name: "other", cs: cs, prefix: "fake__"}).call(t, "items", map[string]any{"_chunk": h + ".1"}), h)
}

// TestTSClientChunks drives the stdio proxy and the gateway with the
// official TypeScript SDK client (testdata/tsclient.cjs), which rejects a
// result of a tool with an outputSchema that lacks structuredContent or
// does not validate: every chunk reply, at _budget 300, 10 and whole,
// must pass.
func TestTSClientChunks(t *testing.T) {
	npmServer(t, "mcp-server-everything") // node and the npm folder, with the SDK
	nodePath, _ := filepath.Abs(filepath.Join("testdata", "npm", "node_modules"))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, srv := serveGateway(t, []ServerSpec{{Name: "fake", Command: exe, Env: []string{"TERSE_FAKE_UPSTREAM=1"}}}, chunkOptions(&store.Mem{}))
	for name, args := range map[string][]string{"proxy": {exe}, "gateway": {srv.URL + "/mcp"}} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("node", append([]string{filepath.Join("testdata", "tsclient.cjs")}, args...)...)
			cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath, "TERSE_TEST_PROXY=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("TypeScript client: %v\n%s", err, out)
			}
			t.Logf("%s", bytes.TrimSpace(out))
		})
	}
}
