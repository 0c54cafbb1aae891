package toon

// This file holds the number rules: canonical number output (§2) and the
// exact decimal comparison used by tests.

// appendCanonicalNumber appends the canonical TOON form (§2) of lit, a valid
// JSON number literal. The conversion is exact decimal arithmetic on the
// digits: no value is rounded through float64, so any literal keeps its
// mathematical value.
//
// Inside the canonical range (zero, or 1e-6 ≤ |n| < 1e21) the result is plain
// decimal with no exponent, no leading zeros, no trailing fractional zeros
// and no "-0". Outside it the result is d[.ddd]e±x: lowercase e, explicit
// exponent sign, no trailing zeros.
func appendCanonicalNumber(dst []byte, lit string) []byte {
	// Fast path: an integer literal of at most 21 digits is already
	// canonical, except for "-0".
	plain := true
	for i := 0; i < len(lit); i++ {
		if c := lit[i]; c == '.' || c == 'e' || c == 'E' {
			plain = false
			break
		}
	}
	if plain {
		digits := len(lit)
		if lit[0] == '-' {
			digits--
			if lit == "-0" {
				return append(dst, '0')
			}
		}
		if digits <= 21 {
			return append(dst, lit...)
		}
	}
	return appendDecimal(dst, lit)
}

// decimal is a number literal split into significant digits and a scale:
// value = sign · 0.digits · 10^point, where digits is a+b (kept as two
// substrings of the literal so nothing is copied).
type decimal struct {
	neg   bool
	a, b  string // no leading zeros in a+b, no trailing zeros; "" means zero
	point int64
	ok    bool // false when the exponent is too large to handle
}

func (d *decimal) len() int { return len(d.a) + len(d.b) }

// appendDigits appends digits [from, to) of a+b.
func (d *decimal) appendDigits(dst []byte, from, to int) []byte {
	for i := from; i < to; i++ {
		if i < len(d.a) {
			dst = append(dst, d.a[i])
		} else {
			dst = append(dst, d.b[i-len(d.a)])
		}
	}
	return dst
}

// parseDecimal splits a valid JSON number literal.
func parseDecimal(lit string, d *decimal) {
	d.ok = true
	i := 0
	if lit[0] == '-' {
		d.neg = true
		i++
	}
	intStart := i
	for i < len(lit) && lit[i] >= '0' && lit[i] <= '9' {
		i++
	}
	intPart := lit[intStart:i]
	frac := ""
	if i < len(lit) && lit[i] == '.' {
		i++
		s := i
		for i < len(lit) && lit[i] >= '0' && lit[i] <= '9' {
			i++
		}
		frac = lit[s:i]
	}
	var exp int64
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		eneg := false
		if lit[i] == '+' || lit[i] == '-' {
			eneg = lit[i] == '-'
			i++
		}
		for i < len(lit) && lit[i] == '0' {
			i++
		}
		if len(lit)-i > 15 {
			d.ok = false
			return
		}
		for ; i < len(lit); i++ {
			exp = exp*10 + int64(lit[i]-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	// Strip leading zeros of the integer part; if it is all zeros, strip
	// leading zeros of the fraction, moving the point.
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	point := int64(len(intPart))
	if len(intPart) == 0 {
		for len(frac) > 0 && frac[0] == '0' {
			frac = frac[1:]
			point--
		}
	}
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if len(frac) == 0 {
		for len(intPart) > 0 && intPart[len(intPart)-1] == '0' {
			intPart = intPart[:len(intPart)-1]
		}
	}
	d.a, d.b = intPart, frac
	if d.len() == 0 {
		d.neg = false
		point, exp = 0, 0
	}
	d.point = point + exp
}

func appendDecimal(dst []byte, lit string) []byte {
	var d decimal
	parseDecimal(lit, &d)
	if !d.ok {
		return append(dst, lit...)
	}
	n := d.len()
	if n == 0 {
		return append(dst, '0')
	}
	if d.neg {
		dst = append(dst, '-')
	}
	p := d.point
	switch {
	case p < -5 || p > 21:
		dst = d.appendDigits(dst, 0, 1)
		if n > 1 {
			dst = append(dst, '.')
			dst = d.appendDigits(dst, 1, n)
		}
		dst = append(dst, 'e')
		e := p - 1
		if e < 0 {
			dst = append(dst, '-')
			e = -e
		} else {
			dst = append(dst, '+')
		}
		return appendInt(dst, e)
	case p <= 0:
		dst = append(dst, '0', '.')
		for range -p {
			dst = append(dst, '0')
		}
		return d.appendDigits(dst, 0, n)
	case p < int64(n):
		dst = d.appendDigits(dst, 0, int(p))
		dst = append(dst, '.')
		return d.appendDigits(dst, int(p), n)
	default:
		dst = d.appendDigits(dst, 0, n)
		for range p - int64(n) {
			dst = append(dst, '0')
		}
		return dst
	}
}

func appendInt(dst []byte, v int64) []byte {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, b[i:]...)
}

// canonicalNumber returns the canonical form of a JSON number literal.
// Two literals have the same mathematical value exactly when their canonical
// forms are equal.
func canonicalNumber(lit string) string {
	var b [32]byte
	return string(appendCanonicalNumber(b[:0], lit))
}
