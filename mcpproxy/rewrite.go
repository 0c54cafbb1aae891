package mcpproxy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toolname"
	"github.com/terse-dev/terse/tree"
)

// Reserved tool parameters the proxy adds to every selected tool's input
// schema and removes before forwarding a call.
const (
	ParamOutputMode = "_output_mode"
	ParamBudget     = "_budget"
	ParamChunk      = "_chunk"
	// CompactTool is the tool the proxy adds: calling it tells the proxy
	// the client compacted its context, like the notification
	// [CompactNotification].
	CompactTool = "terse_compact"
	// CompactNotification advances the client's dedup partition (of one
	// conversation when its params._meta carries [MetaConversation]).
	CompactNotification = "notifications/terse/compact"
	// MetaFormat is the _meta key that marks a converted content block with
	// the name of its format.
	MetaFormat = "terse/format"
	// MetaConversation in a tools/call's params._meta names a conversation:
	// dedup and chunk state is then kept per conversation within the
	// session. On [CompactNotification] or a [CompactTool] call it limits
	// the compaction to that conversation.
	MetaConversation = "terse/conversation"
)

// compactToolDescription is the one place the catalogue declares what
// terse adds to every tool. Its wording is read by models: treat it as API.
const compactToolDescription = `Every tool also takes _budget (max tokens of its result), _output_mode "raw" (its result unchanged) and _chunk "c_0123456789abcdef.2" (chunk 2 of an earlier result, as its chunk index says). Call this after the conversation was compacted.`

// compactToolDef is the one tool terse adds to a catalogue, when the
// catalogue's schema compaction paid for it (see rewriteToolList).
var compactToolDef = tree.Object(
	tree.Member{Key: "name", Value: tree.String(CompactTool)},
	tree.Member{Key: "description", Value: tree.String(compactToolDescription)},
	tree.Member{Key: "inputSchema", Value: tree.Object(tree.Member{Key: "type", Value: tree.String("object")})},
)

// toolInfo is what the proxy remembers about a tool from tools/list.
type toolInfo struct {
	mutating bool
	// own lists reserved names the tool declares itself: those are
	// forwarded, not interpreted.
	own map[string]bool
	// outputSchema: the tool declares one, so a client that keeps it
	// expects structuredContent in every result (chunk replies too),
	// valid by schema (nil when it does not resolve).
	outputSchema bool
	schema       *outSchema
}

func (t toolInfo) reserved(name string) bool { return !t.own[name] }

// isMutating follows the tool annotations when present (readOnlyHint true
// means a read; destructiveHint true a write) and guesses from the name
// otherwise (toolname.Mutating).
func isMutating(name string, ann tree.Value) bool {
	if v, ok := ann.Get("readOnlyHint"); ok && v.Kind() == tree.KindBool {
		return !v.Bool()
	}
	if v, ok := ann.Get("destructiveHint"); ok && v.Kind() == tree.KindBool && v.Bool() {
		return true
	}
	return toolname.Mutating(name)
}

// rewriteTool compacts a selected tool's schemas where the meaning is
// kept (compactSchema) and, for clients that read structuredContent, drops
// its outputSchema (the proxy gives such clients one compact text
// instead). It declares nothing: the reserved parameters are declared once
// for the catalogue, by the compact tool. own lists the reserved names the
// tool declares itself: those are forwarded, not interpreted.
func rewriteTool(t tree.Value, pol Policy, o *Options) (tree.Value, string, toolInfo) {
	nameV, _ := t.Get("name")
	name := nameV.Str()
	ann, _ := t.Get("annotations")
	info := toolInfo{mutating: isMutating(name, ann)}
	if os, ok := t.Get("outputSchema"); ok {
		info.outputSchema, info.schema = true, resolveSchema(os)
	}
	if t.Kind() != tree.KindObject {
		return t, name, info
	}
	if in, ok := t.Get("inputSchema"); ok {
		if props, ok := in.Get("properties"); ok {
			for _, k := range []string{ParamOutputMode, ParamBudget, ParamChunk} {
				if props.Has(k) {
					if info.own == nil {
						info.own = map[string]bool{}
					}
					info.own[k] = true
				}
			}
		}
	}
	if !o.selected(name) {
		return t, name, info
	}
	mems := make([]tree.Member, 0, len(t.Members()))
	for _, m := range t.Members() {
		switch m.Key {
		case "outputSchema":
			if pol.Reads == ReadsStructured {
				continue
			}
			m.Value = compactSchema(m.Value)
		case "inputSchema":
			m.Value = compactSchema(m.Value)
		}
		mems = append(mems, m)
	}
	return tree.Object(mems...), name, info
}

