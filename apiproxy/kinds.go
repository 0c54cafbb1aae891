package apiproxy

import (
	"path"
	"strings"

	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tree"
)

// Call kinds, for how a left-out result can be had again. A result the
// proxy left out can be seen again by repeating its call only when the
// call only reads: repeating a write, an edit, a push, a publish or a POST
// does it twice and never gives back what the first one returned. So a
// call counts as read-only only when it is known to be one (its tool's
// class, or a shell command made only of reading commands); every other
// call may have side effects, and its left-out result is declared not
// recoverable rather than "call it again".

// readOnly reports whether c is known to change nothing.
func readOnly(c call) bool {
	return readOnlyArgs(c, tree.Null(), false)
}

// readOnlyArgs is readOnly with c's arguments already parsed (when
// parsed is true).
func readOnlyArgs(c call, args tree.Value, parsed bool) bool {
	if readTools[strings.ToLower(c.name)] {
		return true
	}
	switch telemetry.ClassOf(c.name) {
	case "file_read", "file_search", "web", "chunk", "mcp_list", "mcp_get", "mcp_search":
		return true
	case "shell":
		if !parsed {
			args, _ = tree.ParseString(c.args)
		}
		cmd, ok := shellCommand(args)
		return ok && readOnlyCommand(cmd)
	}
	return false
}

// shellCommand is the command line of a shell call: "command" or "cmd" as
// a string, or as an argv (a shell's "-c" script when it is one).
func shellCommand(v tree.Value) (string, bool) {
	if v.Kind() != tree.KindObject {
		return "", false
	}
	for _, k := range []string{"command", "cmd"} {
		x, ok := v.Get(k)
		if !ok {
			continue
		}
		switch x.Kind() {
		case tree.KindString:
			return x.Str(), true
		case tree.KindArray:
			var argv []string
			for _, it := range x.Items() {
				if it.Kind() != tree.KindString {
					return "", false
				}
				argv = append(argv, it.Str())
			}
			if len(argv) == 3 && (argv[1] == "-c" || argv[1] == "-lc") && shells[path.Base(argv[0])] {
				return argv[2], true
			}
			return strings.Join(argv, " "), true
		}
		return "", false
	}
	return "", false
}

var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true}

// readCommands are commands that only read, whatever their arguments
// (but see readOnlyCommand for the exceptions it checks).
var readCommands = map[string]bool{
	"cat": true, "head": true, "tail": true, "less": true, "more": true, "ls": true, "pwd": true, "echo": true,
	"printf": true, "wc": true, "grep": true, "egrep": true, "fgrep": true, "rg": true, "ag": true, "find": true,
	"fd": true, "tree": true, "stat": true, "file": true, "du": true, "df": true, "which": true, "type": true,
	"whereis": true, "sort": true, "uniq": true, "cut": true, "tr": true, "diff": true, "cmp": true, "jq": true,
	"nl": true, "sed": true, "date": true, "env": true, "printenv": true, "uname": true, "whoami": true, "id": true,
	"hostname": true, "basename": true, "dirname": true, "realpath": true, "readlink": true, "true": true,
	"test": true, "[": true, "cd": true, "git": true, "curl": true, "sha256sum": true, "md5sum": true, "xxd": true,
	"od": true, "column": true, "comm": true,
}

// readGit are the git subcommands that only read.
var readGit = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "blame": true, "grep": true, "ls-files": true,
	"rev-parse": true, "describe": true, "shortlog": true, "ls-tree": true, "cat-file": true, "reflog": true,
}

// readOnlyCommand reports whether a shell command line is made only of
// reading commands: no redirection into a file, no substitution, and each
// command of its pipelines and lists one of readCommands (git with a
// reading subcommand, sed without -i, find without -delete or -exec, curl
// without a method, data or output file).
func readOnlyCommand(cmd string) bool {
	for _, ok := range []string{"2>&1", ">&2", "2>/dev/null", ">/dev/null", "> /dev/null", "2> /dev/null"} {
		cmd = strings.ReplaceAll(cmd, ok, " ")
	}
	if strings.ContainsAny(cmd, ">`") || strings.Contains(cmd, "$(") || strings.Contains(cmd, "<(") {
		return false
	}
	segs := strings.FieldsFunc(cmd, func(r rune) bool { return r == '|' || r == '&' || r == ';' || r == '\n' })
	if len(segs) == 0 {
		return false
	}
	for _, s := range segs {
		f := strings.Fields(s)
		for len(f) > 0 && strings.Contains(f[0], "=") && !strings.HasPrefix(f[0], "=") {
			f = f[1:] // VAR=value
		}
		if len(f) == 0 {
			continue
		}
		name := path.Base(f[0])
		if !readCommands[name] {
			return false
		}
		args := f[1:]
		has := func(flags ...string) bool {
			for _, a := range args {
				for _, fl := range flags {
					short := len(fl) == 2 && len(a) >= 2 && a[0] == '-' && a[1] != '-' // -x, or grouped: -sx, -xVALUE
					if a == fl || strings.HasPrefix(a, fl+"=") || short && strings.Contains(a[1:], fl[1:]) {
						return true
					}
				}
			}
			return false
		}
		switch name {
		case "git":
			sub := ""
			for _, a := range args {
				if !strings.HasPrefix(a, "-") {
					sub = a
					break
				}
			}
			if !readGit[sub] {
				return false
			}
		case "sed":
			if has("-i", "--in-place") {
				return false
			}
		case "find":
			if has("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls") {
				return false
			}
		case "curl":
			if has("-X", "--request", "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--json",
				"-F", "--form", "-T", "--upload-file", "-o", "--output", "-O", "--remote-name") {
				return false
			}
		case "env":
			if len(args) > 0 {
				return false // env runs its argument
			}
		}
	}
	return true
}
