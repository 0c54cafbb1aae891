package profile

import (
	"reflect"
	"slices"
	"testing"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/fit"
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
}

func TestResolveAuto(t *testing.T) {
	for _, c := range []struct {
		ctx            Context
		llm, tok       string
		budget, window int
	}{
		{Context{ModelID: "claude-opus-4-5-20251101"}, "claude", "o200k_base", 25000, 200000},
		{Context{ClientName: "claude-code"}, "claude", "o200k_base", 25000, 200000},
		{Context{ModelID: "gpt-4-turbo"}, "gpt-4", "cl100k_base", 0, 128000},
		{Context{ModelID: "gpt-5.2-codex"}, "gpt", "o200k_base", 0, 200000},
		{Context{ModelID: "gpt-oss:20b"}, "local", "estimate", 4000, 8192},
		{Context{ModelID: "mystery"}, "default", "o200k_base", 0, 0},
	} {
		e := Resolve(nil, c.ctx)
		if e.LLM != c.llm || e.Tokenizer != c.tok || e.Budget != c.budget || e.ContextWindow != c.window {
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
[[profiles.llm_variants]]
name = "claude"
match = ["claude-*"]
tokenizer = "o200k_base"
budget = 9000
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
	want := Effective{LLM: "claude", Tokenizer: "estimate", ContextWindow: 0, Budget: 3000,
		Data: "issues", Format: "toon", Template: "csv_from_md",
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

// TestOptionsOfRule: the one resolution gives a tool rule's options to
// every surface, its strategy as configuration (strategy_source
// "config", as compact always reported it; the proxy reported "option"),
// and equal keys for equal options.
func TestOptionsOfRule(t *testing.T) {
	src := `
budget = 3000
[[tools]]
match = "github__list_*"
strategy = "element_count"
budget = 700
items = "/items"
drop_fields = ["url"]
`
	c, err := config.Parse([]byte(src), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	e := Resolve(c, Context{ClientName: "claude-code", Tool: "github__list_issues"})
	o, err := e.Options(terse.Options{Strategy: "cascading", Pointer: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Budget != 700 || o.Strategy != "" || o.Strategies["github__list_*"] != "element_count" || o.Pointer != "/items" ||
		!reflect.DeepEqual(o.DropFields, []string{"url"}) || o.Tokenizer == nil || o.Tokenizer.Name() != "o200k_base" {
		t.Errorf("options %+v", o)
	}
	if name, src := fit.Resolve("github__list_issues", o.Strategies); name != "element_count" || src != "config" {
		t.Errorf("strategy %s from %q, want element_count from config", name, src)
	}
	e2 := Resolve(c, Context{ModelID: "claude-sonnet-4-5", Tool: "github__list_pulls"})
	if e.Key() != e2.Key() {
		t.Errorf("keys differ for the same options: %+v %+v", e.Key(), e2.Key())
	}
	if none := Resolve(c, Context{Tool: "other"}); none.Rule != nil || none.Key() == e.Key() {
		t.Errorf("no rule: %+v", none.Key())
	}
}
