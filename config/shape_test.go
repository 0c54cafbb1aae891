package config

import (
	"strings"
	"testing"

	"github.com/terse-dev/terse/shape"
)

// TestShapeConfig: the [shape] table decodes into shaping options (on by
// default, per-tool rules in order) and bad values are errors at their
// key.
func TestShapeConfig(t *testing.T) {
	c, err := Parse([]byte(""), "empty")
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Shape.Options(); o == nil || o.Ceiling != shape.Elide {
		t.Fatalf("default shaping options: %+v", o)
	}
	c, err = Parse([]byte(`
[shape]
class = "display"
margin = 0.1
min_bytes = 100
read_form = "sparse"

[[shape.tools]]
match = "mcp__*"
enabled = false

[[shape.tools]]
match = "Bash"
class = "lossless"
margin = 0.2
`), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	o := c.Shape.Options()
	want := []shape.ToolRule{{Match: "mcp__*", Off: true}, {Match: "Bash", Ceiling: shape.Lossless, Margin: 0.2}}
	if o.Ceiling != shape.Display || o.Margin != 0.1 || o.MinBytes != 100 || o.ReadForm != shape.ReadSparse || len(o.Tools) != 2 || o.Tools[0] != want[0] || o.Tools[1] != want[1] {
		t.Errorf("options: %+v", o)
	}
	c, _ = Parse([]byte("[shape]\nenabled = false\n"), "off.toml")
	if c.Shape.Options() != nil {
		t.Error("shaping off still gives options")
	}
	for _, bad := range []struct{ src, key string }{
		{"[shape]\nclass = \"lossy\"\n", "shape.class"},
		{"[shape]\nmargin = 1.5\n", "shape.margin"},
		{"[shape]\nread_form = \"every10\"\n", "shape.read_form"},
		{"[[shape.tools]]\nmatch = \"[\"\n", "shape.tools.0.match"},
		{"[[shape.tools]]\nclass = \"elide\"\n", "shape.tools.0.match"},
		{"[[shape.pass_lines]]\npattern = \"(\"\nunit = \"specs passed\"\n", "shape.pass_lines.0.pattern"},
		{"[[shape.pass_lines]]\npattern = \"x\"\n", "shape.pass_lines.0.unit"},
	} {
		_, err := Parse([]byte(bad.src), "bad.toml")
		if err == nil || !strings.Contains(err.Error(), bad.key) {
			t.Errorf("%q: err %v, want one at %s", bad.src, err, bad.key)
		}
	}
}
