package mcpproxy

import (
	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/tree"
)

// MetaCompleteness is the result _meta key under which terse states,
// machine-readably, whether the model was shown everything: on every
// tools/call result terse rewrote (fitted, re-encoded, a reference) and
// on every chunk fetch it answered, from the proxy and the gateway alike.
//
//	{"complete":true}
//	{"complete":false,"shown":13,"total":25,"unit":"items","handle":"c_0123456789012345","budget":2000}
//
// shown and total count the units (items, members, lines or files) of the
// source, handle gets the rest (see the chunk index), budget is the
// token budget applied. A chunk fetch that came back split into smaller
// chunks says complete false with the handle and chunk it asked for. A
// result of several text blocks of which more than one left something
// out lists each under "blocks". A result terse relays byte for byte
// carries nothing: it is the upstream's, complete as far as terse goes.
// Nothing of this is written in-band: a result with nothing left out
// reads exactly as without it.
const MetaCompleteness = "terse/completeness"

// completeness is the fact MetaCompleteness carries for one text block or
// chunk reply.
type completeness struct {
	complete     bool
	shown, total int
	unit, handle string
	budget       int
	chunk        int // the chunk fetched, for a chunk reply
	block        int // the content block, 0-based, when listed in blocks
}

func (c completeness) value(withBlock bool) tree.Value {
	mems := []tree.Member{{Key: "complete", Value: tree.Bool(c.complete)}}
	if c.complete {
		return tree.Object(mems...)
	}
	if withBlock {
		mems = append(mems, tree.Member{Key: "block", Value: tree.Int(int64(c.block))})
	}
	if c.unit != "" {
		mems = append(mems,
			tree.Member{Key: "shown", Value: tree.Int(int64(c.shown))},
			tree.Member{Key: "total", Value: tree.Int(int64(c.total))},
			tree.Member{Key: "unit", Value: tree.String(c.unit)})
	}
	if c.handle != "" {
		mems = append(mems, tree.Member{Key: "handle", Value: tree.String(c.handle)})
	}
	if c.chunk > 0 {
		mems = append(mems, tree.Member{Key: "chunk", Value: tree.Int(int64(c.chunk))})
	}
	if c.budget > 0 {
		mems = append(mems, tree.Member{Key: "budget", Value: tree.Int(int64(c.budget))})
	}
	return tree.Object(mems...)
}

// reportCompleteness is the fact of one block's pipeline report: complete
// unless the budget left something out (Truncated) or a text shaping
// elided lines.
func reportCompleteness(rep *terse.Report) completeness {
	if !rep.Truncated && rep.ShapeClass != "elide" {
		return completeness{complete: true}
	}
	c := completeness{handle: rep.Handle, budget: rep.Budget}
	if rep.Items != nil {
		c.shown, c.total, c.unit = rep.Items.Kept, rep.Items.Total, rep.Items.Unit
	}
	return c
}

// chunkCompleteness is the fact of a chunk reply.
func chunkCompleteness(handle string, n, budget int, ch *fit.ChunkResult) completeness {
	if ch.Whole {
		return completeness{complete: true}
	}
	return completeness{handle: handle, chunk: n, budget: budget}
}

// completenessValue merges the facts of a result's blocks into the one
// value of MetaCompleteness.
func completenessValue(facts []completeness) tree.Value {
	var out []completeness
	for _, f := range facts {
		if !f.complete {
			out = append(out, f)
		}
	}
	switch len(out) {
	case 0:
		return completeness{complete: true}.value(false)
	case 1:
		return out[0].value(false)
	}
	items := make([]tree.Value, len(out))
	for i, f := range out {
		items[i] = f.value(true)
	}
	return tree.Object(
		tree.Member{Key: "complete", Value: tree.Bool(false)},
		tree.Member{Key: "blocks", Value: tree.Array(items...)},
	)
}

// withCompleteness returns the result object with MetaCompleteness set in
// its _meta (keeping the upstream's other _meta entries).
func withCompleteness(result tree.Value, fact tree.Value) tree.Value {
	meta, _ := result.Get("_meta")
	if meta.Kind() != tree.KindObject {
		meta = tree.Object()
	}
	return setMember(result, "_meta", setMember(meta, MetaCompleteness, fact))
}
