package profile

import (
	"reflect"
	"slices"
	"testing"

	"github.com/terse-dev/terse/config"
)

func TestBuiltinNamesMatchConfig(t *testing.T) {
	var names []string
	for _, l := range BuiltinLLMs {
		names = append(names, l.Name)
	}
	slices.Sort(names)
	want := slices.Clone(config.BuiltinLLMs)
	slices.Sort(want)
	if !reflect.DeepEqual(names, want) {
		t.Errorf("built-in LLM names %v, config accepts %v", names, want)
	}
	var agents []string
	for _, a := range BuiltinAgents {
		agents = append(agents, a.Name)
	}
	if !reflect.DeepEqual(agents, config.AgentKinds) {
		t.Errorf("agents %v, config %v", agents, config.AgentKinds)
	}
}

func TestResolveAuto(t *testing.T) {
	for _, c := range []struct {
		ctx                   Context
		llm, tok, agent       string
		budget, window, depth int
	}{
		{Context{ModelID: "claude-opus-4-5-20251101"}, "claude", "o200k_base", "default", 25000, 200000, 5},
		{Context{ClientName: "claude-code"}, "claude", "o200k_base", "default", 25000, 200000, 5},
		{Context{ModelID: "gpt-4-turbo"}, "gpt-4", "cl100k_base", "default", 0, 128000, 5},
		{Context{ModelID: "gpt-5.2-codex"}, "gpt", "o200k_base", "default", 0, 200000, 5},
		{Context{ModelID: "gpt-oss:20b"}, "local", "estimate", "default", 4000, 8192, 5},
		{Context{ModelID: "mystery"}, "default", "o200k_base", "default", 0, 0, 5},
		{Context{Events: 120, ReadShare: 0.7}, "default", "o200k_base", "file_search_heavy", 0, 0, 3},
		{Context{Events: 900, Compactions: 4, ReadShare: 0.7}, "default", "o200k_base", "marathon_refactor", 0, 0, 7},
	} {
		e := Resolve(nil, c.ctx)
		if e.LLM != c.llm || e.Tokenizer != c.tok || e.Agent != c.agent || e.Budget != c.budget || e.ContextWindow != c.window || e.RecursionDepth != c.depth {
			t.Errorf("Resolve(%+v) = %+v", c.ctx, e)
		}
	}
}

func TestResolveConfigured(t *testing.T) {
	src := `
tokenizer = "cl100k_base"
budget = 3000
[hints.query]
enabled = true
applies_to_models = ["claude-*"]
[hints.near_ref]
max_per_session = 2
[profiles]
tokenizer = "estimate"
agent = "lean"
[[profiles.llm_variants]]
name = "claude"
match = ["claude-*"]
tokenizer = "o200k_base"
budget = 9000
[[profiles.agent_variants]]
name = "lean"
recursion_depth = 2
near_ref = true
[[profiles.data_variants]]
name = "issues"
match = "list_issues"
format = "toon"
template = "csv_from_md"
hints = ["ref", "query", "near_ref"]
`
	c, err := config.Parse([]byte(src), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	e := Resolve(c, Context{ModelID: "claude-sonnet-4-5", Tool: "github__list_issues"})
	want := Effective{LLM: "claude", Tokenizer: "estimate", ContextWindow: 0, Budget: 3000, Agent: "lean", RecursionDepth: 2,
		NearRef: true, Data: "issues", Format: "toon", Template: "csv_from_md",
		Hints: []HintPolicy{{"ref", true, 0}, {"near_ref", true, 2}, {"more", false, 0}, {"query", true, 0}, {"encoded", false, 0}}}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("got  %+v\nwant %+v", e, want)
	}
	if !e.Allow("near_ref", 1) || e.Allow("near_ref", 2) || e.Allow("more", 0) || e.Allow("nosuch", 0) {
		t.Error("Allow")
	}
	// The query hint is limited to Claude models.
	if o := Resolve(c, Context{ModelID: "gpt-5", Tool: "x"}); o.Allow("query", 0) || o.Data != "" || o.Format != "auto" {
		t.Errorf("other model: %+v", o)
	}
	// Pure: the same input gives the same output.
	if !reflect.DeepEqual(Resolve(c, Context{ModelID: "claude-sonnet-4-5", Tool: "github__list_issues"}), e) {
		t.Error("not deterministic")
	}
}

func TestHintCounter(t *testing.T) {
	c, _ := config.Parse([]byte("[hints.near_ref]\nmax_per_session = 2\n"), "t.toml")
	e := Resolve(c, Context{})
	hc := new(HintCounter)
	got := []bool{hc.Take(&e, "near_ref"), hc.Take(&e, "near_ref"), hc.Take(&e, "near_ref"), hc.Take(&e, "ref"), hc.Take(&e, "encoded")}
	if !reflect.DeepEqual(got, []bool{true, true, false, true, false}) {
		t.Errorf("takes %v", got)
	}
	if hc.Allow(&e, "near_ref") || hc.Count("near_ref") != 2 {
		t.Error("near_ref over its cap")
	}
	hc.Give("near_ref")
	g := Gate{&e, hc}
	if !g.Allow("near_ref") || !g.Take("near_ref") || g.Take("near_ref") || g.Allow("encoded") {
		t.Error("gate")
	}
}
