package mcpproxy

import (
	"context"

	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rows64K is the row count whose pretty JSON is at least 64 KiB.
func rows64K() int {
	n := 100
	for len(rowsText(n)) < 64<<10 {
		n += 10
	}
	return n
}

func directFake(b *testing.B) *mcp.ClientSession {
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
// _output_mode raw (the relay alone), and through the proxy with the
// built-in transformer (compact). pipeline-* is the transformer's own time.
//
//	go test -run '^$' -bench Relay -benchtime 300x ./mcpproxy
func BenchmarkRelay64KiB(b *testing.B) {
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
	h := connect(b, fakeUpstream(b), &Options{Stats: stats}, "bench")
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
