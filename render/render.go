package render

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toon"
	"github.com/terse-dev/terse/tree"
)

// Format names an encoding. The names are also what [Encode] reports as the
// formats it used.
type Format string

// Formats of JSON values.
const (
	// Auto chooses a form per subtree and factors repeats (the default).
	Auto Format = "auto"
	// JSON is compact JSON, the baseline every saving is measured against.
	JSON Format = "json"
	// TOON is TOON v4 with exact numbers and key order, fenced as ```toon.
	TOON Format = "toon"
)

// Forms that can appear inside an auto document; Encode reports them.
const (
	FormTable  Format = "table"  // array of objects as a header and typed rows
	FormKV     Format = "kv"     // object as key: value lines
	FormList   Format = "list"   // array as "- " items
	FormFence  Format = "fence"  // multi-line string as a fenced block
	FormLegend Format = "legend" // repeated sub-objects declared once as @N
	FormPrefix Format = "prefix" // URL prefixes declared once as ~N
)

// Options configure [Encode]. The zero value (and nil) encodes auto,
// measured with the estimate counter, verified by decoding.
type Options struct {
	// Format is the encoding; "" means [Auto].
	Format Format

	// Counter measures the candidates; Encode never returns more tokens
	// than compact JSON by this counter. Nil means tokens.Estimate().
	Counter tokens.Counter

	// SkipVerify skips decoding the result and comparing it with the input.
	// Verification is on by default because a wrong encoding would show
	// the model wrong data; it costs about as much as the encoding.
	SkipVerify bool

	// NoFactor turns off legends and prefixes.
	NoFactor bool

	// FenceKeys lists member keys whose multi-line string values are always
	// written as fenced blocks (for example "diff" in merge-request diffs).
	FenceKeys []string

	// NoTOON leaves fenced TOON out of auto's candidates.
	NoTOON bool

	// Template names a JSON template ([Templates]) that steers auto for
	// this payload; it is ignored when it does not apply.
	Template Format

	// Compact is v's compact JSON (what tree.AppendJSON writes), when the
	// caller holds it already, for example because v was parsed from it:
	// Encode then measures and returns that text rather than writing its
	// own copy. It is checked ([tree.IsCompact]) and ignored when it is
	// not v's compact JSON.
	Compact string

	// Unmarked leaves out the [Marker] line. Text encoded this way may be
	// valid TOON that means something else: use it for parts that are
	// costed one by one and shown inside a larger text, and [Mark] the
	// text a reader sees.
	Unmarked bool
}

// ErrNotLossless is returned (wrapped) when an encoding does not decode to
// its input. It indicates a bug; Encode never returns such text.
var ErrNotLossless = errors.New("render: encoding does not decode to its input")

// Encode encodes v and returns the text and the formats it used. With
// [Auto] the result is the cheapest (by opts.Counter) of the auto
// document, fenced TOON and compact JSON; the text decodes with [Decode]
// to a tree equal to v (member order and number text included). Output is
// deterministic.
func Encode(v tree.Value, opts *Options) (string, []Format, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Counter == nil {
		o.Counter = tokens.Estimate()
	}
	var tmpl Format
	if o.Template != "" {
		t, ok := TemplateByName(o.Template)
		if !ok {
			return "", nil, fmt.Errorf("render: unknown template %q", o.Template)
		}
		if t.Applies(v) {
			o.FenceKeys = append([]string(nil), o.FenceKeys...)
			t.Adjust(&o)
			o.NoTOON = true // the template's form, unless compact JSON is cheaper
			tmpl = t.Name
		}
	}
	buf := getBuf()
	defer putBuf(buf)
	var compact string
	n := tree.JSONLen(v)
	large := n > maxPooledBuf
	held := o.Compact != "" && len(o.Compact) == n && tree.IsCompact(o.Compact, v)
	switch {
	case held:
		compact = o.Compact
	case large:
		compact = writeCompact(v, n)
	default:
		*buf = tree.AppendJSON((*buf)[:0], v)
		compact = string(*buf)
	}
	var text string
	var formats []Format
	switch o.Format {
	case JSON:
		return compact, []Format{JSON}, nil
	case TOON:
		text, formats = fencedTOON(v), []Format{TOON}
		if !o.Unmarked {
			text = Mark(text, v)
		}
	case Auto, "":
		text, formats = autoText(v, &o, &compact, held, buf)
		if tmpl != "" && formats[0] != JSON && formats[0] != TOON {
			formats = append([]Format{tmpl}, formats...)
		}
	default:
		return "", nil, fmt.Errorf("render: unknown format %q", o.Format)
	}
	if !o.SkipVerify && text != compact {
		// A large compact JSON of its own is let go meanwhile and
		// written again if it is needed.
		if large && !held {
			compact = ""
		}
		if err := verify(text, v); err != nil {
			if o.Format == TOON {
				return "", nil, err
			}
			if compact == "" {
				compact = writeCompact(v, n)
			}
			return compact, []Format{JSON}, nil
		}
	}
	return text, formats, nil
}

