// Package fit makes a tool result fit a token budget, keeps the most
// valuable content at the richest detail that fits, and says exactly what
// it left out and how to get it back.
//
// # Items and detail levels
//
// A JSON result is fitted by its items: the array at Options.Pointer, else
// the one [FindItems] picks (the root array, or the largest array of
// objects within depth 3 that holds most of the document). A document
// without such an array is fitted by the members of its root object. Text
// is fitted by lines, and a unified diff by files.
//
// Every item can be emitted at one of four levels: [Full]; [Standard], which
// drops low-value fields (URLs and URL templates, avatars, node ids,
// _links, timestamps other than the primary one, empty values) and cuts
// long strings on a rune boundary with a declared marker "…[+N chars]";
// [Minimal], which keeps identity fields (id, key, number, name, title,
// state, status, …); or [Skip]. Diff files at Standard keep the start and
// end of long hunks, at Minimal their header and +/− counts. Log lines are
// never cut.
//
// # Budget and solvers
//
// Choosing a level per item is a multiple-choice knapsack: each option's
// weight is its token cost in the output format (counted by the
// tokens.Counter, each rendering once; large inputs are costed from an
// exactly counted sample), its value is the item's strategy value times
// the level's share. Solvers by size: exact dynamic programming for small
// instances, a greedy on incremental efficiency over each item's convex
// hull, proportional (WFQ) allocation for very many items, and head+tail
// for linear text. The assembled output is then counted exactly, and the
// capacity tightened until it fits: the budget is a guarantee by the
// counter, not an estimate.
//
// A format whose encoder checks its own output (render's auto verifies
// each text by decoding it) can give a Draft rendering without the check:
// candidates are then costed and counted as drafts, and only the text
// returned is rendered with the checking encoder, which must agree with
// the draft that was counted (else fitting starts again without drafts).
//
// # Strategies
//
// [Resolve] picks the strategy from the tool name: configuration first,
// then built-in defaults, then the name with an MCP proxy prefix removed
// (up to the last "__"), then uniform. See the Strategy constants.
//
// # In-band text
//
// What a model reads is part of the API. Kept items stay in source order.
// JSON results are followed by a line defining the detail levels used, the
// overflow hint and the chunk index, which says for every chunk exactly
// which of its items this response holds and at which level:
//
//	> [levels: standard = dropped urls, …; long strings cut; minimal = identity fields only; items per level: "here" in the chunk index]
//	> [+114 more items, 7 shortened: get any chunk in full with: terse chunk c_0123456789abcdef N]
//	[chunks] 120 items at /items in 4 chunks; this response has 13 (6 full, 6 standard, 1 minimal):
//	  chunk 1 (offset=0, limit=30): 30 items; state: 20 open, 10 closed << here: 0–3 full, 4–9 standard, 10 minimal
//	  chunk 2 (offset=30, limit=30): 30 items; state: 30 open
//	[/chunks] Get chunk N in full: terse chunk c_0123456789abcdef N
//
// A document fitted by its members names the omitted keys instead:
//
//	> [omitted the root object: history, info (2 of 5 members)]
//
// Text declares each gap where it is, in source lines (1-based), and a
// diff file at minimal detail keeps its header and counts:
//
//	[… 118 lines omitted (3–120) …]
//	[… 40 lines omitted (120–159): +30/−10 …]
//
// When nothing needs trimming, the output is exactly the plain encoding.
//
// # Chunks
//
// With Options.Store set, the full payload is stored under a handle
// derived from its content, and [Chunk] returns any chunk later. An unknown
// or expired handle gives an [ExpiredError] whose message says to re-run
// the original call.
package fit
