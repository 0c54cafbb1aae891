package scale

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cluster is Redis, three replicas and haproxy in front, all on loopback.
type cluster struct {
	t         *testing.T
	dir       string
	bin       string
	redisPort int
	redisURL  string // instead of redisPort, for a cluster not started here
	token     string // bearer token of the clients
	lbURL     string
	replicas  []*replicaProc
	haproxy   *exec.Cmd
}

type replicaProc struct {
	port int
	cmd  *exec.Cmd
}

func (r *replicaProc) url() string { return fmt.Sprintf("http://127.0.0.1:%d", r.port) }

// need returns the path of program or fails the test: TERSE_SCALE asks
// for the harness, so a missing program is an error, not a skip.
func need(t *testing.T, program string) string {
	p, err := exec.LookPath(program)
	if err != nil {
		t.Fatalf("%s not found: install it (apt-get install redis-server haproxy; scripts/install-mcp-servers.sh)", program)
	}
	return p
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func repoRoot(t *testing.T) string {
	wd, _ := os.Getwd()
	return filepath.Join(wd, "..", "..")
}

func startCluster(t *testing.T) *cluster {
	if os.Getenv("TERSE_SCALE") == "" {
		t.Skip("TERSE_SCALE is not set; scripts/scale/run.sh runs the scale harness")
	}
	need(t, "redis-server")
	need(t, "haproxy")
	root := repoRoot(t)
	memory := filepath.Join(root, "mcpproxy", "testdata", "npm", "node_modules", ".bin", "mcp-server-memory")
	if _, err := os.Stat(memory); err != nil {
		t.Fatalf("server-memory not installed: run scripts/install-mcp-servers.sh")
	}
	c := &cluster{t: t, dir: t.TempDir(), token: tokenA}
	c.bin = filepath.Join(c.dir, "terse")
	build := exec.Command("go", "build", "-o", c.bin, "./cmd/terse")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c.redisPort = freePort(t)
	c.startRedis()
	t.Cleanup(c.stop)
	cfg := fmt.Sprintf(`[store]
redis = "redis://127.0.0.1:%d/0"

[dedup]
enabled = true
near_ref = %t

[gateway]
tokens = { team-a = %q, team-b = %q }

[[proxy.clients]]
match = "budgeted"
reads = "content"
budget = 300

[[servers]]
name = "mem"
command = %q
env = ["MEMORY_FILE_PATH=%s"]
`, c.redisPort, os.Getenv("TERSE_SCALE_NEAR_REF") != "0", tokenA, tokenB, memory, filepath.Join(c.dir, "memory.jsonl"))
	if err := os.WriteFile(filepath.Join(c.dir, "terse.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r := &replicaProc{port: freePort(t)}
		c.replicas = append(c.replicas, r)
		c.startReplica(r)
	}
	lbPort := freePort(t)
	var servers strings.Builder
	for i, r := range c.replicas {
		fmt.Fprintf(&servers, "    server r%d 127.0.0.1:%d check inter 300ms fall 3 rise 2\n", i+1, r.port)
	}
	hcfg := fmt.Sprintf(`global
    maxconn 1024
defaults
    mode http
    timeout connect 2s
    timeout check 3s
    timeout client 60s
    timeout server 60s
    retries 3
    option redispatch 1
    retry-on conn-failure
frontend mcp
    bind 127.0.0.1:%d
    default_backend gateways
backend gateways
    balance roundrobin
    option httpchk GET /healthz
%s`, lbPort, servers.String())
	hpath := filepath.Join(c.dir, "haproxy.cfg")
	os.WriteFile(hpath, []byte(hcfg), 0o600)
	c.haproxy = exec.Command("haproxy", "-f", hpath, "-db")
	c.haproxy.Stdout, c.haproxy.Stderr = logFile(t, c.dir, "haproxy.log"), logFile(t, c.dir, "haproxy.log")
	if err := c.haproxy.Start(); err != nil {
		t.Fatal(err)
	}
	c.lbURL = fmt.Sprintf("http://127.0.0.1:%d", lbPort)
	waitHTTP(t, c.lbURL+"/healthz", 10*time.Second)
	return c
}

func logFile(t *testing.T, dir, name string) *os.File {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func waitHTTP(t *testing.T, url string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer 200 within %s (last: %v)", url, d, err)
		}
	}
}

func (c *cluster) startRedis() {
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(c.redisPort), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", c.dir, "--dbfilename", "dump.rdb",
		"--logfile", filepath.Join(c.dir, "redis.log"), "--daemonize", "yes", "--pidfile", filepath.Join(c.dir, "redis.pid"))
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("redis-server: %v %s", err, out)
	}
	for deadline := time.Now().Add(5 * time.Second); c.redis("PING") != "PONG"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			c.t.Fatal("redis-server did not answer within 5s")
		}
	}
}

// redis runs one command with redis-cli and returns its output.
func (c *cluster) redis(args ...string) string {
	where := []string{"-p", strconv.Itoa(c.redisPort)}
	if c.redisURL != "" {
		where = []string{"-u", c.redisURL}
	} else if c.redisPort == 0 {
		return ""
	}
	out, _ := exec.Command("redis-cli", append(where, args...)...).Output()
	return strings.TrimSpace(string(out))
}

// stopRedis saves and stops Redis: its data comes back with it.
func (c *cluster) stopRedis() {
	c.redis("SHUTDOWN", "SAVE")
	for deadline := time.Now().Add(5 * time.Second); c.redis("PING") == "PONG"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			c.t.Fatal("redis-server did not stop")
		}
	}
}

