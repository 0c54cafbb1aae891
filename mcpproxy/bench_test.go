package mcpproxy

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"strconv"

	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/store"
)

// rows64K is the row count whose pretty JSON is at least 64 KiB.
func rows64K() int {
	n := 100
	for len(rowsText(n)) < 64<<10 {
		n += 10
	}
	return n
}

func directFake(b testing.TB) *mcp.ClientSession {
	up := fakeUpstream(b)
	cmd := exec.Command(up.Path)
	cmd.Env = up.Env
	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func pct(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(float64(len(s))*p))].Microseconds())
}

func timedCall(b *testing.B, cs *mcp.ClientSession, args map[string]any) time.Duration {
	start := time.Now()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "rows", Arguments: args}); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkRelay64KiB measures one 64 KiB pretty-JSON tools/call, in the
// same loop: straight to the server (direct), through the proxy with
// _output_mode raw (the relay alone), and through the proxy transforming
// the result (compact) with the terse pipeline in json or auto format
// (o200k_base). pipeline-* is the transformer's own time.
//
//	go test -run '^$' -bench Relay -benchtime 300x ./mcpproxy
func BenchmarkRelay64KiB(b *testing.B) {
	b.Run("json", func(b *testing.B) { benchRelay(b, nil) })
	b.Run("auto", func(b *testing.B) {
		p, err := terse.New(&terse.Options{Format: "auto", Store: &store.Mem{}, Fetch: FetchTemplate})
		if err != nil {
			b.Fatal(err)
		}
		benchRelay(b, p)
	})
}

func benchRelay(b *testing.B, pl *terse.Pipeline) {
	n := rows64K()
	d := directFake(b)
	var mu sync.Mutex
	var pipe []time.Duration
	stats := &Stats{OnCall: func(r CallRecord) {
		if r.Outcome == "transformed" {
			mu.Lock()
			pipe = append(pipe, r.Pipeline)
			mu.Unlock()
		}
	}}
	h := connect(b, fakeUpstream(b), &Options{Stats: stats, Pipeline: pl}, "bench")
	var direct, raw, compact []time.Duration
	b.SetBytes(int64(len(rowsText(n))))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		direct = append(direct, timedCall(b, d, map[string]any{"n": n, "i": i}))
		raw = append(raw, timedCall(b, h.cs, map[string]any{"n": n, "i": i, ParamOutputMode: "raw"}))
		compact = append(compact, timedCall(b, h.cs, map[string]any{"n": n, "i": i}))
	}
	b.StopTimer()
	b.ReportMetric(pct(direct, .5), "direct-p50-µs")
	b.ReportMetric(pct(direct, .99), "direct-p99-µs")
	b.ReportMetric(pct(raw, .5), "relay-p50-µs")
	b.ReportMetric(pct(raw, .99), "relay-p99-µs")
	// The relay's own cost: through the proxy in raw mode (no pipeline)
	// less direct, at the same percentile of the same run.
	b.ReportMetric(pct(raw, .5)-pct(direct, .5), "overhead-p50-µs")
	b.ReportMetric(pct(raw, .99)-pct(direct, .99), "overhead-p99-µs")
	b.ReportMetric(pct(compact, .5), "compact-p50-µs")
	b.ReportMetric(pct(compact, .99), "compact-p99-µs")
	mu.Lock()
	b.ReportMetric(pct(pipe, .5), "pipeline-p50-µs")
	b.ReportMetric(pct(pipe, .99), "pipeline-p99-µs")
	mu.Unlock()
}

// BenchmarkRelayParallel8 measures throughput with 8 concurrent callers,
// direct and through the proxy (compact), in the same run.
//
//	go test -run '^$' -bench Parallel8 -benchtime 400x ./mcpproxy
func BenchmarkRelayParallel8(b *testing.B) {
	n := rows64K()
	d := directFake(b)
	h := connect(b, fakeUpstream(b), nil, "bench")
	run := func(cs *mcp.ClientSession, calls int) float64 {
		start := time.Now()
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < calls; i += 8 {
					if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "rows", Arguments: map[string]any{"n": n, "i": i}}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return float64(calls) / time.Since(start).Seconds()
	}
	b.SetBytes(int64(len(rowsText(n))))
	b.ResetTimer()
	calls := b.N
	dps := run(d, calls)
	pps := run(h.cs, calls)
	b.StopTimer()
	b.ReportMetric(dps, "direct-calls/s")
	b.ReportMetric(pps, "proxy-calls/s")
}

// memServer answers every tools/call with the same result, in memory, so
// that a benchmark measures the relay and not an MCP server.
type memServer struct {
	result []byte // JSON of the tools/call result
}

func (s *memServer) String() string { return "mem" }
func (s *memServer) Dial(ctx context.Context) (Conn, error) {
	return &memConn{s: s, out: make(chan []byte, 64), done: make(chan struct{})}, nil
}

type memConn struct {
	s      *memServer
	out    chan []byte
	done   chan struct{}
	once   sync.Once
	answer func([]byte) []byte // instead of s.answer, when set
}

func (c *memConn) Read() ([]byte, error) {
	select {
	case m := <-c.out:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	}
}

func (c *memConn) Write(msg []byte) error {
	answer := c.s.answer
	if c.answer != nil {
		answer = c.answer
	}
	if resp := answer(msg); resp != nil {
		select {
		case c.out <- resp:
		case <-c.done:
		}
	}
	return nil
}

func (c *memConn) Close() error { c.once.Do(func() { close(c.done) }); return nil }

// answer returns the response to a request line, or nil.
func (s *memServer) answer(msg []byte) []byte {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.ID == nil {
		return nil
	}
	res := []byte(`{}`)
	if m.Method == "tools/call" {
		res = s.result
	}
	out := make([]byte, 0, len(res)+64)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, m.ID...)
	out = append(out, `,"result":`...)
	out = append(out, res...)
	return append(out, '}')
}

