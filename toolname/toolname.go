// Package toolname parses the names under which MCP tools reach terse:
// "server__tool" (the gateway's names, one upstream's tool), Claude
// Code's "mcp__server__tool", or a plain tool name. It is the one rule
// for where the server part ends, so that routing, configuration,
// profiles, strategies, telemetry and the hook agree on every name.
package toolname

import (
	"path"
	"strings"
)

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

// Match reports whether glob selects the tool called name: glob equals
// name or matches it (path.Match syntax), or does either for its tool
// part (Tool: "list_issues" of "github__list_issues"). A malformed glob
// selects only the name equal to it. This is the one rule by which
// configuration, proxies, the hook and the dedup cache select tools.
func Match(glob, name string) bool {
	if glob == name {
		return true
	}
	if ok, _ := path.Match(glob, name); ok {
		return true
	}
	if short := Tool(name); short != name {
		if glob == short {
			return true
		}
		ok, _ := path.Match(glob, short)
		return ok
	}
	return false
}

// MatchAny reports whether one of globs selects name (Match).
func MatchAny(globs []string, name string) bool {
	for _, g := range globs {
		if Match(g, name) {
			return true
		}
	}
	return false
}

// fileWriters are the file-writing tools of the usual agents and of the
// reference filesystem MCP server, in lower case.
var fileWriters = map[string]bool{
	"write": true, "edit": true, "multiedit": true, "notebookedit": true, "str_replace": true, "apply_patch": true,
	"replace": true, "write_file": true, "edit_file": true, "create_file": true, "move_file": true, "create_directory": true,
}

// writeVerbs are the verbs that lead the names of tools that change
// something ("update_issue", "delete_branch"), in lower case.
var writeVerbs = []string{"write", "create", "update", "delete", "remove", "edit", "move", "rename", "set", "add",
	"insert", "patch", "put", "post", "apply", "merge", "push", "upload", "drop", "truncate", "reset", "kill",
	"restart", "modify", "replace", "append"}

// WritesFiles reports whether the tool called name (its tool part, any
// case) is an agent's file-writing tool: Write, Edit, MultiEdit,
// NotebookEdit, write_file, edit_file, apply_patch and the like.
func WritesFiles(name string) bool {
	return fileWriters[strings.ToLower(Tool(name))]
}

// Mutating reports whether the tool called name changes something, by
// its name alone: a file-writing tool (WritesFiles) or a tool part that
// starts with a writing verb ("update_issue", "delete_branch"). It is
// the one guess of the proxies, the dedup cache and the API proxy; an
// MCP tool's annotations, when it has them, take precedence over it.
func Mutating(name string) bool {
	n := strings.ToLower(Tool(name))
	if fileWriters[n] {
		return true
	}
	for _, v := range writeVerbs {
		if strings.HasPrefix(n, v) {
			return true
		}
	}
	return false
}
