package dedup_test

import (
	"fmt"
	"strings"

	"github.com/terse-dev/terse/dedup"
)

// A Pipeline keeps one Cache for the process and keys it by session and
// context partition.
func ExampleCache_Process() {
	c := dedup.New(dedup.Options{})
	k := dedup.Key{Session: "conv-1", Partition: "main"}
	result := []byte(strings.Repeat("package main // a file the agent read\n", 8))

	first := c.Process(k, dedup.Call{Tool: "Read", Paths: []string{"main.go"}, Content: result})
	fmt.Println(first.Kind, first.IDLine) // shown with the result

	again := c.Process(k, dedup.Call{Tool: "Read", Paths: []string{"main.go"}, Content: result})
	fmt.Println(again.Kind, again.Hint) // shown instead of the result

	c.Process(k, dedup.Call{Tool: "Edit", Paths: []string{"main.go"}}) // invalidates reads of main.go
	fmt.Println(c.Process(k, dedup.Call{Tool: "Read", Paths: []string{"main.go"}, Content: result}).Kind)
	// Output:
	// miss > [id: 0cc0819e]
	// ref > [ref: 0cc0819e, byte-identical]
	// miss
}
