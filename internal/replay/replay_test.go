package replay

import (
	"strings"
	"testing"

	"github.com/terse-dev/terse/tune"
)

// TestEarlier: a result is a reference to the latest earlier identical
// result the model still has as it was: not one itself replaced by a
// reference, not across a compaction, not across a write of its path.
func TestEarlier(t *testing.T) {
	text := strings.Repeat("package main\n", 20)
	other := strings.Repeat("package other\n", 20)
	rs := []tune.Result{
		{ID: "a", Tool: "Read", Path: "/p/main.go", Text: text},             // 0
		{ID: "b", Tool: "Read", Path: "/p/main.go", Text: text},             // 1 → a
		{ID: "c", Tool: "Read", Path: "/p/main.go", Text: text},             // 2 → a (b was replaced)
		{ID: "d", Tool: "Bash", Text: text},                                 // 3: another tool
		{ID: "e", Tool: "Edit", Path: "/p/main.go", Text: "ok"},             // 4
		{ID: "f", Tool: "Read", Path: "/p/main.go", Text: text},             // 5: written since
		{ID: "g", Tool: "Read", Path: "/p/x.go", Text: other},               // 6
		{ID: "h", Tool: "Read", Path: "/p/x.go", Text: other, Partition: 1}, // 7: after a compaction
		{ID: "", Tool: "Read", Path: "/p/x.go", Text: other, Partition: 1},  // 8: no id of its own (its context unknown)
		{ID: "i", Tool: "Read", Path: "/p/x.go", Text: "short", Partition: 1},
	}
	out := make([]Result, len(rs))
	earlier(rs, out)
	want := []string{"", "a", "a", "", "", "", "", "", "", ""}
	for i, w := range want {
		got := ""
		if out[i].Earlier != nil {
			got = out[i].Earlier.ID
		}
		if got != w {
			t.Errorf("result %d (%s): earlier %q, want %q", i, rs[i].ID, got, w)
		}
	}
}
