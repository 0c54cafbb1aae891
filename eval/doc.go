// Package eval measures whether a model still answers correctly from what
// terse shows it.
//
// A token saving is only worth having if the model reading the smaller text
// gives the same answers. Package eval checks that with exact-answer
// questions whose gold answers are computed from the data:
//
//   - [Generate] derives questions from a JSON document: a scalar looked up by
//     a natural key (number, id, name, title, …), a full URL, counts with and
//     without a filter, null vs empty string vs absent, wrapper fields outside
//     the item array, and the first or last item. A question is kept only when
//     its key is unique and its answer unambiguous. [ParseQuestions] reads
//     hand-written questions (JSONL).
//   - An [Encoding] turns a document into the text a model reads: compact
//     JSON, TOON, auto, a budgeted compact (fitted under a token budget, with
//     elision declared in-band) or any external command.
//   - A [Reader] answers a question from that text: a model behind the
//     Anthropic Messages API or an OpenAI-compatible Chat Completions API
//     ([HTTPReader]), or the built-in [DecodeReader], which decodes the text
//     and looks the answer up, and so validates questions, gold answers and
//     grading end to end.
//   - [Grade] compares an answer with the gold after normalisation; [Run]
//     asks every question in every encoding and builds a [Report]: accuracy
//     per encoding and per question kind, tokens per encoding, and a paired
//     comparison with a baseline encoding (exact McNemar test, bootstrap
//     confidence interval of the accuracy difference), written as Markdown,
//     JSON and an SVG chart.
//
// # Budgeted encodings
//
// When an encoding leaves items out (the budgeted compact), a question about
// something it does not show has the gold answer "not shown" ([NotShown]):
// the model is right to say so and wrong to guess. A question is shown when
// evaluating it on what the text holds gives the original answer; counts and
// first/last questions over a trimmed list expect "not shown" and also accept
// the true answer, which the in-band chunk index may let a model work out.
//
// Everything is deterministic for a seed: the same documents, seed and
// options give the same questions, prompts and (with the decode reader)
// the same report.
package eval
