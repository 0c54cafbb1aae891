package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/terse-dev/terse/tree"
)

// The hook part of "terse setup claude-code": a PostToolUse hook that
// runs every tool's output through "terse hook claude-code", in one of
// Claude Code's settings files.

const setupHookDoc = `
For claude-code, setup also installs terse's PostToolUse hook (every
tool's output through "terse hook claude-code", matcher "*") in Claude
Code's settings: ~/.claude/settings.json (--scope user, the default),
.claude/settings.json (--scope project) or .claude/settings.local.json
(--scope local). Hooks already there are kept; the file gets a backup
(FILE.terse-backup; an empty one when there was no file); running it again
changes nothing; --dry-run prints the diff; --undo removes the hook, giving
back the backup byte for byte when nothing else changed since (and removing
a file setup created). The hook command is an absolute path to terse: the
terse on PATH when it is this binary, else this binary (--terse names
another). --hook=false leaves the hook alone.
`

// hookSetup holds the hook's flags of terse setup.
type hookSetup struct {
	scope *string
	on    *bool
}

// addHookSetupFlags adds the hook's flags to setup's flag set.
func addHookSetupFlags(fs *flag.FlagSet) *hookSetup {
	return &hookSetup{
		scope: fs.String("scope", "user", "claude-code: the settings `file` the hook goes in: user (~/.claude/settings.json), project (.claude/settings.json) or local (.claude/settings.local.json)"),
		on:    fs.Bool("hook", true, "claude-code: install (or, with --undo, remove) the PostToolUse hook"),
	}
}

// hookSettingsPath is the settings file of a scope.
func hookSettingsPath(scope string) (string, error) {
	switch scope {
	case "user":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	case "project":
		return filepath.Join(".claude", "settings.json"), nil
	case "local":
		return filepath.Join(".claude", "settings.local.json"), nil
	}
	return "", &usageError{fmt.Sprintf("setup: --scope %q: want user, project or local", scope)}
}

// hookCommand is the command the hook runs: an absolute path to terse
// (terseCmd when it is one; else terseCmd found on PATH, made absolute;
// else this binary), then "hook claude-code". The PATH entry is kept
// rather than the file it links to, which may move on an upgrade.
func hookCommand(terseCmd string) string {
	p := terseCmd
	if !filepath.IsAbs(p) {
		if found, ok := lookTerse(p); ok {
			p = found
		} else if self, err := os.Executable(); err == nil {
			p = self
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
	}
	return shellQuote(p) + " hook claude-code"
}

// isTerseHook reports whether a hook command is terse's.
func isTerseHook(cmd string) bool {
	_, ok := hookBinary(cmd)
	return ok
}

// hookBinary is the terse binary a hook command runs ("PATH hook
// claude-code", PATH shell-quoted or not); ok is false for another
// command.
func hookBinary(cmd string) (string, bool) {
	bin, ok := strings.CutSuffix(strings.TrimSpace(cmd), " hook claude-code")
	if !ok {
		return "", false
	}
	bin = strings.TrimSpace(bin)
	if len(bin) >= 2 && bin[0] == '\'' && bin[len(bin)-1] == '\'' {
		bin = strings.ReplaceAll(bin[1:len(bin)-1], `'\''`, "'")
	} else if len(bin) >= 2 && bin[0] == '"' && bin[len(bin)-1] == '"' {
		bin = bin[1 : len(bin)-1]
	}
	if bin == "" || !strings.HasPrefix(filepath.Base(bin), "terse") {
		return "", false
	}
	return bin, true
}

// run installs or removes the hook. terseCmd is what --terse (or the
// default) names.
func (h *hookSetup) run(terseCmd string, dryRun, undo bool, stdout io.Writer) error {
	if !*h.on {
		return nil
	}
	path, err := hookSettingsPath(*h.scope)
	if err != nil {
		return err
	}
	old, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("setup claude-code: %w", err)
	}
	backup := path + ".terse-backup"
	cmd := hookCommand(terseCmd)
	var updated []byte
	var note string
	if undo {
		updated, note, err = removeHook(old)
		if err == nil && note != "not installed" {
			// Without the hook the file means what the backup says: give
			// back the backup's own bytes (no file, for an empty backup).
			if b, berr := os.ReadFile(backup); berr == nil && sameSettings(updated, b) {
				updated = b
			}
		}
	} else {
		updated, note, err = addHook(old, cmd)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if undo {
		fmt.Fprintf(stdout, "hook: PostToolUse: %s\n", note)
	} else {
		fmt.Fprintf(stdout, "hook: PostToolUse %s: %s\n", cmd, note)
	}
	remove := undo && len(updated) == 0 && existed
	if bytes.Equal(old, updated) && !remove {
		fmt.Fprintf(stdout, "%s: unchanged\n", path)
		return nil
	}
	if dryRun {
		fmt.Fprintf(stdout, "--- %s\n+++ %s (after terse setup%s)\n", path, path, map[bool]string{true: " --undo"}[undo])
		fmt.Fprint(stdout, lineDiff(string(old), string(updated)))
		fmt.Fprintln(stdout, "dry run: nothing written")
		return nil
	}
	if !undo {
		if _, err := os.Stat(backup); errors.Is(err, os.ErrNotExist) {
			// An empty backup records that there was no file.
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(backup, old, 0o600); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "backup: %s\n", backup)
		}
	}
	if remove {
		if err := os.Remove(path); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: removed (setup created it)\n", path)
		return nil
	}
	if err := writeFileAtomic(path, updated); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: updated; restart claude-code to use it\n", path)
	return nil
}

