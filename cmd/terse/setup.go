package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/terse-dev/terse/tree"
)

const setupDoc = `
Setup rewrites an MCP client's configuration so that every stdio server it
lists runs through terse: "command": "npx", "args": ["-y", "srv"] becomes
"command": "/path/to/terse", "args": ["proxy", "--", "npx", "-y", "srv"].
A command written as one string ("npx -y srv", no args) is split into
its words.

A Claude Code or Cursor server reached over Streamable HTTP (type "http")
whose credentials are in "headers" is wrapped too, as "terse proxy
--upstream URL --header-env NAME=TERSE_HEADER_1", the header values moved
into the server's "env" (they stay off the command line). Other servers
reached over HTTP are left alone, and setup says so: one without headers
may sign in by OAuth, which only the client can do (run it through
"terse proxy --upstream" or "terse gateway" by hand if it needs none).

Only the command and args values of the stdio servers it wraps change, in
the layout they had (an HTTP server's object is rewritten whole); every other byte of the file stays (comments in TOML,
escapes and number spellings in JSON). A file that is a symbolic link is
written through it; the mode and owner are kept; the new file replaces
the old one atomically. A read-only file is left alone.

Clients and the files each one reads (--config-path names one file):
  claude-code   ./.mcp.json (project scope) and ~/.claude.json (user
                scope "mcpServers" and every project's "mcpServers"),
                both when both exist, as Claude Code reads them
  cursor        ~/.cursor/mcp.json ("mcpServers")
  codex         $CODEX_HOME/config.toml, else ~/.codex/config.toml
                (mcp_servers, in any TOML form: [mcp_servers.NAME]
                tables, dotted keys, inline tables)

Before the first change setup copies each file to FILE.terse-backup
(kept, never overwritten). Running it again changes nothing: wrapped
servers are recognised. --dry-run prints the diff and writes nothing.
--undo unwraps every server terse wraps, giving back its own command and
arguments (the backup's bytes when nothing else changed since).

The command written is this binary's absolute path, which an MCP client
started from a desktop finds whatever its PATH. A terse run from a
temporary place (a "go run" build, npx's cache) is not written: install
terse first, or name a lasting binary with --terse. The wrapped servers
read terse's default config file (see terse config --help), so its
settings apply to them without --config. Restart the client afterwards;
"terse doctor" shows the result.

Examples:
  terse setup claude-code --dry-run
  terse setup cursor
  terse setup codex --undo
  terse setup claude-code --config-path ~/work/app/.mcp.json
`

// mcpClients lists the clients setup and doctor know, in order.
var mcpClients = []string{"claude-code", "cursor", "codex"}

func runSetup(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("setup", "claude-code|cursor|codex [--config-path FILE] [--dry-run] [--undo] [--terse PATH] [--scope user|project|local]", setupDoc+setupHookDoc, stdout, stderr)
	cfgPath := fs.String("config-path", "", "the client's configuration `FILE` (default: the client's own, see above)")
	dryRun := fs.Bool("dry-run", false, "print the diff and change nothing")
	undo := fs.Bool("undo", false, "unwrap the servers terse wraps")
	tersePath := fs.String("terse", "", "the terse `PATH` written into the configuration (default: this binary's absolute path)")
	hook := addHookSetupFlags(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{"setup: name one client: " + orList(mcpClients)}
	}
	client := fs.Arg(0)
	if err := choice("client", client, mcpClients...); err != nil {
		return &usageError{fmt.Sprintf("setup: unknown client %q: want %s", client, orList(mcpClients))}
	}
	paths := []string{*cfgPath}
	if *cfgPath == "" {
		var err error
		if paths, err = defaultConfigPaths(client); err != nil && client != "claude-code" {
			return err
		}
	}
	// The terse to write is found when a server needs it: undo and a
	// second run need none.
	var terseCmd string
	var terseErr error
	terseFound := false
	findTerse := func() (string, error) {
		if !terseFound {
			terseFound = true
			if terseCmd = *tersePath; terseCmd == "" {
				terseCmd, terseErr = lastingTerseCommand(stderr)
			}
		}
		return terseCmd, terseErr
	}
	if client == "claude-code" {
		var cmd string
		if *hook.on && !*undo {
			var err error
			if cmd, err = findTerse(); err != nil {
				return err
			}
		}
		if err := hook.run(cmd, *dryRun, *undo, stdout); err != nil {
			return err
		}
		if len(paths) == 0 {
			// No MCP servers to wrap: the hook may be all there is to do.
			all, _ := clientConfigPaths(client)
			fmt.Fprintf(stdout, "%s: no MCP servers configured\n", all[len(all)-1])
			return nil
		}
	}
	var failed error
	for _, path := range paths {
		if len(paths) > 1 {
			fmt.Fprintf(stdout, "%s:\n", path)
		}
		if err := setupFile(client, path, *undo, *dryRun, findTerse, stdout); err != nil {
			if len(paths) == 1 {
				return err
			}
			fmt.Fprintf(stderr, "terse: %v\n", err)
			failed = errReported
		}
	}
	return failed
}

