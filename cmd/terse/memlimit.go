package main

import (
	"os"
	"runtime/debug"
)

// limitMemory paces the collector for a command that holds an input of n
// bytes. By default the heap may grow to twice its live size between
// collections; for a large input that slack is several times the input,
// so the collector runs when the heap has grown by a quarter instead
// (more collections, each marking the same live heap), and a soft limit
// of memoryFactor times the input makes it collect harder before the
// process outgrows that (the executable's own pages come on top). The
// limit is soft: a command whose live data needs more gets it, at the
// cost of more collections. GOGC and GOMEMLIMIT, when set, are kept.
// Without pace only the soft limit is set: a command whose heap is the
// input and its tree (encode --to toon, which streams its output) gains
// nothing from more collections but their cost.
func limitMemory(n int, pace bool) {
	if n < largeInput {
		return
	}
	if pace && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(float64(n) * memoryFactor))
	}
}

// largeInput is the input size from which limitMemory paces the collector.
const largeInput = 16 << 20

// memoryFactor is the soft memory limit that limitMemory sets, in
// multiples of the input (docs/limits.md).
const memoryFactor = 3.5
