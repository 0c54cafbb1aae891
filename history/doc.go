// Package history trims long LLM conversation histories so they fit a
// context window without breaking tool pairing or the provider's prompt
// cache.
//
// # Model
//
// A conversation is a slice of [Message]s with a [Role] (system, user,
// assistant, tool) and [Part]s (text, tool call, tool result, image,
// thinking, and opaque blocks this package does not model). Requests in the
// Anthropic Messages and OpenAI Chat Completions shapes decode into the model
// with [Decode] (or [DecodeOpenAI]); [Request.AppendJSON] writes
// them back. The adapters keep each provider block's raw JSON, so everything
// the model does not name (cache_control, citations, model parameters,
// unknown fields) survives: when nothing is trimmed, encoding reproduces the
// input as compact JSON byte for byte.
//
// # Trimming
//
// [Reduce] is lazy: nothing changes while the estimate stays at or under
// Threshold × window (default 0.8). Once over, it replaces old assistant and
// tool content with the stable placeholder [Placeholder] ("[trimmed]", or
// for tool results the text [Options.ResultText] gives for the call) up
// to a boundary index, and moves the boundary far enough that the estimate
// drops to Target × window (default 0.6). The gap between the two is
// hysteresis: the next many turns add no trimming, so the request prefix up
// to the boundary stays byte-identical and the provider's prompt cache
// keeps hitting. User and system content is never changed; tool calls keep
// their ids and names (large arguments become a placeholder object), so
// every tool result still pairs with its call; thinking blocks and their
// signatures are never edited (a whole turn's thinking is dropped once the
// turn and the user message that ends it lie in the trimmed prefix, which
// Anthropic allows; text sent together with tool results does not end a
// turn). The newest tool exchange is never trimmed. If
// placeholders alone still exceed the budget, a second stage drops the
// oldest trimmed assistant and tool messages, only at points where no tool
// call is separated from its result.
//
// The boundary is monotonic and travels between calls in a small [State]
// (JSON) that also fingerprints the conversation. A state that does not
// match (wrong version or types, index past the end, different first
// message) is reported in [Report.StateMismatch] and recomputed.
//
// # Cache stability
//
// A provider caches the longest prefix a request shares with an earlier
// one. Between calls that do not move the boundary, every message before
// it is re-trimmed to the same bytes and everything after it is passed
// through, so the previous request is a prefix of the next. [Report]
// says when a call changed the prefix, and [State] counts such calls.
//
// # Tokens
//
// Without a counter, sizes are the conservative estimate of the design
// this package follows: ceil(bytes/3.5) per part, 3 tokens per part of a
// multi-part message, 8 per message, 2,000 per image, 30 bytes per tool call
// and result, and ×1.05 on the total ([Estimate]). With
// [Options.Counter] set, a real tokenizer counts the text instead and the
// same overheads are added in tokens.
package history