// BenchmarkRelayOverhead isolates the stdio relay: raw JSON-RPC lines over
// in-memory pipes to an in-memory server answering with a 64 KiB
// pretty-JSON result. "direct" is the same exchange without the proxy;
// "raw" goes through the proxy with _output_mode raw (relay only);
// "compact" runs the default pipeline too (pipeline-* is its time).
//
//	go test -run '^$' -bench RelayOverhead -benchtime 2000x ./mcpproxy
func BenchmarkRelayOverhead(b *testing.B) {
	text := rowsText(rows64K())
	res, _ := json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": text}}})
	srv := &memServer{result: res}

	// direct: client <-> in-memory server over the same pipes.
	dcr, dsw := io.Pipe()
	dsr, dcw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(dsr)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if r := srv.answer(sc.Bytes()); r != nil {
				dsw.Write(append(r, '\n'))
			}
		}
		dsw.Close()
	}()
	var mu sync.Mutex
	var pipe []time.Duration
	p := NewProxy(srv, &Options{Stats: &Stats{OnCall: func(r CallRecord) {
		mu.Lock()
		pipe = append(pipe, r.Pipeline)
		mu.Unlock()
	}}})
	pcr, psw := io.Pipe()
	psr, pcw := io.Pipe()
	done := make(chan struct{})
	go func() { p.Serve(context.Background(), psr, psw); psw.Close(); close(done) }()
	b.Cleanup(func() { dcw.Close(); pcw.Close(); <-done })

	dr := bufio.NewReaderSize(dcr, 1<<17)
	pr := bufio.NewReaderSize(pcr, 1<<17)
	roundTrip := func(w io.Writer, r *bufio.Reader, req string) time.Duration {
		start := time.Now()
		io.WriteString(w, req)
		if _, err := readFrame(r, 1<<24); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var direct, raw, compact []time.Duration
	b.SetBytes(int64(len(res)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		id := strconv.Itoa(i)
		direct = append(direct, roundTrip(dcw, dr, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"rows","arguments":{"i":`+id+`}}}`+"\n"))
		raw = append(raw, roundTrip(pcw, pr, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"rows","arguments":{"i":`+id+`,"_output_mode":"raw"}}}`+"\n"))
		compact = append(compact, roundTrip(pcw, pr, `{"jsonrpc":"2.0","id":"c`+id+`","method":"tools/call","params":{"name":"rows","arguments":{"i":`+id+`}}}`+"\n"))
	}
	b.StopTimer()
	b.ReportMetric(pct(direct, .5), "direct-p50-µs")
	b.ReportMetric(pct(direct, .99), "direct-p99-µs")
	b.ReportMetric(pct(raw, .5), "relay-p50-µs")
	b.ReportMetric(pct(raw, .99), "relay-p99-µs")
	// The relay's own cost: through the proxy in raw mode (no pipeline)
	// less direct, at the same percentile of the same run.
	b.ReportMetric(pct(raw, .5)-pct(direct, .5), "overhead-p50-µs")
	b.ReportMetric(pct(raw, .99)-pct(direct, .99), "overhead-p99-µs")
	b.ReportMetric(pct(compact, .5), "compact-p50-µs")
	b.ReportMetric(pct(compact, .99), "compact-p99-µs")
	mu.Lock()
	var pl []time.Duration
	for _, d := range pipe {
		if d > 0 {
			pl = append(pl, d)
		}
	}
	b.ReportMetric(pct(pl, .5), "pipeline-p50-µs")
	b.ReportMetric(pct(pl, .99), "pipeline-p99-µs")
	mu.Unlock()
}

// BenchmarkCorpusLatency reads the 20 largest corpus JSON files through
// server-filesystem (read_text_file), directly and through the proxy with
// the CLI's defaults (auto, o200k_base, dedup, a Claude-Code-like client),
// in the same loop, and reports p95 per-call latency of each and their
// ratio (target ≤ 1.5).
//
//	go test -run '^$' -bench CorpusLatency -benchtime 3x ./mcpproxy
func BenchmarkCorpusLatency(b *testing.B) {
	files := corpus.Files(b, ".json")
	slices.SortFunc(files, func(x, y string) int {
		a, _ := os.Stat(x)
		c, _ := os.Stat(y)
		return cmp.Compare(c.Size(), a.Size())
	})
	files = files[:min(20, len(files))]
	dir := b.TempDir()
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		files[i] = filepath.Join(dir, strconv.Itoa(i)+".json")
		os.WriteFile(files[i], data, 0o644)
	}
	up := npmUpstream(b, "mcp-server-filesystem", nil, dir)
	d := direct(b, up)
	h := connect(b, up, viewOptions(), "claude-code")
	var dd, pd []time.Duration
	for i := 0; b.Loop(); i++ {
		for _, f := range files {
			// A fresh conversation each round: no dedup references.
			for _, s := range []struct {
				cs  *mcp.ClientSession
				out *[]time.Duration
			}{{d, &dd}, {h.cs, &pd}} {
				p := &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": f}}
				p.Meta = mcp.Meta{MetaConversation: strconv.Itoa(i)}
				start := time.Now()
				if _, err := s.cs.CallTool(context.Background(), p); err != nil {
					b.Fatal(err)
				}
				*s.out = append(*s.out, time.Since(start))
			}
		}
	}
	b.ReportMetric(pct(dd, .95)/1000, "direct-p95-ms")
	b.ReportMetric(pct(pd, .95)/1000, "proxy-p95-ms")
	b.ReportMetric(pct(pd, .95)/pct(dd, .95), "x-direct-p95")
}
