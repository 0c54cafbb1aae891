package eval_test

import (
	"context"
	"fmt"

	"github.com/terse-dev/terse/eval"
	"github.com/terse-dev/terse/tree"
)

// Questions come from the data, with gold answers computed from it; the
// decode reader answers them from each encoding and must score 100 % on
// the lossless ones.
func Example() {
	v, _ := tree.ParseString(`{"total_count": 2, "items": [
		{"number": 7, "title": "Crash on empty input", "state": "open", "body": null},
		{"number": 9, "title": "Docs typo", "state": "closed", "body": ""}]}`)
	doc := eval.Document{Name: "issues.json", Value: v}
	qs := eval.Generate(doc, 4, 1)
	for _, q := range qs {
		fmt.Printf("%s → %s\n", q.Text, q.Answer)
	}

	json, _ := eval.ParseEncoding("json", nil)
	toon, _ := eval.ParseEncoding("toon", nil)
	plan, _ := eval.Prepare(context.Background(), eval.Config{
		Docs: []eval.Document{doc}, Questions: qs,
		Encodings: []eval.Encoding{json, toon}, Reader: eval.DecodeReader{},
	})
	rep, _ := plan.Run(context.Background())
	for _, e := range rep.Encodings {
		fmt.Printf("%s: %d/%d correct, %d tokens\n", e.Name, e.Correct, e.Questions, e.DocTokens)
	}
	// Output:
	// In the list "items", what is "title" of the item whose "number" is 9? → Docs typo
	// How many items does the list "items" have? → 2
	// In the list "items", for the item whose "number" is 7: is "body" null, an empty string, or absent (no such field)? Answer null, empty or absent. → null
	// What is the value of the top-level field "total_count"? → 2
	// json: 4/4 correct, 46 tokens
	// toon: 4/4 correct, 39 tokens
}
