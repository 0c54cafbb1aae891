package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// Shared is a [Store] over another that keeps each large part of an entry
// once, under the digest of its content, however many entries hold it:
// the same 4 MB file read in a thousand sessions is stored once, beside a
// thousand small heads. An entry put in parts ([PutParts]) keeps its small
// parts (fit's header, which binds its handle to one session) in its own
// record and names its large parts by digest; Get joins them again. A
// part that expired or was evicted makes the entries naming it unknown
// (ErrNotFound), exactly as if they had expired themselves.
//
// Part keys start with "s_" and are never answered by Get: a caller can
// only reach a part through an entry that names it. An entry that the
// underlying store holds without the record's mark (written by a program
// that does not use Shared) is returned as it is.
type Shared struct {
	Store Store
	// MinPart is the size from which a part is shared; 0 means 4 KiB.
	MinPart int
}

// sharedMark starts every record Shared writes; fit's entries and other
// blobs never start with a NUL byte.
const sharedMark = "\x00terse-shared 1\n"

func (s *Shared) minPart() int {
	if s.MinPart > 0 {
		return s.MinPart
	}
	return 4 << 10
}

// partKey is the key of a part: a digest of its content.
func partKey(p []byte) string {
	sum := sha256.Sum256(p)
	return "s_" + hex.EncodeToString(sum[:20])
}

// Put stores data under key (its large content shared, see Shared).
func (s *Shared) Put(ctx context.Context, key string, data []byte) error {
	return s.PutParts(ctx, key, data)
}

// PutParts stores the entry made of parts: each part of at least MinPart
// bytes under its digest (once, whoever else holds it), then the entry's
// record, which holds the other parts and names those.
func (s *Shared) PutParts(ctx context.Context, key string, parts ...[]byte) error {
	if !ValidKey(key) || len(key) >= 2 && key[:2] == "s_" {
		return &KeyError{key}
	}
	rec := []byte(sharedMark)
	var inline [][]byte
	for _, p := range parts {
		if len(p) < s.minPart() {
			rec = append(rec, 'i', ' ')
			rec = strconv.AppendInt(rec, int64(len(p)), 10)
			rec = append(rec, '\n')
			inline = append(inline, p)
			continue
		}
		pk := partKey(p)
		if err := s.Store.Put(ctx, pk, p); err != nil {
			return err
		}
		rec = append(rec, 'r', ' ')
		rec = append(rec, pk...)
		rec = append(rec, ' ')
		rec = strconv.AppendInt(rec, int64(len(p)), 10)
		rec = append(rec, '\n')
	}
	rec = append(rec, '\n')
	return PutParts(ctx, s.Store, key, append([][]byte{rec}, inline...)...)
}

// Get returns the entry under key, its shared parts joined in.
func (s *Shared) Get(ctx context.Context, key string) ([]byte, error) {
	if !ValidKey(key) {
		return nil, &KeyError{key}
	}
	if len(key) >= 2 && key[:2] == "s_" {
		return nil, ErrNotFound
	}
	blob, err := s.Store.Get(ctx, key)
	if err != nil || !bytes.HasPrefix(blob, []byte(sharedMark)) {
		return blob, err
	}
	body := blob[len(sharedMark):]
	end := bytes.Index(body, []byte("\n\n"))
	if end < 0 {
		return nil, fmt.Errorf("%w (a damaged record)", ErrNotFound)
	}
	lines, inline := bytes.Split(body[:end], []byte("\n")), body[end+2:]
	var out []byte
	for _, l := range lines {
		f := bytes.Fields(l)
		switch {
		case len(f) == 2 && string(f[0]) == "i":
			n, err := strconv.Atoi(string(f[1]))
			if err != nil || n < 0 || n > len(inline) {
				return nil, fmt.Errorf("%w (a damaged record)", ErrNotFound)
			}
			out = append(out, inline[:n]...)
			inline = inline[n:]
		case len(f) == 3 && string(f[0]) == "r":
			n, err := strconv.Atoi(string(f[2]))
			if err != nil {
				return nil, fmt.Errorf("%w (a damaged record)", ErrNotFound)
			}
			p, err := s.Store.Get(ctx, string(f[1]))
			if errors.Is(err, ErrNotFound) || err == nil && len(p) != n {
				return nil, ErrNotFound // the part expired or was evicted
			}
			if err != nil {
				return nil, err
			}
			if out == nil && len(lines) == 1 {
				return p, nil
			}
			out = append(out, p...)
		default:
			return nil, fmt.Errorf("%w (a damaged record)", ErrNotFound)
		}
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}
