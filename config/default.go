package config

import (
	"os"
	"path/filepath"
	"runtime"
)

// DefaultPath is the configuration file every terse command reads when
// it is given none: $XDG_CONFIG_HOME/terse/config.toml, else
// ~/.config/terse/config.toml (on Windows, config.toml in terse's folder
// of the user's application data). The file need not exist.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "terse", "config.toml"), nil
	}
	if runtime.GOOS == "windows" {
		d, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(d, "terse", "config.toml"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".config", "terse", "config.toml"), nil
}

// DefaultFile is DefaultPath when that file exists, else "".
func DefaultFile() string {
	p, err := DefaultPath()
	if err != nil {
		return ""
	}
	if st, err := os.Stat(p); err != nil || st.IsDir() {
		return ""
	}
	return p
}
