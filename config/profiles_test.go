package config

import (
	"strings"
	"testing"
)

func TestProfilesDefaults(t *testing.T) {
	c := Default()
	if c.Telemetry.Enabled {
		t.Error("telemetry is on by default")
	}
	if c.Profiles.LLM != "auto" || c.Profiles.Data != "auto" || c.Profiles.Tokenizer != "auto" {
		t.Errorf("profiles = %+v, want auto axes", c.Profiles)
	}
	if !c.Hints.Ref.Enabled || c.Hints.Encoded.Enabled || c.Hints.NearRef.MaxPerSession != 50 {
		t.Errorf("hints = %+v", c.Hints)
	}
}

func TestProfilesValidate(t *testing.T) {
	src := `
[telemetry]
sample_rate = 0
max_file_bytes = 100
max_total_bytes = 10
[hints.query]
max_per_session = -1
applies_to_models = ["["]
[profiles]
tokenizer = "gpt2"
llm = "nosuch"
agent = "marathon_refactor"
[[profiles.agent_variants]]
name = "x"
recursion_depth = 0
hint_aggressiveness = 2
[[profiles.data_variants]]
name = "d"
match = ""
format = "csv"
hints = ["bogus"]
`
	_, err := Parse([]byte(src), "t.toml")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"telemetry.sample_rate", "telemetry.max_total_bytes", "hints.query.max_per_session",
		"hints.query.applies_to_models.0", "profiles.tokenizer", "profiles.llm:",
		"profiles.data_variants.0.match", "profiles.data_variants.0.format", "profiles.data_variants.0.hints.0",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %s:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "profiles.agent") {
		t.Errorf("a deprecated key rejected:\n%v", err)
	}
}

// TestProfilesAgentDeprecated: the agent axis changed no option and is
// gone; a file that still sets it loads, with one warning per key.
func TestProfilesAgentDeprecated(t *testing.T) {
	src := `[profiles]
agent = "lean"
[[profiles.agent_variants]]
name = "lean"
recursion_depth = 2
near_ref = true
hint_aggressiveness = 0.4
`
	c, err := Parse([]byte(src), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	got := c.Deprecated()
	if len(got) != 2 || !strings.HasPrefix(got[0], "t.toml:2:1: profiles.agent: deprecated, ignored") ||
		!strings.HasPrefix(got[1], "t.toml:3:") || !strings.Contains(got[1], "profiles.agent_variants: deprecated, ignored") {
		t.Errorf("warnings %q", got)
	}
	if w := Default().Deprecated(); len(w) != 0 {
		t.Errorf("defaults warn: %q", w)
	}
}

func TestProfilesUnknownKey(t *testing.T) {
	_, err := Parse([]byte("[hints.ref]\nenabeld = true\n"), "t.toml")
	if err == nil || !strings.Contains(err.Error(), "t.toml:2:1: hints.ref.enabeld: unknown key") {
		t.Errorf("err = %v", err)
	}
}
