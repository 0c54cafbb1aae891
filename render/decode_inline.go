package render

import (
	"fmt"
	"strconv"

	"github.com/terse-dev/terse/tree"
)

// The inline values of the auto format: JSON with @N legend references.

// inlineAll parses s as one inline value (JSON with @N references) nested
// at depth.
func (d *decoder) inlineAll(s string, line, col, depth int) (tree.Value, error) {
	p := &inlineParser{d: d, s: s, base: depth}
	v, err := p.all()
	if err == nil {
		err = d.grow(p.grown)
	}
	if err != nil {
		return tree.Value{}, d.errf(line, col+p.i, "%v", err)
	}
	return v, nil
}

type inlineParser struct {
	d *decoder
	s string
	i int

	base    int   // nesting depth of the line's value
	depth   int   // current nesting within s
	deepest int   // deepest nesting reached within s, references included
	grown   int64 // bytes references and prefixes add when expanded
}

// all parses s as exactly one value.
func (p *inlineParser) all() (tree.Value, error) {
	v, err := p.value()
	if err == nil && p.i != len(p.s) {
		err = fmt.Errorf("unexpected %q after value", p.s[p.i])
	}
	return v, err
}

// open enters one level of nesting.
func (p *inlineParser) open() error {
	p.depth++
	p.deepest = max(p.deepest, p.depth)
	return p.d.deep(p.base + p.depth)
}

// grow adds n expanded bytes, failing early once past the limit.
func (p *inlineParser) grow(n int64) error {
	p.grown += n
	if p.grown > p.d.limit {
		p.d.hit = true
		return fmt.Errorf("value expands beyond %d bytes: its references repeat too much (limits: DecodeOptions, terse decode --max-expansion)", p.d.limit)
	}
	return nil
}

func (p *inlineParser) value() (tree.Value, error) {
	if p.i >= len(p.s) {
		return tree.Value{}, fmt.Errorf("unexpected end of value")
	}
	switch p.s[p.i] {
	case '"':
		return p.stringValue()
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '@':
		return p.legendRef()
	}
	return p.literal()
}

// stringValue reads a string, expanding its prefix sigil.
func (p *inlineParser) stringValue() (tree.Value, error) {
	str, escaped, err := p.strValue()
	if err != nil {
		return tree.Value{}, err
	}
	str, grown, err := p.d.unsigil(str)
	if err == nil {
		err = p.grow(grown)
	}
	if err == nil && escaped {
		// A string with lone surrogates stays in its escaped form.
		v, ok := tree.EscapedString(str)
		if !ok {
			return tree.Value{}, fmt.Errorf("invalid lone surrogate string")
		}
		return v, nil
	}
	return tree.String(str), err
}

// object reads an inline object, {"k":v,…}.
func (p *inlineParser) object() (tree.Value, error) {
	if err := p.open(); err != nil {
		return tree.Value{}, err
	}
	defer func() { p.depth-- }()
	p.i++
	var ms []tree.Member
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return tree.Object(), nil
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return tree.Value{}, fmt.Errorf("expected a key")
		}
		k, err := p.str()
		if err != nil {
			return tree.Value{}, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return tree.Value{}, fmt.Errorf("expected ':'")
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return tree.Value{}, err
		}
		ms = append(ms, tree.Member{Key: k, Value: v})
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return tree.Object(ms...), nil
		}
		return tree.Value{}, fmt.Errorf("expected ',' or '}'")
	}
}

// array reads an inline array, [v,…].
func (p *inlineParser) array() (tree.Value, error) {
	if err := p.open(); err != nil {
		return tree.Value{}, err
	}
	defer func() { p.depth-- }()
	p.i++
	var items []tree.Value
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return tree.Array(), nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return tree.Value{}, err
		}
		items = append(items, v)
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return tree.Array(items...), nil
		}
		return tree.Value{}, fmt.Errorf("expected ',' or ']'")
	}
}

// legendRef reads a legend reference, @N, as the value of entry N.
func (p *inlineParser) legendRef() (tree.Value, error) {
	j := p.i + 1
	for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		j++
	}
	id, err := strconv.Atoi(p.s[p.i+1 : j])
	if err != nil || id < 1 || id > len(p.d.legend) || p.s[p.i+1] == '0' {
		// While entry N is read, only @1..@N-1 exist: an entry
		// never refers to itself or a later one.
		return tree.Value{}, fmt.Errorf("unknown legend reference %q (a legend entry may use earlier entries only)", p.s[p.i:j])
	}
	if d := p.depth + p.d.legendDepth[id-1]; d > p.deepest {
		p.deepest = d
		if err := p.d.deep(p.base + d); err != nil {
			return tree.Value{}, err
		}
	}
	if err := p.grow(p.d.legendSize[id-1] - int64(j-p.i)); err != nil {
		return tree.Value{}, err
	}
	p.i = j
	return p.d.legend[id-1], nil
}

// literal reads null, true, false or a number.
func (p *inlineParser) literal() (tree.Value, error) {
	j := p.i
	for j < len(p.s) && p.s[j] != ',' && p.s[j] != ']' && p.s[j] != '}' {
		j++
	}
	lit := p.s[p.i:j]
	switch {
	case lit == "null":
		p.i = j
		return tree.Null(), nil
	case lit == "true":
		p.i = j
		return tree.Bool(true), nil
	case lit == "false":
		p.i = j
		return tree.Bool(false), nil
	case tree.IsNumber(lit):
		p.i = j
		return tree.Number(lit), nil
	}
	return tree.Value{}, fmt.Errorf("invalid value %q", lit)
}

// str parses a JSON string literal at p.i: a key, which may not hold a
// lone surrogate.
func (p *inlineParser) str() (string, error) {
	s, escaped, err := p.strValue()
	if err == nil && escaped {
		err = fmt.Errorf("lone surrogate escape in a key")
	}
	return s, err
}

// strValue parses a JSON string literal at p.i. A string holding lone
// surrogates is returned in its escaped form (tree.Value.Str), escaped
// true.
func (p *inlineParser) strValue() (string, bool, error) {
	j := p.i + 1
	plain := true
	for j < len(p.s) && p.s[j] != '"' {
		if p.s[j] == '\\' {
			plain = false
			j++
		} else if p.s[j] < 0x20 {
			return "", false, fmt.Errorf("control character in string")
		}
		j++
	}
	if j >= len(p.s) {
		return "", false, fmt.Errorf("unterminated string")
	}
	lit := p.s[p.i : j+1]
	p.i = j + 1
	if plain {
		return lit[1 : len(lit)-1], false, nil
	}
	v, err := tree.ParseString(lit)
	if err != nil {
		return "", false, err
	}
	return v.Str(), v.Escaped(), nil
}
