package store

import (
	"bytes"
	"os"
	"testing"

	"github.com/terse-dev/terse/internal/corpus"
)

// benchPayload returns n bytes of real tool output: the largest corpus JSON
// file, repeated or cut to n. Without the corpus it is repeated JSON text.
func benchPayload(b *testing.B, n int) []byte {
	var src []byte
	if corpus.Shared() != "" {
		for _, f := range corpus.Files(b, ".json") {
			if data, err := os.ReadFile(f); err == nil && len(data) > len(src) {
				src = data
			}
		}
	}
	if len(src) == 0 {
		src = []byte(`{"id":1,"title":"fix the store","labels":["bug"],"state":"open"},`)
	}
	return bytes.Repeat(src, n/len(src)+1)[:n]
}
