package main

import (
	"bytes"
	"testing"
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
