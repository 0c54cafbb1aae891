package shape_test

import (
	"context"
	"strings"
	"testing"

	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/internal/replay"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
)

// TestReplayTranscripts shapes the tool result of every transcript in the
// shared corpus (agent-sessions) and checks, for every one: a lossless
// result expands to the original byte for byte, a display result to its
// terminal view, an elision's chunks join back to the original, no anchor
// is lost; and it logs the tokens before and after per shape and in
// total, with the default read form and with each other one.
func TestReplayTranscripts(t *testing.T) {
	results := replay.Results(t)
	c := tokens.O200kBase()
	for _, form := range shape.ReadForms {
		t.Run(form, func(t *testing.T) {
			var tab replay.Table
			classes := map[string]int{}
			lost := 0
			// Elisions are kept in a memory store, and every one's chunks
			// are fetched and joined back.
			fo := &fit.Options{Store: &store.Mem{}, Counter: c, Budget: 1 << 20}
			ctx := context.Background()
			var handles []string
			o := &shape.Options{Counter: c, ReadForm: form, Keep: func(text string, ranges [][2]int) (string, error) {
				h, err := fit.StoreLines(ctx, text, ranges, fo)
				if err == nil {
					handles = append(handles, h)
				}
				return fit.FetchCommand(fo, h), err
			}}
			elided, joined := 0, 0
			for _, r := range results {
				res := shape.Shape(r.Text, shape.Call{Tool: r.Tool, Input: r.Input, WorkDir: r.WorkDir}, o)
				name := res.Shape
				if name == "" {
					name = "(unknown)"
				}
				before := c.Count(r.Text)
				after := before
				switch res.Class {
				case shape.None:
				case shape.Elide:
					after = res.ShapedTokens
					classes[res.Class.String()]++
					elided++
					got, err := replay.JoinChunks(func(n int) (string, error) {
						ch, err := fit.FetchChunk(ctx, handles[len(handles)-1], n, fo)
						return ch.Text, err
					})
					if err == nil && got == strings.TrimSuffix(r.Text, "\n") {
						joined++
					} else {
						t.Errorf("%s %s: the chunks of an elision do not join back to the original (%v)", r.File, r.Tool, err)
					}
					lost += res.Anchors.Lost
				default:
					after = res.ShapedTokens
					classes[res.Class.String()]++
					back, err := shape.Expand(res.Text)
					want := r.Text
					if res.Class == shape.Display {
						want = shape.TerminalView(r.Text)
					}
					if err != nil || back != want {
						t.Errorf("%s %s: expand differs from the original (%v)\n%s", r.File, r.Tool, err, res.Text[:min(len(res.Text), 400)])
					}
				}
				tab.Add(name, res.Class != shape.None, before, after)
			}
			t.Logf("\n%sclasses: %v; anchors lost: %d; elisions whose chunks join back to the original: %d of %d\n",
				tab.String(), classes, lost, joined, elided)
			if lost > 0 {
				t.Errorf("%d anchors lost", lost)
			}
		})
	}
}

// BenchmarkReplay shapes every result of the corpus transcripts.
func BenchmarkReplay(b *testing.B) {
	results := replay.Results(b)
	o := &shape.Options{Counter: tokens.Estimate()}
	size := 0
	for _, r := range results {
		size += len(r.Text)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range results {
			shape.Shape(r.Text, shape.Call{Tool: r.Tool, Input: r.Input, WorkDir: r.WorkDir}, o)
		}
	}
}
