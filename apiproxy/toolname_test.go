package apiproxy

import "testing"

// TestExcludedByToolPart: terse api selects tools as the MCP proxy does
// (toolname.Match): a glob matches a name or its tool part, so that
// "list_issues" excludes "mcp__github__list_issues" too (it once matched
// the full name only).
func TestExcludedByToolPart(t *testing.T) {
	rw := NewRewriter(Options{Exclude: []string{"list_issues"}})
	for name, want := range map[string]bool{"list_issues": true, "mcp__github__list_issues": true, "github__list_issues": true, "get_me": false} {
		if got := rw.excluded(name); got != want {
			t.Errorf("Exclude: excluded(%q) = %v, want %v", name, got, want)
		}
	}
	rw = NewRewriter(Options{Include: []string{"get_*"}})
	for name, want := range map[string]bool{"mcp__github__get_me": false, "mcp__github__list_issues": true} {
		if got := rw.excluded(name); got != want {
			t.Errorf("Include: excluded(%q) = %v, want %v", name, got, want)
		}
	}
}
