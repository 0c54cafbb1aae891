package shape_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tune"
)

// TestReplayTranscripts shapes the tool result of every transcript in the
// shared corpus (agent-sessions) and checks, for every one: a lossless
// result expands to the original byte for byte, a display result to its
// terminal view, no anchor is lost; and it logs the tokens before and
// after per shape and in total.
func TestReplayTranscripts(t *testing.T) {
	dir := corpus.Dir(t, "corpus/agent-sessions")
	files, err := tune.LogFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := tune.ReadLogs(files)
	if err != nil {
		t.Fatal(err)
	}
	c := tokens.O200kBase()
	type row struct{ n, changed, before, after int }
	rows := map[string]*row{}
	classes := map[string]int{}
	var total row
	lost := 0
	// Elisions are kept in a memory store, and every one's chunks are
	// fetched and joined back.
	st := &store.Mem{}
	fo := &fit.Options{Store: st, Counter: c, Budget: 1 << 20}
	ctx := context.Background()
	var handles []string
	o := &shape.Options{Counter: c, Keep: func(text string, ranges [][2]int) (string, error) {
		h, err := fit.StoreLines(ctx, text, ranges, fo)
		if err == nil {
			handles = append(handles, h)
		}
		return fit.FetchCommand(fo, h), err
	}}
	elided, joined := 0, 0
	for _, s := range logs.Sessions {
		for _, r := range s.Results {
			res := shape.Shape(r.Text, shape.Call{Tool: r.Tool, Input: r.Input, WorkDir: r.WorkDir}, o)
			name := res.Shape
			if name == "" {
				name = "(unknown)"
			}
			w := rows[name]
			if w == nil {
				w = &row{}
				rows[name] = w
			}
			before := c.Count(r.Text)
			after := before
			if res.Class != shape.None {
				after = res.ShapedTokens
				w.changed++
				total.changed++
				classes[res.Class.String()]++
				if res.Class == shape.Elide {
					elided++
					if joinChunks(t, ctx, handles[len(handles)-1], fo) == strings.TrimSuffix(r.Text, "\n") {
						joined++
					} else {
						t.Errorf("%s %s: the chunks of an elision do not join back to the original", s.File, r.Tool)
					}
					lost += res.Anchors.Lost
					goto counted
				}
				back, err := shape.Expand(res.Text)
				if err != nil {
					t.Errorf("%s %s: expand: %v", s.File, r.Tool, err)
					continue
				}
				want := r.Text
				if res.Class == shape.Display {
					want = shape.TerminalView(r.Text)
				}
				if back != want {
					t.Errorf("%s %s: expand differs from the original\n%s", s.File, r.Tool, res.Text[:min(len(res.Text), 400)])
				}
				lost += res.Anchors.Lost
			}
		counted:
			w.n++
			w.before += before
			w.after += after
			total.n++
			total.before += before
			total.after += after
		}
	}
	names := make([]string, 0, len(rows))
	for k := range rows {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-10s %6s %8s %9s %9s %7s\n", "shape", "results", "changed", "before", "after", "saved")
	for _, k := range names {
		w := rows[k]
		fmt.Fprintf(&sb, "%-10s %6d %8d %9d %9d %6.1f%%\n", k, w.n, w.changed, w.before, w.after, 100*float64(w.before-w.after)/float64(max(1, w.before)))
	}
	fmt.Fprintf(&sb, "%-10s %6d %8d %9d %9d %6.1f%%\n", "total", total.n, total.changed, total.before, total.after, 100*float64(total.before-total.after)/float64(max(1, total.before)))
	fmt.Fprintf(&sb, "classes: %v; anchors lost: %d; elisions whose chunks join back to the original: %d of %d\n", classes, lost, joined, elided)
	t.Log("\n" + sb.String())
	if lost > 0 {
		t.Errorf("%d anchors lost", lost)
	}
}

var chunkHead = regexp.MustCompile(`^> \[chunk \d+ of (\d+) of \S+: lines? \d+(–\d+)? of \d+, in full\]\n`)

// joinChunks fetches every chunk of handle and joins their lines.
func joinChunks(t *testing.T, ctx context.Context, handle string, fo *fit.Options) string {
	t.Helper()
	var parts []string
	for n := 1; ; n++ {
		ch, err := fit.FetchChunk(ctx, handle, n, fo)
		if err != nil {
			t.Fatalf("chunk %d of %s: %v", n, handle, err)
		}
		m := chunkHead.FindStringSubmatch(ch.Text)
		if m == nil || !ch.Whole {
			t.Fatalf("chunk %d of %s: unexpected text %q", n, handle, ch.Text[:min(200, len(ch.Text))])
		}
		parts = append(parts, ch.Text[len(m[0]):])
		if total, _ := strconv.Atoi(m[1]); n == total {
			return strings.Join(parts, "\n")
		}
	}
}
