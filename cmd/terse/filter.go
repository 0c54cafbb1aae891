package main

import (
	"context"
	"io"
)

func runFilter(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errNotBuilt("filter")
}