// setupFile wraps (or with undo unwraps) the servers of one client
// configuration file.
func setupFile(client, path string, undo, dryRun bool, findTerse func() (string, error), stdout io.Writer) error {
	isTOML := client == "codex"
	backup := path + ".terse-backup"
	var servers []*serverEntry
	var editErr error
	rewrite := func(old []byte) ([]byte, error) {
		edit := func(s *serverEntry) {
			if err := editServer(s, undo, isTOML, findTerse); err != nil {
				editErr = err
			}
		}
		var updated []byte
		var err error
		if isTOML {
			updated, servers, err = rewriteTOML(old, edit)
		} else {
			updated, servers, err = rewriteJSON(old, client == "claude-code", edit)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if editErr != nil {
			return nil, editErr
		}
		if undo {
			// Unwrapped, the file means what the backup says: give back
			// the backup's own bytes (layout and all) rather than a rewrite.
			if b, err := os.ReadFile(backup); err == nil && sameConfig(isTOML, updated, b) {
				updated = b
			}
		}
		return updated, nil
	}
	report := func() {
		if len(servers) == 0 {
			fmt.Fprintf(stdout, "%s: no MCP servers configured\n", path)
		}
		for _, s := range servers {
			fmt.Fprintf(stdout, "%s: %s\n", s.label(), s.note)
		}
	}
	if dryRun {
		return setupDryRun(client, path, undo, rewrite, report, stdout)
	}
	old, updated, made, err := editConfig(path, rewrite)
	if errors.Is(err, os.ErrNotExist) && old == nil {
		return fmt.Errorf("setup %s: %w", client, err)
	}
	if updated != nil {
		report()
	}
	if err != nil {
		return err
	}
	if bytes.Equal(old, updated) {
		fmt.Fprintf(stdout, "%s: unchanged\n", path)
		return nil
	}
	if made != "" {
		fmt.Fprintf(stdout, "backup: %s\n", made)
	}
	fmt.Fprintf(stdout, "%s: updated; restart %s to use it\n", path, client)
	return nil
}

// editServer wraps (or with undo unwraps) one server of a client
// configuration, or says in its note why it is left alone.
func editServer(s *serverEntry, undo, isTOML bool, findTerse func() (string, error)) error {
	switch {
	case undo && s.wrappedRemote() && !isTOML:
		s.unwrapRemote()
	case s.url != "" && s.typ == "http" && len(s.headers) > 0 && !undo && !isTOML:
		// Credentials in headers terse can carry; a server
		// without them may sign in by OAuth, which only the
		// client can do, so it is left alone.
		terse, err := findTerse()
		if err != nil {
			s.note = "not wrapped"
			return err
		}
		s.wrapRemote(terse)
	case s.url != "":
		s.note = "HTTP server (" + s.url + "), left alone (it may sign in by OAuth, which only the client can do); if it needs no sign-in or takes a header, run it through terse proxy --upstream URL [--header 'NAME: VALUE'] or terse gateway"
	case s.wrappedRemote():
		s.note = "already runs through terse"
	case undo && s.wrapped():
		s.command, s.args = s.unwrapped()
		s.changed, s.note = true, "unwrapped"
	case undo:
		s.note = "not wrapped"
	case s.wrapped():
		s.note = "already runs through terse"
	case s.command == "":
		s.note = "no command, left alone"
	default:
		terse, err := findTerse()
		if err != nil {
			s.note = "not wrapped"
			return err
		}
		command, args := s.command, s.args
		if len(args) == 0 {
			// "npx -y srv" in one string: the client would run a
			// program of that name; terse proxy needs the words.
			command, args = splitCommand(command)
		}
		s.args = append([]string{"proxy", "--", command}, args...)
		s.command = terse
		s.changed, s.note = true, "wrapped"
	}
	return nil
}

// setupDryRun shows what setup would change in the file at path, as a
// diff, and writes nothing.
func setupDryRun(client, path string, undo bool, rewrite func([]byte) ([]byte, error), report func(), stdout io.Writer) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("setup %s: %w", client, err)
	}
	updated, err := rewrite(old)
	if err != nil {
		return err
	}
	report()
	if bytes.Equal(old, updated) {
		fmt.Fprintf(stdout, "%s: unchanged\n", path)
		return nil
	}
	fmt.Fprintf(stdout, "--- %s\n+++ %s (after terse setup%s)\n", path, path, map[bool]string{true: " --undo"}[undo])
	fmt.Fprint(stdout, lineDiff(string(old), string(updated)))
	if err := checkWritable(path); err != nil {
		fmt.Fprintf(stdout, "note: %v\n", err)
	}
	fmt.Fprintln(stdout, "dry run: nothing written")
	return nil
}

