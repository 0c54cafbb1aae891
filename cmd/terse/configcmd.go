package main

import (
	"context"
	"fmt"
	"io"
	"os"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/terse-dev/terse/config"
)

const configDoc = `
Config shows where terse's configuration file is and what it says.

Every command that takes --config reads the default file when --config is
not given and the file exists: $XDG_CONFIG_HOME/terse/config.toml, else
~/.config/terse/config.toml. So [telemetry], [profiles], [[tools]] rules
and the rest apply to "terse proxy" servers wired by "terse setup", to
"terse api" and "terse wrap", and to the CLI alike, without --config on
every command line. "terse tune" writes its rules into the same file
(with a backup). docs/config.md documents every key.

  path    print the default file's path (and whether it exists)
  show    print the effective configuration: the file over the defaults
  check   load and validate the file; every problem with its line

--config FILE names another file for show and check.

Examples:
  terse config path
  terse config check
  terse config show --config terse.toml
`

func runConfig(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("config", "path|show|check [--config FILE]", configDoc, stdout, stderr)
	cfgPath := fs.String("config", "", "the configuration `FILE` (default: the default file above)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{"config: name one of path, show or check; see terse config --help"}
	}
	def, err := config.DefaultPath()
	if err != nil {
		return err
	}
	path := *cfgPath
	switch fs.Arg(0) {
	case "path":
		if _, err := os.Stat(def); err != nil {
			fmt.Fprintf(stdout, "%s (does not exist: the built-in defaults apply)\n", def)
			return nil
		}
		fmt.Fprintln(stdout, def)
		return nil
	case "show", "check":
		var cfg *config.Config
		if path == "" {
			fmt.Fprintf(stderr, "terse: %s does not exist: the built-in defaults apply\n", def)
			cfg = config.Default()
		} else if cfg, err = config.Load(path); err != nil {
			return reportConfigError(stderr, err)
		}
		warnDeprecated(stderr, cfg)
		if fs.Arg(0) == "check" {
			if path != "" {
				fmt.Fprintf(stdout, "%s: ok\n", path)
			}
			return nil
		}
		out, err := toml.Marshal(cfg)
		if err != nil {
			return err
		}
		if path != "" {
			fmt.Fprintf(stdout, "# %s over the built-in defaults\n", path)
		}
		_, err = stdout.Write(out)
		return err
	}
	return &usageError{fmt.Sprintf("config: unknown subcommand %q: want path, show or check", fs.Arg(0))}
}

// warnDeprecated writes a warning line on stderr for each deprecated key
// of cfg (accepted, ignored).
func warnDeprecated(stderr io.Writer, cfg *config.Config) {
	for _, w := range cfg.Deprecated() {
		fmt.Fprintf(stderr, "terse: warning: %s\n", w)
	}
}
