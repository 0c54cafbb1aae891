// Package store keeps payloads that a compacted result left out, so that an
// agent can fetch them later by handle.
//
// A [Store] is a small key/value interface with an idle time-to-live: an
// entry that nobody has read or written for the TTL is gone. [Dir] is the
// embedded default, durable across processes (files under a directory);
// [Mem] keeps entries in memory for tests and single-process servers;
// package store/redisstore shares entries between processes and machines
// (gateway replicas behind a load balancer: a chunk stored by one is
// fetched from another), in a package of its own so that a program that
// does not use it does not link go-redis.
//
// Keys are chosen by the caller and must be [ValidKey]: 1 to 64 characters
// from [a-z0-9_-]. Callers in this module derive them from a hash of the
// content, so the same payload always gets the same handle.
package store

import (
	"context"
	"errors"
	"time"
)

// DefaultTTL is the idle time-to-live used when an options field is zero.
const DefaultTTL = 30 * time.Minute

// ErrNotFound is returned by Get when the key is unknown or its entry has
// expired. The two cases are deliberately not distinguished: either way the
// data must be produced again.
var ErrNotFound = errors.New("store: not found or expired")

// Store holds byte blobs by key with an idle TTL.
//
// Implementations are safe for concurrent use. Put replaces any existing
// entry; Get returns ErrNotFound (possibly wrapped) for unknown or expired
// keys and, on success, restarts the entry's idle timer.
type Store interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// PartsPutter is a Store that can put one entry given in parts, written
// one after the other, so that a caller holding a header and a large
// payload need not join them into one more copy first. [Dir] is one.
type PartsPutter interface {
	PutParts(ctx context.Context, key string, parts ...[]byte) error
}

// PutParts puts the entry made of parts, joined: with s's PutParts when s
// is a [PartsPutter], else joined into one blob for s.Put.
func PutParts(ctx context.Context, s Store, key string, parts ...[]byte) error {
	if pp, ok := s.(PartsPutter); ok {
		return pp.PutParts(ctx, key, parts...)
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	blob := make([]byte, 0, n)
	for _, p := range parts {
		blob = append(blob, p...)
	}
	return s.Put(ctx, key, blob)
}

// KeyError reports a key that is not [ValidKey].
type KeyError struct{ Key string }

func (e *KeyError) Error() string { return "store: invalid key " + quote(e.Key) }

// ValidKey reports whether k can be used as a key: 1 to 64 bytes from
// [a-z0-9_-]. Keys become file names in [Dir], so nothing else is allowed.
func ValidKey(k string) bool {
	if len(k) == 0 || len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	b := []byte{'"'}
	for _, r := range s {
		if r < 0x20 || r == '"' || r == '\\' {
			b = append(b, '?')
			continue
		}
		b = append(b, string(r)...)
	}
	return string(append(b, '"'))
}
