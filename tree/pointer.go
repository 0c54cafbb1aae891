package tree

import (
	"errors"
	"strconv"
	"strings"
)

// Pointer is an RFC 6901 JSON Pointer such as "/items/0/name". The empty
// Pointer refers to the whole document.
type Pointer string

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")
var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")

// Key returns p extended by an object member name.
func (p Pointer) Key(name string) Pointer {
	if strings.ContainsAny(name, "~/") {
		name = pointerEscaper.Replace(name)
	}
	return p + "/" + Pointer(name)
}

// Index returns p extended by an array index.
func (p Pointer) Index(i int) Pointer { return p + "/" + Pointer(strconv.Itoa(i)) }

// Tokens returns the unescaped reference tokens of p.
func (p Pointer) Tokens() ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, errors.New("JSON pointer " + strconv.Quote(string(p)) + " must be empty or start with '/'")
	}
	toks := strings.Split(string(p[1:]), "/")
	for i, t := range toks {
		if strings.Contains(t, "~") {
			if strings.Count(t, "~") != strings.Count(t, "~0")+strings.Count(t, "~1") {
				return nil, errors.New("JSON pointer " + strconv.Quote(string(p)) + " has an invalid '~' escape")
			}
			toks[i] = pointerUnescaper.Replace(t)
		}
	}
	return toks, nil
}

// Lookup returns the value p refers to in v.
func Lookup(v Value, p Pointer) (Value, error) {
	toks, err := p.Tokens()
	if err != nil {
		return Value{}, err
	}
	for n, t := range toks {
		switch v.kind() {
		case KindObject:
			x, ok := v.Get(t)
			if !ok {
				return Value{}, errors.New("JSON pointer " + strconv.Quote(string(p)) + ": no member " + strconv.Quote(t) + " at " + strconv.Quote(prefix(toks[:n])))
			}
			v = x
		case KindArray:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= v.size() || (len(t) > 1 && t[0] == '0') {
				return Value{}, errors.New("JSON pointer " + strconv.Quote(string(p)) + ": no index " + strconv.Quote(t) + " in array of " + strconv.Itoa(v.size()) + " at " + strconv.Quote(prefix(toks[:n])))
			}
			v = v.Items()[i]
		default:
			return Value{}, errors.New("JSON pointer " + strconv.Quote(string(p)) + ": " + v.kind().String() + " at " + strconv.Quote(prefix(toks[:n])) + " has no children")
		}
	}
	return v, nil
}

func prefix(toks []string) string {
	var p Pointer
	for _, t := range toks {
		p = p.Key(t)
	}
	return string(p)
}

// Walk calls fn for v and every value inside it, depth first in document
// order, with each value's pointer. When fn returns false the children of
// that value are skipped.
func Walk(v Value, fn func(p Pointer, v Value) bool) {
	walk("", v, fn)
}

func walk(p Pointer, v Value, fn func(Pointer, Value) bool) {
	if !fn(p, v) {
		return
	}
	switch v.kind() {
	case KindArray:
		for i, x := range v.Items() {
			walk(p.Index(i), x, fn)
		}
	case KindObject:
		for _, m := range v.Members() {
			walk(p.Key(m.Key), m.Value, fn)
		}
	}
}
