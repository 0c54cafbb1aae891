package main

import (
	"context"
	"io"
)

func runHistory(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errNotBuilt("history")
}
