package render

import (
	"hash/maphash"
	"os"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tree"
)

// TestDeterministic: the output does not depend on the process's hash
// seed or on map iteration order.
func TestDeterministic(t *testing.T) {
	files := corpus.Files(t, ".json")
	if len(files) > 40 {
		files = files[:40]
	}
	defer func(s maphash.Seed) { seed = s }(seed)
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			continue
		}
		var first string
		for i := range 3 {
			seed = maphash.MakeSeed()
			text, _, err := AutoDocument(v, &Options{SkipVerify: true})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = text
			} else if text != first {
				t.Fatalf("%s: two encodings differ", corpus.Name(p))
			}
		}
	}
}
