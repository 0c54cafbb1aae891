package render_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tree"
)

// TestFormatDoc decodes the first example of docs/format.md and compares
// it with the JSON the page says it decodes to.
func TestFormatDoc(t *testing.T) {
	data, err := os.ReadFile("../docs/format.md")
	if err != nil {
		t.Skip(err)
	}
	blocks := regexp.MustCompile("(?s)```(json)?\n(.*?)\n```").FindAllStringSubmatch(string(data), 2)
	if len(blocks) < 2 || blocks[1][1] != "json" {
		t.Fatal("docs/format.md: want an auto example followed by its JSON")
	}
	got, err := render.Decode(blocks[0][2])
	if err != nil {
		t.Fatalf("Decode(example): %v", err)
	}
	want, err := tree.ParseString(strings.TrimSpace(blocks[1][2]))
	if err != nil {
		t.Fatal(err)
	}
	if !tree.Equal(got, want) {
		t.Errorf("example decodes to\n%s\nwant\n%s", got, want)
	}
}
