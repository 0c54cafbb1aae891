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
// # Budget and the upgrade order
//
// Each item's levels are costed in tokens of the output format (counted
// by the tokens.Counter, each rendering once; large inputs, renderings
// over 96 KB, are priced from about 24 KB of each level's items rendered
// together and counted once, or, at full detail, from the whole
// document's count when the counter already knows it) and valued by the
// item's strategy value times the level's share. From these, one order
// in which items gain detail is fixed, the same at every budget: every
// item is first shown at its cheapest level, the most valuable first;
// then items are made richer along the convex hull of their levels,
// smaller steps before larger ones and, among steps of about one size,
// by value gained per token. Standard levels are costed with strings cut
// at the shortest cut any budget makes, so that the order does not
// depend on the budget. Lines of text gain detail in their own order:
// boosted (error) lines taking every other place, the rest from the head
// and the tail by the strategy's share, long lines cut short before they
// are shown whole.
//
// A result is the longest prefix of that order whose assembled text,
// counted exactly, fits the budget: found by doubling from one step,
// then halving, the probes the same at every budget until a larger one
// fits more. So the budget is a guarantee by the counter, and a larger
// budget never shows fewer items, fewer items whole, or less of any
// item. The probes' texts share most of their lines (and, in compact
// JSON, items): each is counted once per fit and the counts summed
// where the tokenizer's pieces cannot cross (tokens.LineCounter), the
// same count as the whole text's. Strings are cut longer under a larger budget; an item the
// budget's cut leaves whole is shown and declared at full detail.
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
// every detail level used (string cuts included, with their marker), and
// by the chunk index when the source is more than one chunk, which says
// for every chunk, in order, which of its items this response holds and
// at which level, the tokens a fetch of it returns (counted), whether
// that is over the budget a fetch gets, and the call that gets it:
//
//	> [levels: full = as in the source; standard = urls, … dropped, long strings cut at "…[+N chars]"; minimal = identity fields only, long strings cut at "…[+N chars]"; missing or blank fields of a shortened item were left out]
//	[chunks] 25 items at the root array, numbered 1–25, in 2 chunks; this response shows 13 of them (2 full, 6 standard, 5 minimal) and leaves out 12:
//	  chunk 1: items 1–24, ≈17,900 tokens; state: 24 open; in this response: items 1–3 standard, item 4 full, items 5–13 minimal, items 14–24 left out
//	  chunk 2: item 25, ≈31,100 tokens, over budget; state: 1 open; in this response: none
//	[/chunks] Get chunk N whole: terse chunk c_0123456789012345 N (no other arguments needed: a fetch returns up to 20,000 tokens); a chunk over budget comes back as smaller chunks, fetched the same way
//
// A source of one chunk (or, when the index leaves no room for any item,
// any source) is declared by notes that name the left-out and shortened
// items, and the overflow hint, which gives the call (for one chunk, the
// call that gets the whole source; else every chunk's range) and the
// budget a fetch gets:
//
//	> [left out of /items: items 11–14, 16–120 (114 of 120 items)]
//	> [detail /items: items 11–14 standard (…); item 15 minimal (identity fields only); the rest full]
//	> [114 of 120 items left out, 5 shortened: get all 120 items whole with: terse chunk c_0123456789012345 1; a fetch returns up to 20,000 tokens]
//	> [all 2 items left out, too large for this budget: get chunk N of 2 whole with: terse chunk c_0123456789012345 N; chunk 1: item 1, chunk 2: item 2 (over budget); a fetch returns up to 20,000 tokens]
//
// Without a store nothing can be fetched: chunks are then packed by
// their estimated costs, never counted, and the index lists no sizes.
//
// # The budget rule
//
// The text is within Options.Budget by the counter, unless not even the
// notice that declares what is left out fits (the notes and the hint,
// with its handle when stored): then that notice is returned, over the
// budget, never an empty text. The root pipeline raises its call's
// budget to it and says so in-band; the whole rule, for every surface,
// is in docs/limits.md ("The budget rule").
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
// the fetch. Chunks are sized to Options.FetchBudget, the budget a fetch
// that names none gets (the client's limit, see [Clients]): every chunk
// not marked over budget comes back whole from the call the text names;
// a chunk is over budget only when a single unit is larger, or when the
// index cannot list that many chunks. A chunk over the fetch's budget
// comes back split into the fewest smaller chunks that each fit it, each
// listed with its counted size, under a handle of its own (a single item
// or line too large into byte ranges of its text, to be joined in
// order); the first line then says which budget gets it in one piece,
// or that none does. Fetching every chunk, recursively, gives back the
// whole source, at any budget: a budget below [MinBudget] is raised to
// it, so that nothing is left out without a handle shown.
//
// Handles are bound to Options.Scope (the session, and conversation when
// named) and minted as an HMAC of scope and content under Options.Key,
// written as 16 decimal digits, so that every handle costs the same
// tokens and the same call gives the same text, but for its handles, in
// every session and process: a
// fetch from another scope gets a [*ScopeError], an unknown or expired
// handle an [*ExpiredError], whose messages are terminal and say how to
// get the data again.
//
// When the store fails (or does not answer within Options.StoreTimeout),
// the result still fits its budget, shows no handle, says that the rest is
// not retrievable right now and how to get it (Options.RawHint), and
// reports the failure in Result.StoreErr and Stats.StoreFailed.
package fit