// Mark opens text, an encoding of v by [Encode], with the [Marker] line
// unless valid TOON (strict) reads text as v too, so that a reader that
// knows TOON never meets an auto text that means something else to it.
// Compact JSON and already marked text are returned as they are.
func Mark(text string, v tree.Value) string {
	return mark(text, v, nil)
}

// MarkKnown is Mark when whether TOON reads text as v is known already
// ([ReadsAsTOON]): it spares Mark's decoding.
func MarkKnown(text string, v tree.Value, readsAsTOON bool) string {
	return mark(text, v, &readsAsTOON)
}

// ReadsAsTOON reports whether valid TOON (strict) reads text, an
// unmarked encoding of v by [Encode] other than compact JSON, as v: then
// text is faithful to a TOON reader and needs no [Marker]. Texts over a
// megabyte are not decoded (false).
func ReadsAsTOON(text string, v tree.Value) bool { return !needsMark(text, v) }

func mark(text string, v tree.Value, readsAsTOON *bool) string {
	if Marked(text) || len(text) > 0 && (text[0] == '{' || text[0] == '[') && tree.IsCompact(text, v) {
		return text
	}
	if readsAsTOON != nil && *readsAsTOON || readsAsTOON == nil && !needsMark(text, v) {
		return text
	}
	return Marker + "\n" + text
}

// maxMarkCheck is the longest text Mark decodes as TOON to see whether it
// may go unmarked; a longer one is marked (a few tokens, where decoding
// would hold a second tree of the value).
const maxMarkCheck = 1 << 20

// needsMark reports whether text, an unmarked auto encoding of v that is
// not compact JSON, needs the Marker line.
func needsMark(text string, v tree.Value) bool {
	// Declarations and fences are never what TOON reads: no need to
	// decode to know.
	if strings.HasPrefix(text, "```") || isDeclaration(text) || len(text) > maxMarkCheck {
		return true
	}
	tv, err := toon.UnmarshalString(text, nil)
	return err != nil || !tree.Equal(tv, v)
}

// isDeclaration reports whether text opens with a "~N = " or "@N = "
// line.
func isDeclaration(text string) bool {
	if len(text) < 2 || text[0] != '~' && text[0] != '@' {
		return false
	}
	j := 1
	for j < len(text) && text[j] >= '0' && text[j] <= '9' {
		j++
	}
	return j > 1 && strings.HasPrefix(text[j:], " = ")
}

func fencedTOON(v tree.Value) string {
	// Written into a pooled buffer (no growing from nothing), copied once.
	buf := getBuf()
	defer putBuf(buf)
	b := append((*buf)[:0], "```toon\n"...)
	b = toon.Append(b, v, &toon.EncodeOptions{ExactNumbers: true, KeepKeyOrder: true})
	b = append(b, "\n```"...)
	*buf = b
	return string(b)
}

// bufs holds byte buffers for the texts Encode builds before it copies
// them into strings.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuf bounds the buffers kept for reuse.
const maxPooledBuf = 1 << 20

func getBuf() *[]byte { return bufs.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= maxPooledBuf {
		bufs.Put(b)
	}
}