// withSpill sets fit.SpillMetaKey in the _meta of a tool terse fits
// (see raiseSpill). Clients do not show a tool's _meta to the model, so
// the catalogue's token counts leave it out.
func withSpill(t tree.Value, pol Policy) tree.Value {
	if pol.SpillChars <= 0 || t.Kind() != tree.KindObject {
		return t
	}
	meta, ok := t.Get("_meta")
	if !ok {
		meta = tree.Object()
	}
	if meta.Kind() != tree.KindObject {
		return t
	}
	return setMember(t, "_meta", raiseSpill(meta, pol))
}

// maxSpillChars is the largest fit.SpillMetaKey a client honours.
const maxSpillChars = 500000

// resultCharCap is the most characters terse sends in a result it fits
// (or a chunk reply) for a client with policy pol: its budget in tokens
// (fit.ClaudeCodeBudget when the policy sets none) at 25 characters a
// token, more than any token of the counter holds in practice, up to
// what the client honours.
func resultCharCap(pol Policy) int {
	b := pol.Budget
	if b <= 0 {
		b = fit.ClaudeCodeBudget
	}
	return min(maxSpillChars, 25*b)
}

// raiseSpill sets fit.SpillMetaKey in a tool's _meta to resultCharCap,
// for a client that spills long results to a file (pol.SpillChars), so
// that a result terse fits and paginates is read, never spilled: the
// pagination is terse's. A larger value the server set stays.
func raiseSpill(meta tree.Value, pol Policy) tree.Value {
	if pol.SpillChars <= 0 || meta.Kind() != tree.KindObject {
		return meta
	}
	capChars := resultCharCap(pol)
	if capChars <= pol.SpillChars {
		return meta
	}
	if v, ok := meta.Get(fit.SpillMetaKey); ok {
		if n, err := v.Int(); err == nil && int(n) >= capChars {
			return meta
		}
	}
	return setMember(meta, fit.SpillMetaKey, tree.Int(int64(capChars)))
}

// compactSchema drops what a tool schema says without meaning for the
// model or for terse: the "$schema" dialect URL, an empty "properties"
// object, and "additionalProperties": false at the top (terse accepts
// its reserved parameters beyond the schema, so it no longer holds).
func compactSchema(s tree.Value) tree.Value {
	if s.Kind() != tree.KindObject {
		return s
	}
	mems := make([]tree.Member, 0, len(s.Members()))
	for _, m := range s.Members() {
		switch {
		case m.Key == "$schema":
			continue
		case m.Key == "properties" && m.Value.Kind() == tree.KindObject && m.Value.Len() == 0:
			continue
		case m.Key == "additionalProperties" && m.Value.Kind() == tree.KindBool && !m.Value.Bool():
			continue
		}
		mems = append(mems, m)
	}
	if len(mems) == len(s.Members()) {
		return s
	}
	return tree.Object(mems...)
}

// rewriteToolList rewrites a tools/list result, records tool facts, and
// returns the catalogue's tokens (by c) as the upstream sent it and as
// rewritten. The compact tool is added to the first page only when the
// schema compaction saved at least what it costs: the catalogue through
// terse is never more tokens than direct. Without it, every capability
// still works (the reserved parameters are accepted on every tool; chunk
// hints say how to fetch; the notification compacts).
func rewriteToolList(result tree.Value, pol Policy, o *Options, firstPage bool, tools map[string]toolInfo, c tokens.Counter) (tree.Value, int, int) {
	list, ok := result.Get("tools")
	if result.Kind() != tree.KindObject || !ok || list.Kind() != tree.KindArray {
		return result, 0, 0
	}
	items := make([]tree.Value, 0, list.Len()+1)
	var spill []int // the tools terse fits, for withSpill
	for _, t := range list.Items() {
		nt, name, info := rewriteTool(t, pol, o)
		tools[name] = info
		if o.selected(name) {
			spill = append(spill, len(items))
		}
		items = append(items, nt)
	}
	before := c.Count(string(tree.AppendJSON(nil, list)))
	after := c.Count(string(tree.AppendJSON(nil, tree.Array(items...))))
	if firstPage {
		with := tree.Array(append(items, compactToolDef)...)
		if n := c.Count(string(tree.AppendJSON(nil, with))); n <= before {
			items, after = append(items, compactToolDef), n
		}
	}
	for _, i := range spill {
		items[i] = withSpill(items[i], pol)
	}
	return setMember(result, "tools", tree.Array(items...)), before, after
}