// splitCommand splits a command line written as one string into its
// words, as a shell would for plain words and quotes; a string naming an
// existing file is kept whole (a path may hold spaces).
func splitCommand(s string) (string, []string) {
	if !strings.ContainsAny(s, " \t") {
		return s, nil
	}
	if _, err := os.Stat(s); err == nil {
		return s, nil
	}
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '"' && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return s, nil
	}
	return words[0], words[1:]
}

// sameConfig reports whether two configuration texts hold the same data.
// An empty "args" list is the same as none: a server's arguments default
// to none in every client.
func sameConfig(isTOML bool, a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if isTOML {
		var mx, my map[string]any
		if toml.Unmarshal(a, &mx) != nil || toml.Unmarshal(b, &my) != nil {
			return false
		}
		x, y = mx, my
	} else {
		vx, err1 := tree.Parse(a)
		vy, err2 := tree.Parse(b)
		if err1 != nil || err2 != nil {
			return false
		}
		if tree.Equal(vx, vy) {
			return true
		}
		if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
			return false
		}
	}
	return reflect.DeepEqual(normalizeServers(x), normalizeServers(y))
}

// normalizeServers writes every command line one way: an empty "args"
// list is none, and a "command" holding a whole command line with no
// args is split into its words (as setup wraps it).
func normalizeServers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if l, ok := x.([]any); ok && k == "args" && len(l) == 0 {
				delete(v, k)
				continue
			}
			v[k] = normalizeServers(x)
		}
		if cmd, ok := v["command"].(string); ok && v["args"] == nil {
			if c, args := splitCommand(cmd); len(args) > 0 {
				v["command"] = c
				list := make([]any, len(args))
				for i, a := range args {
					list[i] = a
				}
				v["args"] = list
			}
		}
	case []any:
		for i, x := range v {
			v[i] = normalizeServers(x)
		}
	}
	return v
}