// writeCompact returns v's compact JSON, n bytes, written once into
// memory of its own (no growing, no copy into a string).
func writeCompact(v tree.Value, n int) string {
	b := tree.AppendJSON(make([]byte, 0, n), v)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// autoText picks the cheapest of the candidates; buf is scratch space.
// The compact JSON of a large value is counted and, unless the caller
// holds it (held), let go (*compact set to "") while the encoder holds
// its maps, and written again if it is the cheapest.
func autoText(v tree.Value, o *Options, compactp *string, held bool, buf *[]byte) (string, []Format) {
	if v.Kind() < tree.KindArray {
		// A scalar's auto document is its compact JSON.
		return *compactp, []Format{JSON}
	}
	e := newAutoEncoder(o)
	defer e.release()
	compact := *compactp
	jsonN := o.Counter.Count(compact)
	var doc string
	if n := len(compact); n > maxPooledBuf {
		if !held {
			compact, *compactp = "", ""
		}
		// Written after room for the marker line, in memory of its own,
		// so that neither marking nor returning it copies the text.
		size := n / 2 // a container's auto document is about half its JSON
		e.forgetFlat = true
		e.prepare(v)
		b := append(make([]byte, 0, size+len(Marker)+1), Marker+"\n"...)
		b = e.write(b, v)
		marked := unsafe.String(unsafe.SliceData(b), len(b))
		doc = marked[len(Marker)+1:]
		if len(doc) == n && !held && tree.IsCompact(doc, v) {
			compact, *compactp = doc, doc
		}
		if !o.Unmarked && doc != compact && !Marked(doc) && needsMark(doc, v) {
			doc = marked
		}
	} else {
		*buf = e.encode((*buf)[:0], v)
		doc = string(*buf)
	}
	best, bestF := compact, []Format{JSON}
	bestN := jsonN
	if doc != compact {
		if !o.Unmarked && !Marked(doc) {
			doc = Mark(doc, v)
		}
		if n := o.Counter.Count(doc); n < bestN {
			best, bestF, bestN = doc, e.formats(v), n
		}
	}
	// TOON rarely beats the auto document by more than its fence; it is
	// tried only when auto saves less than 15 %.
	if !o.NoTOON && v.Kind() >= tree.KindArray && float64(bestN) > 0.85*float64(jsonN) {
		t := fencedTOON(v)
		if !o.Unmarked {
			t = Mark(t, v)
		}
		if n := o.Counter.Count(t); n < bestN {
			if _, err := toon.UnmarshalString(t[strings.Index(t, "```toon\n")+len("```toon\n"):len(t)-4], nil); err == nil {
				best, bestF = t, []Format{TOON}
			}
		}
	}
	if best == "" { // compact JSON, let go above: written again
		best = writeCompact(v, tree.JSONLen(v))
		*compactp = best
	}
	return best, bestF
}

// formats lists the forms the auto document of v uses, in a fixed order.
func (e *autoEncoder) formats(root tree.Value) []Format {
	used := map[Format]bool{}
	if len(e.legend) > 0 {
		used[FormLegend] = true
	}
	if len(e.prefixes) > 0 {
		used[FormPrefix] = true
	}
	var visit func(k string, v tree.Value, block bool, depth int)
	visit = func(k string, v tree.Value, block bool, depth int) {
		if e.ref(v) != 0 {
			return
		}
		c := e.chooseAt(v, depth)
		if c == nil {
			if block && e.useFence(k, v) {
				used[FormFence] = true
			}
			return
		}
		if !block || c.form == formInline {
			return
		}
		switch c.form {
		case formBlock:
			used[FormKV] = true
			for _, m := range v.Members() {
				visit(m.Key, m.Value, true, depth+1)
			}
		case formTable:
			used[FormTable] = true
		case formList:
			used[FormList] = true
			for _, it := range v.Items() {
				visit("", it, false, 0)
				if e.ref(it) != 0 {
					continue
				}
				if ic := e.chooseAt(it, 0); ic != nil && ic.form == formBlock {
					used[FormKV] = true
					for _, m := range it.Members() {
						visit(m.Key, m.Value, true, 1)
					}
				}
			}
		}
	}
	visit("", root, true, 0)
	var out []Format
	for _, f := range []Format{FormKV, FormTable, FormList, FormFence, FormLegend, FormPrefix} {
		if used[f] {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = []Format{JSON}
	}
	return out
}

// verify checks that text decodes to want. It compares the parts of an
// auto document as it reads them, so it never holds a second tree of a
// large value.
func verify(text string, want tree.Value) error {
	_, err := (&DecodeOptions{}).decode(text, &want)
	if err == errDiffers {
		return ErrNotLossless
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotLossless, err)
	}
	return nil
}

// Verify decodes text with [Decode] and reports whether it equals want; the
// error says why not.
func Verify(text string, want tree.Value) error { return verify(text, want) }

// AutoDocument returns the auto document for v without comparing it with
// the other candidates: what [Encode] considers, for tests and tools that
// want to see the format itself. It is verified unless opts.SkipVerify.
func AutoDocument(v tree.Value, opts *Options) (string, []Format, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	e := newAutoEncoder(&o)
	defer e.release()
	text := string(e.encode(nil, v))
	if !o.Unmarked {
		text = Mark(text, v)
	}
	if !o.SkipVerify {
		if err := verify(text, v); err != nil {
			return "", nil, err
		}
	}
	return text, e.formats(v), nil
}
