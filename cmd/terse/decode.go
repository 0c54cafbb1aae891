package main

import (
	"context"
	"errors"
	"fmt"
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
specification's non-strict mode accepts.

--from says what the input is: toon, auto (terse encode --to auto: an auto
document, fenced TOON or JSON) or detect (the default). Detect reads the
text both ways: when only one reading succeeds it is used, when both give
the same tree that tree is printed, and when they disagree decode stops and
asks for --from rather than guess.

Examples:
  terse decode data.toon
  terse encode payload.json | terse decode --pretty
  terse encode --to auto payload.json | terse decode
  terse decode --indent 4 --strict=false data.toon
`

func runDecode(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("decode", "[--from detect|toon|auto] [--strict=true|false] [--indent N] [--pretty] [FILE]", decodeDoc, stdout, stderr)
	strict := fs.Bool("strict", true, "strict mode: counts, widths, indentation and keys are checked")
	indent := fs.Int("indent", toon.DefaultIndent, "spaces per indentation level of the input")
	pretty := fs.Bool("pretty", false, "indent the JSON output by two spaces per level")
	from := fs.String("from", "detect", "input format: detect, toon or auto")
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
	topts := &toon.DecodeOptions{IndentSize: *indent, Lenient: !*strict}
	var v tree.Value
	switch *from {
	case "toon":
		v, err = toon.Unmarshal(data, topts)
	case "auto":
		v, err = render.Decode(string(data))
	case "detect":
		v, err = decodeDetect(data, topts)
	default:
		return &usageError{fmt.Sprintf("--from %q: want detect, toon or auto", *from)}
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

// decodeDetect reads data as TOON and as terse's auto output. Where the two
// readings could differ, it never guesses: a text both read differently is
// an error asking for --from.
func decodeDetect(data []byte, topts *toon.DecodeOptions) (tree.Value, error) {
	tv, terr := toon.Unmarshal(data, topts)
	av, aerr := render.Decode(string(data))
	switch {
	case terr == nil && aerr == nil:
		if !tree.Equal(tv, av) {
			return tree.Value{}, errors.New("the input reads differently as TOON and as auto output; say which with --from toon or --from auto")
		}
		return tv, nil
	case terr == nil:
		return tv, nil
	case aerr == nil:
		return av, nil
	}
	// Neither reading works: report the error of the format the text
	// looks like (auto documents open with declarations or a fence).
	s := string(data)
	if strings.HasPrefix(s, "~") || strings.HasPrefix(s, "@") || strings.HasPrefix(s, "```") {
		return tree.Value{}, aerr
	}
	return tree.Value{}, terr
}