// defaultConfigPaths lists the files where client keeps its MCP
// servers, those that exist (Claude Code reads ./.mcp.json and
// ~/.claude.json together); one that does not is an error only when none
// exists.
func defaultConfigPaths(client string) ([]string, error) {
	all, err := clientConfigPaths(client)
	if err != nil {
		return nil, err
	}
	var found []string
	for _, p := range all {
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("setup %s: no configuration at %s (name one with --config-path)", client, strings.Join(all, " or "))
	}
	return found, nil
}

// clientConfigPaths lists every file where client keeps MCP servers.
func clientConfigPaths(client string) ([]string, error) {
	home, err := os.UserHomeDir()
	var paths []string
	switch client {
	case "claude-code":
		paths = append(paths, ".mcp.json")
		if err == nil {
			paths = append(paths, filepath.Join(home, ".claude.json"))
		}
		return paths, nil
	case "cursor":
		if err != nil {
			return nil, err
		}
		return []string{filepath.Join(home, ".cursor", "mcp.json")}, nil
	case "codex":
		if dir := os.Getenv("CODEX_HOME"); dir != "" {
			return []string{filepath.Join(dir, "config.toml")}, nil
		}
		if err != nil {
			return nil, err
		}
		return []string{filepath.Join(home, ".codex", "config.toml")}, nil
	}
	return nil, fmt.Errorf("unknown client %q", client)
}

// lastingTerseCommand is the absolute path of this terse binary, which
// an MCP client finds whatever its PATH. A binary that will not last (a
// go run build, npx's cache) is refused, unless the terse on PATH is a
// lasting one: then that is written, and said.
func lastingTerseCommand(stderr io.Writer) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where this terse is (%v); name it with --terse PATH", err)
	}
	why := ephemeralPath(self)
	if why == "" {
		return self, nil
	}
	if onPath, ok := lookTerse("terse"); ok {
		if abs, err := filepath.Abs(onPath); err == nil && ephemeralPath(abs) == "" {
			fmt.Fprintf(stderr, "terse: this terse runs from %s; writing the terse on PATH instead: %s\n", why, abs)
			return abs, nil
		}
	}
	return "", fmt.Errorf("this terse runs from %s (%s): a configuration calling it would break; install terse (go install github.com/terse-dev/terse/cmd/terse@latest, or npm install -g @terse-dev/terse) and run setup with it, or name a lasting binary with --terse PATH", why, self)
}

// defaultTerseCommand is how a shell finds this terse: "terse" when the
// terse on PATH is this binary, else this binary's absolute path. (It is
// for commands shown to a model; configurations get lastingTerseCommand.)
func defaultTerseCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "terse"
	}
	if onPath, ok := lookTerse("terse"); ok && sameFile(onPath, self) {
		return "terse"
	}
	return self
}

// serverEntry is one MCP server of a client configuration, as setup sees
// and edits it.
type serverEntry struct {
	scope   string // "" or the project it belongs to
	name    string
	command string
	args    []string
	url     string
	changed bool
	note    string

	// JSON clients: the members as written, for HTTP servers that setup
	// wraps as a whole (the server's object is replaced by replace).
	typ     string
	headers []tree.Member
	env     []tree.Member
	keys    []string
	replace *tree.Value
}

// wrappedRemote reports whether the server is an HTTP server running
// through "terse proxy --upstream URL".
func (s *serverEntry) wrappedRemote() bool {
	base := strings.TrimSuffix(filepath.Base(s.command), ".exe")
	i := indexOf(s.args, "--upstream")
	return base == "terse" && len(s.args) > 0 && s.args[0] == "proxy" && i > 0 && i < len(s.args)-1 && indexOf(s.args, "--") < 0
}

// headerEnvPrefix names the environment variables that carry a wrapped
// HTTP server's header values (the values stay off the command line).
const headerEnvPrefix = "TERSE_HEADER_"

