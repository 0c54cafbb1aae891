package shape

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestInView: the lines of a command's output that a line reference
// never stands for.
func TestInView(t *testing.T) {
	for line, want := range map[string]bool{
		"--- FAIL: TestX (0.01s)":                                  true,
		"FAIL\tgithub.com/x/y\t0.2s":                               true,
		"ok  \tgithub.com/x/y\t0.2s":                               true,
		"Error: something broke":                                   true,
		"cmd/x/auto_commit.go:266:27: undefined: cpID":             true,
		"src/a.ts(12,3): error TS2304: Cannot find name 'x'.":      true,
		"+\treturn fmt.Errorf(\"failed to list: %w\", err)":        true,
		"+\trepo, err := openRepository()":                         false,
		"diff --git a/cmd/x/explain.go b/cmd/x/explain.go":         false,
		"@@ -99,24 +128,517 @@ func runExplain(w io.Writer) error": true,
		"   Compiling serde v1.0.0":                                false,
		"":                                                         false,
	} {
		if got := InView(line); got != want {
			t.Errorf("InView(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestOutcome: which results keep their error lines in view.
func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		tool, text string
		want       bool
	}{
		{"Bash", "ok  \tgithub.com/x\t0.1s\n", true},
		{"Bash", `{"id": 1}`, false},
		{"Bash", "  [1, 2]", false},
		{"Read", "     1→package main\n", false},
		{"Grep", "a.go:1:error\n", false},
		{"mcp__ci__logs", "build failed\n", true},
		{"Bash", "", true},
	} {
		if got := Outcome(c.text, Call{Tool: c.tool}); got != c.want {
			t.Errorf("Outcome(%q, %s) = %v, want %v", c.text, c.tool, got, c.want)
		}
	}
}

// TestExpandRefusesLineRefs: a shaped text given line references is not
// expanded (an error at the reference's line), and a text that holds a
// line reading as one is not shaped.
func TestExpandRefusesLineRefs(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "%6d→line %d\n", i, i)
	}
	r := Shape(b.String(), Call{Tool: "Read"}, nil)
	if r.Class != Lossless {
		t.Fatalf("not shaped: %s", r.Why)
	}
	lines := strings.Split(r.Text, "\n")
	ref := `> [ref: toolu_01 (Read "a.go"), lines 1–9 of its result, byte-identical]`
	referred := strings.Join(append(append(lines[:1:1], ref), lines[10:]...), "\n")
	_, err := Expand(referred)
	var ee *ExpandError
	if !errors.As(err, &ee) || ee.Line != 2 {
		t.Fatalf("Expand of a text with a line reference: %v", err)
	}
	literal := strings.Replace(b.String(), "     5→line 5\n", ref+"\n", 1)
	if r := Shape(literal, Call{Tool: "Bash", Input: []byte(`{"command":"cat -n a.go"}`)}, nil); r.Text != literal {
		t.Errorf("a text holding a line reference was shaped: %q", r.Text[:80])
	}
}
