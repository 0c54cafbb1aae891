//go:build unix

package main

import (
	"io/fs"
	"os"
	"syscall"
)

// chownLike gives f the owner and group of like. That works when they are
// ours, or for root; a file of another user that we may write ends up
// ours, which is all the operating system allows.
func chownLike(f *os.File, like fs.FileInfo) {
	if st, ok := like.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}
