package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Dir is a durable [Store] that keeps one file per key under Path. The idle
// timer is the file's modification time, which Get refreshes, so several
// processes (a CLI run, then `terse chunk`) share entries. Expired files are
// removed lazily: by Get when it finds one, and by a sweep at most once per
// TTL during Put.
//
// The zero value is not usable: Path must be set. TTL zero means
// [DefaultTTL]. Now, when set, replaces time.Now (for tests).
type Dir struct {
	Path string
	TTL  time.Duration
	Now  func() time.Time
	// MaxBytes bounds the bytes of the entries under Path: a Put that
	// takes them past it removes the least recently used (the oldest
	// modification times) down to nine tenths of it; they then read as
	// expired. 0 means no bound. Processes sharing Path each apply it to
	// the whole directory.
	MaxBytes int64

	mu        sync.Mutex
	lastSweep time.Time
	size      int64 // bytes under Path at the last scan, plus those put since
	scanned   bool
}

// DefaultDir returns the default directory for a [Dir] store:
// the user cache directory + "/terse/chunks", or the temporary directory
// when there is no cache directory.
func DefaultDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "terse", "chunks")
	}
	return filepath.Join(os.TempDir(), "terse-chunks")
}

func (d *Dir) ttl() time.Duration {
	if d.TTL > 0 {
		return d.TTL
	}
	return DefaultTTL
}

func (d *Dir) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Dir) file(key string) (string, error) {
	if !ValidKey(key) {
		return "", &KeyError{key}
	}
	if d.Path == "" {
		return "", errors.New("store: Dir.Path is empty")
	}
	return filepath.Join(d.Path, key+".chunk"), nil
}

// Put writes data under key atomically (temporary file, then rename).
func (d *Dir) Put(ctx context.Context, key string, data []byte) error {
	return d.PutParts(ctx, key, data)
}

// PutParts is Put of the parts joined, written one after the other.
func (d *Dir) PutParts(ctx context.Context, key string, parts ...[]byte) error {
	name, err := d.file(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(d.Path, key+".*.tmp")
	if err != nil {
		return err
	}
	var werr error
	for _, p := range parts {
		if _, werr = tmp.Write(p); werr != nil {
			break
		}
	}
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return errors.Join(werr, cerr)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	now := d.now()
	os.Chtimes(name, now, now)
	d.maybeSweep(now)
	if d.MaxBytes > 0 {
		n := int64(0)
		for _, p := range parts {
			n += int64(len(p))
		}
		d.mu.Lock()
		d.size += n
		over := !d.scanned || d.size > d.MaxBytes
		d.mu.Unlock()
		if over {
			d.bound()
		}
	}
	return nil
}

// bound scans Path and, past MaxBytes, removes the least recently used
// entries down to nine tenths of it.
func (d *Dir) bound() {
	d.mu.Lock()
	defer d.mu.Unlock()
	ents, err := os.ReadDir(d.Path)
	if err != nil {
		return
	}
	type file struct {
		name string
		size int64
		used time.Time
	}
	var files []file
	total := int64(0)
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".chunk") {
			continue
		}
		if info, err := e.Info(); err == nil {
			files = append(files, file{e.Name(), info.Size(), info.ModTime()})
			total += info.Size()
		}
	}
	if total > d.MaxBytes {
		slices.SortFunc(files, func(a, b file) int { return a.used.Compare(b.used) })
		for _, f := range files {
			if total <= d.MaxBytes/10*9 {
				break
			}
			if os.Remove(filepath.Join(d.Path, f.name)) == nil {
				total -= f.size
			}
		}
	}
	d.size, d.scanned = total, true
}

// Get returns the data under key and restarts its idle timer.
func (d *Dir) Get(ctx context.Context, key string) ([]byte, error) {
	name, err := d.file(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	now := d.now()
	if now.Sub(st.ModTime()) > d.ttl() {
		os.Remove(name)
		return nil, ErrNotFound
	}
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	os.Chtimes(name, now, now)
	return data, nil
}

// maybeSweep removes expired entries, at most once per TTL.
func (d *Dir) maybeSweep(now time.Time) {
	d.mu.Lock()
	if now.Sub(d.lastSweep) < d.ttl() {
		d.mu.Unlock()
		return
	}
	d.lastSweep = now
	d.mu.Unlock()
	ents, err := os.ReadDir(d.Path)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() || !(strings.HasSuffix(e.Name(), ".chunk") || strings.HasSuffix(e.Name(), ".tmp")) {
			continue
		}
		info, err := e.Info()
		if err == nil && now.Sub(info.ModTime()) > d.ttl() {
			os.Remove(filepath.Join(d.Path, e.Name()))
		}
	}
}
