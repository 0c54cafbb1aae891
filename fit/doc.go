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
// tokens.Counter, each rendering once), its value is the item's strategy
// value times the level's share. Large inputs (renderings over 96 KB) are
// priced, not counted item by item: a level's tokens per JSON byte come
// from about 24 KB of its items rendered together and counted once, or,
// for full detail, from the whole document's count when the counter
// already knows it (Options.Counter with a Known method, as the root
// package's count cache has); their knapsack is solved in coarse units,
// and its first capacity is scaled by what the whole document costs
// against its items' estimates. Solvers by size: exact dynamic
// programming for small instances, a greedy on incremental efficiency
// over each item's convex hull, proportional (WFQ) allocation for very
// many items, and head+tail for linear text. The assembled output is then
// counted exactly, and the capacity tightened (or grown) until it fits:
// the budget is a guarantee by the counter, not an estimate.
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
// Items, lines, files, members and chunks are numbered from 1, always
// named with their unit ("item 7", "lines 11–102"), so that a position
// never reads like a count. JSON results are followed by a line defining
// every detail level used, the overflow hint and the chunk index, which
// says for every chunk, in order, which of its items this response holds
// and at which level, what a chunk costs in full, and the call that gets
// it:
//
//	> [levels: full = as in the source; standard = urls, … dropped, long strings cut at "…[+N chars]"; minimal = identity fields only; missing or blank fields of a shortened item were left out]
//	[chunks] 25 items at the root array, numbered 1–25, in 6 chunks; this response shows 13 of them (2 full, 6 standard, 5 minimal) and leaves out 12:
//	  chunk 1: items 1–4, ≈900 tokens; state: 4 open; in this response: items 1–3 standard, item 4 full
//	  chunk 6: item 25, ≈3,100 tokens, over budget; state: 1 open; in this response: none
//	[/chunks] Get chunk N whole: terse chunk c_0123456789abcdef N (no other arguments needed); a chunk over budget comes back as smaller chunks unless fetched with a larger budget
//
// Without room for the index (or when, under a small budget, leaving it
// out shows clearly more), the notes name the left-out and shortened
// items and the overflow hint gives the call and the number of chunks:
//
//	> [left out of /items: items 11–14, 16–120 (114 of 120 items)]
//	> [detail /items: items 11–14 standard (…); item 15 minimal (identity fields only); the rest full]
//	> [114 of 120 items left out, 5 shortened: get chunk N of 4 whole with: terse chunk c_0123456789abcdef N]
//
// Text declares each gap where it is, in source lines; a line too long
// for the budget is shown cut, with its marker; a diff file at minimal
// detail keeps its header and counts:
//
//	[… 118 lines left out: lines 3–120 …]
//	[… 40 lines left out: lines 120–159, +30/−10 …]
//
// Shortened items keep their identity fields (id, number, name, title,
// state, and identifiers named *_id such as ghsa_id).
//
// When nothing needs trimming, the output is exactly the plain encoding.
//
// # Chunks and handles
//
// With Options.Store set, the full payload is stored under a handle, and
// [FetchChunk] (or [Chunk]) returns any chunk later, within the budget of
// the fetch: in full when it fits, else split into smaller chunks, each
// with a handle, whose ranges add up to the chunk (a single item or line
// too large for the budget is split into byte ranges of its text, to be
// joined in order); the first line then says which budget gets it in one
// piece. Fetching every chunk, recursively, gives back the whole source,
// at any budget: a budget below [MinBudget] is raised to it, so that
// nothing is left out without a handle shown.
//
// Handles are bound to Options.Scope (the session, and conversation when
// named) and minted as an HMAC of scope and content under Options.Key: a
// fetch from another scope gets a [*ScopeError], an unknown or expired
// handle an [*ExpiredError], whose messages are terminal and say how to
// get the data again.
//
// When the store fails (or does not answer within Options.StoreTimeout),
// the result still fits its budget, shows no handle, says that the rest is
// not retrievable right now and how to get it (Options.RawHint), and
// reports the failure in Result.StoreErr and Stats.StoreFailed.
package fit
