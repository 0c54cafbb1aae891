package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tune"
)

const tuneDoc = `
Tune writes a terse config file from what terse and your agents did.

  terse tune analyze [DIR] [--since DURATION] [--names FILE] [--out FILE] [--dry-run]
      Rules R1-R5 over telemetry ([telemetry] enabled = true): per-tool
      dedup and templates, cache size, encoding depth, minimum size.
  terse tune from-claude-logs [--input-dir DIR] [--out FILE] [--dry-run]
      Rules P1-P3 over Claude Code transcripts (~/.claude/projects, sub-
      agents included) and Codex rollouts (~/.codex/sessions): pin the
      dominant model, classify the sessions, list MCP tools as data
      profiles. Also reports what the tool results cost and what terse
      saves on them (by replaying them through its pipeline).

The file is in the config's own schema, with a comment per rule stating
its evidence; --dry-run prints it instead of writing it. Without --out
it goes into the default config file (see terse config --help), which
every command reads: after your own settings, replacing what an earlier
run wrote, with the old file kept as config.toml.bak. When your settings
and the proposal set the same table, the proposal is written to
tuned.toml beside it for you to merge. docs/tune.md describes each rule.
`

func runTune(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, "Usage: terse tune analyze|from-claude-logs [flags]\n", tuneDoc)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, "Usage: terse tune analyze|from-claude-logs [flags]\n", tuneDoc)
		return nil
	case "analyze":
		return runTuneAnalyze(ctx, args[1:], stdout, stderr)
	case "from-claude-logs":
		return runTuneLogs(ctx, args[1:], stdout, stderr)
	}
	return &usageError{fmt.Sprintf("tune: unknown subcommand %q (want analyze or from-claude-logs)", args[0])}
}

func runTuneAnalyze(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tune analyze", "[--since DURATION] [--names FILE] [--out FILE] [--dry-run] [--config FILE] [DIR]", tuneDoc, stdout, stderr)
	out := fs.String("out", "", "write the config to `file` (default: into the default config file)")
	dry := fs.Bool("dry-run", false, "print the config instead of writing it")
	names := fs.String("names", "", "`file` of tool names, one a line, to recognise hashed tools by")
	cfgPath := fs.String("config", "", "terse config `FILE` whose [telemetry] dir to read")
	since := fs.String("since", "", "only events newer than this `duration` (\"720h\", \"30d\")")
	pos, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return &usageError{"tune analyze: at most one DIR"}
	}
	from := timeZero
	if *since != "" {
		d, err := parseSince(*since)
		if err != nil {
			return &usageError{"tune analyze: --since: " + err.Error()}
		}
		from = time.Now().Add(-d)
	}
	dir, err := telemetryDir(first(pos), *cfgPath)
	if err != nil {
		return err
	}
	l, err := telemetry.ReadDir(dir, from)
	if err != nil {
		return err
	}
	var known map[string]string
	if *names != "" {
		salt, err := telemetry.ReadSalt(dir)
		if err != nil {
			return fmt.Errorf("tune analyze: --names needs the telemetry salt: %w", err)
		}
		known, err = readNames(*names, salt)
		if err != nil {
			return err
		}
	}
	return writePlan(tune.Analyze(l, known).Render(), *out, *dry, stdout, stderr)
}

func runTuneLogs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tune from-claude-logs", "[--input-dir DIR] [--out FILE] [--dry-run]", tuneDoc, stdout, stderr)
	in := fs.String("input-dir", "", "read every *.jsonl under `dir` (default: ~/.claude/projects and ~/.codex/sessions)")
	out := fs.String("out", "", "write the config to `file` (default: into the default config file)")
	dry := fs.Bool("dry-run", false, "print the config instead of writing it")
	pos, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{"tune from-claude-logs: no arguments (use --input-dir)"}
	}
	var files []string
	if *in != "" {
		files, err = tune.LogFiles(*in)
	} else {
		files, err = tune.DefaultLogFiles()
	}
	if err != nil {
		return err
	}
	logs, err := tune.ReadLogs(files)
	if err != nil {
		return err
	}
	_, plan, err := tune.FromLogs(ctx, logs, tune.ReplayOptions{})
	if err != nil {
		return err
	}
	return writePlan(plan.Render(), *out, *dry, stdout, stderr)
}

// writePlan checks that the text loads as a config, then prints or writes
// it.
func writePlan(text, out string, dry bool, stdout, stderr io.Writer) error {
	if _, err := config.Parse([]byte(text), "proposed config"); err != nil {
		return fmt.Errorf("tune: the proposed config does not load (a bug): %v", err)
	}
	if dry {
		_, err := io.WriteString(stdout, text)
		return err
	}
	if out == "" {
		def, err := config.DefaultPath()
		if err != nil {
			return fmt.Errorf("tune: no --out and %v", err)
		}
		written, note, err := writeTuned(def, text)
		if err != nil {
			return err
		}
		out = written
		if note != "" {
			fmt.Fprintf(stderr, "terse: %s\n", note)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		tmp := out + ".tmp"
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, out); err != nil {
			return err
		}
	}
	// The report and the rules are the file's comments.
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			fmt.Fprintln(stdout, strings.TrimPrefix(strings.TrimPrefix(line, "#"), " "))
		}
	}
	fmt.Fprintf(stderr, "terse: wrote %s\n", out)
	return nil
}

// tunedMarker starts the part of the default config that terse tune
// writes; a later run replaces everything from it to the end.
const tunedMarker = "# ---- written by terse tune; replaced by its next run (everything above is yours) ----"

// writeTuned puts the proposed config text into the default config file
// at path, which every command reads: the file's own settings stay, the
// previous run's part is replaced, and the old file is kept as
// path+".bak". When the two do not combine (the file sets a table the
// proposal sets too), the proposal goes to tuned.toml beside it instead,
// and the note says how to combine them. It returns the file written.
func writeTuned(path, text string) (string, string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", "", err
	}
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return path, "", os.WriteFile(path, []byte(tunedMarker+"\n"+text), 0o644)
	}
	if err != nil {
		return "", "", err
	}
	own := string(old)
	if i := strings.Index(own, tunedMarker); i >= 0 {
		own = own[:i]
	}
	own = strings.TrimRight(own, "\n")
	merged := tunedMarker + "\n" + text
	if own != "" {
		merged = own + "\n\n" + merged
	}
	if _, perr := config.Parse([]byte(merged), path); perr != nil {
		side := filepath.Join(filepath.Dir(path), "tuned.toml")
		if err := os.WriteFile(side, []byte(text), 0o644); err != nil {
			return "", "", err
		}
		return side, fmt.Sprintf("%s and the proposal do not combine (%v); the proposal is in %s: copy what you want of it into %s by hand", path, perr, side, path), nil
	}
	backup := path + ".bak"
	st, err := os.Stat(path)
	if err != nil {
		return "", "", err
	}
	if err := writeReplacing(backup, old, st); err != nil {
		return "", "", err
	}
	if err := replaceConfig(path, []byte(merged)); err != nil {
		return "", "", err
	}
	return path, "previous " + path + " kept as " + backup, nil
}

func readNames(path string, salt []byte) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n := strings.TrimSpace(sc.Text()); n != "" && !strings.HasPrefix(n, "#") {
			m[telemetry.ToolHash(salt, n)] = n
		}
	}
	return m, sc.Err()
}
