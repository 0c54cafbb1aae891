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
