package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"unsafe"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

const encodeDoc = `
Encode reads one JSON document and writes it as "auto" (the default): the
cheapest faithful text terse can find, which picks a form per subtree
(key: value lines, typed tables, lists, inline JSON, declared legends and
URL prefixes; see docs/format.md) and is never more tokens than compact
JSON by --tokenizer; as TOON v4 (--to toon); or as compact JSON (--to
json). TOON is not the default because on typical API payloads it costs
more tokens than compact JSON (12-14 % more on the shipped examples).
--exact, --delimiter and --indent are TOON's: given without --to, they
mean --to toon.

TOON output is the specification's canonical form by default: canonical
numbers ("1.50" is written 1.5, "1E+3" 1000) and tabular arrays for rows
whose keys come in another order (decoded in the header's order). It
decodes, with any TOON decoder, to the same values. --exact keeps each
number's literal text and every object's member order instead (rows are
tabulated only when their keys come in the same order), so that terse
decode gives back the identical tree.

Auto output decodes with terse decode (no --from needed) to the identical
tree: member order and each number's literal text are kept, and it is
checked by decoding before it is printed. When valid TOON would read the
auto text differently, it opens with the line "(auto)".

Malformed JSON is reported as FILE:LINE:COL: message, with exit status 1.
TOON cannot carry a repeated object key or a lone UTF-16 surrogate escape
("\ud83d"): --to toon refuses such input with the key's position or the
string's JSON Pointer (json and auto keep them). Binary input (not UTF-8
text) is written out unchanged, with a note on stderr.

Examples:
  terse encode payload.json | terse count
  terse encode --to toon payload.json
  terse encode payload.json --exact
  terse encode --delimiter tab --indent 4 payload.json
  curl -s https://api.example.com/items | terse encode --to json
`

func runEncode(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("encode", "[--to toon|json|auto] [--exact] [--tokenizer T] [--delimiter D] [--indent N] [FILE]", encodeDoc, stdout, stderr)
	to := fs.String("to", "auto", "output `FORMAT`: auto (cheapest faithful), toon or json (compact)")
	tokenizer := fs.String("tokenizer", "o200k_base", "auto: `TOKENIZER` that measures the candidates: o200k_base, cl100k_base or estimate")
	delim := fs.String("delimiter", ",", "TOON `DELIMITER`: ',' , '|' or tab ('\\t' or \"tab\")")
	indent := fs.Int("indent", toon.DefaultIndent, "TOON spaces per indentation level")
	exact := fs.Bool("exact", false, "TOON: keep each number's literal text and every object's member order")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return &usageError{"encode takes at most one FILE"}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["to"] && (set["exact"] || set["delimiter"] || set["indent"]) {
		*to = "toon" // flags only TOON has
	}
	if err := choice("to", *to, "auto", "toon", "json"); err != nil {
		return err
	}
	opts := &toon.EncodeOptions{IndentSize: *indent, ExactNumbers: *exact, KeepKeyOrder: *exact}
	switch *delim {
	case ",":
		opts.Delimiter = toon.Comma
	case "|":
		opts.Delimiter = toon.Pipe
	case "\t", `\t`, "tab":
		opts.Delimiter = toon.Tab
	default:
		return &usageError{fmt.Sprintf("--delimiter %q: want ',', '|', tab or '\\t'", *delim)}
	}
	if *indent < 1 {
		return &usageError{"--indent must be at least 1"}
	}
	data, name, err := readInput(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	limitMemory(len(data), *to != "toon")
	if tokens.Binary(data) {
		binaryNote(stderr, name, len(data))
		_, err := stdout.Write(data)
		return err
	}
	// TOON cannot carry a repeated key: it is refused where it repeats,
	// never silently reduced to one member.
	po := tree.ParseOptions{NoDuplicateKeys: *to == "toon"}
	v, err := po.ParseOwned(data) // data is not used again
	if err != nil {
		return inputError(stderr, name, err)
	}
	var out []byte
	switch *to {
	case "toon":
		// Nor can spec TOON carry a lone surrogate escape ("\ud83d"):
		// refused, naming where it is.
		if err := toon.Representable(v); err != nil {
			fmt.Fprintf(stderr, "%s: %v; --to auto or --to json keep it\n", name, err)
			return errReported
		}
		// The encoder writes in 64 KiB chunks; no output buffer the size
		// of the document.
		if err := toon.NewEncoder(stdout, opts).Encode(v); err != nil {
			return err
		}
		_, err := io.WriteString(stdout, "\n")
		return err
	case "json":
		out = tree.AppendJSON(make([]byte, 0, tree.JSONLen(v)+1), v)
	case "auto":
		counter, err := tokens.Get(*tokenizer)
		if err != nil {
			return &usageError{err.Error()}
		}
		// The input, when it is compact JSON already, is the compact
		// candidate: no second copy of it.
		in := bytes.TrimSpace(data)
		text, _, err := render.Encode(v, &render.Options{Counter: counter, Compact: unsafe.String(unsafe.SliceData(in), len(in))})
		if err != nil {
			return err
		}
		// Written as it is, not copied into a buffer with the newline.
		if _, err := io.WriteString(stdout, text); err != nil {
			return err
		}
		_, err = io.WriteString(stdout, "\n")
		return err
	}
	out = append(out, '\n')
	_, err = stdout.Write(out)
	return err
}

// inputError reports malformed input as one line NAME:LINE:COL: message and
// returns errReported; other errors are returned as they are.
func inputError(stderr io.Writer, name string, err error) error {
	var line, col int
	var msg string
	if se, ok := errors.AsType[*tree.SyntaxError](err); ok {
		line, col, msg = se.Line, se.Column, se.Msg
	} else if se, ok := errors.AsType[*render.SyntaxError](err); ok {
		line, col, msg = se.Line, se.Column, se.Msg
	} else if se, ok := errors.AsType[*toon.SyntaxError](err); ok {
		line, col, msg = se.Line, se.Column, se.Msg
		if se.Pointer != "" {
			msg += " (at " + strconv.Quote(string(se.Pointer)) + ")"
		}
	} else {
		return err
	}
	fmt.Fprintf(stderr, "%s:%d:%d: %s\n", name, line, col, msg)
	return errReported
}
