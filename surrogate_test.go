package terse

import (
	"context"
	"strings"
	"testing"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tree"
)

// TestLoneSurrogatesPipeline: a result with lone surrogate escapes keeps
// them byte for byte in JSON output, and auto output keeps its saving and
// decodes to the identical tree, as the proxy relays them.
func TestLoneSurrogatesPipeline(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[`)
	for i := range 30 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":` + string(rune('0'+i%10)) + `,"state":"open","title":"cut emoji \ud83d here","body":"low \udc00 and a literal \\ud83d"}`)
	}
	b.WriteString(`]`)
	src := b.String()
	v, _ := tree.ParseString(src)
	for _, format := range []string{"json", "auto"} {
		p, err := New(&Options{Format: format})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Process(context.Background(), []byte(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		if format == "json" {
			if res.Text != src {
				t.Fatalf("json: output differs from the input:\n%s", res.Text)
			}
			continue
		}
		if res.Report.Saved.Encoding <= 0 || strings.HasPrefix(res.Text, "[") {
			t.Fatalf("auto: no encoding saving (%+v):\n%s", res.Report.Saved, res.Text)
		}
		got, err := render.Decode(res.Text)
		if err != nil || !tree.Equal(got, v) {
			t.Fatalf("auto: round trip: %v\n%s", err, res.Text)
		}
		if js := string(tree.AppendJSON(nil, got)); js != src {
			t.Fatalf("auto: decoded JSON differs:\n%s", js)
		}
	}
}
