package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// TestEncodeLarge: values whose compact JSON is over a megabyte take the
// path that writes it once and lets it go while encoding; the text is
// still the cheapest candidate and decodes to the value.
func TestEncodeLarge(t *testing.T) {
	var objs, nums strings.Builder
	objs.WriteString(`[`)
	nums.WriteString(`[`)
	for i := range 200000 {
		if i > 0 {
			nums.WriteByte(',')
		}
		if i < 20000 {
			if i > 0 {
				objs.WriteByte(',')
			}
			fmt.Fprintf(&objs, `{"id":%d,"title":"item %d of the list","url":"https://example.com/a/b/%d","tags":["x","y"]}`, i, i, i)
		}
		fmt.Fprintf(&nums, `%d`, i*7919%100003)
	}
	objs.WriteString(`]`)
	nums.WriteString(`]`)
	long := `"` + strings.Repeat(`one line of text \ud83d\n`, 60000) + `"`
	for name, src := range map[string]string{"objects": objs.String(), "numbers": nums.String(), "string": long} {
		v, err := tree.ParseString(src)
		if err != nil {
			t.Fatal(err)
		}
		compact := string(tree.AppendJSON(nil, v))
		if len(compact) <= maxPooledBuf {
			t.Fatalf("%s: %d bytes, want over %d", name, len(compact), maxPooledBuf)
		}
		for _, o := range []*Options{{Counter: tokens.O200kBase()}, {Counter: tokens.O200kBase(), Unmarked: true}} {
			text, formats, err := Encode(v, o)
			if err != nil {
				t.Fatal(err)
			}
			if formats[0] == JSON && text != compact {
				t.Fatalf("%s: JSON format but the text is not compact JSON", name)
			}
			if c := o.Counter; c.Count(text) > c.Count(compact) {
				t.Fatalf("%s: more tokens than compact JSON", name)
			}
			got, err := Decode(text)
			if err != nil || !tree.Equal(got, v) {
				t.Fatalf("%s: round trip: %v", name, err)
			}
			t.Logf("%s: %v, %d of %d bytes", name, formats, len(text), len(compact))
		}
	}
}
