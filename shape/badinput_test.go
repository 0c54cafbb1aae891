package shape_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tokens"
)

// TestBadInput: binary, invalid UTF-8, a 50 MB line, a million lines and
// mixed CRLF are shaped or passed through, never a crash, and what is
// shaped expands back.
func TestBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	var million strings.Builder
	for i := range 1_000_000 {
		million.WriteString("     ")
		million.WriteByte(byte('0' + i%10))
		million.WriteString("→x\n")
	}
	var numbered strings.Builder
	for i := 1; i <= 1_000_000; i++ {
		fmt.Fprintf(&numbered, "%6d→\tline %d\r\n", i, i%97)
	}
	inputs := map[string]string{
		"million-numbered": numbered.String(),
		"crlf-read":        strings.Repeat("     1→a\r\n", 3) + "     2→b\r\n     3→\xff\r\n     4→c\r",
		"binary":           "\x00\x01\x02\xff\xfe" + strings.Repeat("\x00abc", 1000),
		"invalid":          strings.Repeat("\xff\xfe\xc3(\n", 200),
		"longline":         strings.Repeat("a", 50<<20),
		"million":          million.String(),
		"crlf":             strings.Repeat("     1→a\r\n     2→b\n/x/y/z\r\n", 200),
		"crlf-fold":        strings.Repeat("same\r\n", 300) + "other\n",
	}
	for name, text := range inputs {
		for _, call := range []shape.Call{{Tool: "Read"}, {Tool: "Bash", Input: []byte(`{"command":"x"}`)}, {Tool: "Glob"}, {}} {
			forms := []string{""}
			if call.Tool == "Read" {
				forms = shape.ReadForms
			}
			for _, form := range forms {
				r := shape.Shape(text, call, &shape.Options{Counter: tokens.Estimate(), ReadForm: form})
				if name == "million-numbered" && (form == shape.ReadSparse || form == shape.ReadRange) && (len(r.Rules) == 0 || r.Rules[0] != form) {
					t.Errorf("a million numbered lines in the %q form: rules %v (%s)", form, r.Rules, r.Why)
				}
				if r.Class == shape.Lossless {
					if back, err := shape.Expand(r.Text); err != nil || back != text {
						t.Errorf("%s as %s (%s): expand differs (%v)", name, call.Tool, form, err)
					}
				}
			}
		}
	}
}
