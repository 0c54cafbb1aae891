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
"command": "terse", "args": ["proxy", "--", "npx", "-y", "srv"]. Servers
reached over HTTP (a url, or type http or sse) are left alone, and setup
says so: run them through "terse gateway" by hand if you want them
compacted too. Everything else in the file is kept (JSON is rewritten with
two-space indentation, TOML only on the lines of the servers it changes).

Clients and the file each one reads (--config-path names another):
  claude-code   ./.mcp.json when it exists (project scope), else
                ~/.claude.json (user scope "mcpServers" and every
                project's "mcpServers")
  cursor        ~/.cursor/mcp.json ("mcpServers")
  codex         $CODEX_HOME/config.toml, else ~/.codex/config.toml
                ([mcp_servers.NAME] command and args)

Before the first change setup copies the file to FILE.terse-backup (kept,
never overwritten). Running it again changes nothing: wrapped servers are
recognised. --dry-run prints the diff and writes nothing. --undo unwraps
every server terse wraps, giving back its own command and arguments.

The command written is "terse" when the terse on PATH is this binary,
else this binary's absolute path (an MCP client may not search your PATH);
--terse names another. Restart the client afterwards; "terse doctor"
shows the result.

Examples:
  terse setup claude-code --dry-run
  terse setup cursor
  terse setup codex --undo
  terse setup claude-code --config-path ~/work/app/.mcp.json
`

// mcpClients lists the clients setup and doctor know, in order.
var mcpClients = []string{"claude-code", "cursor", "codex"}

func runSetup(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("setup", "claude-code|cursor|codex [--config-path FILE] [--dry-run] [--undo] [--terse PATH]", setupDoc, stdout, stderr)
	cfgPath := fs.String("config-path", "", "the client's configuration `FILE` (default: the client's own, see above)")
	dryRun := fs.Bool("dry-run", false, "print the diff and change nothing")
	undo := fs.Bool("undo", false, "unwrap the servers terse wraps")
	tersePath := fs.String("terse", "", "the terse `PATH` written into the configuration (default: terse if on PATH, else this binary)")
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
	path := *cfgPath
	if path == "" {
		var err error
		if path, err = defaultConfigPath(client); err != nil {
			return err
		}
	}
	terseCmd := *tersePath
	if terseCmd == "" {
		terseCmd = defaultTerseCommand()
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("setup %s: %w", client, err)
	}
	edit := func(s *serverEntry) {
		switch {
		case s.url != "":
			s.note = "HTTP server (" + s.url + "), left alone; run it through terse gateway to compact it"
		case *undo && s.wrapped():
			s.command, s.args = s.unwrapped()
			s.changed, s.note = true, "unwrapped"
		case *undo:
			s.note = "not wrapped"
		case s.wrapped():
			s.note = "already runs through terse"
		case s.command == "":
			s.note = "no command, left alone"
		default:
			s.args = append([]string{"proxy", "--", s.command}, s.args...)
			s.command = terseCmd
			s.changed, s.note = true, "wrapped"
		}
	}
	var updated []byte
	var servers []*serverEntry
	if client == "codex" {
		updated, servers, err = rewriteTOML(old, edit)
	} else {
		updated, servers, err = rewriteJSON(old, client == "claude-code", edit)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	backup := path + ".terse-backup"
	if *undo {
		// Unwrapped, the file means what the backup says: give back the
		// backup's own bytes (layout and all) rather than a rewrite.
		if b, err := os.ReadFile(backup); err == nil && sameConfig(client == "codex", updated, b) {
			updated = b
		}
	}
	if len(servers) == 0 {
		fmt.Fprintf(stdout, "%s: no MCP servers configured\n", path)
	}
	for _, s := range servers {
		fmt.Fprintf(stdout, "%s: %s\n", s.label(), s.note)
	}
	if bytes.Equal(old, updated) {
		fmt.Fprintf(stdout, "%s: unchanged\n", path)
		return nil
	}
	if *dryRun {
		fmt.Fprintf(stdout, "--- %s\n+++ %s (after terse setup%s)\n", path, path, map[bool]string{true: " --undo"}[*undo])
		fmt.Fprint(stdout, lineDiff(string(old), string(updated)))
		fmt.Fprintln(stdout, "dry run: nothing written")
		return nil
	}
	if _, err := os.Stat(backup); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(backup, old, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "backup: %s\n", backup)
	}
	if err := writeFileAtomic(path, updated); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: updated; restart %s to use it\n", path, client)
	return nil
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
	return reflect.DeepEqual(dropEmptyArgs(x), dropEmptyArgs(y))
}

// dropEmptyArgs removes every "args" member holding an empty list.
func dropEmptyArgs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if l, ok := x.([]any); ok && k == "args" && len(l) == 0 {
				delete(v, k)
				continue
			}
			v[k] = dropEmptyArgs(x)
		}
	case []any:
		for i, x := range v {
			v[i] = dropEmptyArgs(x)
		}
	}
	return v
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

// defaultConfigPath is where client keeps its MCP servers.
func defaultConfigPath(client string) (string, error) {
	home, err := os.UserHomeDir()
	switch client {
	case "claude-code":
		if _, serr := os.Stat(".mcp.json"); serr == nil {
			return ".mcp.json", nil
		}
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".claude.json"), nil
	case "cursor":
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".cursor", "mcp.json"), nil
	case "codex":
		if dir := os.Getenv("CODEX_HOME"); dir != "" {
			return filepath.Join(dir, "config.toml"), nil
		}
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".codex", "config.toml"), nil
	}
	return "", fmt.Errorf("unknown client %q", client)
}

// defaultTerseCommand is "terse" when the terse found on PATH is this
// binary, else this binary's absolute path.
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
	var all []*serverEntry
	changed := false
	servers := func(scope string, v tree.Value) tree.Value {
		if v.Kind() != tree.KindObject {
			return v
		}
		ms := append([]tree.Member(nil), v.Members()...)
		for i, m := range ms {
			if m.Value.Kind() != tree.KindObject {
				continue
			}
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
			edit(s)
			all = append(all, s)
			if !s.changed {
				continue
			}
			changed = true
			args := make([]tree.Value, len(s.args))
			for j, a := range s.args {
				args[j] = tree.String(a)
			}
			if len(args) > 0 {
				ms[i].Value = setMembers(m.Value, tree.Member{Key: "command", Value: tree.String(s.command)}, tree.Member{Key: "args", Value: tree.Array(args...)})
			} else {
				// No arguments: no "args" member, as in the TOML writer.
				ms[i].Value = withoutMember(setMembers(m.Value, tree.Member{Key: "command", Value: tree.String(s.command)}), "args")
			}
		}
		return tree.Object(ms...)
	}
	ms := append([]tree.Member(nil), root.Members()...)
	for i, m := range ms {
		switch {
		case m.Key == "mcpServers":
			ms[i].Value = servers("", m.Value)
		case m.Key == "projects" && projects && m.Value.Kind() == tree.KindObject:
			ps := append([]tree.Member(nil), m.Value.Members()...)
			for j, p := range ps {
				if p.Value.Kind() != tree.KindObject {
					continue
				}
				if sv, ok := p.Value.Get("mcpServers"); ok {
					ps[j].Value = setMembers(p.Value, tree.Member{Key: "mcpServers", Value: servers(p.Key, sv)})
				}
			}
			ms[i].Value = tree.Object(ps...)
		}
	}
	if !changed {
		return data, all, nil
	}
	out := tree.AppendIndent(nil, tree.Object(ms...), "  ")
	if bytes.HasSuffix(data, []byte("\n")) {
		out = append(out, '\n')
	}
	return out, all, nil
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

// rewriteTOML edits the [mcp_servers.NAME] tables of a Codex config.toml.
// Only the command and args lines of changed servers are rewritten, so
// comments and layout stay as they were.
func rewriteTOML(data []byte, edit func(*serverEntry)) ([]byte, []*serverEntry, error) {
	// A map, not a struct: TOML keys are case-sensitive ("Command" is
	// not "command"), and the lines are matched by exact key below.
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, nil, err
	}
	table, _ := doc["mcp_servers"].(map[string]any)
	lines := strings.SplitAfter(string(data), "\n")
	var all []*serverEntry
	// Servers in file order: their table headers.
	for i := 0; i < len(lines); i++ {
		name, ok := tomlServerHeader(lines[i])
		if !ok {
			continue
		}
		cfg, ok := table[name].(map[string]any)
		if !ok {
			continue
		}
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
		edit(s)
		all = append(all, s)
		if !s.changed {
			continue
		}
		// The table runs to the next header.
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "[") {
			end++
		}
		var body []string
		wroteCmd, wroteArgs := false, false
		for j := i + 1; j < end; j++ {
			key := tomlKey(lines[j])
			switch key {
			case "command":
				body = append(body, "command = "+tomlString(s.command)+"\n")
				wroteCmd = true
			case "args":
				// Skip the whole array, which may span lines.
				j = tomlValueEnd(lines, j)
				if !wroteArgs && len(s.args) > 0 {
					body = append(body, "args = "+tomlArray(s.args)+"\n")
				}
				wroteArgs = true
			default:
				body = append(body, lines[j])
			}
			if key == "command" && !wroteArgs {
				if len(s.args) > 0 {
					body = append(body, "args = "+tomlArray(s.args)+"\n")
				}
				wroteArgs = true
			}
		}
		if !wroteCmd {
			head := []string{"command = " + tomlString(s.command) + "\n"}
			if !wroteArgs && len(s.args) > 0 {
				head = append(head, "args = "+tomlArray(s.args)+"\n")
			}
			body = append(head, body...)
		}
		lines = append(lines[:i+1], append(body, lines[end:]...)...)
		i += len(body)
	}
	out := []byte(strings.Join(lines, ""))
	// The edit is by lines: check that the result means what was meant
	// (every server's command and args as edited, nothing else changed)
	// before anyone writes it.
	var got map[string]any
	if err := toml.Unmarshal(out, &got); err != nil {
		return nil, nil, fmt.Errorf("cannot rewrite this file safely (%v); edit it by hand", err)
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
				return nil, nil, fmt.Errorf("cannot rewrite server %q safely; edit it by hand", s.name)
			}
			// Compare the rest with the edit undone.
			gcfg["command"], gcfg["args"] = cfg["command"], cfg["args"]
			if cfg["args"] == nil {
				delete(gcfg, "args")
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		return nil, nil, errors.New("cannot rewrite this file safely (other keys would change); edit it by hand")
	}
	return out, all, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// tomlServerHeader recognises [mcp_servers.NAME] (NAME bare or quoted).
func tomlServerHeader(line string) (string, bool) {
	l := strings.TrimSpace(line)
	if i := strings.Index(l, "#"); i > 0 && !strings.Contains(l[:i], `"`) {
		l = strings.TrimSpace(l[:i])
	}
	if !strings.HasPrefix(l, "[mcp_servers.") || !strings.HasSuffix(l, "]") || strings.HasPrefix(l, "[[") {
		return "", false
	}
	name := strings.TrimSpace(l[len("[mcp_servers.") : len(l)-1])
	if strings.HasPrefix(name, `"`) {
		var s string
		if json.Unmarshal([]byte(name), &s) != nil {
			return "", false
		}
		return s, true
	}
	if strings.ContainsAny(name, `."' `) {
		return "", false // a sub-table such as [mcp_servers.x.env]
	}
	return name, true
}

