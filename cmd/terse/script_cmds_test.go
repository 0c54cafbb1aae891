package main

import (
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptCmds are commands the scripts use besides testscript's own.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// binfile FILE N writes N bytes that are not text (every byte value
	// in turn, NUL and invalid UTF-8 included) to FILE.
	"binfile": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: binfile FILE N")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 7)
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
	},
}
