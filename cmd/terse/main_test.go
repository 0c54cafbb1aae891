package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain makes the test binary double as the terse command, so the
// scripts in testdata/script run the real program end to end.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"terse": func() {
			err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
			os.Exit(exitCode(err, os.Stderr))
		},
	})
}

// TestScripts runs testdata/script/*.txtar. Each script is a CLI session:
// commands, files, and the stdout/stderr they must produce. Run with
// -update to rewrite the expected output in place.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Cmds:          scriptCmds,
		Setup: func(env *testscript.Env) error {
			// Scripts read shared corpus files through $SHARED when present.
			if d := sharedDir(); d != "" {
				env.Setenv("SHARED", d)
			}
			// The npm launcher, for the script that runs it.
			if p, err := filepath.Abs("../../npm/terse/bin/terse.js"); err == nil {
				env.Setenv("NPM_LAUNCHER", p)
			}
			return nil
		},
	})
}
