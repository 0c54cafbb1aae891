package config

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/terse-dev/terse/tree"
)

// fullConfig uses every key; docs/config.md shows the same file.
const fullConfig = `
tokenizer = "cl100k_base"
format = "toon"
budget = 25000

[store]
dir = "/tmp/terse"
ttl = "1h"

[dedup]
enabled = false
near_ref = true
mutating_tools = ["write_*"]
max_entries = 500
max_bytes = 1048576

[proxy]
min_size_bytes = 200
max_size_bytes = -1
include_tools = []
exclude_tools = ["secret_*"]
skip_on_error = false

[[proxy.clients]]
match = "claude-code"
reads = "structured"
budget = 20000

[gateway]
listen = "127.0.0.1:7070"

[[servers]]
name = "github"
command = "github-mcp-server"
args = ["stdio"]
env = ["GITHUB_TOKEN=x"]

[[servers]]
name = "docs"
url = "https://example.com/mcp"

[history]
format = "openai"
window = 200000
threshold = 0.9
target = 0.5
keep_assistant = 3

[[tools]]
match = "github__list_issues"
root = "/items"
select = ["number", "title", "author=user.login", "labels=labels[*].name"]
exclude = ["*_url", "node_id"]
max_items = 50
drop_nulls = true
drop_empty = true
compact = { header = "{{.Total}} issues", item = "#{{.number}} {{.title}}", footer = "{{.Remaining}} more" }
budget = 8000
strategy = "element_count"
items = "/items"
drop_fields = ["body"]
keep_fields = ["number", "title"]
mutating = false

[[tools]]
match = "*_logs"
text = { include = ["ERROR", "WARN"], exclude = ["^DEBUG"], head = 10, tail = 200, collapse = true, strip_ansi = true, on_empty = "no errors" }
strategy = "head_tail"

[[tools]]
match = "list_*"
max_items = 20

[[tools]]
match = "list_issues"
template = "csv_from_md"
`

