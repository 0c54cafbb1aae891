package toolname

import "testing"

// TestSplit: one rule for every name; a tool name holding the separator
// keeps it (routing and configuration once split such names at
// different "__").
func TestSplit(t *testing.T) {
	for _, tt := range []struct{ name, server, tool string }{
		{"github__list_issues", "github", "list_issues"},
		{"a__b__c", "a", "b__c"},
		{"mcp__github__list_issues", "github", "list_issues"},
		{"mcp__fs__read__file", "fs", "read__file"},
		{"mcp__read", "mcp", "read"},
		{"read_file", "", "read_file"},
		{"__x", "", "__x"},
		{"x__", "", "x__"},
		{"", "", ""},
	} {
		s, tl := Split(tt.name)
		if s != tt.server || tl != tt.tool {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", tt.name, s, tl, tt.server, tt.tool)
		}
		if got := Tool(tt.name); got != tt.tool {
			t.Errorf("Tool(%q) = %q, want %q", tt.name, got, tt.tool)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"a__b", "mcp__a__b__c", "x", "____", "mcp____"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		s, tl := Split(name)
		switch {
		case s == "":
			if tl != name {
				t.Fatalf("Split(%q) = %q, %q: no server but the tool is not the name", name, s, tl)
			}
		case name != s+Sep+tl && name != claudePrefix+s+Sep+tl:
			t.Fatalf("Split(%q) = %q, %q: does not rebuild the name", name, s, tl)
		}
	})
}

// TestMatch: a glob selects a name or its tool part, exactly or by
// path.Match; a malformed glob only itself.
func TestMatch(t *testing.T) {
	for _, tt := range []struct {
		glob, name string
		want       bool
	}{
		{"list_issues", "list_issues", true},
		{"list_issues", "github__list_issues", true},
		{"list_issues", "mcp__github__list_issues", true},
		{"github__*", "github__list_issues", true},
		{"list_*", "github__list_issues", true},
		{"*", "anything", true},
		{"get_*", "github__list_issues", false},
		{"[", "[", true},
		{"[", "x", false},
		{"Read", "read", false},
	} {
		if got := Match(tt.glob, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.glob, tt.name, got, tt.want)
		}
	}
	if !MatchAny([]string{"x", "get_*"}, "gh__get_me") || MatchAny(nil, "x") {
		t.Error("MatchAny")
	}
}

// TestMutating: one list of writers; file tools by name, MCP tools by
// their verb.
func TestMutating(t *testing.T) {
	for name, want := range map[string]bool{
		"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true, "write_file": true, "apply_patch": true,
		"mcp__fs__edit_file": true, "github__update_issue": true, "delete_branch": true,
		"Read": false, "Grep": false, "github__list_issues": false, "get_me": false, "Bash": false,
	} {
		if got := Mutating(name); got != want {
			t.Errorf("Mutating(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]bool{"Edit": true, "fs__write_file": true, "update_issue": false, "Read": false} {
		if got := WritesFiles(name); got != want {
			t.Errorf("WritesFiles(%q) = %v, want %v", name, got, want)
		}
	}
}
