package main

import (
	"math"
	"runtime/debug"
)

// limitMemory sets the collector's soft memory limit for a command that
// holds an input of n bytes: a few times the input, so that the heap does
// not grow to twice its live size between collections (the default) when
// the input is large. A limit set by GOMEMLIMIT is kept. The limit is
// soft: a command that needs more still gets it, at the cost of more
// frequent collections.
func limitMemory(n int) {
	const floor = 256 << 20 // small inputs: the collector's default pacing
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return
	}
	debug.SetMemoryLimit(max(floor, int64(n)*memoryMultiple))
}

// memoryMultiple is the soft memory limit as a multiple of the input.
const memoryMultiple = 3