// wrapRemote makes the Streamable-HTTP server s run through terse proxy
// --upstream, its headers passed by --header-env from the server's env.
// It reports false (with a note) for a server it cannot carry over whole.
func (s *serverEntry) wrapRemote(terse string) bool {
	for _, k := range s.keys {
		if k != "type" && k != "url" && k != "headers" {
			s.note = "HTTP server (" + s.url + ") with settings besides url and headers (" + k + "), left alone; wrap it by hand: terse proxy --upstream URL --header 'NAME: VALUE'"
			return false
		}
	}
	args := []tree.Value{tree.String("proxy"), tree.String("--upstream"), tree.String(s.url)}
	var env []tree.Member
	for i, h := range s.headers {
		if h.Value.Kind() != tree.KindString {
			s.note = "HTTP server (" + s.url + ") with a header that is not a string, left alone"
			return false
		}
		v := fmt.Sprintf("%s%d", headerEnvPrefix, i+1)
		args = append(args, tree.String("--header-env"), tree.String(h.Key+"="+v))
		env = append(env, tree.Member{Key: v, Value: h.Value})
	}
	ms := []tree.Member{{Key: "command", Value: tree.String(terse)}, {Key: "args", Value: tree.Array(args...)}}
	if len(env) > 0 {
		ms = append(ms, tree.Member{Key: "env", Value: tree.Object(env...)})
	}
	obj := tree.Object(ms...)
	s.replace, s.changed, s.note = &obj, true, "wrapped (HTTP, through terse proxy --upstream)"
	return true
}

// unwrapRemote gives back the HTTP server a wrapRemote made.
func (s *serverEntry) unwrapRemote() {
	url := s.args[indexOf(s.args, "--upstream")+1]
	ms := []tree.Member{{Key: "type", Value: tree.String("http")}, {Key: "url", Value: tree.String(url)}}
	var headers []tree.Member
	for i := 0; i+1 < len(s.args); i++ {
		if s.args[i] != "--header-env" {
			continue
		}
		name, v, _ := strings.Cut(s.args[i+1], "=")
		for _, e := range s.env {
			if e.Key == v {
				headers = append(headers, tree.Member{Key: name, Value: e.Value})
			}
		}
	}
	if len(headers) > 0 {
		ms = append(ms, tree.Member{Key: "headers", Value: tree.Object(headers...)})
	}
	obj := tree.Object(ms...)
	s.replace, s.changed, s.note = &obj, true, "unwrapped"
}

func (s *serverEntry) label() string {
	if s.scope != "" {
		return s.scope + ": " + s.name
	}
	return s.name
}

// wrapped reports whether the server already runs through terse proxy.
func (s *serverEntry) wrapped() bool {
	base := strings.TrimSuffix(filepath.Base(s.command), ".exe")
	isTerse := base == "terse"
	if !isTerse && filepath.IsAbs(s.command) {
		self, err := os.Executable()
		isTerse = err == nil && sameFile(s.command, self)
	}
	return isTerse && len(s.args) > 0 && s.args[0] == "proxy" && indexOf(s.args, "--") > 0 && indexOf(s.args, "--") < len(s.args)-1
}

