package inband

import "testing"

// TestParseOverlappingAffixes: a line whose family's opening and closing
// words share a space ("> [the result of" + " follows, as sent]") is
// read without panicking: the words must not overlap.
func TestParseOverlappingAffixes(t *testing.T) {
	for _, l := range []string{
		"> [ref: of its result, byte-identical]",
		"> [the result of follows, as sent]",
		"> [ref:, byte-identical]",
		"> [id:]",
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Parse(%q) panics: %v", l, r)
				}
			}()
			if v, err := Parse(l); err == nil && v.String() != l {
				t.Errorf("Parse(%q) = %#v, written %q", l, v, v.String())
			}
		}()
	}
}
