package telemetry

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Defaults of DirOptions.
const (
	DefaultMaxFileBytes  = 4 << 20
	DefaultMaxTotalBytes = 64 << 20
)

// DirOptions configure a DirSink.
type DirOptions struct {
	Dir string
	// Salt keys the hashes of session ids and tool names; nil means the
	// directory's salt file (created with 32 random bytes if absent).
	Salt []byte
	// ToolNames writes tool names instead of their hashes.
	ToolNames bool
	// MaxFileBytes rotates a session's file; MaxTotalBytes bounds the
	// directory (oldest files deleted first). 0 means the defaults.
	MaxFileBytes, MaxTotalBytes int64
	// SampleRate is written with each event so that readers can scale
	// counts; 0 means 1.
	SampleRate float64
}

// DirSink writes events as JSONL, one file per session
// ("SESSIONHASH-SEQ.jsonl"), bounded in size.
type DirSink struct {
	o     DirOptions
	files []dirFile // oldest first
	total int64
	cur   map[string]int // session hash → index in files of its open file
	seq   map[string]int
	hash  map[string]string // session or tool → hash, bounded
	clock int64
	buf   []byte
}

type dirFile struct {
	name string
	size int64
	used int64 // order of the last write; existing files by mtime
}

// saltFile is the name of the per-install salt in a telemetry directory.
const saltFile = "salt"

