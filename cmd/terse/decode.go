package main

import (
	"context"
	"io"
)

func runDecode(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return errNotBuilt("decode")
}
