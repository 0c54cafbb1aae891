package mcpproxy

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/profile"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tokens"
)

// profileConfig gives clients named alpha*, beta* and gamma* profiles of
// their own: the same budget, gamma counted by the estimate; one
// reference per session, elisions only for alpha and gamma.
const profileConfig = `
format = "json"
[hints.ref]
max_per_session = 1
[hints.near_ref]
enabled = false
[hints.more]
applies_to_models = ["alpha*", "gamma*"]
[[profiles.llm_variants]]
name = "alpha"
match = ["alpha*"]
tokenizer = "o200k_base"
budget = 400
[[profiles.llm_variants]]
name = "beta"
match = ["beta*"]
tokenizer = "o200k_base"
budget = 400
[[profiles.llm_variants]]
name = "gamma"
match = ["gamma*"]
tokenizer = "estimate"
budget = 400
`

// profileOptions resolve each client's profile from src with
// profile.Resolve, one pipeline per tokenizer and budget, as terse proxy
// and gateway do.
func profileOptions(t testing.TB, src string) *Options {
	cfg, err := config.Parse([]byte(src), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	cache := dedup.New(dedup.Options{})
	st := &store.Mem{}
	key := []byte("0123456789abcdef0123456789abcdef")
	var mu sync.Mutex
	pipes := map[string]*terse.Pipeline{}
	def, _ := terse.New(&terse.Options{Format: "json", Store: st, Fetch: FetchTemplate, Dedup: cache, Key: key})
	return &Options{Pipeline: def, Dedup: cache, Profile: func(client, tool string) ClientProfile {
		eff := profile.Resolve(cfg, profile.Context{ClientName: client, Tool: tool})
		mu.Lock()
		defer mu.Unlock()
		k := eff.Tokenizer + "/" + eff.Format
		p := pipes[k]
		if p == nil {
			c, err := tokens.Get(eff.Tokenizer)
			if err != nil {
				t.Error(err)
			}
			p, err = terse.New(&terse.Options{Tokenizer: c, Format: eff.Format, Budget: eff.Budget, Store: st, Fetch: FetchTemplate, Dedup: cache, Key: key})
			if err != nil {
				t.Error(err)
			}
			pipes[k] = p
		}
		return ClientProfile{Pipeline: p, Budget: eff.Budget, Hints: &eff}
	}}
}

// hintCounts counts the hints of each family in texts a model reads.
func hintCounts(texts ...string) map[string]int {
	n := map[string]int{}
	for _, s := range texts {
		n["ref"] += strings.Count(s, "> [ref: ")
		n["id"] += strings.Count(s, "> [id: ")
		n["more"] += strings.Count(s, " whole with: ") + strings.Count(s, "[/chunks] Get chunk N whole: ") // an elision's hint or chunk index
	}
	return n
}

// callText is a tools/call's text through cs.
func callText(t testing.TB, cs *mcp.ClientSession, tool string, n int) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"n": n}})
	if err != nil {
		t.Fatal(err)
	}
	return textOf(t, res)
}

// checkClientHints calls rows(3) three times and rows(200) once, and
// checks the hints the client got: one reference (the cap), no id line
// once no reference can follow, and an elision only when its profile
// allows "more" (else rows(200) whole).
func checkClientHints(t *testing.T, cs *mcp.ClientSession, tool string, more bool) map[string]int {
	t.Helper()
	small := []string{callText(t, cs, tool, 3), callText(t, cs, tool, 3), callText(t, cs, tool, 3)}
	big := callText(t, cs, tool, 200)
	got := hintCounts(append(small, big)...)
	if got["ref"] != 1 || !strings.HasPrefix(small[1], "> [ref: ") || got["id"] != 1 {
		t.Errorf("%s: hints %v in %q, want one reference and the one id line it points at", tool, got, small)
	}
	if !sameJSON(t, small[2], rowsText(3)) {
		t.Errorf("%s: the repeat past the cap is %.80q, want rows(3) in full", tool, small[2])
	}
	if more {
		if got["more"] != 1 {
			t.Errorf("%s: rows(200) = %.80q…, want an elision", tool, big)
		}
	} else if got["more"] != 0 || !sameJSON(t, big, rowsText(200)) {
		t.Errorf("%s: rows(200) is not whole (%d bytes): the more family is off for this client", tool, len(big))
	}
	return got
}

