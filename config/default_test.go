package config

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestDefaultPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("XDG paths")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", "/home/nobody")
	if p, _ := DefaultPath(); p != filepath.Join(dir, "terse", "config.toml") {
		t.Errorf("with XDG_CONFIG_HOME: %s", p)
	}
	if DefaultFile() != "" {
		t.Errorf("DefaultFile names a file that does not exist")
	}
	os.MkdirAll(filepath.Join(dir, "terse"), 0o755)
	os.WriteFile(filepath.Join(dir, "terse", "config.toml"), nil, 0o644)
	if DefaultFile() == "" {
		t.Errorf("DefaultFile misses the file")
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	if p, _ := DefaultPath(); p != "/home/nobody/.config/terse/config.toml" {
		t.Errorf("without XDG_CONFIG_HOME: %s", p)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative/dir") // ignored, as the spec says
	if p, _ := DefaultPath(); p != "/home/nobody/.config/terse/config.toml" {
		t.Errorf("relative XDG_CONFIG_HOME: %s", p)
	}
}