// unwrapped is the server's own command line, after "terse proxy ... --".
func (s *serverEntry) unwrapped() (string, []string) {
	i := indexOf(s.args, "--")
	return s.args[i+1], append([]string{}, s.args[i+2:]...)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// rewriteJSON edits the "mcpServers" objects of a JSON configuration: the
// top-level one and, for Claude Code's ~/.claude.json, each project's.
// Only the "command" and "args" values of the servers it changes are
// rewritten (in the layout they had); every other byte stays.
func rewriteJSON(data []byte, projects bool, edit func(*serverEntry)) ([]byte, []*serverEntry, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return data, nil, nil
	}
	root, err := tree.Parse(data)
	if err != nil {
		return nil, nil, err
	}
	if root.Kind() != tree.KindObject {
		return nil, nil, errors.New("not a JSON object")
	}
	rootSpan, err := jsonRoot(data)
	if err != nil {
		return nil, nil, err
	}
	var all []*serverEntry
	var edits []jsonEdit
	servers := func(scope string, v tree.Value, span jsonSpan) error {
		if v.Kind() != tree.KindObject {
			return nil
		}
		spans, err := jsonMembers(data, span)
		if err != nil {
			return err
		}
		for i, m := range v.Members() {
			if m.Value.Kind() != tree.KindObject || i >= len(spans) {
				continue
			}
			s := jsonServerEntry(scope, m)
			edit(s)
			all = append(all, s)
			if !s.changed {
				continue
			}
			es, err := jsonServerEdits(data, spans[i].value, s)
			if err != nil {
				return err
			}
			edits = append(edits, es...)
		}
		return nil
	}
	rootSpans, err := jsonMembers(data, rootSpan)
	if err != nil {
		return nil, nil, err
	}
	for i, m := range root.Members() {
		switch {
		case m.Key == "mcpServers":
			err = servers("", m.Value, rootSpans[i].value)
		case m.Key == "projects" && projects && m.Value.Kind() == tree.KindObject:
			ps, perr := jsonMembers(data, rootSpans[i].value)
			if perr != nil {
				return nil, nil, perr
			}
			for j, p := range m.Value.Members() {
				if p.Value.Kind() != tree.KindObject || j >= len(ps) {
					continue
				}
				sv, ok := p.Value.Get("mcpServers")
				if !ok {
					continue
				}
				span, _, gerr := jsonGet(data, ps[j].value, "mcpServers")
				if gerr != nil {
					return nil, nil, gerr
				}
				if err = servers(p.Key, sv, span.value); err != nil {
					break
				}
			}
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if len(edits) == 0 {
		return data, all, nil
	}
	return applyEdits(data, edits), all, nil
}

// jsonServerEntry reads the server m of an "mcpServers" object.
func jsonServerEntry(scope string, m tree.Member) *serverEntry {
	s := &serverEntry{scope: scope, name: m.Key}
	if c, ok := m.Value.Get("command"); ok && c.Kind() == tree.KindString {
		s.command = c.Str()
	}
	if a, ok := m.Value.Get("args"); ok && a.Kind() == tree.KindArray {
		for _, it := range a.Items() {
			s.args = append(s.args, it.Str())
		}
	}
	if u, ok := m.Value.Get("url"); ok {
		s.url = u.Str()
	} else if t, ok := m.Value.Get("type"); ok && (t.Str() == "http" || t.Str() == "sse") {
		s.url = "type " + t.Str()
	}
	if t, ok := m.Value.Get("type"); ok {
		s.typ = t.Str()
	}
	if h, ok := m.Value.Get("headers"); ok && h.Kind() == tree.KindObject {
		s.headers = h.Members()
	}
	if e, ok := m.Value.Get("env"); ok && e.Kind() == tree.KindObject {
		s.env = e.Members()
	}
	for _, mm := range m.Value.Members() {
		s.keys = append(s.keys, mm.Key)
	}
	return s
}

// jsonServerEdits are the edits of data that write the changed server s,
// whose object is obj: the whole object when it is replaced, else its
// "command" and "args" values, in the layout they had.
func jsonServerEdits(data []byte, obj jsonSpan, s *serverEntry) ([]jsonEdit, error) {
	if s.replace != nil {
		// The whole object, in the file's layout.
		var text string
		if bytes.IndexByte(data[obj.start:obj.end], '\n') >= 0 {
			text = indentLines(string(tree.AppendIndent(nil, *s.replace, "  ")), lineIndent(data, obj.start))
		} else {
			text = string(tree.AppendJSON(nil, *s.replace))
		}
		return []jsonEdit{{obj.start, obj.end, text}}, nil
	}
	cmd, ok, err := jsonGet(data, obj, "command")
	if err != nil || !ok {
		return nil, fmt.Errorf("server %q: no command to rewrite", s.name)
	}
	edits := []jsonEdit{{cmd.value.start, cmd.value.end, jsonQuote(s.command)}}
	compact := data[cmd.value.start-1] == ':' // written without spaces
	items := make([]string, len(s.args))
	for j, a := range s.args {
		items[j] = jsonQuote(a)
	}
	if args, ok, _ := jsonGet(data, obj, "args"); ok {
		edits = append(edits, jsonEdit{args.value.start, args.value.end, writeList(items, data[args.value.start:args.value.end], compact)})
	} else if len(items) > 0 {
		sep, colon := ", ", ": "
		if bytes.IndexByte(data[obj.start:obj.end], '\n') >= 0 {
			sep = ",\n" + lineIndent(data, cmd.keyStart)
		} else if compact {
			sep, colon = ",", ":"
		}
		edits = append(edits, jsonEdit{cmd.value.end, cmd.value.end, sep + `"args"` + colon + writeList(items, nil, compact)})
	}
	return edits, nil
}

// rewriteTOML edits the servers of a Codex config.toml, in whichever
// form TOML lets them be written (tomledit.go). Only the command and
// args values of changed servers are rewritten, in place, so comments
// and layout stay as they were.
func rewriteTOML(data []byte, edit func(*serverEntry)) ([]byte, []*serverEntry, error) {
	// A map, not a struct: TOML keys are case-sensitive ("Command" is
	// not "command"), and the values are matched by exact key below.
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, nil, err
	}
	table, _ := doc["mcp_servers"].(map[string]any)
	entries, scanErr := tomlEntries(data)
	var all []*serverEntry
	var edits []jsonEdit
	for _, name := range tomlServerNames(entries, table) {
		cfg, ok := table[name].(map[string]any)
		if !ok {
			all = append(all, &serverEntry{name: name, note: "not a table, left alone"})
			continue
		}
		s := tomlServerEntry(name, cfg)
		edit(s)
		all = append(all, s)
		if !s.changed {
			continue
		}
		cmd, ok := tomlFind(entries, "mcp_servers", name, "command")
		if scanErr != nil || !ok {
			s.changed, s.note = false, "written in a form setup cannot edit; edit it by hand"
			continue
		}
		edits = append(edits, tomlServerEdits(data, entries, cmd, s)...)
	}
	out := applyEdits(data, edits)
	if err := checkTOMLRewrite(out, doc, table, all); err != nil {
		return nil, nil, err
	}
	return out, all, nil
}

// tomlServerNames lists the servers of the mcp_servers table in file
// order, then any the scan did not place, sorted.
func tomlServerNames(entries []tomlEntry, table map[string]any) []string {
	var names []string
	seen := map[string]bool{}
	for _, e := range entries {
		if len(e.path) >= 2 && e.path[0] == "mcp_servers" && !seen[e.path[1]] {
			if _, ok := table[e.path[1]]; ok {
				seen[e.path[1]] = true
				names = append(names, e.path[1])
			}
		}
	}
	var rest []string
	for name := range table {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// tomlServerEntry reads a server's table; a command or args setup does
// not understand leaves its command empty.
func tomlServerEntry(name string, cfg map[string]any) *serverEntry {
	s := &serverEntry{name: name}
	s.command, _ = cfg["command"].(string)
	s.url, _ = cfg["url"].(string)
	if args, ok := cfg["args"].([]any); ok {
		for _, a := range args {
			str, ok := a.(string)
			if !ok {
				s.command = "" // not a command line setup understands
			}
			s.args = append(s.args, str)
		}
	} else if cfg["args"] != nil {
		s.command = ""
	}
	if _, ok := cfg["command"].(string); cfg["command"] != nil && !ok {
		s.command = ""
	}
	return s
}

// tomlServerEdits are the edits that write the changed server s, whose
// command is cmd: its command and args values, in place (args added
// after the command when it has none).
func tomlServerEdits(data []byte, entries []tomlEntry, cmd tomlEntry, s *serverEntry) []jsonEdit {
	items := make([]string, len(s.args))
	for j, a := range s.args {
		items[j] = tomlString(a)
	}
	edits := []jsonEdit{{cmd.value.start, cmd.value.end, tomlString(s.command)}}
	if args, ok := tomlFind(entries, "mcp_servers", s.name, "args"); ok {
		edits = append(edits, jsonEdit{args.value.start, args.value.end, writeList(items, data[args.value.start:args.value.end], false)})
	} else if len(items) > 0 && cmd.inline {
		edits = append(edits, jsonEdit{cmd.value.end, cmd.value.end, ", args = " + writeList(items, nil, false)})
	} else if len(items) > 0 {
		line := cmd.lineIndent + string(data[cmd.keyStart:cmd.lastKey]) + "args = " + writeList(items, nil, false) + "\n"
		if cmd.lineEnd == len(data) && !bytes.HasSuffix(data, []byte("\n")) {
			line = "\n" + line
		}
		edits = append(edits, jsonEdit{cmd.lineEnd, cmd.lineEnd, line})
	}
	return edits
}

// checkTOMLRewrite checks that out, the file edited by lines, means what
// was meant (every server's command and args as edited, nothing else
// changed) before anyone writes it.
func checkTOMLRewrite(out []byte, doc, table map[string]any, all []*serverEntry) error {
	var got map[string]any
	if err := toml.Unmarshal(out, &got); err != nil {
		return fmt.Errorf("cannot rewrite this file safely (%v); edit it by hand", err)
	}
	want := doc
	if gt, ok := got["mcp_servers"].(map[string]any); ok && table != nil {
		for _, s := range all {
			cfg, _ := table[s.name].(map[string]any)
			gcfg, _ := gt[s.name].(map[string]any)
			if !s.changed || cfg == nil || gcfg == nil {
				continue
			}
			gcmd, _ := gcfg["command"].(string)
			var gargs []string
			for _, a := range asSlice(gcfg["args"]) {
				str, _ := a.(string)
				gargs = append(gargs, str)
			}
			if gcmd != s.command || !slices.Equal(gargs, s.args) {
				return fmt.Errorf("cannot rewrite server %q safely; edit it by hand", s.name)
			}
			// Compare the rest with the edit undone.
			gcfg["command"], gcfg["args"] = cfg["command"], cfg["args"]
			if cfg["args"] == nil {
				delete(gcfg, "args")
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		return errors.New("cannot rewrite this file safely (other keys would change); edit it by hand")
	}
	return nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// tomlString quotes s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// lookTerse finds name on PATH (with .exe on Windows).
func lookTerse(name string) (string, bool) {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if runtime.GOOS == "windows" && !strings.HasSuffix(p, ".exe") {
			p += ".exe"
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() && (runtime.GOOS == "windows" || st.Mode()&0o111 != 0) {
			return p, true
		}
	}
	return "", false
}

// sameFile reports whether two paths name the same file, links resolved.
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// setMembers replaces the members of obj named in set, in place, and
// appends those it does not have.
func setMembers(obj tree.Value, set ...tree.Member) tree.Value {
	ms := append([]tree.Member(nil), obj.Members()...)
	for _, s := range set {
		found := false
		for i := range ms {
			if ms[i].Key == s.Key {
				ms[i].Value, found = s.Value, true
			}
		}
		if !found {
			ms = append(ms, s)
		}
	}
	return tree.Object(ms...)
}

// withoutMember returns object v without its members named key.
func withoutMember(v tree.Value, key string) tree.Value {
	ms := make([]tree.Member, 0, v.Len())
	for _, m := range v.Members() {
		if m.Key != key {
			ms = append(ms, m)
		}
	}
	return tree.Object(ms...)
}
