package terse_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tree"
)

// TestJSONDocuments: a text result made of several JSON documents (the
// output of a shell command running several "gh api" calls) is written
// as each document's auto encoding after its line, and decodes back to
// the documents; a text with anything else in it is not.
func TestJSONDocuments(t *testing.T) {
	p, err := terse.New(&terse.Options{Format: "auto", Shape: &shape.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for k := range 3 {
		var items []string
		for i := range 8 {
			items = append(items, fmt.Sprintf(`{"id":%d,"login":"user%d","state":"open","url":"https://api.github.com/repos/o/r/pulls/%d"}`, 100*k+i, i, i))
		}
		docs = append(docs, `{"total":8,"items":[`+strings.Join(items, ",")+`]}`)
	}
	for _, text := range []string{strings.Join(docs, ""), strings.Join(docs, "\n") + "\n"} {
		res, err := p.ProcessText(context.Background(), text, &terse.Request{Tool: "Bash", ToolInput: `{"command":"gh api a; gh api b; gh api c"}`})
		if err != nil {
			t.Fatal(err)
		}
		if rep := res.Report; rep.Shape != "json" || rep.ShapeClass != "lossless" || rep.Format != "auto" {
			t.Fatalf("report %+v\n%s", rep, res.Text)
		}
		if !strings.HasPrefix(res.Text, "> [JSON document 1 of 3]\n") || !strings.Contains(res.Text, "\n> [JSON document 3 of 3]\n") {
			t.Errorf("text:\n%s", res.Text)
		}
		back, err := terse.DecodeJSONDocuments(res.Text)
		if err != nil || len(back) != 3 {
			t.Fatalf("decode: %v (%d documents)", err, len(back))
		}
		for i, d := range docs {
			if v, _ := tree.ParseString(d); !tree.Equal(v, back[i]) {
				t.Errorf("document %d differs", i+1)
			}
		}
	}
	off, err := terse.New(&terse.Options{Format: "auto", Shape: &shape.Options{Tools: []shape.ToolRule{{Match: "Bash", Off: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := off.ProcessText(context.Background(), strings.Join(docs, ""), &terse.Request{Tool: "Bash"}); err != nil || res.Report.Shape == "json" {
		t.Errorf("shaping off for the tool, yet JSON documents (err %v)", err)
	}
	mixed := strings.Join(docs, "\n") + "\ngh: Not Found (HTTP 404)\n"
	res, err := p.ProcessText(context.Background(), mixed, &terse.Request{Tool: "Bash"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Shape == "json" || strings.Contains(res.Text, "JSON document") {
		t.Errorf("a text with more than JSON documents was encoded as them:\n%s", res.Text)
	}
}

// FuzzDecodeJSONDocuments: the reader never panics, and what it accepts
// is stable (the documents it returns encode and decode to themselves).
func FuzzDecodeJSONDocuments(f *testing.F) {
	f.Add("> [JSON document 1 of 2]\n{\"a\":1}\n> [JSON document 2 of 2]\n[1,2]")
	f.Add("> [JSON document 1 of 1]\na: 1")
	f.Add("> [JSON document 1 of 3]\n> [JSON document 2 of 3]\n")
	f.Add("> [JSON document 1 of 999999999999]\n")
	f.Fuzz(func(t *testing.T, text string) {
		docs, err := terse.DecodeJSONDocuments(text)
		if err != nil {
			return
		}
		for _, d := range docs {
			if _, err := tree.Parse(tree.AppendJSON(nil, d)); err != nil {
				t.Fatalf("decoded a document that is not JSON: %v", err)
			}
		}
	})
}

// FuzzJSONDocuments: whenever a text is written as JSON documents, they
// decode to the text's own documents.
func FuzzJSONDocuments(f *testing.F) {
	f.Add(`{"a":[1,2,3],"b":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}{"a":[4,5,6],"b":"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"}`)
	f.Add("[{\"id\":1,\"n\":\"a\"},{\"id\":2,\"n\":\"b\"},{\"id\":3,\"n\":\"c\"},{\"id\":4,\"n\":\"d\"},{\"id\":5,\"n\":\"e\"},{\"id\":6,\"n\":\"f\"},{\"id\":7,\"n\":\"g\"}]\n[{\"id\":1,\"n\":\"a\"},{\"id\":2,\"n\":\"b\"},{\"id\":3,\"n\":\"c\"},{\"id\":4,\"n\":\"d\"},{\"id\":5,\"n\":\"e\"},{\"id\":6,\"n\":\"f\"},{\"id\":7,\"n\":\"g\"}]\n")
	p, err := terse.New(&terse.Options{Format: "auto", Shape: &shape.Options{Margin: -1}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		res, err := p.ProcessText(context.Background(), text, &terse.Request{Tool: "Bash"})
		if err != nil || res.Report.Shape != "json" {
			return
		}
		docs, err := terse.DecodeJSONDocuments(res.Text)
		if err != nil {
			t.Fatalf("decode: %v\n%s", err, res.Text)
		}
		var want []string
		for _, d := range docs {
			want = append(want, string(tree.AppendJSON(nil, d)))
		}
		// The text's own documents, compacted, in order.
		orig := strings.TrimSpace(text)
		joined := strings.Join(want, "")
		if compact(orig) != compact(joined) {
			t.Fatalf("documents differ from the text's:\n%s\n%s", orig, joined)
		}
	})
}

// compact is s's JSON documents written compactly, one after the other.
func compact(s string) string {
	var b strings.Builder
	dec := json.NewDecoder(strings.NewReader(s))
	for {
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return b.String()
		}
		v, err := tree.Parse(raw)
		if err != nil {
			return b.String()
		}
		b.Write(tree.AppendJSON(nil, v))
	}
}

// TestJSONDocumentsGolden pins the in-band text of JSON documents in a
// text (testdata/json-documents.txtar: input, want); -update rewrites it.
func TestJSONDocumentsGolden(t *testing.T) {
	const file = "testdata/json-documents.txtar"
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var in string
	for _, f := range a.Files {
		if f.Name == "input" {
			in = string(f.Data)
		}
	}
	p, err := terse.New(&terse.Options{Format: "auto", Shape: &shape.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.ProcessText(context.Background(), in, &terse.Request{Tool: "Bash", ToolInput: `{"command":"gh api a && gh api b"}`})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Text + "\n"
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		a.Files = []txtar.File{{Name: "input", Data: []byte(in)}, {Name: "want", Data: []byte(got)}}
		if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, f := range a.Files {
		if f.Name == "want" && string(f.Data) != got {
			t.Errorf("got:\n%s\nwant:\n%s", got, f.Data)
		}
	}
}
