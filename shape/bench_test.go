package shape_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tokens"
)

// inputs of about 100 KB per shape, synthetic and deterministic.
func benchInputs() map[string]struct {
	call shape.Call
	text string
} {
	var read, paths, grep, log strings.Builder
	for i := 1; read.Len() < 100<<10; i++ {
		fmt.Fprintf(&read, "%6d→\tif err := step(%d); err != nil {\n", i, i)
	}
	for i := 0; paths.Len() < 100<<10; i++ {
		fmt.Fprintf(&paths, "/home/dev/project/internal/pkg%d/sub%d/file%d.go\n", i/50, i/10, i)
	}
	for i := 0; grep.Len() < 100<<10; i++ {
		fmt.Fprintf(&grep, "internal/pkg%d/file.go:%d:\treturn Checkpoint(%d)\n", i/20, i, i)
	}
	for i := 0; log.Len() < 100<<10; i++ {
		if i%7 == 0 {
			fmt.Fprintf(&log, "retrying connection\nretrying connection\nretrying connection\n")
		}
		fmt.Fprintf(&log, "/home/dev/project/cmd/x.go:%d: \x1b[33mwarning\x1b[0m: step %d\n", i, i)
	}
	return map[string]struct {
		call shape.Call
		text string
	}{
		"read":  {shape.Call{Tool: "Read"}, read.String()},
		"paths": {shape.Call{Tool: "Glob", WorkDir: "/home/dev/project"}, paths.String()},
		"grep":  {shape.Call{Tool: "Grep", Input: []byte(`{"output_mode":"content"}`)}, grep.String()},
		"log":   {shape.Call{Tool: "Bash", Input: []byte(`{"command":"make"}`), WorkDir: "/home/dev/project"}, log.String()},
	}
}

// BenchmarkShape measures each shaper on about 100 KB, with a plain copy
// of the same input as the baseline of the same run (copy/NAME). The
// counter is the estimate, so that the figure is the shaper's own cost
// (a pipeline counts the original anyway, through its count cache).
func BenchmarkShape(b *testing.B) {
	in := benchInputs()
	for _, name := range []string{"read", "read-tab", "read-sparse", "read-range", "paths", "grep", "log"} {
		kind, form, _ := strings.Cut(name, "-")
		x := in[kind]
		o := &shape.Options{Counter: tokens.Estimate(), ReadForm: form}
		b.Run("copy/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(x.text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = strings.Clone(x.text)
			}
		})
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(x.text)))
			b.ReportAllocs()
			for b.Loop() {
				if r := shape.Shape(x.text, x.call, o); r.Class == shape.None {
					b.Fatalf("%s not shaped: %s", name, r.Why)
				}
			}
		})
	}
}

// BenchmarkExpand measures expanding each shaped input.
func BenchmarkExpand(b *testing.B) {
	in := benchInputs()
	o := &shape.Options{Counter: tokens.Estimate()}
	for _, name := range []string{"read", "paths", "grep", "log"} {
		x := in[name]
		s := shape.Shape(x.text, x.call, o).Text
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := shape.Expand(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
