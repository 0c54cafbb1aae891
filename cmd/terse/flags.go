package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// newFlagSet returns a FlagSet for a subcommand whose --help prints synopsis,
// a description and the flags to stdout.
func newFlagSet(name, synopsis, doc string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("terse "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: terse %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(doc))
		var hasFlags bool
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args; --help prints usage to stdout and returns
// errHelp, which callers return as success.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	// The flag package prints usage itself before returning; silence that
	// so --help goes to stdout once and a bad flag's usage to stderr once.
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return errHelp
	}
	if err != nil {
		fs.Usage() // to stderr, after the flag package's one-line message
		return errUsage
	}
	return nil
}

// errHelp is returned after --help was printed; run treats it as success.
var errHelp = errors.New("help printed")

// openInput opens FILE, or standard input for "" and "-". The name is for
// error messages.
func openInput(path string, stdin io.Reader) (r io.Reader, name string, close func(), err error) {
	if path == "" || path == "-" {
		return stdin, "<stdin>", func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, nil, err
	}
	return f, path, func() { f.Close() }, nil
}

// readInput reads all of FILE or standard input.
func readInput(path string, stdin io.Reader) ([]byte, string, error) {
	r, name, closeFn, err := openInput(path, stdin)
	if err != nil {
		return nil, name, err
	}
	defer closeFn()
	if f, ok := r.(*os.File); ok && f != os.Stdin {
		// A file's size is known: read it into one buffer of that size
		// instead of growing one by doubling.
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			data := make([]byte, 0, st.Size()+1)
			for {
				n, err := f.Read(data[len(data):cap(data)])
				data = data[:len(data)+n]
				if err == io.EOF {
					return data, name, nil
				}
				if err != nil {
					return data, name, err
				}
				if len(data) == cap(data) {
					data = append(data, 0)[:len(data)] // grew while reading
				}
			}
		}
	}
	data, err := io.ReadAll(r)
	return data, name, err
}

// errNotBuilt is what a subcommand that does not exist yet returns.
func errNotBuilt(name string) error {
	return fmt.Errorf("%s: not available in this build", name)
}
