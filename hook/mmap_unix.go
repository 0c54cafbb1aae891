//go:build unix

package hook

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f from off, read-only: a transcript is read
// once, and mapping it saves zeroing and copying megabytes per hook call.
// The caller unmaps with the returned function. A file cut short while
// mapped faults on access: callers run with debug.SetPanicOnFault.
func mapFile(f *os.File, off, size int64) ([]byte, func(), error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	pg := int64(os.Getpagesize())
	start := off &^ (pg - 1)
	b, err := syscall.Mmap(int(f.Fd()), start, int(off-start+size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b[off-start:], func() { syscall.Munmap(b) }, nil
}
