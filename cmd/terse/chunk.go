package main

import (
	"context"
	"io"
)

func runChunk(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errNotBuilt("chunk")
}
