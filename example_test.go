package terse_test

import (
	"context"
	"fmt"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/store"
)

// A list of issues fitted to 150 tokens: the first items are kept at
// minimal detail (identity fields), the rest are declared with the command
// that fetches them from the store, and the Report says what happened.
func Example() {
	payload := []byte(`[
	 {"number": 5, "title": "Crash on start", "state": "open", "html_url": "https://example.com/5", "body": "Steps: run it, see it crash."},
	 {"number": 4, "title": "Typo in README", "state": "closed", "html_url": "https://example.com/4", "body": "teh → the"},
	 {"number": 3, "title": "Add a logo", "state": "open", "html_url": "https://example.com/3", "body": "Any ideas for a logo?"},
	 {"number": 2, "title": "Slow on large files", "state": "open", "html_url": "https://example.com/2", "body": "A 1 GB file takes minutes."},
	 {"number": 1, "title": "Support Windows", "state": "closed", "html_url": "https://example.com/1", "body": "Paths use backslashes."}
	]`)
	p, err := terse.New(&terse.Options{Budget: 150, Store: &store.Mem{}})
	if err != nil {
		panic(err)
	}
	res, err := p.Process(context.Background(), payload, &terse.Request{Tool: "get_issues"})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	r := res.Report
	fmt.Printf("%d → %d tokens (%s), kept %d of %d by %s\n", r.RawTokens, r.OutputTokens, r.Tokenizer, r.Items.Kept, r.Items.Total, r.Strategy)
	// Output:
	// [{"number":5,"title":"Crash on start","state":"open"},{"number":4,"title":"Typo in README","state":"closed"},{"number":3,"title":"Add a logo","state":"open"},{"number":2,"title":"Slow on large files","state":"open"},{"number":1,"title":"Support Windows","state":"closed"}]
	// > [detail the root array: items 1–5 minimal (identity fields only)]
	// > [5 of 5 items shortened: get all 5 items whole with: terse chunk c_8506753776990064 1; a fetch returns up to 20,000 tokens]
	// 170 → 133 tokens (o200k_base), kept 5 of 5 by element_count
}

// A Pipeline with the dedup stage, built once and used for every call:
// the first result is shown with its id line (inside the budget), the same
// result again in the same session partition (named per call, in the
// Request) is a one-line reference to it, and the Report says that dedup
// saved the tokens. This small object costs fewer tokens as compact JSON
// than in any other form, so auto keeps it as it is.
func Example_dedup() {
	cache := dedup.New(dedup.Options{})
	p, err := terse.New(&terse.Options{Format: "auto", Dedup: cache})
	if err != nil {
		panic(err)
	}
	payload := []byte(`{"id":4242,"status":"success","ref":"main","sha":"3f2a1c9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
	 "web_url":"https://ci.example.com/acme/widgets/-/jobs/4242","duration":312.5,
	 "runner":{"id":7,"description":"shared-runner-7"},"stage":"test","name":"go test ./..."}`)
	for range 2 {
		res, err := p.Process(context.Background(), payload, &terse.Request{Tool: "get_job",
			Session: dedup.Key{Session: "conv-1", Partition: "main"}})
		if err != nil {
			panic(err)
		}
		s := res.Report.Saved
		fmt.Println(res.Text)
		fmt.Printf("-- %d → %d tokens; saved: filter %d, dedup %d, encoding %d, fitting %d\n",
			res.Report.RawTokens, res.Report.OutputTokens, s.Filter, s.Dedup, s.Encoding, s.Fitting)
	}
	// Output:
	// > [id: 06d2583f]
	// {"id":4242,"status":"success","ref":"main","sha":"3f2a1c9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39","web_url":"https://ci.example.com/acme/widgets/-/jobs/4242","duration":312.5,"runner":{"id":7,"description":"shared-runner-7"},"stage":"test","name":"go test ./..."}
	// -- 106 → 117 tokens; saved: filter 0, dedup -11, encoding 0, fitting 0
	// > [ref: 06d2583f, byte-identical]
	// -- 106 → 15 tokens; saved: filter 0, dedup 91, encoding 0, fitting 0
}
