package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/terse-dev/terse/tokens"
)

const countDoc = `
Count prints the tokens each FILE encodes to with a real tokenizer, then the
total. The counts equal tiktoken's for o200k_base (GPT-4o and later) and
cl100k_base (GPT-4, GPT-3.5); "estimate" is bytes/3.5 and is labelled so.
With no FILE, or FILE "-", it counts standard input.

Examples:
  terse count payload.json
  terse encode payload.json | terse count
  terse count --tokenizer cl100k_base --json a.json b.json
`

func runCount(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("count", "[--tokenizer o200k_base|cl100k_base|estimate] [--json] [FILE...]", countDoc, stdout, stderr)
	name := fs.String("tokenizer", "o200k_base", "`TOKENIZER`: o200k_base, cl100k_base or estimate")
	asJSON := fs.Bool("json", false, "print a JSON object instead of a table")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	counter, err := tokens.Get(*name)
	if err != nil {
		return &usageError{err.Error()}
	}
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	type fileCount struct {
		File   string `json:"file"`
		Tokens int    `json:"tokens"`
		Bytes  int    `json:"bytes"`
	}
	out := struct {
		Tokenizer string      `json:"tokenizer"`
		Exact     bool        `json:"exact"`
		Files     []fileCount `json:"files"`
		Tokens    int         `json:"tokens"`
		Bytes     int         `json:"bytes"`
	}{Tokenizer: counter.Name(), Exact: counter.Exact()}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, name, err := readInput(f, stdin)
		if err != nil {
			return err
		}
		n := counter.Count(string(data))
		out.Files = append(out.Files, fileCount{name, n, len(data)})
		out.Tokens += n
		out.Bytes += len(data)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "tokens\tbytes\t\n")
	for _, fc := range out.Files {
		fmt.Fprintf(tw, "%d\t%d\t %s\n", fc.Tokens, fc.Bytes, fc.File)
	}
	if len(out.Files) > 1 {
		fmt.Fprintf(tw, "%d\t%d\t total\n", out.Tokens, out.Bytes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if counter.Exact() {
		_, err = fmt.Fprintf(stdout, "tokenizer: %s\n", counter.Name())
	} else {
		_, err = fmt.Fprintf(stdout, "tokenizer: %s (bytes/%.1f, not an exact count)\n", counter.Name(), tokens.BytesPerToken)
	}
	return err
}
