package main

import (
	"context"
	"io"

	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

const decodeDoc = `
Decode reads a TOON v4 document and writes it as JSON, members in order and
numbers with their literal text. Strict mode (the default) enforces declared
array lengths, row widths, indentation and unique keys, and reports the first
problem as FILE:LINE:COL: message (exit status 1); --strict=false accepts
what the specification's non-strict mode accepts.

Examples:
  terse decode data.toon
  terse encode payload.json | terse decode --pretty
  terse decode --indent 4 --strict=false data.toon
`

func runDecode(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("decode", "[--strict=true|false] [--indent N] [--pretty] [FILE]", decodeDoc, stdout, stderr)
	strict := fs.Bool("strict", true, "strict mode: counts, widths, indentation and keys are checked")
	indent := fs.Int("indent", toon.DefaultIndent, "spaces per indentation level of the input")
	pretty := fs.Bool("pretty", false, "indent the JSON output by two spaces per level")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return &usageError{"decode takes at most one FILE"}
	}
	if *indent < 1 {
		return &usageError{"--indent must be at least 1"}
	}
	data, name, err := readInput(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	v, err := toon.Unmarshal(data, &toon.DecodeOptions{IndentSize: *indent, Lenient: !*strict})
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
