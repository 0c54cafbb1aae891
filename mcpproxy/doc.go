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
// tools/list: every selected tool's inputSchema gains three optional
// reserved parameters, [ParamOutputMode] ("raw" returns exactly what the
// upstream returned), [ParamBudget] (tokens) and [ParamChunk] (fetch chunk
// N of an earlier result without calling the tool); the [CompactTool] tool
// is added. For clients that show the model structuredContent (see
// [Reads]) outputSchema is dropped together with structuredContent.
//
// tools/call: reserved parameters are removed before forwarding; _chunk
// requests are answered from the [ChunkStore]; text blocks of the result
// go through the [Transformer] and converted blocks carry their format
// name in _meta under [MetaFormat].
//
//	client ──stdio──▶ Proxy ──stdio / HTTP──▶ upstream server
//	                   │
//	                   └─ Transformer (terse pipeline), ChunkStore, Stats
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
// Malformed or oversized client messages get a JSON-RPC error and the relay
// goes on. A Transformer error passes the original result (skip_on_error)
// unless [Options.FailOnError] is set.
//
// Logs go to [Options.Logger] (stderr in the CLI): stdout is the MCP
// channel.
package mcpproxy
