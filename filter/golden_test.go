package filter

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the want and report sections of testdata/notes/*.txtar")

// TestGolden runs testdata/notes/*.txtar. Each archive holds a spec (the
// Spec as JSON), an input, and the exact text the model reads ("want":
// note line and payload) plus a summary of the Report. The notes are API;
// run with -update after changing their wording on purpose.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/notes/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string][]byte{}
			for _, f := range ar.Files {
				sections[f.Name] = f.Data
			}
			var spec Spec
			dec := json.NewDecoder(bytes.NewReader(sections["spec.json"]))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&spec); err != nil {
				t.Fatalf("spec.json: %v", err)
			}
			r := mustCompile(t, spec)
			in := bytes.TrimSuffix(sections["input"], []byte("\n"))
			res, err := r.ApplyBytes(in, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{
				"want":   append(res.Append(nil), '\n'),
				"report": []byte(reportSummary(res.Report)),
			}
			if *update {
				var files []txtar.File
				for _, f := range ar.Files {
					if f.Name != "want" && f.Name != "report" {
						files = append(files, f)
					}
				}
				files = append(files, txtar.File{Name: "want", Data: got["want"]}, txtar.File{Name: "report", Data: got["report"]})
				ar.Files = files
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, name := range []string{"want", "report"} {
				if want, ok := sections[name]; !ok {
					t.Errorf("missing section %q (run with -update)", name)
				} else if !bytes.Equal(got[name], want) {
					t.Errorf("%s:\ngot:\n%s\nwant:\n%s", name, got[name], want)
				}
			}
		})
	}
}

func reportSummary(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "applied=%v root=%q detected=%v list=%v\n", r.Applied, r.Root, r.Detected, r.List)
	fmt.Fprintf(&b, "total=%d count=%d truncated_from=%d fields_omitted=%d nulls=%d empty=%d\n",
		r.Total, r.Count, r.TruncatedFrom, r.FieldsOmitted, r.NullsDropped, r.EmptyDropped)
	fmt.Fprintf(&b, "unmatched=%q lines=%d lines_kept=%d\n", r.Unmatched, r.Lines, r.LinesKept)
	fmt.Fprintf(&b, "bytes=%d->%d\n", r.OriginalBytes, r.ResultBytes)
	if r.Err != nil {
		fmt.Fprintf(&b, "err=%v\n", r.Err)
	}
	return b.String()
}