// redisCommands is Redis's count of commands processed so far.
func (c *cluster) redisCommands() int64 {
	m := regexp.MustCompile(`total_commands_processed:(\d+)`).FindStringSubmatch(c.redis("INFO", "stats"))
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

func (c *cluster) startReplica(r *replicaProc) {
	r.cmd = exec.Command(c.bin, "gateway", "--config", filepath.Join(c.dir, "terse.toml"), "--listen", fmt.Sprintf("127.0.0.1:%d", r.port))
	lf := logFile(c.t, c.dir, fmt.Sprintf("replica-%d.log", r.port))
	r.cmd.Stdout, r.cmd.Stderr = lf, lf
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	waitHTTP(c.t, r.url()+"/healthz", 30*time.Second)
}

// kill ends a replica at once (SIGKILL to its process group: the
// gateway and its upstream), as a crashed machine would.
func (c *cluster) kill(r *replicaProc) {
	syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	r.cmd.Wait()
	r.cmd = nil
}

func (c *cluster) stop() {
	if c.haproxy != nil && c.haproxy.Process != nil {
		c.haproxy.Process.Kill()
		c.haproxy.Wait()
	}
	for _, r := range c.replicas {
		if r.cmd != nil {
			syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
			r.cmd.Wait()
		}
	}
	c.redis("SHUTDOWN", "NOSAVE")
	if c.t.Failed() {
		for _, name := range []string{"haproxy.log", "redis.log"} {
			b, _ := os.ReadFile(filepath.Join(c.dir, name))
			c.t.Logf("%s:\n%s", name, tail(string(b), 2000))
		}
		for _, r := range c.replicas {
			b, _ := os.ReadFile(filepath.Join(c.dir, fmt.Sprintf("replica-%d.log", r.port)))
			c.t.Logf("replica %d:\n%s", r.port, tail(string(b), 3000))
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// The tenants of the cluster's gateways, and their tokens.
const (
	tokenA = "team-a-0123456789abcdef"
	tokenB = "team-b-0123456789abcdef"
)

// bearer adds a bearer token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// remoteCluster is a gateway deployment named by TERSE_SCALE_URL (its
// load balancer's base URL; its upstream must be server-memory named
// "mem"), with TERSE_SCALE_TOKEN as bearer token and TERSE_SCALE_REDIS
// as the Redis URL whose commands are counted (optional); nil when
// TERSE_SCALE_URL is not set.
func remoteCluster(t *testing.T) *cluster {
	u := os.Getenv("TERSE_SCALE_URL")
	if u == "" {
		return nil
	}
	return &cluster{t: t, lbURL: strings.TrimSuffix(u, "/"), token: os.Getenv("TERSE_SCALE_TOKEN"), redisURL: os.Getenv("TERSE_SCALE_REDIS")}
}

// client connects an MCP client of protocol 2026-07-28 (stateless) to
// the load balancer.
func (c *cluster) client() *mcp.ClientSession {
	c.t.Helper()
	return c.clientAs(c.token)
}

// sessionClient connects an MCP client named name with a session
// (protocol version, before 2026-07-28) to the load balancer, with a
// bearer token ("" for none). Its session is in Redis: the balancer does
// not stick it to a replica.
func (c *cluster) sessionClient(name, version, token string) *mcp.ClientSession {
	c.t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: c.lbURL + "/mcp", MaxRetries: -1}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer(token)}
	}
	cs, err := cl.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		c.t.Fatalf("connect through haproxy with %s: %v", version, err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != version || cs.ID() == "" {
		c.t.Fatalf("connect with %s: negotiated %s, session %q", version, v, cs.ID())
	}
	c.t.Cleanup(func() { cs.Close() })
	return cs
}

// clientOf connects a client of protocol version: stateless (2026-07-28)
// or with a session.
func (c *cluster) clientOf(version string) *mcp.ClientSession {
	c.t.Helper()
	if version == "" || version >= "2026-07-28" {
		return c.client()
	}
	return c.sessionClient("scale-client", version, c.token)
}

// clientAs is client with another bearer token ("" for none).
func (c *cluster) clientAs(token string) *mcp.ClientSession {
	c.t.Helper()
	// A connect whose server/discover meets a replica as it dies falls
	// back to the session-based handshake (the SDK client's choice):
	// connect again.
	var last string
	for range 5 {
		cl := mcp.NewClient(&mcp.Implementation{Name: "scale-client", Version: "1"}, nil)
		tr := &mcp.StreamableClientTransport{Endpoint: c.lbURL + "/mcp", MaxRetries: -1}
		if token != "" {
			tr.HTTPClient = &http.Client{Transport: bearer(token)}
		}
		cs, err := cl.Connect(context.Background(), tr, nil)
		if err != nil {
			last = err.Error()
			continue
		}
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			cs.Close()
			last = "negotiated " + v
			continue
		}
		c.t.Cleanup(func() { cs.Close() })
		return cs
	}
	c.t.Fatalf("connect through haproxy with 2026-07-28: %s", last)
	return nil
}

// metric reads one sample from a replica's /metrics (the sum of the
// series whose line starts with prefix).
func metric(url, prefix string) (float64, error) {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, prefix) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum, sc.Err()
}

// peakRSS is a process's peak resident set (VmHWM) in bytes.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n << 10
}
