// Package terse makes what an LLM agent reads smaller without making it
// wrong.
//
// A [Pipeline] takes a tool result (JSON or text) and runs the stages
// configured in [Options], in this order:
//
//	bytes ──parse──▶ tree ──filter──▶ ──dedup──▶ ──encode──▶ ──fit──▶ Result{Text, Report}
//
// The stages:
//
//   - filter: a declared projection (Options.Filter, package filter); its
//     in-band note leads the output.
//   - dedup: the filtered result is checked against what the same session
//     partition has already been shown in full (Options.Dedup, package
//     dedup; the partition is Request.Session). A repeat becomes a one-line reference such as
//     "> [ref: 3f2a1c9d, byte-identical]"; a result shown in full is
//     recorded and carries its "> [id: 3f2a1c9d]" line, counted inside
//     the budget. Trimmed results are never recorded, so a reference never
//     points at something the agent did not see.
//   - encode: compact JSON ("json", the zero value), TOON ("toon"), or
//     "auto" (package render: the cheapest faithful text by the named
//     tokenizer, verified by decoding, never more tokens than compact
//     JSON; steered by Options.Template). The CLI's config file defaults
//     to auto.
//   - shape: a text result of a known shape (a numbered file read, a
//     path list, search results, test or log output; Options.Shape,
//     package shape, told by Request.Tool, ToolInput and WorkDir) is
//     rewritten losslessly, as its terminal view, or with a declared,
//     counted elision whose chunks the store keeps, when that saves
//     tokens; "terse expand" restores a lossless one.
//   - fit: package fit trims under the token budget, every item at the
//     richest detail that fits, every gap declared in-band, everything
//     left out retrievable by chunk from a store. When nothing needs
//     trimming the output is exactly the encoding.
//
// The [Report] beside the text (never mixed into it) says what each stage
// did and splits the tokens saved by source (Report.Saved: filter, dedup,
// encoding, fitting), measured in tokens of the named tokenizer against
// compact JSON of the input; the parts sum to RawTokens − OutputTokens
// exactly.
//
// A Pipeline holds configuration ([Options]) and what it remembers between
// calls (token counts, encodings): build it once per tool configuration
// and keep it. Each call passes its own [Request]: the tool, a budget,
// the dedup partition, the paths it reads or writes, response headers.
//
//	p, err := terse.New(&terse.Options{Budget: 4000, Format: "auto", Store: &store.Dir{Path: dir}})
//	if err != nil { … }
//	res, err := p.Process(ctx, payload, &terse.Request{Tool: "get_issues"})
//	fmt.Println(res.Text)                // what the model reads
//	fmt.Println(res.Report.OutputTokens) // ≤ 4000 by o200k_base
//
// A Pipeline is safe for concurrent use when its Store is (a dedup.Cache
// is). Output is deterministic: the same input, options and request give
// the same bytes.
package terse
