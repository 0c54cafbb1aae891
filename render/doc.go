// Package render re-encodes JSON trees and Markdown into the cheapest
// faithful text, and decodes that text back.
//
// [Encode] with [Auto] (the default) writes an auto document: each subtree
// takes the form that costs the fewest tokens (key: value lines, a table
// with typed cells, "- " list items, inline JSON, a fenced block for a
// multi-line string), and repeats are declared once (@N for identical
// sub-objects, ~N for URL prefixes, key=null for all-null table columns).
// The choice is a multi-choice knapsack over subtrees solved bottom-up by
// dynamic programming on a fast cost model; the finished document is then
// measured with the named [tokens.Counter] against compact JSON and fenced
// TOON, and the cheapest of the three is returned, so the result never
// costs more than compact JSON. docs/format.md specifies the syntax.
//
// An auto text that valid TOON would read differently opens with the
// [Marker] line "(auto)", so a TOON reader never mistakes it.
//
// [Decode] turns any of these texts back into the identical ordered tree:
// member order, duplicate keys and each number's literal text are kept.
// [DecodeOptions] bound nesting depth and the expansion of legend and
// prefix references, for text from untrusted sources. Encode verifies
// every result by decoding it before returning it unless
// [Options.SkipVerify] is set; a failed check falls back to compact JSON.
//
// [EncodeMarkdown] (the csv_from_md template) rewrites Markdown tables as
// fenced CSV and keeps all other text; [DecodeMarkdown] restores them.
// [ShapeOf], [Detect] and [InnerFormats] classify payloads and string
// leaves.
//
// Output is deterministic: the same input and options give the same bytes.
// All functions are safe for concurrent use.
package render
