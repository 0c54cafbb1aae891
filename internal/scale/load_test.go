package scale

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// loadSpec reads TERSE_SCALE_LOAD, "CALLS:C1,C2,…" (default "300:8", the
// CI size): that many calls at each concurrency.
func loadSpec(t *testing.T) (int, []int) {
	spec := os.Getenv("TERSE_SCALE_LOAD")
	if spec == "" {
		spec = "300:8"
	}
	n, cs, ok := strings.Cut(spec, ":")
	calls, err := strconv.Atoi(n)
	if !ok || err != nil || calls <= 0 {
		t.Fatalf("TERSE_SCALE_LOAD=%q: want CALLS:C1,C2,…", spec)
	}
	var conc []int
	for _, s := range strings.Split(cs, ",") {
		c, err := strconv.Atoi(s)
		if err != nil || c <= 0 {
			t.Fatalf("TERSE_SCALE_LOAD=%q: bad concurrency %q", spec, s)
		}
		conc = append(conc, c)
	}
	return calls, conc
}

// protocols reads TERSE_SCALE_PROTOCOLS, the protocol versions of the
// load's clients, comma-separated (default 2026-07-28, stateless; a
// version before it gives clients with a session, kept in Redis).
func protocols() []string {
	if p := os.Getenv("TERSE_SCALE_PROTOCOLS"); p != "" {
		return strings.Split(p, ",")
	}
	return []string{"2026-07-28"}
}

// TestLoad sends a bounded number of calls through haproxy at each
// protocol and concurrency and reports throughput, latency, errors (which must be 0),
// the peak memory of each replica and Redis commands per call. Each
// worker is one client and one conversation; its calls cycle through a
// full read (a reference after the first), a search, an open of three
// entities and a read trimmed to 300 tokens (chunks stored in Redis).
func TestLoad(t *testing.T) {
	c := remoteCluster(t)
	if c == nil {
		c = startCluster(t)
	}
	calls, conc := loadSpec(t)
	seed(t, c.client(), 60)
	fmt.Printf("| protocol | calls | concurrency | calls/s | p50 ms | p99 ms | errors | Redis cmds/call | peak RSS per replica (MiB) |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, proto := range protocols() {
		for _, cc := range conc {
			load(t, c, proto, calls, cc)
		}
	}
}

// load sends calls calls through the balancer from cc clients of
// protocol proto and prints a row of the table.
func load(t *testing.T, c *cluster, proto string, calls, cc int) {
	lat := make([]time.Duration, calls)
	errs := make([]string, 0)
	var mu sync.Mutex
	next := make(chan int, calls)
	for i := range calls {
		next <- i
	}
	close(next)
	redis0 := c.redisCommands()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range cc {
		cs := c.clientOf(proto)
		conv := fmt.Sprintf("load-%s-%d-%d", proto, cc, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				tool, args := "read_graph", map[string]any{}
				switch i % 4 {
				case 1:
					tool, args = "search_nodes", map[string]any{"query": fmt.Sprintf("node-%d", i%7)}
				case 2:
					tool, args = "open_nodes", map[string]any{"names": []string{fmt.Sprintf("service-%03d", i%60), fmt.Sprintf("service-%03d", (i+1)%60), fmt.Sprintf("service-%03d", (i+2)%60)}}
				case 3:
					args = map[string]any{"_budget": 300}
				}
				t0 := time.Now()
				text, isErr, err := call(cs, tool, conv, args)
				lat[i] = time.Since(t0)
				if err != nil || isErr {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("%s: %v %.200q", tool, err, text))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	ops := float64(c.redisCommands()-redis0) / float64(calls)
	slices.Sort(lat)
	var rss []string
	if len(c.replicas) == 0 {
		rss = append(rss, "n/a")
	}
	for _, r := range c.replicas {
		rss = append(rss, fmt.Sprintf("%.0f", float64(peakRSS(r.cmd.Process.Pid))/(1<<20)))
	}
	row := fmt.Sprintf("| %s | %d | %d | %.0f | %.1f | %.1f | %d | %.1f | %s |", proto, calls, cc, float64(calls)/elapsed.Seconds(),
		ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), len(errs), ops, strings.Join(rss, " / "))
	fmt.Println(row)
	t.Log(row)
	if len(errs) > 0 {
		t.Errorf("concurrency %d: %d errors, first: %s", cc, len(errs), errs[0])
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
