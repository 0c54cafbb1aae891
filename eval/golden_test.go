package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/terse-dev/terse/tokens"
)

var update = flag.Bool("update", false, "rewrite testdata/report.txtar")

// flakyReader answers like the decode reader, except for the questions it
// is told to get wrong in each encoding: a fixed pattern of mistakes gives
// the paired statistics something to report.
type flakyReader struct {
	wrong map[string]map[string]bool // encoding → question IDs
}

func (flakyReader) Name() string { return "decode (with planted mistakes)" }

func (f flakyReader) Answer(ctx context.Context, r *Request) (Reply, error) {
	if f.wrong[r.Encoding][r.Question.ID] {
		return Reply{Text: "I could not find it"}, nil
	}
	return DecodeReader{}.Answer(ctx, r)
}

// TestGoldenReport pins the questions, grades and report (Markdown, JSON,
// SVG) for the testdata documents at seed 1. Run with -update to rewrite.
func TestGoldenReport(t *testing.T) {
	docs := testdataDocs(t)
	var qs []Question
	for _, d := range docs {
		qs = append(qs, Generate(d, 10, 1)...)
	}
	c := tokens.O200kBase()
	compact, err := ParseEncoding("compact:400", c)
	if err != nil {
		t.Fatal(err)
	}
	reader := flakyReader{wrong: map[string]map[string]bool{
		"toon": {"issues.json#2": true, "issues.json#5": true, "issues.json#7": true, "package.json#3": true},
		"auto": {"issues.json#4": true},
		"json": {"package.json#1": true},
	}}
	plan, err := Prepare(context.Background(), Config{
		Docs: docs, Questions: qs, Encodings: []Encoding{JSONEncoding(), RenderEncoding("toon", c), RenderEncoding("auto", c), compact},
		Reader: reader, Counter: c, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := plan.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var qbuf, md, js, svg bytes.Buffer
	enc := json.NewEncoder(&qbuf)
	enc.SetEscapeHTML(false)
	for _, q := range qs {
		enc.Encode(q)
	}
	rep.WriteMarkdown(&md)
	rep.WriteJSON(&js)
	rep.WriteSVG(&svg)
	got := &txtar.Archive{
		Comment: []byte("Golden eval report: the questions generated from testdata/docs at seed 1,\n" +
			"asked in json, toon, auto and compact:400 by the decode reader with planted\n" +
			"mistakes (toon 4, auto 1, json 1). Regenerate with go test ./eval -run TestGoldenReport -update.\n"),
		Files: []txtar.File{
			{Name: "questions.jsonl", Data: qbuf.Bytes()},
			{Name: "report.md", Data: md.Bytes()},
			{Name: "report.json", Data: js.Bytes()},
			{Name: "chart.svg", Data: svg.Bytes()},
		},
	}
	const path = "testdata/report.txtar"
	if *update {
		if err := os.WriteFile(path, txtar.Format(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	want := txtar.Parse(data)
	for i, f := range want.Files {
		if i >= len(got.Files) || got.Files[i].Name != f.Name {
			t.Fatalf("golden file %d is %s; test writes different sections", i, f.Name)
		}
		if d := cmp.Diff(string(f.Data), string(got.Files[i].Data)); d != "" {
			t.Errorf("%s differs (-want +got):\n%s", f.Name, d)
		}
	}
	// The planted mistakes show up as they should.
	for _, e := range rep.Encodings {
		switch e.Name {
		case "toon":
			if e.Paired.BaselineOnly != 4 || e.Paired.EncodingOnly != 1 {
				t.Errorf("toon discordant pairs = %d↓ %d↑, want 4↓ 1↑", e.Paired.BaselineOnly, e.Paired.EncodingOnly)
			}
		case "compact":
			if e.NotShown == 0 || !strings.Contains(md.String(), "compact:400") {
				t.Errorf("compact:400 shows everything; want a budget that leaves items out")
			}
		}
	}
}
