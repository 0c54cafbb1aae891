package telemetry

import "testing"

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		in    string
		shape Shape
		inner Inner
		depth uint8
		cols  uint16
	}{
		{`{}`, ShapeEmpty, 0, 1, 0},
		{`[]`, ShapeEmpty, 0, 1, 0},
		{`{"a":1,"b":"x"}`, ShapeFlatObject, 0, 1, 0},
		{`{"a":{"b":[1]}}`, ShapeNestedObject, 0, 3, 0},
		{` [{"id":1,"url":"https://x.test/a"},{"id":2}]`, ShapeArrayOfObjects, InURL, 2, 0},
		{`[1,2,"three"]`, ShapeArrayOfPrimitives, 0, 1, 0},
		{`["a",{"b":1}]`, ShapeNestedObject, 0, 2, 0},
		{`{"sha":"9fceb02d0ae598e95dc970b74767f19372d61af8","log":"x\n2024-01-02T10:00:01 ok","at":"2024-01-02T10:00:01Z"}`, ShapeFlatObject, InHash | InLog, 1, 0},
		{`{"created_at":"2024-01-02T10:00:01Z"}`, ShapeFlatObject, 0, 1, 0},
		{"{\"a\":1}\n{\"a\":2}\n", ShapeProse, 0, 0, 0},
		{"| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n", ShapeMarkdownTable, InMarkdownTable, 0, 3},
		{"diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n", ShapeDiff, InDiff, 0, 0},
		{"     1→package main\n     2→\n     3→func main() {}\n", ShapeNumberedList, 0, 0, 0},
		{"- a\n- b\n- c\n", ShapeBulletList, 0, 0, 0},
		{"2024-01-02 10:00:01 start\n2024-01-02 10:00:02 run\n2024-01-02 10:00:03 stop\n", ShapeLog, InLog, 0, 0},
		{"```go\nx\n```\n", ShapeCodeBlock, InCodeFence, 0, 0},
		{"hello world, order 12345678", ShapeProse, 0, 0, 0},
		{"", ShapeEmpty, 0, 0, 0},
		{`{"a": "unterminated`, ShapeProse, 0, 0, 0},
	} {
		f := Detect([]byte(c.in))
		if f.Shape != c.shape || f.Inner != c.inner || f.Depth != c.depth || f.Cols != c.cols {
			t.Errorf("Detect(%q) = %v %v depth %d cols %d, want %v %v %d %d", c.in, f.Shape, f.Inner.Names(), f.Depth, f.Cols, c.shape, c.inner.Names(), c.depth, c.cols)
		}
	}
}

func FuzzDetect(f *testing.F) {
	f.Add([]byte(`{"a":[{"b":"https://x"}]}`))
	f.Add([]byte("| a |\n|---|\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ft := Detect(data)
		if ft.Shape >= numShapes {
			t.Fatalf("shape %d", ft.Shape)
		}
	})
}
