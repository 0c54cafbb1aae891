package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/terse-dev/terse/shape"
)

const expandDoc = `
Expand prints the original of a text that "terse compact" (or a proxy)
shaped losslessly, byte for byte: the text opens with a header line such
as

  > [lossless: "→" numbers unpadded to width 6]

naming the rules that were applied, and expand undoes them in reverse. A
display shaping ("> [display: terminal view; …]") expands to what a
terminal showed of the original (its escape codes and overwritten text
are not kept). A text that is neither, or whose rules do not undo, is an
error with its line and column; an elided text is not expanded: fetch its
chunks with the command it names.

Examples:
  terse compact --tool Read read.txt | terse expand
  terse expand shaped.txt > original.txt
`

func runExpand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("expand", "[FILE]", expandDoc, stdout, stderr)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return &usageError{"expand: at most one FILE"}
	}
	data, name, err := readInput(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	out, err := shape.Expand(unsafe.String(unsafe.SliceData(data), len(data)))
	if ee, ok := errors.AsType[*shape.ExpandError](err); ok {
		fmt.Fprintf(stderr, "%s:%d:%d: %s\n", name, ee.Line, ee.Col, ee.Msg)
		return errReported
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, out)
	return err
}
