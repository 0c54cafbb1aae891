package terse

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/terse-dev/terse/shape"
)

// shapingInputs are about 100 KB each of a numbered read, a path list
// and a log with escape codes, with the call that produced them.
func shapingInputs() []struct {
	name, text string
	req        Request
} {
	var paths, log strings.Builder
	for i := 0; paths.Len() < 100<<10; i++ {
		fmt.Fprintf(&paths, "/home/dev/project/internal/pkg%d/sub%d/file%d.go\n", i/50, i/10, i)
	}
	for i := 0; log.Len() < 100<<10; i++ {
		if i%7 == 0 {
			fmt.Fprintf(&log, "retrying connection\nretrying connection\nretrying connection\n")
		}
		fmt.Fprintf(&log, "/home/dev/project/cmd/x.go:%d: \x1b[33mwarning\x1b[0m: step %d\n", i, i)
	}
	return []struct {
		name, text string
		req        Request
	}{
		{"read", numberedRead(3000), Request{Tool: "Read"}},
		{"paths", paths.String(), Request{Tool: "Glob", WorkDir: "/home/dev/project"}},
		{"log", log.String(), Request{Tool: "Bash", ToolInput: `{"command":"make"}`, WorkDir: "/home/dev/project"}},
	}
}

// BenchmarkProcessShaping measures a proxy call on about 100 KB of each
// input with and without the shaping stage, and a plain copy of the
// input, in the same run: shaping must not be the slow part of the call
// (shaped − plain, against copy). Over its budget, a text is fitted as
// it is, not shaped.
func BenchmarkProcessShaping(b *testing.B) {
	ctx := context.Background()
	for _, in := range shapingInputs() {
		b.Run(in.name+"/copy", func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = string(append([]byte(nil), in.text...))
			}
		})
		for _, name := range []string{"plain", "shaped", "plain-over-budget", "shaped-over-budget"} {
			o := &Options{Format: "auto", Budget: 1 << 20}
			if strings.HasSuffix(name, "over-budget") {
				o.Budget = 0
			}
			if strings.HasPrefix(name, "shaped") {
				o.Shape = &shape.Options{}
			}
			p, err := New(o)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(in.name+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(in.text)))
				b.ReportAllocs()
				for b.Loop() {
					// A new string each time: the pipeline's count cache
					// would otherwise answer from memory.
					s := string(append([]byte(nil), in.text...))
					req := in.req
					if _, err := p.ProcessString(ctx, s, &req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
