// Package tune is terse's offline tuner: it mines telemetry (package
// telemetry) or coding-agent transcripts into a configuration file in the
// config package's own schema, with a comment per fired rule stating its
// evidence. Tuning is offline and deterministic: the same input gives the
// same bytes; nothing changes while a session runs.
//
// # Rules over telemetry (Analyze)
//
// Each rule has a trigger, a minimum of evidence below which it does not
// fire (its comment says so), and an effect on the written config.
//
// R1, per-endpoint dedup. Evidence: at least 20 calls of the tool with a
// repeat signal (an input fingerprint, or a dedup outcome). A repeat is a
// result identical to an earlier one of the same session partition. If
// the repeat rate is at least 0.30 the tool keeps reference hints and the
// cache is sized to hold the 90th percentile of the distance (in results)
// between a result and its repeat: dedup.max_entries is raised to
// 1 + that distance when the default would not hold it. If the rate is at
// most 0.05 the tool gets a data variant whose hint families leave out
// "ref" and "near_ref": its results are no longer fingerprinted for
// references. Tools known only by their salted hash get the finding as a
// comment; pass their names (--names) or opt into tool names to get a rule.
//
// R2, per-endpoint template. Evidence: at least 20 calls. A tool whose
// dominant shape is a Markdown table with at least 2 columns on average
// gets template "csv_from_md"; otherwise one whose three most common inner
// formats (among those in at least half of its results) include log, url
// and hash gets "ci_pipeline"; otherwise one with diff among them gets
// "mr_diff_fence". The rule writes a [[tools]] entry.
//
// R3, cache size from the session profile. Evidence: at least 50 events.
// The compaction rate is compactions per event (the seed's events⁻¹, not
// the share of events after a first compaction). If it exceeds 0.05 the
// cache holds max(10, ⌈0.2 × mean events per partition⌉) results; else if
// sessions average fewer than 20 events it holds 3; else 5. The value is
// never below what R1 found the repeats need. It is written as
// dedup.max_entries.
//
// R5, minimum size. Evidence: at least 50 results. proxy.min_size_bytes is
// the 25th percentile of input sizes, clamped to [100, 500].
//
// R6, lossless tools. Evidence: the proxy's brake on re-fetch storms
// (telemetry "brake") in at least 3 sessions, and in at least a fifth of
// the sessions that called the tool. A data variant for the tool whose
// hints leave out "more": its results are never shortened.
//
// # Rules over transcripts (FromLogs)
//
// P1 pins the dominant model when it sent at least 80 % of the assistant
// messages: an LLM variant named after it, matching its id, with the
// tokenizer, window and budget of the built-in variant it resolves to.
// P3 adds a placeholder data variant
// (format "auto") for every MCP tool seen (mcp__SERVER__TOOL), to be
// refined by hand.
//
// FromLogs also reports what the sessions' tool results cost: tokens by
// tool, the biggest results, identical re-reads, stale reads, and what
// terse's pipeline saves when the results are replayed through it.
package tune
