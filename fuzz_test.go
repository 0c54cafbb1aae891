package terse

import (
	"context"
	"errors"
	"testing"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// FuzzProcess feeds any bytes through pipelines with the dedup stage and a
// small budget, in each format: Process either fails with a positioned
// syntax error or returns a text within the budget whose savings add up;
// an untrimmed auto result decodes to the input.
func FuzzProcess(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `"x"`, `12.50`, `[1,2,3]`,
		`{"a":1,"b":[{"id":1,"url":"https://x.example/1"},{"id":2,"url":"https://x.example/2"}]}`,
		`[{"number":1,"title":"a","state":"open"},{"number":2,"title":"b","state":"closed","body":null}]`,
		"{\"a\": 1,\n \"b\": }",
		"[12:00:01] INFO start\n[12:00:02] ERROR boom\n",
		"{\"Action\":\"run\"}\n{\"Action\":\"pass\"}\n",
		"| a | b |\n|---|---|\n| 1 | 2 |\n",
		"plain text\nwith lines\n",
	} {
		f.Add([]byte(s), uint16(60))
	}
	cache := dedup.New(dedup.Options{MinBytes: 1})
	pipes := map[string]*Pipeline{}
	for _, format := range []string{"json", "toon", "auto"} {
		p, err := New(&Options{Format: format, Dedup: cache, Store: &store.Mem{}})
		if err != nil {
			f.Fatal(err)
		}
		pipes[format] = p
	}
	f.Fuzz(func(t *testing.T, data []byte, budget uint16) {
		ctx := context.Background()
		for format := range pipes {
			res, err := pipes[format].Process(ctx, data, &Request{Budget: int(budget)%2000 + 40,
				Session: dedup.Key{Session: "fuzz", Partition: format}})
			if err != nil {
				if _, ok := errors.AsType[*tree.SyntaxError](err); !ok {
					t.Fatalf("%s: Process error %T %v, want a *tree.SyntaxError", format, err, err)
				}
				return
			}
			checkReport(t, format, res)
			r := res.Report
			if format == "auto" && r.Kind == "json" && !r.Truncated && !r.Dedup {
				want, err := tree.Parse(data)
				if err != nil {
					t.Fatalf("JSON result from unparsable input: %v", err)
				}
				doc := stripIDLine(res.Text)
				back, err := render.Decode(doc)
				if err != nil || !tree.Equal(back, want) {
					t.Fatalf("auto output does not decode to the input (%v):\n%s", err, res.Text)
				}
				// Unmarked auto text is compact JSON or means the same
				// to strict TOON.
				if !render.Marked(doc) && doc != string(tree.AppendJSON(nil, want)) {
					if tv, err := toon.UnmarshalString(doc, nil); err == nil && !tree.Equal(tv, want) {
						t.Fatalf("unmarked auto output that TOON reads differently:\n%s", res.Text)
					}
				}
			}
		}
	})
}
