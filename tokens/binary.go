package tokens

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// Binary reports whether b is binary data rather than text: it is not
// valid UTF-8, or it holds a NUL byte, or more than one byte in 32 of it is
// a control character other than tab, line feed, carriage return, form feed
// or escape. Text a model reads is none of these; terse passes binary
// input through untouched (and says so) rather than rewriting it as text,
// since counting or re-encoding it would turn invalid bytes into U+FFFD.
func Binary(b []byte) bool {
	// One pass over memory: each block is checked as UTF-8, then counted
	// while it is in cache. Blocks end at the start of a character, so
	// the input is valid UTF-8 exactly when every block is.
	total, ctl := len(b), 0
	for len(b) > 0 {
		n := len(b)
		if n > binaryBlock {
			n = binaryBlock
			for i := 0; i < utf8.UTFMax-1 && !utf8.RuneStart(b[n]); i++ {
				n--
			}
		}
		if !utf8.Valid(b[:n]) {
			return true
		}
		c, nul := controls(b[:n])
		if nul {
			return true
		}
		ctl += c
		b = b[n:]
	}
	return ctl*32 > total
}

// binaryBlock is the size of the blocks Binary checks one at a time.
const binaryBlock = 32 << 10

// isControl is 1 for the bytes Binary counts as control characters.
var isControl = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = 1
	}
	for _, c := range []byte{'\t', '\n', '\r', '\f', 0x1b} {
		t[c] = 0
	}
	t[0x7f] = 1
	return t
}()

// controls counts the bytes of b that isControl marks and reports whether
// b holds a NUL byte. Eight bytes at a time: a mask of the bytes below
// 0x20 or equal to 0x7f is computed for two words at once; most words of
// text have none, and the rest have a few (line feeds), each looked up.
func controls(b []byte) (n int, nul bool) {
	for len(b) >= 16 {
		x0 := binary.LittleEndian.Uint64(b)
		x1 := binary.LittleEndian.Uint64(b[8:])
		m0, m1 := controlMask(x0), controlMask(x1)
		if m0|m1 != 0 {
			c0, z0 := countMasked(x0, m0)
			c1, z1 := countMasked(x1, m1)
			n += c0 + c1
			nul = nul || z0 || z1
		}
		b = b[16:]
	}
	for _, c := range b {
		n += int(isControl[c])
		nul = nul || c == 0
	}
	return n, nul
}

// controlMask has the high bit of each byte of x set when that byte is
// below 0x20 or equal to 0x7f, and no other bit. Exact per byte: no sum
// carries into the next byte.
func controlMask(x uint64) uint64 {
	const ones, lows, highs = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	xl := x & lows
	below := ^(xl + 0x60*ones | x) // high bit: the byte is below 0x20
	del := (xl + ones) &^ x        // high bit: the byte is 0x7f
	return (below | del) & highs
}

// countMasked counts the bytes of x that mask marks and isControl counts,
// and reports whether one of them is NUL.
func countMasked(x, mask uint64) (n int, nul bool) {
	for ; mask != 0; mask &= mask - 1 {
		c := byte(x >> (bits.TrailingZeros64(mask) &^ 7))
		n += int(isControl[c])
		nul = nul || c == 0
	}
	return n, nul
}
