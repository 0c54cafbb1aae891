package render_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tree"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestGolden pins the auto document of small inputs, one per form: the
// text models read is API. Each NAME.json section is encoded (estimate
// counter, no TOON) and compared with NAME.auto; -update rewrites them.
func TestGolden(t *testing.T) {
	const path = "testdata/auto.txtar"
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, f := range ar.Files {
		want[f.Name] = string(f.Data)
	}
	var out []txtar.File
	for _, f := range ar.Files {
		name, ok := strings.CutSuffix(f.Name, ".json")
		if !ok {
			continue
		}
		v, err := tree.Parse(f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		var opts render.Options
		if strings.HasPrefix(name, "fence") {
			opts.FenceKeys = []string{"diff"}
		}
		text, formats, err := render.AutoDocument(v, &opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := "# formats: " + formatList(formats) + "\n" + text + "\n"
		out = append(out, f, txtar.File{Name: name + ".auto", Data: []byte(got)})
		if !*update && want[name+".auto"] != got {
			t.Errorf("%s: auto document\n%s\nwant\n%s", name, got, want[name+".auto"])
		}
	}
	if *update {
		ar.Files = out
		if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func formatList(fs []render.Format) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}
