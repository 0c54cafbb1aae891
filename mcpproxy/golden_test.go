package mcpproxy

import (
	"bytes"
	"context"
	"flag"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/terse-dev/terse/tree"
)

var update = flag.Bool("update", false, "rewrite generated files in testdata/*.txtar")

func TestGolden(t *testing.T) {
	const file = "testdata/inband.txtar"
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]tree.Value{}
	for _, f := range ar.Files {
		if f.Name == "tools.json" || f.Name == "result.json" {
			v, err := tree.Parse(f.Data)
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			in[f.Name] = v
		}
	}
	got := map[string]string{}
	indent := func(v tree.Value) string { return string(tree.AppendIndent(nil, v, " ")) + "\n" }
	for _, pol := range []Policy{{Reads: ReadsContent}, {Reads: ReadsStructured, SpillChars: 50000}} { // the second as Claude Code
		o := (&Options{}).withDefaults()
		tools := map[string]toolInfo{}
		list, _, _ := rewriteToolList(in["tools.json"], pol, &o, true, tools, o.Counter)
		got["tools."+pol.Reads.String()+".json"] = indent(list)
		e := newEngine(nil)
		var rec CallRecord
		res, err := e.finish(context.Background(), &call{tool: "list_rows"}, pol, tree.AppendJSON(nil, in["result.json"]), &rec)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Outcome != "transformed" {
			t.Errorf("%s: outcome %s, want transformed", pol.Reads, rec.Outcome)
		}
		v, err := tree.Parse(res)
		if err != nil {
			t.Fatal(err)
		}
		got["result."+pol.Reads.String()+".json"] = indent(v)
	}

	if *update {
		var files []txtar.File
		for _, f := range ar.Files {
			if _, ok := in[f.Name]; ok {
				files = append(files, f)
			}
		}
		for _, name := range []string{"tools.content.json", "tools.structured.json", "result.content.json", "result.structured.json"} {
			files = append(files, txtar.File{Name: name, Data: []byte(got[name])})
		}
		ar.Files = files
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, f := range ar.Files {
		if _, ok := in[f.Name]; ok {
			continue
		}
		if g, ok := got[f.Name]; !ok || !bytes.Equal([]byte(g), f.Data) {
			t.Errorf("%s differs from %s (run go test -run Golden -update to see):\ngot:\n%s\nwant:\n%s", f.Name, file, g, f.Data)
		}
		delete(got, f.Name)
	}
	for name := range got {
		t.Errorf("%s missing from %s (run go test -run Golden -update)", name, file)
	}
}
