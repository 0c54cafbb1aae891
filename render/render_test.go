package render_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tree"
)

func TestTemplates(t *testing.T) {
	var diff strings.Builder
	diff.WriteString("@@ -10,40 +10,40 @@ func parse(s string) {\n")
	for i := range 40 {
		fmt.Fprintf(&diff, "-\tif s[%d] == '\"' {\n+\tif s[%d] == '\"' && !escaped {\n", i, i)
	}
	mr := tree.Object(
		tree.Member{Key: "iid", Value: tree.Int(3)},
		tree.Member{Key: "diffs", Value: tree.Array(tree.Object(
			tree.Member{Key: "old_path", Value: tree.String("parse.go")},
			tree.Member{Key: "new_path", Value: tree.String("parse.go")},
			tree.Member{Key: "diff", Value: tree.String(diff.String())},
		))},
	)
	v := mr
	text, formats, err := render.Encode(v, &render.Options{Template: render.MRDiffFence})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(formats, render.MRDiffFence) || !strings.Contains(text, "```diff\n@@ ") {
		t.Errorf("Encode(mr_diff_fence) formats %v, text:\n%s", formats, text)
	}
	if err := render.Verify(text, v); err != nil {
		t.Error(err)
	}
	if _, _, err := render.Encode(v, &render.Options{Template: "nope"}); err == nil {
		t.Error("unknown template: no error")
	}
	// A template that does not apply is plain auto.
	flat := tree.Object(tree.Member{Key: "a", Value: tree.Int(1)})
	if _, f, _ := render.Encode(flat, &render.Options{Template: render.MRDiffFence}); slices.Contains(f, render.MRDiffFence) {
		t.Errorf("template applied to %s", flat)
	}
}

func TestShapes(t *testing.T) {
	tests := []struct {
		in   string
		want render.Shape
	}{
		{`[{"a":1},{"a":2}]`, render.ShapeArrayOfObjects},
		{`[1,"x"]`, render.ShapeArray},
		{`{"a":{"b":1}}`, render.ShapeNestedObject},
		{`{"a":1,"b":"x"}`, render.ShapeFlatObject},
		{`[]`, render.ShapeEmpty},
		{`42`, render.ShapeScalar},
		{"| a | b |\n|---|---|\n| 1 | 2 |\n", render.ShapeMarkdownTable},
		{"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", render.ShapeDiff},
		{"text\n```go\nx := 1\n```\n", render.ShapeCode},
		{"2024-01-02T10:00:00Z start\n2024-01-02T10:00:01Z step\n2024-01-02T10:00:02Z done\n", render.ShapeLog},
		{"     1→package x\n     2→\n     3→func f() {}\n", render.ShapeFileListing},
		{"Just some words about things.\n", render.ShapeProse},
	}
	for _, tt := range tests {
		if got := render.Detect([]byte(tt.in)); got != tt.want {
			t.Errorf("Detect(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	v, _ := tree.ParseString(`{"u":"https://x.io/a","h":"8d3a9b0c41f2e7d6","n":"1234567","j":"{\"a\":1}","d":"@@ -1 +1 @@\n-a\n+b","s":"Traceback (most recent call last):\n  File x","m":"| a |\n|---|\n| 1 |","l":"2024-01-02 10:00:00 INFO x\n2024-01-02 10:00:01 INFO y"}`)
	got := strings.Join(render.InnerFormats(v), ",")
	if want := "diff,hash,json,log,md_table,stack_trace,url"; got != want {
		t.Errorf("InnerFormats = %s, want %s", got, want)
	}
}

func TestEncodeFormats(t *testing.T) {
	v, _ := tree.ParseString(`{"items":[{"id":1,"name":"a"},{"id":2,"name":"b"},{"id":3,"name":"c"}]}`)
	for _, f := range []render.Format{render.JSON, render.TOON, render.Auto} {
		text, _, err := render.Encode(v, &render.Options{Format: f})
		if err != nil {
			t.Fatalf("Encode(%s): %v", f, err)
		}
		for _, txt := range []string{text, text + "\n"} {
			got, err := render.Decode(txt)
			if err != nil || !tree.Equal(got, v) {
				t.Errorf("Decode(Encode(%s)) = %s, %v; want %s", f, got, err, v)
			}
		}
	}
	if _, _, err := render.Encode(v, &render.Options{Format: "yaml"}); err == nil {
		t.Error("unknown format: no error")
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, in := range []string{"", "a:", "[2]{a}:\n1", "@1 = {}\n@3 = {}\nx: 1", "~1 = http://x\nx: ~2/a", "x: @1", "x: ```\nunclosed", "a: 1\n    b: 2", "[1]{a,b}:\n1,2,3", "[1]{a=null}:\n"} {
		if v, err := render.Decode(in); err == nil {
			t.Errorf("Decode(%q) = %s, want an error", in, v)
		}
	}
}
