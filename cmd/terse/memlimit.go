package main

import (
	"os"
	"runtime/debug"
)

// limitMemory paces the collector for a command that holds an input of n
// bytes. By default the heap may grow to twice its live size between
// collections; for a large input that slack is several times the input,
// so the collector runs when the heap has grown by a quarter instead
// (more collections, each marking the same live heap). GOGC, when set,
// is kept.
func limitMemory(n int) {
	if n < largeInput || os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(25)
}

// largeInput is the input size from which limitMemory paces the collector.
const largeInput = 16 << 20