// LoadSalt returns the salt of dir, creating it if absent.
func LoadSalt(dir string) ([]byte, error) {
	p := filepath.Join(dir, saltFile)
	if s, err := ReadSalt(dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	s := make([]byte, 32)
	rand.Read(s)
	if err := os.WriteFile(p, []byte(hex.EncodeToString(s)+"\n"), 0o600); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenDir creates the directory if needed and returns a sink writing into
// it.
func OpenDir(o DirOptions) (*DirSink, error) {
	if o.Dir == "" {
		return nil, errors.New("telemetry: no directory")
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if o.MaxTotalBytes < o.MaxFileBytes {
		o.MaxFileBytes = o.MaxTotalBytes
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	if o.Salt == nil {
		s, err := LoadSalt(o.Dir)
		if err != nil {
			return nil, err
		}
		o.Salt = s
	}
	d := &DirSink{o: o, cur: map[string]int{}, seq: map[string]int{}, hash: map[string]string{}}
	ents, err := os.ReadDir(o.Dir)
	if err != nil {
		return nil, err
	}
	type aged struct {
		dirFile
		mod int64
	}
	var old []aged
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		old = append(old, aged{dirFile{name: e.Name(), size: info.Size()}, info.ModTime().UnixNano()})
		if sid, n, ok := splitName(e.Name()); ok && n >= d.seq[sid] {
			d.seq[sid] = n + 1
		}
	}
	slices.SortFunc(old, func(a, b aged) int {
		if a.mod != b.mod {
			return int(a.mod - b.mod)
		}
		return strings.Compare(a.name, b.name)
	})
	for _, f := range old {
		d.clock++
		f.used = d.clock
		d.files = append(d.files, f.dirFile)
		d.total += f.size
	}
	return d, nil
}

func splitName(name string) (sid string, seq int, ok bool) {
	base := strings.TrimSuffix(name, ".jsonl")
	i := strings.LastIndexByte(base, '-')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(base[i+1:])
	return base[:i], n, err == nil
}

// Hash returns the salted hash of s with a kind prefix ("s" session, "t"
// tool), as written.
func (d *DirSink) Hash(kind, s string) string {
	key := kind + "\x00" + s
	if h, ok := d.hash[key]; ok {
		return h
	}
	h := saltedHash(d.o.Salt, kind, s)
	if len(d.hash) > 4096 {
		clear(d.hash)
	}
	d.hash[key] = h
	return h
}

// ToolHash is what a DirSink with this salt writes for the tool name, so
// that a tuner on the same install can recognise tools it is told about.
func ToolHash(salt []byte, name string) string { return saltedHash(salt, "t", name) }

func saltedHash(salt []byte, kind, s string) string {
	sum := sha256.New()
	sum.Write(salt)
	sum.Write([]byte(kind + "\x00" + s))
	if kind == "t" {
		return "t:" + hex.EncodeToString(sum.Sum(nil)[:6])
	}
	return hex.EncodeToString(sum.Sum(nil)[:8])
}

// ReadSalt returns dir's salt, or an error when it has none.
func ReadSalt(dir string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, saltFile))
	if err != nil {
		return nil, err
	}
	s, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(s) < 16 {
		return nil, fmt.Errorf("telemetry: bad salt file in %s", dir)
	}
	return s, nil
}

// Write appends the batch to the sessions' files.
func (d *DirSink) Write(batch []Event) error {
	var firstErr error
	// Group by session, keeping order within each.
	done := make([]bool, len(batch))
	for i := range batch {
		if done[i] {
			continue
		}
		sid := d.Hash("s", batch[i].Session)
		if _, ok := d.cur[sid]; !ok {
			d.rotate(sid)
		}
		d.buf = d.buf[:0]
		for j := i; j < len(batch); j++ {
			if done[j] || batch[j].Session != batch[i].Session {
				continue
			}
			done[j] = true
			n := len(d.buf)
			d.buf = d.encode(d.buf, &batch[j])
			if int64(len(d.buf)-n) > d.o.MaxFileBytes {
				d.buf = d.buf[:n] // an event larger than a file is not written
				continue
			}
			if d.files[d.cur[sid]].size+int64(len(d.buf)) > d.o.MaxFileBytes {
				// The line does not fit: write what does, then rotate.
				if err := d.flush(sid, d.buf[:n]); err != nil && firstErr == nil {
					firstErr = err
				}
				d.buf = append(d.buf[:0], d.buf[n:]...)
				d.rotate(sid)
			}
		}
		if err := d.flush(sid, d.buf); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// rotate starts a new file for sid.
func (d *DirSink) rotate(sid string) {
	name := sid + "-" + strconv.Itoa(d.seq[sid]) + ".jsonl"
	d.seq[sid]++
	d.files = append(d.files, dirFile{name: name})
	d.cur[sid] = len(d.files) - 1
}

// flush appends lines to sid's current file, first deleting the oldest
// other files until the directory stays within its bound.
func (d *DirSink) flush(sid string, lines []byte) error {
	if len(lines) == 0 {
		return nil
	}
	idx := d.cur[sid]
	// The least recently written files go first, so that the newest
	// events of every session survive.
	for d.total+int64(len(lines)) > d.o.MaxTotalBytes && len(d.files) > 1 {
		lru := -1
		for i, f := range d.files {
			if i != idx && (lru < 0 || f.used < d.files[lru].used) {
				lru = i
			}
		}
		d.remove(lru)
		if lru < idx {
			idx--
		}
	}
	d.clock++
	d.files[idx].used = d.clock
	f, err := os.OpenFile(filepath.Join(d.o.Dir, d.files[idx].name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	n, err := f.Write(lines)
	d.files[idx].size += int64(n)
	d.total += int64(n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// remove deletes files[i].
func (d *DirSink) remove(i int) {
	f := d.files[i]
	os.Remove(filepath.Join(d.o.Dir, f.name))
	d.total -= f.size
	d.files = slices.Delete(d.files, i, i+1)
	for k, v := range d.cur {
		switch {
		case v == i:
			delete(d.cur, k)
		case v > i:
			d.cur[k] = v - 1
		}
	}
}

// Close releases nothing (files are closed after each write).
func (d *DirSink) Close() error { return nil }

// Settings are the [telemetry] section of the config file, field for field
// (config.Telemetry converts to it: telemetry.Settings(cfg.Telemetry)).
type Settings struct {
	Enabled       bool
	Dir           string
	SampleRate    float64
	ToolNames     bool
	MaxFileBytes  int
	MaxTotalBytes int
	Queue         int
}

// Open returns a Recorder for the settings, or nil (a valid, do-nothing
// Recorder) when telemetry is off. An empty directory means DefaultDir.
func Open(c Settings) (*Recorder, error) {
	if !c.Enabled {
		return nil, nil
	}
	dir := c.Dir
	if dir == "" {
		var err error
		if dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}
	sink, err := OpenDir(DirOptions{Dir: dir, ToolNames: c.ToolNames, MaxFileBytes: int64(c.MaxFileBytes),
		MaxTotalBytes: int64(c.MaxTotalBytes), SampleRate: c.SampleRate})
	if err != nil {
		return nil, err
	}
	return New(sink, Options{SampleRate: c.SampleRate, Queue: c.Queue}), nil
}

// DefaultDir is the user config directory's terse/telemetry.
func DefaultDir() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("telemetry: no directory configured and %v", err)
	}
	return filepath.Join(d, "terse", "telemetry"), nil
}