// parseSettings parses a settings file; empty means {}.
func parseSettings(data []byte) (tree.Value, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return tree.Object(), nil
	}
	v, err := tree.Parse(data)
	if err != nil {
		return tree.Value{}, err
	}
	if v.Kind() != tree.KindObject {
		return tree.Value{}, errors.New("not a JSON object")
	}
	return v, nil
}

// writeSettings writes settings as setup writes JSON: two-space indent,
// a final newline.
func writeSettings(v tree.Value) []byte {
	return append(tree.AppendIndent(nil, v, "  "), '\n')
}

// addHook adds terse's PostToolUse hook running cmd, or points an
// existing one at cmd; every other hook is kept.
func addHook(data []byte, cmd string) ([]byte, string, error) {
	root, err := parseSettings(data)
	if err != nil {
		return nil, "", err
	}
	hooks, ok := root.Get("hooks")
	if ok && hooks.Kind() != tree.KindObject {
		return nil, "", errors.New(`"hooks" is not an object`)
	}
	post, _ := hooks.Get("PostToolUse")
	groups := append([]tree.Value(nil), post.Items()...)
	for gi, g := range groups {
		hs, _ := g.Get("hooks")
		items := append([]tree.Value(nil), hs.Items()...)
		for hi, it := range items {
			c, _ := it.Get("command")
			if !isTerseHook(c.Str()) {
				continue
			}
			if c.Str() == cmd {
				return data, "already installed", nil
			}
			items[hi] = setMembers(it, tree.Member{Key: "command", Value: tree.String(cmd)})
			groups[gi] = setMembers(g, tree.Member{Key: "hooks", Value: tree.Array(items...)})
			return writeSettings(setHooks(root, hooks, groups)), "updated (was " + c.Str() + ")", nil
		}
	}
	groups = append(groups, tree.Object(
		tree.Member{Key: "matcher", Value: tree.String("*")},
		tree.Member{Key: "hooks", Value: tree.Array(tree.Object(
			tree.Member{Key: "type", Value: tree.String("command")},
			tree.Member{Key: "command", Value: tree.String(cmd)},
		))},
	))
	return writeSettings(setHooks(root, hooks, groups)), "added", nil
}

// setHooks returns root with hooks.PostToolUse set to groups; an empty
// list drops PostToolUse, and an empty hooks object drops hooks.
func setHooks(root, hooks tree.Value, groups []tree.Value) tree.Value {
	if hooks.Kind() != tree.KindObject {
		hooks = tree.Object()
	}
	if len(groups) > 0 {
		hooks = setMembers(hooks, tree.Member{Key: "PostToolUse", Value: tree.Array(groups...)})
	} else {
		hooks = withoutMember(hooks, "PostToolUse")
	}
	if len(hooks.Members()) > 0 {
		return setMembers(root, tree.Member{Key: "hooks", Value: hooks})
	}
	return withoutMember(root, "hooks")
}

// removeHook removes terse's PostToolUse hooks, and the groups and
// objects left empty by that.
func removeHook(data []byte) ([]byte, string, error) {
	root, err := parseSettings(data)
	if err != nil {
		return nil, "", err
	}
	hooks, _ := root.Get("hooks")
	post, _ := hooks.Get("PostToolUse")
	var groups []tree.Value
	var removed []string
	for _, g := range post.Items() {
		hs, ok := g.Get("hooks")
		var items []tree.Value
		for _, it := range hs.Items() {
			if c, _ := it.Get("command"); isTerseHook(c.Str()) {
				removed = append(removed, c.Str())
				continue
			}
			items = append(items, it)
		}
		if ok && len(items) == 0 && len(hs.Items()) > 0 {
			continue // a group that held only terse's hook
		}
		if ok && len(items) != len(hs.Items()) {
			g = setMembers(g, tree.Member{Key: "hooks", Value: tree.Array(items...)})
		}
		groups = append(groups, g)
	}
	if len(removed) == 0 {
		return data, "not installed", nil
	}
	return writeSettings(setHooks(root, hooks, groups)), "removed " + strings.Join(removed, ", "), nil
}

// sameSettings reports whether two settings texts hold the same data
// (an empty text is {}).
func sameSettings(a, b []byte) bool {
	va, err1 := parseSettings(a)
	vb, err2 := parseSettings(b)
	return err1 == nil && err2 == nil && tree.Equal(va, vb)
}
