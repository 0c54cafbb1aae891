package apiproxy

import "github.com/terse-dev/terse/tree"

// get returns v's member k (null when absent).
func get(v tree.Value, k string) tree.Value {
	x, _ := v.Get(k)
	return x
}
