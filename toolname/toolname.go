// Package toolname parses the names under which MCP tools reach terse:
// "server__tool" (the gateway's names, one upstream's tool), Claude
// Code's "mcp__server__tool", or a plain tool name. It is the one rule
// for where the server part ends, so that routing, configuration,
// profiles, strategies, telemetry and the hook agree on every name.
package toolname

import "strings"

// Sep separates a server's name from its tool's. A server name never
// contains it (the configuration refuses one that does); a tool name
// may ("a__b__c" is tool "b__c" of server "a").
const Sep = "__"

// claudePrefix leads the names Claude Code gives MCP tools.
const claudePrefix = "mcp" + Sep

// Split returns the server and tool parts of name: the server is the
// part before the first Sep (after Claude Code's "mcp__", when what
// follows it has a server part too), the tool everything after it. A
// name without a server part, or with an empty tool part, is a tool of
// no server: ("", name).
func Split(name string) (server, tool string) {
	rest := name
	if r, ok := strings.CutPrefix(name, claudePrefix); ok && strings.Contains(r, Sep) {
		rest = r
	}
	s, t, ok := strings.Cut(rest, Sep)
	if !ok || s == "" || t == "" {
		return "", name
	}
	return s, t
}

// Tool returns the tool part of name (see Split): name itself when it
// has no server part.
func Tool(name string) string {
	_, t := Split(name)
	return t
}
