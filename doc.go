// Package terse makes what an LLM agent reads smaller without making it
// wrong.
//
// A [Pipeline] takes a tool result (JSON or text), applies the optional
// stages configured in [Options] (a declarative filter; dedup and adaptive
// rendering plug in the same way), and fits the result under a token budget
// with package fit: every item at the richest detail that fits, every gap
// declared in-band, everything left out retrievable by chunk from a store.
// It returns the text for the model and a [Report] beside it, never mixed
// into the data.
//
//	p, err := terse.New(&terse.Options{Budget: 4000, Tool: "get_issues", Store: &store.Dir{Path: dir}})
//	if err != nil { … }
//	res, err := p.Process(ctx, payload)
//	fmt.Println(res.Text)                // what the model reads
//	fmt.Println(res.Report.OutputTokens) // ≤ 4000 by o200k_base
//
//	bytes ──parse──▶ tree ──filter──▶ ──fit (render, knapsack, chunks)──▶ Result{Text, Report}
//
// A Pipeline is safe for concurrent use when its Store is.
package terse
