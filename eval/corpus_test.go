package eval

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// corpusDocs loads the corpus's JSON documents (skipping when absent).
func corpusDocs(t *testing.T) []Document { return corpusDocsTB(t) }

func corpusDocsTB(t testing.TB) []Document {
	t.Helper()
	var docs []Document
	for _, p := range corpus.Files(t, ".json") {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tree.Parse(data)
		if err != nil {
			continue // a few .json files are JSON Lines
		}
		docs = append(docs, Document{Name: corpus.Name(p), Value: v})
	}
	return docs
}

// TestCorpusDecode is the end-to-end check of questions, gold answers,
// encodings and grading: the decode reader must answer every question on
// every lossless encoding, and on the budgeted compact exactly the
// questions whose answers the fitted text shows.
func TestCorpusDecode(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes the whole corpus")
	}
	docs := corpusDocs(t)
	var qs []Question
	for _, d := range docs {
		qs = append(qs, Generate(d, corpusQuestions, corpusSeed)...)
	}
	c := tokens.O200kBase()
	encs := []Encoding{JSONEncoding(), RenderEncoding("toon", c), RenderEncoding("auto", c), CompactEncoding("compact", 0, "", c), CompactEncoding("compact:1000@json", 1000, "json", c), CompactEncoding("compact:1000@toon", 1000, "toon", c)}
	plan, err := Prepare(context.Background(), Config{Docs: docs, Questions: qs, Encodings: encs, Reader: DecodeReader{}, Counter: c, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := plan.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
	}
	t.Logf("%d documents, %d questions %v", len(docs), len(qs), kinds)
	for _, e := range rep.Encodings {
		t.Logf("%-8s accuracy %s (%d/%d), not shown %d, tokens %d", e.Name, pct(e.Accuracy), e.Correct, e.Questions, e.NotShown, e.DocTokens)
		if e.Correct != e.Questions {
			n := 0
			for _, r := range rep.Results {
				if r.Encoding == e.Name && !r.Correct && n < 10 {
					n++
					t.Errorf("%s %s (%s): reply %q, gold %q %q, err %s", e.Name, r.Question, r.Kind, r.Reply, r.Gold, r.Also, r.Error)
				}
			}
		}
	}
	// On compact, "not shown" is answered exactly when it is the gold.
	shown, hidden := 0, 0
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.Encoding, "compact") {
			continue
		}
		if (Normalize(r.Reply) == NotShown) != (r.Gold == NotShown) {
			t.Errorf("%s %s: reply %q, gold %q", r.Encoding, r.Question, r.Reply, r.Gold)
		}
		if r.Gold == NotShown {
			hidden++
		} else {
			shown++
		}
	}
	t.Logf("compact: %d questions shown, %d not shown", shown, hidden)
	if shown == 0 || hidden == 0 {
		t.Errorf("compact: %d shown, %d not shown; want both", shown, hidden)
	}
}

// Questions per document and seed for TestCorpusDecode; widen them by hand
// to search for edge cases.
var corpusQuestions, corpusSeed = 8, uint64(1)
