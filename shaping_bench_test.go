package terse

import (
	"context"
	"strings"
	"testing"

	"github.com/terse-dev/terse/shape"
)

// BenchmarkProcessShaping measures a proxy call on a 100 KB numbered
// read with and without the shaping stage, in the same run: shaping must
// not be the slow part of the call. (Over its budget, the over-budget
// case: a read fitted as it is, not shaped.)
func BenchmarkProcessShaping(b *testing.B) {
	in := numberedRead(3000) // about 100 KB
	ctx := context.Background()
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
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				// A new string each time: the pipeline's count cache
				// would otherwise answer from memory.
				s := string(append([]byte(nil), in...))
				if _, err := p.ProcessString(ctx, s, &Request{Tool: "Read"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