func TestParseFull(t *testing.T) {
	c, err := Parse([]byte(fullConfig), "terse.toml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"tokenizer", c.Tokenizer, "cl100k_base"},
		{"format", c.Format, "toon"},
		{"budget", c.Budget, 25000},
		{"store.ttl", c.Store.TTL.Duration, time.Hour},
		{"dedup.mutating_tools", strings.Join(c.Dedup.MutatingTools, ","), "write_*"},
		{"proxy.max_size_bytes", c.Proxy.MaxSizeBytes, -1},
		{"proxy.clients", len(c.Proxy.Clients), 1},
		{"servers", len(c.Servers), 2},
		{"history.target", c.History.Target, 0.5},
		{"tools", len(c.Tools), 4},
		{"tools.0.select", len(c.Tools[0].Select), 4},
		{"tools.1.text.tail", c.Tools[1].Text.Tail, 200},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	// The tool's filter is compiled and works.
	in := `{"items":[{"number":1,"title":"a","user":{"login":"u"},"labels":[{"name":"bug"}],"html_url":"h","body":null}],"total_count":1}`
	res := c.Tool("github__list_issues").Rule().Apply(mustParse(t, in), nil)
	want := `{"items":[{"number":1,"title":"a","author":"u","labels":["bug"]}],"total_count":1}`
	if res.IsText || res.Value.String() != want {
		// compact is set, so the output is text
		if !res.IsText || res.Text != "1 issues\n#1 a\n0 more" {
			t.Errorf("Apply = %q / %s", res.Text, res.Value)
		}
	}
}

func mustParse(t *testing.T, s string) tree.Value {
	t.Helper()
	v, err := tree.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDefaults(t *testing.T) {
	c, err := Parse(nil, "empty.toml")
	if err != nil {
		t.Fatalf("Parse(empty): %v", err)
	}
	d := Default()
	if c.Tokenizer != "o200k_base" || c.Format != "auto" || c.Budget != 0 || c.Store.TTL.Duration != 30*time.Minute ||
		!c.Dedup.Enabled || !slices.Equal(c.Dedup.MutatingTools, d.Dedup.MutatingTools) ||
		c.Proxy.MinSizeBytes != 100 || !c.Proxy.SkipOnError || c.History.Threshold != 0.8 || c.History.Target != 0.6 {
		t.Errorf("Parse(empty) = %+v, want the defaults", c)
	}
	if err := Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
}

func TestArraysReplaceDefaults(t *testing.T) {
	c, err := Parse([]byte("[dedup]\nmutating_tools = [\"put_*\"]\n"), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Dedup.MutatingTools, ","); got != "put_*" {
		t.Errorf("mutating_tools = %s, want put_* (replacing the default)", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unknown top-level key", "tokenizr = \"x\"\n", "t.toml:1:1: tokenizr: unknown key"},
		{"unknown key in a table", "[store]\ndir = \"\"\nttll = \"1m\"\n", "t.toml:3:1: store.ttll: unknown key"},
		{"unknown key in a tool", "[[tools]]\nmatch = \"x\"\nselct = [\"a\"]\n", "t.toml:3:1: tools.0.selct: unknown key"},
		{"unknown key in an inline table", "[[tools]]\nmatch = \"x\"\ntext = { heda = 1 }\n", "t.toml:3:10: tools.0.text.heda: unknown key"},
		{"wrong type", "budget = \"lots\"\n", "t.toml:1:10: budget:"},
		{"bad duration", "[store]\nttl = \"soon\"\n", "t.toml:2:"},
		{"syntax", "budget = \n", "t.toml:1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in), "t.toml")
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Parse(%q) = %v, want prefix %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"tokenizer", "tokenizer = \"gpt2\"\n", `t.toml:1:1: tokenizer: "gpt2" is not one of o200k_base, cl100k_base, estimate`},
		{"format", "\nformat = \"yaml\"\n", `t.toml:2:1: format: "yaml" is not one of auto, toon, json`},
		{"budget", "budget = -1\n", "t.toml:1:1: budget: must be >= 0, got -1"},
		{"ttl", "[store]\nttl = \"0s\"\n", "t.toml:2:1: store.ttl: must be positive"},
		{"redis not a url", "[store]\nredis = \"localhost:6379\"\n", "t.toml:2:1: store.redis: bad Redis URL:"},
		{"redis scheme", "[store]\nredis = \"http://cache:6379\"\n", "t.toml:2:1: store.redis: bad Redis URL: redis: invalid URL scheme: http"},
		{"redis db", "[store]\nredis = \"redis://cache:6379/zero\"\n", "t.toml:2:1: store.redis: bad Redis URL: redis: invalid database number"},
		{"redis and dir", "[store]\ndir = \"/tmp/c\"\nredis = \"redis://cache:6379/0\"\n", "t.toml:3:1: store.redis: set at most one of dir and redis"},
		{"glob", "[dedup]\nmutating_tools = [\"ok\", \"[\"]\n", `t.toml:2:25: dedup.mutating_tools.1: bad glob "["`},
		{"client reads", "[[proxy.clients]]\nmatch = \"x\"\nreads = \"eyes\"\n", `t.toml:3:1: proxy.clients.0.reads: "eyes" is not one of content, structured`},
		{"server both", "[[servers]]\nname = \"a\"\ncommand = \"x\"\nurl = \"y\"\n", "t.toml:1:3: servers.0: set exactly one of command and url"},
		{"server name", "[[servers]]\nname = \"a__b\"\nurl = \"y\"\n", `servers.0.name: "a__b" must not contain "__"`},
		{"server name mcp", "[[servers]]\nname = \"mcp\"\nurl = \"y\"\n", `servers.0.name: "mcp" is reserved`},
		{"duplicate server", "[[servers]]\nname = \"a\"\nurl = \"y\"\n[[servers]]\nname = \"a\"\nurl = \"z\"\n", `t.toml:5:1: servers.1.name: duplicate server name "a"`},
		{"server env", "[[servers]]\nname = \"a\"\nurl = \"y\"\nenv = [\"NOPE\"]\n", `t.toml:4:8: servers.0.env.0: "NOPE" is not KEY=VALUE`},
		{"history", "[history]\nthreshold = 1.5\n", "t.toml:2:1: history.threshold: must be in (0, 1]"},
		{"listen", "[gateway]\nlisten = \"7070\"\n", `t.toml:2:1: gateway.listen: "7070" is not HOST:PORT`},
		{"text exclude", "[[tools]]\nmatch = \"x\"\ntext = { exclude = [\"a\", \"\"] }\n", "t.toml:3:26: tools.0.text.exclude.1: text.exclude: empty pattern"},
		{"tool match", "[[tools]]\nmax_items = 1\n", "t.toml:1:3: tools.0.match: must not be empty"},
		{"tool strategy", "[[tools]]\nmatch = \"x\"\nstrategy = \"best\"\n", `t.toml:3:1: tools.0.strategy: "best" is not one of`},
		{"tool template", "[[tools]]\nmatch = \"x\"\ntemplate = \"nope\"\n", `t.toml:3:1: tools.0.template: "nope" is not one of`},
		{"tool items pointer", "[[tools]]\nmatch = \"x\"\nitems = \"items\"\n", `t.toml:3:1: tools.0.items: JSON pointer "items" must be empty or start with '/'`},
		{"tool select path", "[[tools]]\nmatch = \"x\"\nselect = [\"id\", \"a..b\"]\n", `t.toml:3:17: tools.0.select.1: select path "a..b": empty segment`},
		{"tool select form", "[[tools]]\nmatch = \"x\"\nselect = [\"=a\"]\n", `t.toml:3:11: tools.0.select.0: select path "=a": want "out=path" or "path"`},
		{"tool exclude", "[[tools]]\nmatch = \"x\"\nexclude = [\"a.\"]\n", `t.toml:3:12: tools.0.exclude.0: exclude path "a.": empty segment`},
		{"tool root", "[[tools]]\nmatch = \"x\"\nroot = \"items\"\n", `t.toml:3:1: tools.0.root: root path "items"`},
		{"tool max_items", "[[tools]]\nmatch = \"x\"\nmax_items = -2\n", `t.toml:3:1: tools.0.max_items: max_items -2: must be >= 0`},
		{"tool regex", "[[tools]]\nmatch = \"x\"\ntext = { include = [\"(\"] }\n", `t.toml:3:21: tools.0.text.include.0: text.include pattern "("`},
		{"tool compact", "[[tools]]\nmatch = \"x\"\ncompact = { header = \"h\" }\n", `t.toml:3:1: tools.0.compact.item: compact.item: template is required`},
		{"tool template syntax", "[[tools]]\nmatch = \"x\"\ncompact = { item = \"{{.a\" }\n", `t.toml:3:13: tools.0.compact.item: compact.item: template: compact.item:1: unclosed action`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in), "t.toml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) = %v, want it to contain %q", tt.in, err, tt.want)
			}
			if _, ok := errors.AsType[*ValidationError](err); !ok {
				t.Errorf("error is %T, want *ValidationError", err)
			}
		})
	}
}