// tomlKey is the key a "key = value" line sets (unquoted), or "".
func tomlKey(line string) string {
	l := strings.TrimSpace(line)
	if strings.HasPrefix(l, "#") {
		return ""
	}
	if len(l) > 0 && (l[0] == '"' || l[0] == '\'') {
		// A quoted key: "command" = ... or 'command' = ...
		end := strings.IndexByte(l[1:], l[0])
		if end < 0 {
			return ""
		}
		key := l[1 : 1+end]
		if l[0] == '"' {
			var s string
			if json.Unmarshal([]byte(l[:end+2]), &s) != nil {
				return ""
			}
			key = s
		}
		if rest := strings.TrimSpace(l[end+2:]); !strings.HasPrefix(rest, "=") {
			return ""
		}
		return key
	}
	i := strings.IndexByte(l, '=')
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(l[:i])
}

// tomlValueEnd returns the last line of the value that starts on line i:
// an array may continue until its brackets balance.
func tomlValueEnd(lines []string, i int) int {
	depth, inStr := 0, false
	for j := i; j < len(lines); j++ {
		l := lines[j]
		start := 0
		if j == i {
			start = strings.IndexByte(l, '=') + 1
		}
		for k := start; k < len(l); k++ {
			c := l[k]
			switch {
			case inStr && c == '\\':
				k++
			case c == '"':
				inStr = !inStr
			case inStr:
			case c == '#':
				k = len(l)
			case c == '[':
				depth++
			case c == ']':
				depth--
			}
		}
		if depth <= 0 {
			return j
		}
	}
	return len(lines) - 1
}

// tomlString quotes s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func tomlArray(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
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