// reservedArgs are the reserved parameters of one call.
type reservedArgs struct {
	raw    bool
	budget int
	chunk  string
}

// splitArgs removes the reserved parameters from a call's arguments.
func splitArgs(args tree.Value, info toolInfo) (tree.Value, reservedArgs, error) {
	var r reservedArgs
	if args.Kind() != tree.KindObject {
		return args, r, nil
	}
	mems := make([]tree.Member, 0, len(args.Members()))
	for _, m := range args.Members() {
		if !strings.HasPrefix(m.Key, "_") || !info.reserved(m.Key) {
			mems = append(mems, m)
			continue
		}
		switch m.Key {
		case ParamOutputMode:
			switch s := m.Value.Str(); {
			case m.Value.Kind() == tree.KindString && s == "raw":
				r.raw = true
			case m.Value.Kind() == tree.KindNull, m.Value.Kind() == tree.KindString && (s == "compact" || s == ""):
			default:
				return args, r, fmt.Errorf(`%s must be "compact" or "raw", not %s`, ParamOutputMode, m.Value)
			}
		case ParamBudget:
			if m.Value.Kind() == tree.KindNull {
				break
			}
			n, err := m.Value.Int()
			if m.Value.Kind() == tree.KindString {
				n, err = strconv.ParseInt(m.Value.Str(), 10, 64)
			}
			if err != nil || n < 1 || n > 1<<30 {
				return args, r, fmt.Errorf("%s must be a positive integer, not %s", ParamBudget, m.Value)
			}
			r.budget = int(n)
		case ParamChunk:
			switch m.Value.Kind() {
			case tree.KindString:
				r.chunk = m.Value.Str()
			case tree.KindNumber:
				r.chunk = m.Value.Num()
			case tree.KindNull:
			default:
				return args, r, fmt.Errorf("%s must be a chunk handle string, not %s", ParamChunk, m.Value)
			}
		default:
			mems = append(mems, m)
		}
	}
	return tree.Object(mems...), r, nil
}

// errorResult is a tools/call result with isError and one text block: how
// the proxy reports problems the model can act on.
func errorResult(msg string) tree.Value {
	return tree.Object(
		tree.Member{Key: "content", Value: tree.Array(tree.Object(
			tree.Member{Key: "type", Value: tree.String("text")},
			tree.Member{Key: "text", Value: tree.String(msg)},
		))},
		tree.Member{Key: "isError", Value: tree.Bool(true)},
	)
}

func textBlock(text, format string) tree.Value {
	return tree.Object(
		tree.Member{Key: "type", Value: tree.String("text")},
		tree.Member{Key: "text", Value: tree.String(text)},
		tree.Member{Key: "_meta", Value: tree.Object(tree.Member{Key: MetaFormat, Value: tree.String(format)})},
	)
}

// replaceText sets a block's text and marks its format in _meta, keeping
// every other key (annotations, existing _meta entries).
func replaceText(b tree.Value, text, format string) tree.Value {
	mems := make([]tree.Member, 0, len(b.Members())+1)
	hasMeta := false
	for _, m := range b.Members() {
		switch m.Key {
		case "text":
			m.Value = tree.String(text)
		case "_meta":
			hasMeta = true
			if m.Value.Kind() == tree.KindObject {
				meta := make([]tree.Member, 0, len(m.Value.Members())+1)
				for _, mm := range m.Value.Members() {
					if mm.Key != MetaFormat {
						meta = append(meta, mm)
					}
				}
				m.Value = tree.Object(append(meta, tree.Member{Key: MetaFormat, Value: tree.String(format)})...)
			}
		}
		mems = append(mems, m)
	}
	if !hasMeta {
		mems = append(mems, tree.Member{Key: "_meta", Value: tree.Object(tree.Member{Key: MetaFormat, Value: tree.String(format)})})
	}
	return tree.Object(mems...)
}

// rawJSON converts a tree to json.RawMessage.
func rawJSON(v tree.Value) json.RawMessage { return tree.AppendJSON(nil, v) }
