package dedup

import (
	"strings"

	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tree"
)

// The in-band texts a model reads are written by package inband. Their
// wording is API: golden files in testdata pin them.

// IDLine is the line shown with a recorded result so that later
// references can be resolved by text match.
func IDLine(id string) string { return inband.ID{ID: id}.String() }

// RefHint replaces a result byte-identical to the one shown with id.
func RefHint(id string) string { return inband.Ref{ID: id}.String() }

// Change is one scalar leaf that differs between two JSON values.
type Change struct {
	Path     string // member keys and array indexes joined by "."
	Old, New tree.Value
}

// NearRefHint replaces a result equal to the one shown with id except for
// the listed changes, e.g. "> [near-ref: 3f2a1c9d, status: pending→success]".
func NearRefHint(id string, changes []Change) string {
	x := inband.NearRef{ID: id, Changes: make([]inband.Change, len(changes))}
	for i, c := range changes {
		x.Changes[i] = inband.Change{Path: c.Path, Old: deltaText(c.Old), New: deltaText(c.New)}
	}
	return x.String()
}

// deltaText writes a scalar so that the hint is exact: numbers, booleans
// and null as JSON, strings bare when they cannot be mistaken for anything
// else (or for the hint's own punctuation), otherwise as JSON strings.
func deltaText(v tree.Value) string {
	if v.Kind() != tree.KindString {
		return v.String()
	}
	s := v.Str()
	if s == "" || s == "true" || s == "false" || s == "null" || tree.IsNumber(s) ||
		s[0] == ' ' || s[len(s)-1] == ' ' || s[0] == '"' ||
		strings.ContainsAny(s, ",]\"\\→\n\r\t") {
		return string(tree.AppendString(nil, s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return string(tree.AppendString(nil, s))
		}
	}
	return s
}

func simpleSegment(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Delta returns the scalar leaves that differ between old and new when the
// two have the same structure (same keys in the same order, arrays of the
// same length), every difference is between scalars, at least one leaf
// differs, every path segment is plain ([A-Za-z0-9_-]) and the delta's
// size, Σ len(path)+len(old)+len(new)+4, is at most max.
func Delta(old, new tree.Value, max int) ([]Change, bool) {
	var out []Change
	size := 0
	var walk func(path string, a, b tree.Value) bool
	walk = func(path string, a, b tree.Value) bool {
		if a.Kind() != b.Kind() && (!a.IsPrimitive() || !b.IsPrimitive()) {
			return false
		}
		switch a.Kind() {
		case tree.KindObject:
			am, bm := a.Members(), b.Members()
			if len(am) != len(bm) {
				return false
			}
			for i := range am {
				if am[i].Key != bm[i].Key || !simpleSegment(am[i].Key) {
					if am[i].Key != bm[i].Key || !tree.Equal(am[i].Value, bm[i].Value) {
						return false
					}
					continue
				}
				if !walk(join(path, am[i].Key), am[i].Value, bm[i].Value) {
					return false
				}
			}
			return true
		case tree.KindArray:
			ai, bi := a.Items(), b.Items()
			if len(ai) != len(bi) {
				return false
			}
			for i := range ai {
				if !walk(join(path, itoa(i)), ai[i], bi[i]) {
					return false
				}
			}
			return true
		}
		if tree.Equal(a, b) {
			return true
		}
		if path == "" {
			return false
		}
		c := Change{Path: path, Old: a, New: b}
		size += len(path) + len(deltaText(a)) + len(deltaText(b)) + 4
		out = append(out, c)
		return size <= max
	}
	if !walk("", old, new) || len(out) == 0 {
		return nil, false
	}
	return out, true
}

func join(path, seg string) string {
	if path == "" {
		return seg
	}
	return path + "." + seg
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