func TestValidateReportsAllInFileOrder(t *testing.T) {
	_, err := Parse([]byte("format = \"x\"\ntokenizer = \"y\"\n[[tools]]\nmatch = \"\"\nmax_items = -1\n"), "t.toml")
	ve, ok := errors.AsType[*ValidationError](err)
	if !ok || len(ve.Errs) != 4 {
		t.Fatalf("Parse = %v, want 4 errors", err)
	}
	var lines []string
	for _, e := range ve.Errs {
		lines = append(lines, strings.SplitN(e.Error(), ": ", 2)[0])
	}
	if got := strings.Join(lines, " "); got != "t.toml:1:1 t.toml:2:1 t.toml:4:1 t.toml:5:1" {
		t.Errorf("positions = %s, want file order", got)
	}
}

func TestTool(t *testing.T) {
	c, err := Parse([]byte(fullConfig), "terse.toml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		match string // "" means no rule
	}{
		{"github__list_issues", "github__list_issues"}, // exact
		{"list_issues", "list_issues"},                 // exact beats the earlier glob list_*
		{"list_repos", "list_*"},                       // glob
		{"pod_logs", "*_logs"},                         // glob, file order
		{"gitlab__list_issues", "list_issues"},         // prefix stripped, exact
		{"gitlab__list_mrs", "list_*"},                 // prefix stripped, glob
		{"a__list_x__y", "list_*"},                     // tool "list_x__y" of server "a" (the first "__", as the gateway routes)
		{"a__b__list_x", ""},                           // tool "b__list_x" of server "a"
		{"mcp__gitlab__list_mrs", "list_*"},            // Claude Code's name
		{"get_issue", ""},
	}
	for _, tt := range tests {
		got := ""
		if tool := c.Tool(tt.name); tool != nil {
			got = tool.Match
		}
		if got != tt.match {
			t.Errorf("Tool(%q) = %q, want %q", tt.name, got, tt.match)
		}
	}
}

func TestLoad(t *testing.T) {
	path := t.TempDir() + "/terse.toml"
	if err := os.WriteFile(path, []byte("budget = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil || c.Budget != 5 {
		t.Fatalf("Load = %+v, %v", c, err)
	}
	if _, err := Load(path + ".missing"); err == nil {
		t.Error("Load(missing) = nil error")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(fullConfig))
	f.Add([]byte("[[tools]]\nmatch = \"x\"\nselect = [\"a[\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "f.toml")
		if err != nil {
			_ = err.Error() // formatting never panics
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse succeeded but Validate fails: %v", err)
		}
	})
}

func TestStoreRedis(t *testing.T) {
	for _, u := range []string{"redis://cache.internal:6379/0", "rediss://terse:pw@cache:6380/1", "unix:///run/redis.sock"} {
		c, err := Parse([]byte("[store]\nredis = \""+u+"\"\nttl = \"10m\"\n"), "t.toml")
		if err != nil {
			t.Errorf("Parse(redis = %q) = %v, want ok", u, err)
			continue
		}
		if c.Store.Redis != u || c.Store.TTL.Duration != 10*time.Minute || c.Store.Dir != "" {
			t.Errorf("Store = %+v, want Redis %q, TTL 10m, no Dir", c.Store, u)
		}
	}
	if Default().Store.Redis != "" {
		t.Errorf("Default().Store.Redis = %q, want empty (the embedded Dir store)", Default().Store.Redis)
	}
	// A bad URL is reported without the password it may hold.
	_, err := Parse([]byte("[store]\nredis = \"redis://:hunter2@cache:6379/x\"\n"), "t.toml")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Parse(bad redis URL with password) = %v, want an error without the password", err)
	}
}