// TestClientHintsProxy: through the stdio proxy, each client's [hints]
// policy decides which hints it gets, and max_per_session caps them;
// telemetry counts the hints the client got.
func TestClientHintsProxy(t *testing.T) {
	for _, c := range []struct {
		client string
		more   bool
	}{{"alpha-client", true}, {"beta-client", false}} {
		t.Run(c.client, func(t *testing.T) {
			dir := t.TempDir()
			rec, err := telemetry.Open(telemetry.Settings{Enabled: true, Dir: dir, ToolNames: true})
			if err != nil {
				t.Fatal(err)
			}
			opts := profileOptions(t, profileConfig)
			opts.Telemetry = rec
			h := connect(t, fakeUpstream(t), opts, c.client)
			got := checkClientHints(t, h.cs, "rows", c.more)
			for range 100 {
				if rec.Stats().Seen >= 4 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			log, err := telemetry.ReadDir(dir, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			sum := map[string]int{}
			for _, r := range log.Records {
				for k, v := range r.Hints {
					sum[k] += v
				}
			}
			for _, f := range []string{"ref", "id", "more"} {
				if sum[f] != got[f] {
					t.Errorf("telemetry counts %d %s hints, the client got %d", sum[f], f, got[f])
				}
			}
		})
	}
}

// TestClientHintsGateway: the same through the gateway, two clients of
// one gateway at once, each counted in its own session.
func TestClientHintsGateway(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, srv := serveGateway(t, []ServerSpec{{Name: "a", Command: exe, Env: []string{"TERSE_FAKE_UPSTREAM=1"}}}, profileOptions(t, profileConfig))
	alpha, _ := gatewayClient(t, srv.URL, "alpha-client")
	beta, _ := gatewayClient(t, srv.URL, "beta-client")
	checkClientHints(t, alpha, "a__rows", true)
	checkClientHints(t, beta, "a__rows", false)
}

// docOf is the document of a fitted text: what precedes its notes.
func docOf(s string) string {
	if i := strings.Index(s, "\n> ["); i >= 0 {
		return s[:i]
	}
	return s
}

// TestClientTokenizer: a client whose profile counts with another
// tokenizer gets its result fitted by that count, and a client of no
// profile of its own gets what it gets without profiles.
func TestClientTokenizer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fake := []ServerSpec{{Name: "a", Command: exe, Env: []string{"TERSE_FAKE_UPSTREAM=1"}}}
	_, srv := serveGateway(t, fake, profileOptions(t, profileConfig))
	alpha, _ := gatewayClient(t, srv.URL, "alpha-client")
	gamma, _ := gatewayClient(t, srv.URL, "gamma-client")
	other, _ := gatewayClient(t, srv.URL, "other-client")
	a, g, o := callText(t, alpha, "a__rows", 200), callText(t, gamma, "a__rows", 200), callText(t, other, "a__rows", 200)
	if docOf(a) == docOf(g) {
		t.Errorf("alpha (o200k_base) and gamma (estimate) got the same document: %.80q", docOf(a))
	}
	if n := tokens.Estimate().Count(g); n > 400 {
		t.Errorf("gamma's result is %d estimated tokens, over its budget of 400", n)
	}
	if n := tokens.O200kBase().Count(a); n > 400 {
		t.Errorf("alpha's result is %d o200k_base tokens, over its budget of 400", n)
	}
	// The default profile: the configuration's budget (the default
	// 25,000), rows(200) whole, as a gateway without profiles gives it.
	p, _ := terse.New(&terse.Options{Format: "json", Store: &store.Mem{}, Fetch: FetchTemplate, Dedup: dedup.New(dedup.Options{})})
	_, plain := serveGateway(t, fake, &Options{Pipeline: p})
	cs, _ := gatewayClient(t, plain.URL, "other-client")
	if want := callText(t, cs, "a__rows", 200); o != want || !sameJSON(t, stripIDLine(o), rowsText(200)) {
		t.Errorf("other-client got %.80q, without profiles %.80q", o, want)
	}
}
