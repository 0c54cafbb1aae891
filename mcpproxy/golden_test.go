package mcpproxy

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
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
	for _, pol := range []Policy{{Reads: ReadsContent}, {Reads: ReadsStructured}} {
		o := (&Options{}).withDefaults()
		tools := map[string]toolInfo{}
		got["tools."+pol.Reads.String()+".json"] = indent(rewriteToolList(in["tools.json"], pol, &o, true, tools))
		e := newEngine(nil)
		var rec CallRecord
		res, err := e.transformResult(context.Background(), Call{Tool: "list_rows"}, pol, 0, in["result.json"], &rec)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Outcome != "transformed" {
			t.Errorf("%s: outcome %s, want transformed", pol.Reads, rec.Outcome)
		}
		got["result."+pol.Reads.String()+".json"] = indent(res)
	}
	c := &Compact{}
	out, err := c.Transform(context.Background(), &Call{Session: "s/0", Tool: "logs", Budget: 64}, strings.Repeat("line of a log file\n", 40))
	if err != nil {
		t.Fatal(err)
	}
	chunks := []string{out.Text}
	for i := 2; ; i++ {
		ch, err := c.Chunk(context.Background(), "s/0", "logs", "r1."+string(rune('0'+i)))
		if err != nil {
			break
		}
		chunks = append(chunks, ch)
	}
	got["chunks.txt"] = strings.Join(chunks, "\n-----\n") + "\n"

	if *update {
		var files []txtar.File
		for _, f := range ar.Files {
			if _, ok := in[f.Name]; ok {
				files = append(files, f)
			}
		}
		for _, name := range []string{"tools.content.json", "tools.structured.json", "result.content.json", "result.structured.json", "chunks.txt"} {
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
