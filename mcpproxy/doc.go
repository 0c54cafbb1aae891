// Package mcpproxy puts terse between an MCP client and MCP servers, so
// the model reads faithful, budgeted, deduplicated tool results.
//
// Two front ends share one engine:
//
//   - [Proxy] is a stdio proxy for one upstream (a child process, [Command],
//     or a Streamable-HTTP server, [HTTP]). It relays raw JSON-RPC in wire
//     order and touches only tools/list and tools/call, so protocol features
//     it does not know (resources, prompts, elicitation, future methods)
//     pass through unchanged.
//   - [Gateway] is a Streamable-HTTP MCP server that aggregates several
//     upstreams under "server__tool" names, with /healthz and Prometheus
//     metrics.
//
// # What changes on the wire
//
// tools/list: schemas are compacted where the meaning is kept (a "$schema"
// dialect URL, an empty "properties", "additionalProperties": false go),
// and for clients that show the model structuredContent (see [Reads])
// outputSchema is dropped together with structuredContent. The reserved
// parameters are declared once, not on every tool: the [CompactTool]
// tool's description names them, and it is listed only when the
// compaction paid for it, so the catalogue through terse is never more
// tokens than direct. Every tool accepts them, declared or not:
// [ParamOutputMode] ("raw" returns exactly what the upstream returned,
// byte for byte), [ParamBudget] (tokens) and [ParamChunk] (fetch chunk N
// of an earlier result without calling the tool; the chunk index of a
// fitted result says how).
//
// tools/call: reserved parameters are removed before forwarding; _chunk
// requests are answered from the pipeline's store; the text blocks the
// model reads go through the terse pipeline ([Options.Pipeline], one per
// tool rule with [Options.ForTool], each built once), and converted blocks
// carry their format name in _meta under [MetaFormat]. A block is never
// replaced by one that costs the model more tokens than the block as sent.
// Every result terse rewrites, and every chunk reply, carries in its
// _meta under [MetaCompleteness] whether the model was shown everything
// (or what it was shown of how many, the handle of the rest and the
// budget): machine-readable, the same from both front ends.
//
// The budget of a result is the smallest of the call's _budget, the
// client's budget and the tool rule's budget; the result's text blocks
// share it by size, so their sum never exceeds it.
//
//	client ──stdio──▶ Proxy ──stdio / HTTP──▶ upstream server
//	                   │
//	                   └─ engine: reserved parameters, policy, budget,
//	                      terse pipelines, chunks, dedup partitions, Stats
//
// # Terminology
//
//   - tenant: whom a bearer token names (Options tokens of the gateway);
//     "" without authentication. Tenants never see each other's state.
//   - session: an MCP session (Mcp-Session-Id), held by one gateway
//     replica or found in the shared state; the stdio proxy has one. A
//     stateless request (protocol 2026-07-28) has none.
//   - conversation: what a client names in params._meta
//     "terse/conversation"; within a session, or on its own for a
//     stateless client.
//   - scope ([Scope]): tenant, session and conversation together, whom a
//     call belongs to. Its string form is the owner of the chunk handles
//     its results carry and the key of its records; every other key (the
//     compaction counter, the chunk scope, the session record) is derived
//     from it. A stateless call without a conversation is ephemeral:
//     nothing is kept for it.
//   - generation: how many times a scope was compacted. The engine counts
//     them per session (and per conversation in it); a gateway with
//     shared state reads them from its GatewayState, one store for every
//     replica.
//   - partition: the dedup state of a scope at one generation,
//     "SESSION/N" or "SESSION#CONVERSATION/N.M". A compaction moves to a
//     new partition and drops the old one; a result is only ever a
//     reference to one shown in the same partition.
//
// The engine keeps per-session state (generations, the conversations a
// session named, hint counts, the re-fetch brake) in one bounded LRU; a
// session dropped from it has its partitions reset first.
//
// # Sessions
//
// Dedup state is kept per client session and partition. The notification
// [CompactNotification] or a call of [CompactTool] advances the partition,
// so later results never refer to results the model no longer sees: the
// next repeat comes back in full, with its id line again. The stdio proxy
// reads the notification from its input; the gateway accepts it POSTed to
// /mcp with the session's Mcp-Session-Id header (answered 202 Accepted),
// like any notification of a Streamable-HTTP client. Tools that mutate
// (tool annotations readOnlyHint/destructiveHint, or a name like
// write_file when there are none) invalidate the partition's reads.
//
// A client that runs several conversations over one session names the
// conversation in params._meta under [MetaConversation]
// ("terse/conversation") of each tools/call: each conversation then has
// its own dedup state and chunks, and a result is never a reference to
// one shown in another conversation. The same _meta key on the
// notification or on the terse_compact call compacts that conversation
// only; without it the whole session (every conversation) is compacted.
//
//	{"jsonrpc":"2.0","method":"notifications/terse/compact",
//	 "params":{"_meta":{"terse/conversation":"c42"}}}
//
// # Failure
//
// A crashed upstream fails the requests in flight with a JSON-RPC error
// ([CodeUpstreamUnavailable]) and is restarted, with the client's
// initialize replayed, on the next request (at most MaxRestarts a minute).
// Malformed or oversized client messages get a JSON-RPC error, with the
// request's id whenever it is readable, and the relay goes on. A line from
// an upstream that does not parse, or is over [Options.MaxMessageBytes]
// (both modes), is dropped and counted; when its id is readable its
// request is answered with an error. Results are transformed off the
// reader, at most [Options.MaxConcurrent] at once, so one large result
// never delays another call's answer. Idle gateway sessions end after
// [Options.IdleTimeout]. A pipeline error passes the original result
// (skip_on_error) unless [Options.FailOnError] is set.
//
// Logs go to [Options.Logger] (stderr in the CLI): stdout is the MCP
// channel.
package mcpproxy
