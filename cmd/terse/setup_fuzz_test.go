package main

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/terse-dev/terse/tree"
)

// FuzzSetupRewrite: rewriting a client configuration never panics; when a
// file parses, none of its servers runs through terse yet and wrapping is
// not refused, wrapping is idempotent and unwrapping gives back the same
// configuration.
func FuzzSetupRewrite(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"a":{"command":"npx","args":["-y","x"]},"h":{"url":"https://e/mcp"}}}`,
		`{"projects":{"/p":{"mcpServers":{"db":{"command":"uvx","args":["s","--db","a b"]}}}}}`,
		"[mcp_servers.memory]\ncommand = \"npx\"\nargs = [\n  \"-y\", # c\n  \"m]\",\n]\nenv = { X = \"1\" }\n\n[mcp_servers.\"x y\"]\ncommand = 'node'\n[mcp_servers.\"x y\".env]\nA = \"b\"\n",
		"[mcp_servers.d]\nurl = \"https://e/mcp\"\n",
		"[mcp_servers.m]\ncommand = \"\"\"\nnpx\"\"\"\n",
		"[mcp_servers]\ngh = { command = \"npx\", args = [\"-y\", \"g\"], env = { T = \"1\" } }\nsub.command = 'uvx' # c\n",
		"mcp_servers.fs.command = \"npx\" # c\nmcp_servers.fs.args = [\"-y\"]\n[mcp_servers.'my s']\ncommand = 's'",
		`{"a":"\u2028","mcpServers":{"m":{"command":"npx -y srv"}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, isTOML := range []bool{false, true} {
			rewrite := func(data []byte, edit func(*serverEntry)) ([]byte, []*serverEntry, error) {
				if isTOML {
					return rewriteTOML(data, edit)
				}
				return rewriteJSON(data, true, edit)
			}
			wrap := func(e *serverEntry) {
				if e.url == "" && e.command != "" && !e.wrapped() {
					e.args = append([]string{"proxy", "--", e.command}, e.args...)
					e.command, e.changed = "terse", true
				}
			}
			unwrap := func(e *serverEntry) {
				if e.url == "" && e.wrapped() {
					e.command, e.args = e.unwrapped()
					e.changed = true
				}
			}
			orig := []byte(s)
			_, servers, err := rewrite(orig, func(*serverEntry) {})
			if err != nil {
				continue
			}
			for _, e := range servers {
				if e.wrapped() {
					return
				}
			}
			wrapped, _, err := rewrite(orig, wrap)
			if err != nil {
				continue // refused: a layout the line editor cannot change safely
			}
			again, _, err := rewrite(wrapped, wrap)
			if err != nil || !bytes.Equal(again, wrapped) {
				t.Fatalf("wrapping twice changed the file (%v):\n%s\n---\n%s", err, wrapped, again)
			}
			back, _, err := rewrite(wrapped, unwrap)
			if err != nil || !sameConfig(isTOML, back, orig) {
				t.Fatalf("unwrap (%v):\n%s\ngave\n%s\nnot\n%s", err, wrapped, back, orig)
			}
		}
	})
}

// FuzzJSONSet: setting a member of any JSON object keeps the document
// valid JSON, puts the value there, and leaves the other members equal.
func FuzzJSONSet(f *testing.F) {
	f.Add(`{"a": {"b": 1}, "c": "\u2028"}`, "a", "b")
	f.Add(`{}`, "hooks", "PostToolUse")
	f.Add("{\n  \"x\": [1, 2]\n}", "y", "z")
	f.Fuzz(func(t *testing.T, doc, k1, k2 string) {
		orig, err := tree.Parse([]byte(doc))
		if err != nil || orig.Kind() != tree.KindObject || !utf8.ValidString(k1) || !utf8.ValidString(k2) {
			return
		}
		out, err := jsonSet([]byte(doc), []string{k1, k2}, "[\n  true\n]")
		if err != nil {
			return // a value on the way is not an object
		}
		got, err := tree.Parse(out)
		if err != nil {
			t.Fatalf("jsonSet(%q) = %q: %v", doc, out, err)
		}
		a, ok := got.Get(k1)
		if !ok {
			t.Fatalf("jsonSet(%q) = %q: no %q", doc, out, k1)
		}
		if b, ok := a.Get(k2); !ok || b.Kind() != tree.KindArray || b.Len() != 1 {
			t.Fatalf("jsonSet(%q) = %q: %q.%q not set", doc, out, k1, k2)
		}
		// (A key given twice reads as Get reads it, before and after.)
		for _, m := range orig.Members() {
			o, _ := orig.Get(m.Key)
			if g, _ := got.Get(m.Key); m.Key != k1 && !tree.Equal(g, o) {
				t.Fatalf("jsonSet(%q) = %q changed %q", doc, out, m.Key)
			}
		}
	})
}

// FuzzTOMLEntries: the TOML scanner never panics and places every value
// inside the document.
func FuzzTOMLEntries(f *testing.F) {
	f.Add("a.b = { c = [1, \"]\"], 'd' = \"\"\"x\"\"\" }\n[t.\"u v\"]\nk = 1 # c\n")
	f.Fuzz(func(t *testing.T, s string) {
		es, err := tomlEntries([]byte(s))
		if err != nil {
			return
		}
		for _, e := range es {
			if e.value.start < 0 || e.value.end > len(s) || e.value.start > e.value.end {
				t.Fatalf("entry %v: value %v outside %d bytes", e.path, e.value, len(s))
			}
		}
	})
}

// TestEphemeralPath: the builds go run deletes and npx's cache are known.
func TestEphemeralPath(t *testing.T) {
	for path, want := range map[string]bool{
		"/tmp/go-build2349/b001/exe/terse": true,
		"/home/u/.npm/_npx/2293a494e6ada972/node_modules/@terse-dev/terse-linux-x64/bin/terse": true,
		"/home/u/go/bin/terse": false,
		"/usr/local/lib/node_modules/@terse-dev/terse-linux-x64/bin/terse": false,
	} {
		if got := ephemeralPath(path) != ""; got != want {
			t.Errorf("ephemeralPath(%q) = %v, want %v", path, got, want)
		}
	}
}
