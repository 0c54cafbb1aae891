// Package inband owns the text terse writes for a model to read beside a
// result: the notes that declare what was left out or shortened, the
// detail levels, the overflow hint, the chunk index and the first lines
// of a fetched chunk, repeat references, the budget-raise line, the gap
// markers inside a kept text, the header and markers of a shaped text
// (its rules read by [ParseRule]), the notes of history trimming and of
// the batched edits of earlier messages (each naming its call as a
// [ToolCall]) and the other single-line notices.
//
// Every line is written from a typed value (its String method) and read
// back by one parser ([Parse]); [Notes] finds where a result's notes
// start. The wording is API: models parse it and golden files pin it, so
// a change here is a change of the interface, made on purpose with the
// goldens of the packages that write it.
//
// A note is a single-line Markdown blockquote, "> [family: payload]".
// The chunk index is a block from its "[chunks] " line to its
// "[/chunks] " line, with one "  chunk N: …" line per chunk. A gap marker,
// "[… N lines left out: lines A–B …]", stands inside a kept text for the
// lines it names.
//
// The package imports only the standard library (and internal/lazyre, so
// that its parser's expressions compile on first use, not at every
// process start), so every package that writes or reads these lines can
// use it.
package inband
