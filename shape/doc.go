// Package shape rewrites the text results a coding agent reads (numbered
// file reads, shell output, search results, path lists, logs) into fewer
// tokens without making them wrong.
//
// # Classes
//
// Every shaping is one of three classes, declared in-band and in the
// Report:
//
//   - Lossless: the exact original bytes follow from the shaped text by
//     the rules its header line names; [Expand] gives them back, byte for
//     byte.
//   - Display: what a terminal would show is kept; ANSI escape codes and
//     text that a carriage return or backspace overwrote are dropped.
//     [Expand] gives back the terminal's view of the original.
//   - Elide: something is left out, and the text says what, counted in
//     source units (lines, tests) with counts that add up and line ranges
//     read from the original, and carries a handle whose chunks give the
//     original back whole (Options.Keep stores it).
//
// A result whose shape is unknown, that is short, or that no shaping makes
// smaller by Options.Margin in tokens of Options.Counter (after every line
// this package adds) is returned untouched.
//
// # In-band text
//
// A lossless or display shaping opens with one header line naming its
// rules in the order they were applied; [Expand] undoes them in reverse.
// Its wording is part of the API (models and terse expand parse it); the
// lines and rules are written and read by package inband
// ([inband.Shaping], [inband.ParseRule], [inband.ElidedRuns],
// [inband.Folded], [inband.Repeat]):
//
//	> [lossless: "→" numbers unpadded to width 6]
//	> [lossless: "→" numbers unpadded to width 6 and followed by "\t"]
//	> [lossless: lines 1–250 numbered "→" on the first, the last and every 10th only (width 6)]
//	> [lossless: lines 41–140 follow without their "→" numbers (width 6)]
//	> [lossless: ./ = "/home/me/project/"; paths as a tree from line 2]
//	> [display: terminal view; repeats folded]
//
// The rules:
//
//   - "Q" numbers unpadded to width W: a numbered line "   12→text"
//     (Claude Code's Read; "cat -n" and "nl" with a tab) is written
//     "12→text"; the number is padded back with spaces to W columns.
//   - "Q" numbers unpadded to width W and followed by "T": as the rule
//     above, and the separator Q is written T (Options.ReadForm ReadTab:
//     a tab, cat -n's separator).
//   - lines A–B numbered "Q" on the first, the last and every 10th only
//     (width W): the first B−A+1 body lines are the numbered lines A to
//     B; those whose number is A, B or a multiple of 10 keep it
//     unpadded, the others show none (Options.ReadForm ReadSparse).
//   - lines A–B follow without their "Q" numbers (width W): the first
//     B−A+1 body lines are the numbered lines A to B, without their
//     numbers (ReadRange).
//   - ./ = "BASE": BASE (a directory ending in "/") at the start of a line,
//     after its indentation, is written "./".
//   - paths as a tree from line K: from body line K on, a path list is a
//     tree in the order of the list: a line ending in "/" followed by a
//     line indented one more space opens a directory that prefixes the
//     lines under it; other lines are paths, after the open directories.
//   - matches grouped by file: runs of search results "path:12:text"
//     (and context lines "path-13-text") of one file are written as a
//     line holding the path and, under it, " 12:text", " 13-text".
//   - repeats folded: a run of N ≥ 3 identical lines is written once,
//     followed by "[… same line N−1 more times …]".
//   - terminal view: ANSI colour, cursor and erase codes are dropped and
//     a line overwritten after a carriage return shows what a terminal
//     would show (display class only).
//
// An elided text opens with its own header (see [ElideHeader]); it is not
// something [Expand] restores: its chunks are.
//
// # Anchors
//
// Before a shaping is used, the anchors of the original (file paths,
// file:line references, error and failure lines, verdict lines, commit
// SHAs and UUIDs) are checked: a lossless or display shaping keeps every
// one by construction (it is verified by expanding it), an elision keeps
// each one in its text or names the line range holding it. A shaping that
// would lose one falls back to the next safer class.
package shape
