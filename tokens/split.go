package tokens

import (
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers below reproduce tiktoken's split patterns as
// hand-written scanners. Each returns the byte length of the first piece of
// s (which must be non-empty and valid UTF-8): exactly the length of the
// leftmost-first, backtracking match that tiktoken's regex finds at the start
// of s. The patterns, for reference:
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// cl100k_base:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// \s is Unicode White_Space (Go's unicode.IsSpace); the letter, mark and
// number classes are Go's unicode tables. (?i) folds s with ſ (U+017F), as
// Unicode simple case folding does.

// Character class bits.
const (
	cL  uint8 = 1 << iota // \p{L}
	cN                    // \p{N}
	cWS                   // \s
	cUp                   // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLo                   // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	cNL                   // [\r\n]
	cM                    // \p{M}
)

// asciiClass holds the class bits of the ASCII runes.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classify(r)
	}
	return t
}()

// bmpPages holds the class bits of the Basic Multilingual Plane, a page
// of 256 runes built on first use of a rune in it: a short process that
// meets a few non-ASCII runes classifies a few pages, not 65,536 runes.
// Two goroutines may build the same page at once; both store the same
// bits.
var bmpPages [0x100]atomic.Pointer[[0x100]uint8]

// bmpClass returns the class bits of r, which must be below 0x10000.
func bmpClass(r rune) uint8 {
	p := bmpPages[r>>8].Load()
	if p == nil {
		p = new([0x100]uint8)
		base := r &^ 0xff
		for i := range rune(0x100) {
			p[i] = classify(base + i)
		}
		bmpPages[r>>8].Store(p)
	}
	return p[r&0xff]
}

func classify(r rune) uint8 {
	var c uint8
	switch {
	case unicode.IsLetter(r):
		c = cL
		switch {
		case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
			c |= cUp
		case unicode.Is(unicode.Ll, r):
			c |= cLo
		default: // Lm, Lo
			c |= cUp | cLo
		}
	case unicode.IsMark(r):
		c = cUp | cLo | cM
	case unicode.IsNumber(r):
		c = cN
	case unicode.IsSpace(r):
		c = cWS
		if r == '\r' || r == '\n' {
			c |= cNL
		}
	}
	return c
}

