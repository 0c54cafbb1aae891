// Package toon encodes and decodes TOON, Token-Oriented Object Notation,
// version 4.0 (toon-spec: 4.0), over the ordered JSON values of package
// tree.
//
// TOON carries the JSON data model in fewer tokens: objects use indentation
// instead of braces, strings are quoted only when they must be, and arrays
// declare their length (and, for uniform rows, their fields) once:
//
//	users[2]{id,name,role}:
//	  1,Ada,admin
//	  2,Bob,user
//
// [Append] and [Marshal] encode a [tree.Value]; [Unmarshal] decodes one.
// [Encoder] writes to an io.Writer in chunks, [Decoder] reads an io.Reader.
// Decoding errors are [*SyntaxError] values with a line, a column, the JSON
// Pointer of the value being decoded and what was expected.
//
// # Terminology
//
// The terms follow §1 of the specification.
//
//   - A header declares an array's length, its delimiter and optionally a
//     field list: key[N]:, key[N|]{a|b}:, or key[N:]{a,b}: for a keyed
//     object. A field may carry a nested field group, customer{name,city},
//     for a column of uniform objects.
//   - A tabular array has one row per element under a header with fields;
//     cells are the leaf values in depth-first header order.
//   - A keyed tabular object is an object whose values are uniform objects,
//     written as entry rows "key: cell,cell" under a keyed header.
//   - An expanded list writes each element on a "- " line.
//   - The delimiter is comma (the default), tab or pipe. The encoder's
//     document delimiter is declared in every header it writes, so it is
//     also the active delimiter everywhere in its output.
//   - Strict mode (the default; [DecodeOptions.Lenient] turns it off)
//     enforces declared counts, row widths, indentation, blank-line rules
//     and unique keys, as listed in §14.
//
// # Numbers
//
// The numeric domain is lossless: a number is its literal text, never a
// float64. The encoder writes the canonical decimal form of §2 by exact
// decimal arithmetic on the digits (1.5000 → 1.5, 1e6 → 1000000, -0 → 0;
// outside 1e-6 ≤ |n| < 1e21 it writes d.ddde±x), so every value keeps its
// exact mathematical value, however many digits it has.
// [EncodeOptions.ExactNumbers] writes each literal as it is instead; every
// JSON number literal is a valid TOON number token.
//
// The decoder types a token as a number exactly when it matches §4's
// grammar without forbidden leading zeros, which is the JSON number grammar,
// and keeps the token's text: "1.5000" stays "1.5000", "-1E+03" stays
// "-1E+03", "-0" stays "-0". Tokens such as 05, +1, .5 or 1e decode as
// strings. No number is ever out of range, rounded or rejected.
//
// # Other policies
//
//   - Host types (§3): the encoder's input is already a JSON tree, so there
//     is nothing to normalize; tree.Float already maps NaN and infinities to
//     null.
//   - Strings with invalid UTF-8 in a tree are written quoted with U+FFFD
//     for each bad byte. Strict decoding rejects ill-formed UTF-8; lenient
//     decoding replaces it with U+FFFD.
//   - Keys such as __proto__, constructor and prototype are ordinary keys
//     (§15): a tree object is an ordered member list, so nothing is special.
//   - Duplicate keys in a tree are written as they are; strict decoding
//     rejects them (§14.3), lenient decoding keeps the last value.
//     [Representable] reports them (and lone surrogates) before encoding,
//     for callers that must not lose data.
//   - A string holding lone UTF-16 surrogates (tree.Value.Escaped, from
//     JSON such as "\ud83d") is written quoted with the same escapes.
//     Strict decoding rejects surrogate escapes, as the spec does; lenient
//     decoding keeps a lone one in a value as its escape, so the tree reads
//     back the same.
//   - Decoding stops at a nesting depth of 512 ([DecodeOptions.MaxDepth]),
//     with an error at the line that goes deeper, so recursion is bounded.
//   - Tabular forms reorder a row's keys to its header's order, as the spec
//     allows; [EncodeOptions.KeepKeyOrder] uses them only when every row has
//     the same key order, so that decoding returns the same ordered tree.
//   - Lenient decoding counts a tab in indentation as IndentSize spaces.
//
// # Specifications
//
// The specification is TOON v4.0 (https://github.com/toon-format/spec).
// Sections this package implements:
//
//   - §2 data model and canonical numbers; §4 decoding of tokens;
//   - §5 root forms, §5.1 comment lines (stripped by the decoder, never
//     written), §5.2 line classification;
//   - §6 headers, keyed headers and nested field groups;
//   - §7 quoting and escaping of strings and keys;
//   - §8 objects, §9 arrays (inline, expanded, tabular, keyed tabular),
//     §10 objects as list items;
//   - §11 delimiters, §12 indentation and whitespace;
//   - §13 options (indentSize, delimiter, strict), §14 strict-mode errors,
//     §15 prototype-key safety.
//
// Conformance is tested against the 516 cases of the specification's
// fixture suite.
//
// # Concurrency
//
// The functions are safe for concurrent use. An [Encoder] or a [Decoder]
// must be used by one goroutine at a time.
package toon
