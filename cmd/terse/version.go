package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

const versionDoc = `
Version prints terse's module version, the VCS revision it was built from
(with "+dirty" when the tree had uncommitted changes) and the Go version,
from the build information Go records in every binary. A binary built
from a clone with "go install ./cmd/terse" reports a pseudo-version made
of the last commit's time and revision (v0.0.0-20261124012952-5b0477923e08),
or "(devel)" with a Go before 1.24 or outside a VCS checkout;
"go install github.com/terse-dev/terse/cmd/terse@v1.2.3" reports v1.2.3.
"terse --version" prints the same.
`

func runVersion(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "", versionDoc, stdout, stderr)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{"version takes no arguments"}
	}
	_, err := fmt.Fprintln(stdout, versionLine())
	return err
}

// version is set by release builds (-ldflags "-X main.version=v1.2.3")
// when the module version is not in the build information.
var version = ""

// versionLine is "terse VERSION (REVISION, DATE) GO OS/ARCH".
func versionLine() string {
	v, rev, when, dirty, gov := version, "", "", false, runtime.Version()
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = info.Main.Version
		}
		if info.GoVersion != "" {
			gov = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if rev == "" {
		rev = "unknown revision"
	} else {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
	}
	if when != "" {
		rev += ", " + when
	}
	return fmt.Sprintf("terse %s (%s) %s %s/%s", v, rev, gov, runtime.GOOS, runtime.GOARCH)
}
