//go:build !unix

package hook

import (
	"errors"
	"os"
)

// mapFile is not available here: transcripts are read.
func mapFile(f *os.File, off, size int64) ([]byte, func(), error) {
	return nil, nil, errors.New("no mmap")
}
