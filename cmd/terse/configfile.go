package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A client's configuration file is the user's: terse changes it only as
// a careful editor would. It writes through a symbolic link to the file
// the link names (a dotfiles checkout stays the one copy), keeps the
// file's mode and owner, leaves a read-only file alone (the user made it
// so), and replaces the file atomically (a new file in the same
// directory, synced, then renamed over it), so that a crash leaves either
// the old file or the new one. Before the first change it keeps a backup.

// errReadOnly is returned for a configuration file without write
// permission for its owner.
var errReadOnly = errors.New("read-only")

// configTarget is the file a configuration path names: the path itself,
// or the file its symbolic links lead to.
func configTarget(path string) (string, error) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	return target, nil
}

// checkWritable says why terse will not change the file at path, or nil.
func checkWritable(path string) error {
	target, err := configTarget(path)
	if err != nil {
		return err
	}
	st, err := os.Stat(target)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o200 == 0 {
		return fmt.Errorf("%s is read-only (mode %04o), so terse leaves it alone; make it writable (chmod u+w %s) and run again: %w", path, st.Mode().Perm(), target, errReadOnly)
	}
	return nil
}

// replaceConfig writes data as the new content of the configuration file
// at path (through symbolic links, keeping mode and owner, atomically).
func replaceConfig(path string, data []byte) error {
	if err := checkWritable(path); err != nil {
		return err
	}
	target, err := configTarget(path)
	if err != nil {
		return err
	}
	st, err := os.Stat(target)
	if err != nil {
		return err
	}
	return writeReplacing(target, data, st)
}

// writeReplacing writes data to a new file beside target with like's mode
// and owner, then renames it over target.
func writeReplacing(target string, data []byte, like fs.FileInfo) error {
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".terse-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(like.Mode().Perm()); err != nil {
		return err
	}
	chownLike(tmp, like)
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return err
	}
	done = true
	return nil
}

// backupConfig copies the configuration file at path to backup, with the
// file's mode, unless backup exists. It reports whether it wrote one.
func backupConfig(path, backup string) (bool, error) {
	if _, err := os.Lstat(backup); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	target, err := configTarget(path)
	if err != nil {
		return false, err
	}
	st, err := os.Stat(target)
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile(target)
	if err != nil {
		return false, err
	}
	return true, writeReplacing(backup, data, st)
}

// editConfig applies edit to the configuration file at path: a change is
// written as replaceConfig does, after a backup to path+".terse-backup"
// (made once, never overwritten). It returns the old and new contents
// and the backup's path when it made one. An edit returning its input
// unchanged writes nothing.
func editConfig(path string, edit func(old []byte) ([]byte, error)) (old, updated []byte, backup string, err error) {
	old, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, "", err
	}
	updated, err = edit(old)
	if err != nil || string(updated) == string(old) {
		return old, updated, "", err
	}
	if err := checkWritable(path); err != nil {
		return old, updated, "", err
	}
	b := path + ".terse-backup"
	wrote, err := backupConfig(path, b)
	if err != nil {
		return old, updated, "", err
	}
	if !wrote {
		b = ""
	}
	return old, updated, b, replaceConfig(path, updated)
}

// ephemeralPath says why a terse binary at path will not last ("" when
// it will): a build that "go run" deletes on exit, or npx's cache.
func ephemeralPath(path string) string {
	p := filepath.ToSlash(path)
	switch {
	case strings.Contains(p, "/go-build"):
		return "a temporary build that go run deletes when it exits"
	case strings.Contains(p, "/_npx/"):
		return "npx's cache, which npm replaces or cleans"
	}
	return ""
}
