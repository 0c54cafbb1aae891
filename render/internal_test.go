package render

import (
	"fmt"
	"hash/maphash"
	"os"
	"slices"
	"strings"
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

// TestKeepWritten: a large document's chooser keeps only the choices the
// writer looks up, and those are all it looks up (it never chooses a
// remembered container again), and flat containers, which are not
// remembered, are chosen again as they were, whatever the shape:
// tables, lists of blocks, nested blocks, legend references in lists and
// cells, and the corpus's documents repeated until they are large.
func TestKeepWritten(t *testing.T) {
	row := func(i int) string {
		return fmt.Sprintf(`{"id":%d,"user":{"login":"u%d","site_admin":false,"url":"https://x.io/u/%d"},"tags":["a","b%d"],"note":"line one\nline two of a note long enough to be fenced off as a block %d"}`, i, i%7, i%7, i%3, i)
	}
	// A list of blocks (fenced bodies), some items legend references.
	var rows, items []string
	body := strings.Repeat(`a line of text in the body\n`, 12)
	for i := range 3000 {
		rows = append(rows, row(i))
		switch {
		case i%7 == 0:
			items = append(items, `{"same":"an item repeated often enough to be a legend entry","n":[1,2,3]}`)
		case i%2 == 0:
			items = append(items, fmt.Sprintf(`{"id":%d,"name":"name %d","meta":{"body":"%s%d","c":[%d,"x"]}}`, i, i, body, i, i))
		default: // keys in another order: no table
			items = append(items, fmt.Sprintf(`{"name":"name %d","id":%d,"meta":{"body":"%s%d","c":[%d,"x"]}}`, i, i, body, i, i))
		}
	}
	check := func(t *testing.T, name, doc string) {
		v, err := tree.ParseString(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []Options{{}, {NoFactor: true}} {
			e := newAutoEncoder(&o)
			e.forgetFlat = true
			e.prepare(v)
			n := len(e.memo)
			text := string(e.write(nil, v))
			e.formats(v)
			if len(e.memo) != n {
				t.Errorf("%s: the writer chose %d forms again (%d kept)", name, len(e.memo)-n, n)
			}
			// Flat containers, chosen again rather than remembered, get
			// the choices they get when remembered.
			ref := newAutoEncoder(&o)
			if want := string(ref.encode(nil, v)); text != want || !slices.Equal(e.formats(v), ref.formats(v)) {
				t.Errorf("%s: flat containers chosen again change the document", name)
			}
			ref.release()
			// Repeated whole documents are references that expand far.
			if got, err := (&DecodeOptions{MaxExpansion: 1 << 20, MaxExpandedBytes: 1 << 40}).Decode(text); err != nil || !tree.Equal(got, v) {
				t.Errorf("%s: the document does not decode to its value: %v", name, err)
			}
			e.release()
		}
	}
	check(t, "table", "["+strings.Join(rows, ",")+"]")
	check(t, "list", `{"data":{"items":[`+strings.Join(items, ",")+`]},"rows":[`+strings.Join(rows[:50], ",")+`]}`)
	t.Run("corpus", func(t *testing.T) {
		files := corpus.Files(t, ".json")
		n := 0
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tree.Parse(data); err != nil {
				continue
			}
			// Repeated until large.
			check(t, corpus.Name(p), "["+strings.Repeat(string(data)+",", 1+4096/(1+strings.Count(string(data), "{")))+"1]")
			if n++; n == 10 {
				break
			}
		}
	})
}
