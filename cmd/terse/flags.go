package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/terse-dev/terse/config"
)

// newFlagSet returns a FlagSet for a subcommand whose --help prints synopsis,
// a description and the flags to stdout.
func newFlagSet(name, synopsis, doc string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("terse "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: %s\n\n%s\n", strings.TrimSpace("terse "+name+" "+synopsis), strings.TrimSpace(doc))
		var hasFlags bool
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(w, "\nFlags:\n")
			printFlags(w, fs)
		}
	}
	return fs
}

// printFlags lists the flags as "--name PLACEHOLDER", the usage text and a
// non-zero default. The placeholder is the usage's `quoted` word in upper
// case, else one named after the flag's type (N, F, TEXT, DURATION).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if isBool(f) {
			name = ""
		} else {
			switch name {
			case "int", "uint", "int64", "uint64":
				name = "N"
			case "float":
				name = "F"
			case "string":
				name = "TEXT"
			case "duration":
				name = "DURATION"
			case "value":
				name = "VALUE"
			}
			line += " " + strings.ToUpper(name)
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if d := f.DefValue; d != "" && d != "0" && d != "false" && !strings.Contains(usage, "default") {
			if strings.ContainsAny(d, " ,|\t") {
				d = fmt.Sprintf("%q", d)
			}
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// commandLineArgs names the flag sets whose arguments, from the first one
// on, are another program's command line: their flags come first.
var commandLineArgs = map[string]bool{"terse proxy": true, "terse wrap": true}

// parseFlags parses args; --help prints usage to stdout and returns
// errHelp, which callers return as success. Flags may come before, after
// or between the other arguments ("terse count FILE --json"); "--" ends
// the flags, and everything after it is an argument.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	// The flag package prints usage itself before returning; silence that
	// so --help goes to stdout once and a bad flag's usage to stderr once.
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard) // errors are reported by flagError, in one line
	defer fs.SetOutput(out)
	var positional []string
	var err error
	for {
		if err = fs.Parse(args); err != nil {
			break
		}
		rest := fs.Args()
		used := len(args) - len(rest)
		if len(rest) == 0 || used > 0 && args[used-1] == "--" || commandLineArgs[fs.Name()] {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		defer fs.SetOutput(out)
		fs.Usage()
		return errHelp
	}
	if err != nil {
		return flagError(fs, err)
	}
	// Leave the arguments where fs.Args finds them.
	if perr := fs.Parse(append([]string{"--"}, positional...)); perr != nil {
		return perr
	}
	useDefaultConfig(fs)
	return nil
}

// useDefaultConfig gives a command's --config the default configuration
// file (config.DefaultPath) when it was not given and that file exists,
// so that every command reads the same settings without being told.
// (terse filter uses it only with --tool.)
func useDefaultConfig(fs *flag.FlagSet) {
	f := fs.Lookup("config")
	if f == nil || f.Value.String() != "" {
		return
	}
	if fs.Lookup("manifest") != nil && fs.Lookup("tool").Value.String() == "" {
		return // terse filter without --tool: a manifest's, or nothing
	}
	if path := config.DefaultFile(); path != "" {
		fs.Set("config", path)
	}
}

// flagError turns the flag package's error into one line that names the
// flag as it is written (--name), suggests the nearest flag for an
// unknown one, and points at the command's help.
func flagError(fs *flag.FlagSet, err error) error {
	cmd := strings.TrimPrefix(fs.Name(), "terse ")
	see := "; see terse " + cmd + " --help"
	msg := err.Error()
	dashes := func(m string) string { // "-name" as "--name"
		for _, p := range []string{"flag: -", "flag -", "argument: -", "defined: -", "for -"} {
			m = strings.Replace(m, p, p+"-", 1)
		}
		return m
	}
	const undefined = "flag provided but not defined: -"
	if name, ok := strings.CutPrefix(msg, undefined); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		m := "unknown flag --" + name
		if s := nearest(name, names); s != "" {
			m += " (did you mean --" + s + "?)"
		}
		return &usageError{cmd + ": " + m + see}
	}
	return &usageError{cmd + ": " + dashes(msg) + see}
}

// nearest returns the candidate closest to s in edit distance when it is
// close enough to be a likely typo, else "".
func nearest(s string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(s, c)
		if strings.HasPrefix(c, s) && len(s) >= 2 {
			d = min(d, 1)
		}
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, min(len(s), len(best))/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// flagGiven reports whether args set the flag name (-name or --name,
// with or without "=value"), before any "--".
func flagGiven(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// errHelp is returned after --help was printed; run treats it as success.
var errHelp = errors.New("help printed")

// choice checks a flag's value against the valid ones and says all of
// them when it is not one.
func choice(flagName, value string, valid ...string) error {
	for _, v := range valid {
		if v == value {
			return nil
		}
	}
	return &usageError{fmt.Sprintf("--%s %q: want %s", flagName, value, orList(valid))}
}

// orList writes "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// writeOutput writes data to the output file a flag names; "-" is
// standard output, as for every output flag of terse.
func writeOutput(path string, stdout io.Writer, data []byte) error {
	if path == "-" {
		_, err := stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

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
