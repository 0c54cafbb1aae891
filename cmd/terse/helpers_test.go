package main

import (
	"flag"

	"github.com/terse-dev/terse/internal/corpus"
)

var update = flag.Bool("update", false, "rewrite golden output in testdata")

func sharedDir() string { return corpus.Shared() }
