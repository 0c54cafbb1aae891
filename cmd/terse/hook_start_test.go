package main

import (
	"testing"

	"github.com/terse-dev/terse/internal/lazyre"
)

// TestLazyRegexpsCompile compiles every regular expression the packages
// of this program build on first use (to keep them out of process start),
// so that a bad one fails here rather than at its first use.
func TestLazyRegexpsCompile(t *testing.T) {
	if err := lazyre.CompileAll(); err != nil {
		t.Fatal(err)
	}
}
