package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

const decodeDoc = `
Decode reads a TOON v4 document, or anything terse encode writes, and
writes it as JSON, members in order and numbers with their literal text.
Strict mode (the default) enforces declared array lengths, row widths,
indentation and unique keys, and reports the first problem as
FILE:LINE:COL: message (exit status 1); --strict=false accepts what the
specification's non-strict mode accepts (duplicate keys: the last wins).

--from says what the input is: toon, auto (terse encode --to auto), json,
or detect (the default). Detect never guesses between readings: a text
that opens with the line "(auto)" is auto output, a text that is one JSON
array or object is JSON, and anything else is TOON, read exactly as the
specification says. terse encode --to auto marks its output whenever TOON
would read it differently, so its output needs no --from.

Auto output is read with bounds, since anyone can write it: values nest
at most --max-depth levels, and legend and prefix references may expand
a document to at most --max-expansion times its size (docs/format.md,
"Limits").

Examples:
  terse decode data.toon
  terse encode payload.json | terse decode --pretty
  terse encode --to auto payload.json | terse decode
  terse decode --indent 4 --strict=false data.toon
`

func runDecode(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("decode", "[--from detect|toon|auto|json] [--strict=true|false] [--indent N] [--pretty] [FILE]", decodeDoc, stdout, stderr)
	strict := fs.Bool("strict", true, "strict mode: counts, widths, indentation and keys are checked")
	indent := fs.Int("indent", toon.DefaultIndent, "TOON spaces per indentation level of the input")
	pretty := fs.Bool("pretty", false, "indent the JSON output by two spaces per level")
	from := fs.String("from", "detect", "input `FORMAT`: detect, toon, auto or json")
	maxDepth := fs.Int("max-depth", render.DefaultMaxDepth, "auto and JSON input: deepest nesting accepted")
	maxExpansion := fs.Int("max-expansion", render.DefaultMaxExpansion, "auto input: how many times its size references may expand it (at least 1 MiB, at most 256 MiB)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return &usageError{"decode takes at most one FILE"}
	}
	if err := choice("from", *from, "detect", "toon", "auto", "json"); err != nil {
		return err
	}
	if *indent < 1 {
		return &usageError{"--indent must be at least 1"}
	}
	if *maxDepth < 1 {
		return &usageError{"--max-depth must be at least 1"}
	}
	if *maxExpansion < 1 {
		return &usageError{"--max-expansion must be at least 1"}
	}
	data, name, err := readInput(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	topts := &toon.DecodeOptions{IndentSize: *indent, Lenient: !*strict}
	aopts := &render.DecodeOptions{MaxDepth: *maxDepth, MaxExpansion: *maxExpansion}
	if *from == "detect" {
		*from = detect(data)
	}
	var v tree.Value
	switch *from {
	case "toon":
		v, err = toon.Unmarshal(data, topts)
	case "auto":
		v, err = aopts.Decode(string(data))
	case "json":
		v, err = tree.ParseOptions{MaxDepth: *maxDepth}.Parse(data)
	}
	if err != nil {
		return inputError(stderr, name, err)
	}
	var out []byte
	if *pretty {
		out = tree.AppendIndent(nil, v, "  ")
	} else {
		out = tree.AppendJSON(nil, v)
	}
	_, err = stdout.Write(append(out, '\n'))
	return err
}

// detect says how to read data: "auto" when it opens with the marker line
// auto output carries whenever TOON would read it differently, "json" when
// it is one JSON array or object, else "toon". No TOON encoder writes a
// document that opens with the marker or is a JSON array or object (it
// would quote such a string), so TOON documents are read as TOON.
func detect(data []byte) string {
	s := strings.TrimRight(string(data), " \t\r\n")
	switch {
	case render.Marked(s + "\n"):
		return "auto"
	case len(s) > 0 && (s[0] == '{' || s[0] == '[') && json.Valid(data):
		return "json"
	}
	return "toon"
}