// classAt returns the class bits and byte size of the rune at s[i:], or size
// 0 at the end of s. Hot loops test for ASCII first and call it for the
// rest, since it is too large to inline.
func classAt(s string, i int) (uint8, int) {
	if i >= len(s) {
		return 0, 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < 0x10000 {
		return bmpClass(r), n
	}
	return classify(r), n
}

// isPrefix reports whether class c is in [^\r\n\p{L}\p{N}].
func isPrefix(c uint8) bool { return c&(cL|cN|cNL) == 0 }

// isSymbol reports whether class c is in [^\s\p{L}\p{N}].
func isSymbol(c uint8) bool { return c&(cWS|cL|cN) == 0 }

// runEnd returns the end of the run of runes from i whose class has a bit
// of mask set.
func runEnd(s string, i int, mask uint8) int {
	for {
		c, n := uint8(0), 1
		if i < len(s) && s[i] < utf8.RuneSelf {
			c = asciiClass[s[i]]
		} else {
			c, n = classAt(s, i)
		}
		if n == 0 || c&mask == 0 {
			return i
		}
		i += n
	}
}

// contraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at the
// start of s, or 0.
func contraction(s string) int {
	if len(s) < 2 || s[0] != '\'' {
		return 0
	}
	switch s[1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if len(s) >= 3 && s[2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if len(s) >= 3 && s[2]|0x20 == 'l' {
			return 3
		}
	}
	if len(s) >= 3 && s[1] == 0xC5 && s[2] == 0xBF { // ſ, which folds to s
		return 3
	}
	return 0
}

// o200kUpperLower matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// from i and returns its end, or 0 when it does not match.
func o200kUpperLower(s string, i int) int {
	lastLo := 0 // end of the last rune of the upper run that is also lower
	k := i
	for {
		c, n := uint8(0), 1
		if k < len(s) && s[k] < utf8.RuneSelf {
			c = asciiClass[s[k]]
		} else {
			c, n = classAt(s, k)
		}
		if n == 0 || c&cUp == 0 {
			if n != 0 && c&cLo != 0 {
				return runEnd(s, k, cLo)
			}
			return lastLo // backtrack to the last lower rune, if any
		}
		k += n
		if c&cLo != 0 {
			lastLo = k
		}
	}
}

// o200kUpper matches [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*
// from i and returns its end, or 0 when it does not match.
func o200kUpper(s string, i int) int {
	k := runEnd(s, i, cUp)
	if k == i {
		return 0
	}
	return runEnd(s, k, cLo)
}

// splitO200k returns the length of the first o200k_base piece of s.
func splitO200k(s string) int {
	c0, n0 := asciiClass[s[0]&0x7f], 1
	if s[0] >= utf8.RuneSelf {
		c0, n0 = classAt(s, 0)
	}
	switch {
	case c0&cL != 0: // letters always match one of the two word branches
		e := o200kUpperLower(s, 0)
		if e == 0 {
			e = o200kUpper(s, 0)
		}
		return e + contraction(s[e:])
	case isPrefix(c0):
		e := o200kUpperLower(s, n0)
		if e == 0 && c0&cM != 0 {
			e = o200kUpperLower(s, 0) // the mark itself is lower
		}
		if e == 0 {
			e = o200kUpper(s, n0)
		}
		if e != 0 {
			return e + contraction(s[e:])
		}
	case c0&cN != 0:
		return digits(s, n0)
	}
	if e := symbols(s, false); e != 0 {
		return e
	}
	return spaces(s)
}

// splitCl100k returns the length of the first cl100k_base piece of s.
func splitCl100k(s string) int {
	if e := contraction(s); e != 0 {
		return e
	}
	c0, n0 := asciiClass[s[0]&0x7f], 1
	if s[0] >= utf8.RuneSelf {
		c0, n0 = classAt(s, 0)
	}
	switch {
	case c0&cL != 0:
		return runEnd(s, n0, cL)
	case isPrefix(c0):
		if e := runEnd(s, n0, cL); e > n0 {
			return e
		}
	case c0&cN != 0:
		return digits(s, n0)
	}
	if e := symbols(s, true); e != 0 {
		return e
	}
	return spaces(s)
}

// digits matches \p{N}{1,3} given the first number's size n0.
func digits(s string, n0 int) int {
	i := n0
	for range 2 {
		c, n := uint8(0), 1
		if i < len(s) && s[i] < utf8.RuneSelf {
			c = asciiClass[s[i]]
		} else {
			c, n = classAt(s, i)
		}
		if n == 0 || c&cN == 0 {
			break
		}
		i += n
	}
	return i
}

// symbols matches ` ?[^\s\p{L}\p{N}]+[\r\n]*` (cl100k) or
// ` ?[^\s\p{L}\p{N}]+[\r\n/]*` (o200k) at the start of s, or returns 0.
func symbols(s string, cl100k bool) int {
	i := 0
	if s[0] == ' ' {
		i = 1
	}
	j := i
	for {
		c, n := uint8(0), 1
		if j < len(s) && s[j] < utf8.RuneSelf {
			c = asciiClass[s[j]]
		} else {
			c, n = classAt(s, j)
		}
		if n == 0 || !isSymbol(c) {
			break
		}
		j += n
	}
	if j == i {
		return 0
	}
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/' && !cl100k) {
		j++
	}
	return j
}

// spaces matches `\s*[\r\n]+|\s+(?!\S)|\s+` at the start of s, which begins
// with white space.
func spaces(s string) int {
	w, lastNL, last := 0, -1, 0
	for {
		c, n := uint8(0), 1
		if w < len(s) && s[w] < utf8.RuneSelf {
			c = asciiClass[s[w]]
		} else {
			c, n = classAt(s, w)
		}
		if n == 0 || c&cWS == 0 {
			break
		}
		if c&cNL != 0 {
			lastNL = w
		}
		last = w
		w += n
	}
	switch {
	case lastNL >= 0: // \s*[\r\n]+ backtracks to the last line break
		return lastNL + 1
	case w == len(s): // \s+(?!\S) at the end of the text
		return w
	case last > 0: // \s+(?!\S) gives back the last space
		return last
	}
	return w // \s+
}
