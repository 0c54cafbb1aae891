// Package apiproxy is an HTTP proxy in front of the Anthropic Messages and
// OpenAI Chat Completions / Responses APIs that makes the requests an agent
// sends smaller, and passes everything else through untouched.
//
// # Rewriting
//
// [Rewriter] rewrites a request body deterministically (the same request
// and conversation state give the same bytes):
//
//   - history: old assistant and tool content is trimmed with
//     [history.Reduce], its state kept per conversation (found by the
//     conversation's first messages, and applied only to a request that
//     shares the prefix the state was built from: a rewound, forked or
//     resumed conversation, or another one with the same first messages,
//     gets a branch of its own). The trim target is chosen from the
//     observed growth per turn, so that one boundary move leaves room for
//     many turns whose request keeps the previous one as a prefix;
//   - shaping at the source: every tool result goes through the library's
//     pipeline ([Options.Pipeline], a terse.Request per result: tool and
//     arguments), see Shaping below;
//   - repeats: a tool result identical to an earlier one still visible in
//     the request becomes a one-line reference naming that earlier call
//     (the dedup dialect, worded by hook.RefHint);
//   - batched edits of earlier messages, see Editing below.
//
// System prompts, user text, tool definitions, cache_control markers,
// thinking blocks and unknown blocks are never changed, and every tool call
// keeps its result. Every replaced text says what it stood for and how to
// get it back: call the named tool again when it only reads; a call that
// may have side effects is never suggested again, and its trimmed result
// is declared not recoverable. Nothing is replaced by something larger.
//
// Rewriting fails open: an internal error, a panic included, forwards the
// original request ([Result.Err]) and forgets the conversation state the
// request may have half updated.
//
// # Editing
//
// Before a conversation's edit boundary (kept with its trimming state,
// per branch), a file read that a later successful write of the file
// superseded becomes [staleText]; the payload fields of a write call
// older than [Options.EditAge] requests whose result is in the request
// and did not fail become [appliedText] inside its input, which stays an
// object with the same keys; a result of [Options.EditBulky] bytes or
// more, as old, becomes [elidedText] naming the way back (call it again
// when the call only reads, else the terse chunk command that prints the
// original, kept in [Options.ChunkStore] under a handle bound to the
// conversation). A call that repeats an earlier one or fetches a chunk
// is never elided: the agent may have fetched back what was left out.
// The edits depend only on the messages before the boundary, so later
// requests carry the same edited prefix. The boundary moves to the
// request's end, all edits at once, only when one decision priced with
// the model's prices says it pays: when the cache is cold anyway (idle
// longer than [Options.CacheTTL], or an hour for 1-hour cache writes;
// another model; a trimming step) or when the batch takes out at least
// [Options.EditShare] of the prompt and pays for itself within as many
// requests as the conversation has had ([Result.Batch] says which).
//
// # Shaping
//
// A tool result's form comes from terse.Pipeline: the text shapers
// (package shape; Claude Code's rendered Read results are what the read
// rule targets), JSON in render's auto format, the tool's configured
// filter. Every call refuses every hint family (nothing is fitted, elided
// or referred to by the pipeline) and carries no dedup partition, so the
// form depends only on the result, its tool and its arguments: the form a
// result gets when it first appears is the one every later request
// carries, and the prefix stays byte-stable. A form is used only when it
// costs fewer tokens and restores exactly: a shaped text by shape.Expand
// (terse expand), byte for byte; JSON (one document, or several in one
// text) by decoding; a filtered result
// under its filter's note.
//
// # Proxying
//
// [Proxy] is an http.Handler. POST /v1/messages, /v1/chat/completions and
// /v1/responses bodies are rewritten; everything else (paths, methods,
// headers, authentication) is forwarded byte for byte, and responses are
// relayed as they arrive: server-sent events are flushed as they are read,
// never buffered or re-encoded. A request carrying "x-terse-bypass: 1"
// (or true, or yes), a body that does not decode, or one larger than the
// size limit is forwarded untouched; the bypass header never reaches the
// provider. An upstream that cannot be reached gets the client a 502
// with an error body in its provider's shape.
//
// # Accounting
//
// Provider usage (input, cache writes with their 5-minute and 1-hour
// TTLs, cache reads, output) is read from the response for [Stats] only,
// from the SSE events or the body of both providers. Each request with
// usage is priced with [Prices] (configured rows, then [DefaultPrices],
// then a labelled family default): its billed cost, and the modeled cost
// of the original request in its place ([Record.DirectCost]). With
// [Config.Holdout], a sticky, seeded share of conversations is forwarded
// untouched; [CompareArms] compares the billed cost of both arms with a
// seeded bootstrap interval. [Calibrate] learns per model family the
// ratio of provider-reported input tokens to terse's o200k_base count;
// [Calibrated] puts the resulting [WindowRatio] (an estimate) in each
// conversation's profile, frozen for the conversation, and trimming holds
// its token estimate × that ratio against the window. With
// [Config.CacheDiagnostics], Anthropic requests carry the provider's
// cache diagnostics and [Stats] counts the reported cache misses by
// reason, apart at terse's prefix changes and elsewhere.
//
// # Profiles and telemetry
//
// [Options.Profile] resolves a conversation's model id, once, to the
// tokenizer shaped forms are chosen by and the window trimming uses; the
// answer is kept with the conversation's state. With [Config.Telemetry]
// set, [Stats] records one anonymous event per request it measures (entry
// "api"), off the request path: numbers, fixed names and the conversation
// key, which the recorder hashes.
package apiproxy
