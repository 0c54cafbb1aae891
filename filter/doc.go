// Package filter shapes a tool's output with a declarative, per-tool rule
// before anything else in terse sees it: keep the fields that matter, drop
// the noise, cut long lists and logs, and say in-band what was left out.
//
// A [Spec] is plain data written in config (terse's TOML file, or a kimbap
// service manifest read by package config). [Compile] checks it once and
// returns a [Rule], immutable and safe for concurrent use:
//
//	rule, err := filter.Compile(filter.Spec{
//		Select:   []filter.Field{{Path: "number"}, {Path: "title"}, {Out: "author", Path: "user.login"}},
//		Exclude:  []string{"*_url"},
//		MaxItems: 25,
//		DropNulls: true,
//		Recover:  "call with _output_mode=raw for all",
//	})
//	...
//	res := rule.Apply(payload, nil)
//	os.Stdout.Write(res.Append(nil))
//
// # Operations
//
// On JSON, the operations apply to each item of the payload's item array,
// or to a single object (see [Rule.Apply] for how the root is found), in
// this order: max_items, select, exclude, drop_nulls, drop_empty; then an
// optional compact template renders the items as text. On text (logs,
// command output): ANSI stripping, exclude and include line patterns,
// collapsing of repeated adjacent lines, head and tail.
//
// # Reports and in-band notes
//
// The filtered payload is never mixed with metadata. A [Result] carries the
// payload, a [Report] for people and telemetry (sizes in bytes and, with a
// counter, tokens; items truncated; select paths that matched nothing), and
// Note: one line the model reads before the payload, declaring every
// elision it could not infer, such as
//
//	> [filtered: showing 25 of 140 items; 71 fields per item omitted by config; null fields dropped; call with _output_mode=raw for all]
//
// When the rule cannot apply (no select path matches any item, the root is
// missing) the Report carries the error, the payload passes unfiltered, and
// the note says so. Output is deterministic: same input and rule, same
// bytes.
package filter
