package apiproxy

import (
	"context"
	"hash/maphash"
	"sync"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/tokens"
)

// Shaping at the source (see the package doc): every tool result goes through the library's
// pipeline (terse.Pipeline, the engine of the MCP side too), with a
// terse.Request naming its call: the text shapers, JSON's auto encoding
// and the tool's configured filter. The pipeline is deterministic and the
// request holds nothing that changes as the conversation grows (no dedup
// partition, no budget: every call refuses the "more" family, so nothing
// is fitted or elided), so a result gets the same form in every request
// that carries it, and the prefix stays byte-stable.
//
// A form is used only when it is declared: JSON re-encoded by the
// pipeline (verified there by decoding) or filtered under the filter's
// note, or text whose shaping [shape.Expand] restores to the original
// byte for byte; and only when it costs fewer tokens than the original by
// the pipeline's tokenizer.

// minShape is the size in bytes under which a result is left as it is.
const minShape = 64

// shaped is the form the pipeline gave a result: its text ("" when the
// result stays as it is) and where the saving came from.
type shaped struct {
	text   string
	source Source
}

// shapeKey names a result by its pipeline and a 64-bit hash and length of
// its tool, arguments and text.
type shapeKey struct {
	p *terse.Pipeline
	h uint64
	n int
}

// shapeMemo remembers the forms given, so that a result carried by every
// later request of its conversation is shaped once. It is emptied when it
// holds maxShapeMemo entries or maxShapeMemoBytes of text.
type shapeMemo struct {
	mu    sync.Mutex
	m     map[shapeKey]shaped
	bytes int
}

const (
	maxShapeMemo      = 8192
	maxShapeMemoBytes = 64 << 20
)

func (c *shapeMemo) get(k shapeKey) (shaped, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[k]
	return s, ok
}

func (c *shapeMemo) put(k shapeKey, s shaped) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxShapeMemo || c.bytes+len(s.text) > maxShapeMemoBytes {
		c.m, c.bytes = make(map[shapeKey]shaped), 0
	}
	c.m[k] = s
	c.bytes += len(s.text)
}

// seed hashes texts: results for the memo, and to find repeats (equal
// texts are then compared whole).
var seed = maphash.MakeSeed()

// noHints is the hint policy of every call: no family. Nothing is fitted
// or elided ("more"), and no reference is made by the pipeline (repeats
// are the rewriter's, decided on the request's own content).
type noHints struct{}

func (noHints) Allow(string) bool { return false }
func (noHints) Take(string) bool  { return false }

// pipeline returns the pipeline for tool's results in a conversation of
// model whose tokenizer is tok: Options.Pipeline's, or the default one
// (auto JSON, lossless text shaping, by tok).
func (rw *Rewriter) pipeline(model, tok, tool string) *terse.Pipeline {
	if rw.opt.Pipeline != nil {
		return rw.opt.Pipeline(model, tool)
	}
	rw.pmu.Lock()
	defer rw.pmu.Unlock()
	if p := rw.pipes[tok]; p != nil {
		return p
	}
	c := tokens.O200kBase()
	if tok != "" {
		if x, err := tokens.Get(tok); err == nil {
			c = x
		}
	}
	p, err := terse.New(&terse.Options{Tokenizer: c, Format: "auto", Shape: &shape.Options{Ceiling: shape.Lossless}})
	if err != nil {
		panic(err) // the options are constant
	}
	if rw.pipes == nil {
		rw.pipes = make(map[string]*terse.Pipeline)
	}
	rw.pipes[tok] = p
	return p
}

// shapeResult returns the form of a result of call c given by p, and
// whether it replaces the text.
func (rw *Rewriter) shapeResult(p *terse.Pipeline, c call, text string) (shaped, bool) {
	if len(text) < minShape || p == nil {
		return shaped{}, false
	}
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(c.name)
	h.WriteByte(0)
	h.WriteString(c.args)
	h.WriteByte(0)
	h.WriteString(text)
	k := shapeKey{p: p, h: h.Sum64(), n: len(text)}
	if s, ok := rw.memo.get(k); ok {
		return s, s.text != ""
	}
	s := shapeWith(p, c, text)
	rw.memo.put(k, s)
	return s, s.text != ""
}

// shapeWith runs p on one result and keeps its form only when it is
// declared and smaller (see the package's Shaping section).
func shapeWith(p *terse.Pipeline, c call, text string) shaped {
	res, err := p.ProcessString(context.Background(), text, &terse.Request{Tool: c.name, ToolInput: c.args, Hints: noHints{}})
	r := &res.Report
	if err != nil || res.Text == text || r.Truncated || r.Dedup {
		return shaped{}
	}
	s := shaped{text: res.Text, source: SourceEncoding}
	switch {
	case r.Kind == "json" && r.Filtered:
		s.source = SourceFilter
	case r.Kind == "json":
	case r.Shape == "json" && r.ShapeClass == shape.Lossless.String():
		// Several JSON documents in one text, each in the auto
		// encoding: the pipeline checked that they decode back
		// (terse.DecodeJSONDocuments), as for one document.
	case r.ShapeClass == shape.Lossless.String():
		if orig, err := shape.Expand(res.Text); err != nil || orig != text {
			return shaped{}
		}
	default:
		return shaped{} // a text form terse expand does not restore
	}
	if cn := p.Counter(); cn.Count(s.text) >= cn.Count(text) {
		return shaped{}
	}
	return s
}

// shapeAll gives every result its form (where the tool is not excluded);
// norm's results stay as they are.
func (rw *Rewriter) shapeAll(msgs []history.Message, calls map[string]call, model, tok string) ([]history.Message, []Edit) {
	if rw.opt.NoShape {
		return msgs, nil
	}
	var edits []Edit
	out := mapResults(msgs, func(_ int, p *history.Part) (history.Part, bool) {
		c := calls[p.ID]
		if rw.excluded(c.name) {
			return *p, false
		}
		text, ok := resultText(p)
		if !ok {
			return *p, false
		}
		s, ok := rw.shapeResult(rw.pipeline(model, tok, c.name), c, text)
		if !ok {
			return *p, false
		}
		edits = append(edits, Edit{Source: s.source, CallID: p.ID, Tool: c.name, Before: text, After: s.text})
		return withText(*p, s.text), true
	})
	return out, edits
}
