package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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

// The descriptions below are read by models: treat their wording as API.
var reservedProps = []tree.Member{
	{Key: ParamOutputMode, Value: tree.Object(
		tree.Member{Key: "type", Value: tree.String("string")},
		tree.Member{Key: "enum", Value: tree.Array(tree.String("compact"), tree.String("raw"))},
		tree.Member{Key: "description", Value: tree.String(`Optional. "raw" returns the result exactly as the tool produced it; default "compact".`)},
	)},
	{Key: ParamBudget, Value: tree.Object(
		tree.Member{Key: "type", Value: tree.String("integer")},
		tree.Member{Key: "minimum", Value: tree.Int(64)},
		tree.Member{Key: "description", Value: tree.String("Optional. Token budget for the result; more is split into chunks fetched with _chunk.")},
	)},
	{Key: ParamChunk, Value: tree.Object(
		tree.Member{Key: "type", Value: tree.String("string")},
		tree.Member{Key: "description", Value: tree.String(`Optional. A chunk reference quoted by an earlier result of this tool (its chunk hint or index, e.g. "r1.2"): returns that chunk without running the tool.`)},
	)},
}

const compactToolDescription = "Call after the conversation was compacted or summarized, so later results are not shortened by reference to results you can no longer see."

var compactToolDef = tree.Object(
	tree.Member{Key: "name", Value: tree.String(CompactTool)},
	tree.Member{Key: "description", Value: tree.String(compactToolDescription)},
	tree.Member{Key: "inputSchema", Value: tree.Object(
		tree.Member{Key: "type", Value: tree.String("object")},
		tree.Member{Key: "properties", Value: tree.Object()},
	)},
	tree.Member{Key: "annotations", Value: tree.Object(
		tree.Member{Key: "readOnlyHint", Value: tree.Bool(true)},
	)},
)

// toolInfo is what the proxy remembers about a tool from tools/list.
type toolInfo struct {
	mutating bool
	// own lists reserved names the tool declares itself: those are
	// forwarded, not interpreted.
	own map[string]bool
}

func (t toolInfo) reserved(name string) bool { return !t.own[name] }

var mutatingPrefixes = []string{"write", "create", "update", "delete", "remove", "edit", "move", "rename", "set", "add", "insert", "patch", "put", "post", "apply", "merge", "push", "upload", "drop", "truncate", "reset", "kill", "restart", "modify", "replace", "append"}

// isMutating follows the tool annotations when present (readOnlyHint true
// means a read; destructiveHint true a write) and guesses from the name
// otherwise.
func isMutating(name string, ann tree.Value) bool {
	if v, ok := ann.Get("readOnlyHint"); ok && v.Kind() == tree.KindBool {
		return !v.Bool()
	}
	if v, ok := ann.Get("destructiveHint"); ok && v.Kind() == tree.KindBool && v.Bool() {
		return true
	}
	n := strings.ToLower(name)
	if i := strings.LastIndex(n, "__"); i >= 0 {
		n = n[i+2:]
	}
	for _, p := range mutatingPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// rewriteTool adds the reserved parameters to a selected tool's input
// schema and, for clients that read structuredContent, drops its
// outputSchema (the proxy drops structuredContent from its results).
func rewriteTool(t tree.Value, pol Policy, o *Options) (tree.Value, string, toolInfo) {
	nameV, _ := t.Get("name")
	name := nameV.Str()
	ann, _ := t.Get("annotations")
	info := toolInfo{mutating: isMutating(name, ann)}
	if t.Kind() != tree.KindObject || !o.selected(name) {
		return t, name, info
	}
	mems := make([]tree.Member, 0, len(t.Members()))
	for _, m := range t.Members() {
		switch m.Key {
		case "outputSchema":
			if pol.Reads == ReadsStructured {
				continue
			}
		case "inputSchema":
			m.Value, info.own = addReserved(m.Value)
		}
		mems = append(mems, m)
	}
	return tree.Object(mems...), name, info
}

// addReserved appends the reserved properties not already declared.
func addReserved(schema tree.Value) (tree.Value, map[string]bool) {
	if schema.Kind() != tree.KindObject {
		return schema, nil
	}
	own := map[string]bool{}
	mems := make([]tree.Member, 0, len(schema.Members())+1)
	found := false
	for _, m := range schema.Members() {
		if m.Key == "properties" && m.Value.Kind() == tree.KindObject {
			found = true
			props := append([]tree.Member(nil), m.Value.Members()...)
			for _, r := range reservedProps {
				if m.Value.Has(r.Key) {
					own[r.Key] = true
					continue
				}
				props = append(props, r)
			}
			m.Value = tree.Object(props...)
		}
		mems = append(mems, m)
	}
	if !found {
		mems = append(mems, tree.Member{Key: "properties", Value: tree.Object(reservedProps...)})
	}
	return tree.Object(mems...), own
}

// rewriteToolList rewrites a tools/list result and records tool facts.
func rewriteToolList(result tree.Value, pol Policy, o *Options, addCompact bool, tools map[string]toolInfo) tree.Value {
	if result.Kind() != tree.KindObject {
		return result
	}
	mems := make([]tree.Member, 0, len(result.Members()))
	for _, m := range result.Members() {
		if m.Key == "tools" && m.Value.Kind() == tree.KindArray {
			items := make([]tree.Value, 0, m.Value.Len()+1)
			for _, t := range m.Value.Items() {
				nt, name, info := rewriteTool(t, pol, o)
				tools[name] = info
				items = append(items, nt)
			}
			if addCompact {
				items = append(items, compactToolDef)
			}
			m.Value = tree.Array(items...)
		}
		mems = append(mems, m)
	}
	return tree.Object(mems...)
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

// engine holds what the stdio proxy and the gateway share: options,
// per-session partitions and the result transform.
type engine struct {
	opts Options

	mu sync.Mutex
	// gens counts compactions: of a whole session (key "SESSION") and of
	// one conversation in it (key "SESSION#CONVERSATION").
	gens map[string]int
	// convs lists the conversations a session named, so that a compaction
	// of the whole session resets each conversation's partition.
	convs map[string][]string
}

func newEngine(o *Options) *engine {
	return &engine{opts: o.withDefaults(), gens: map[string]int{}, convs: map[string][]string{}}
}

// partition returns the dedup partition name of a session (and
// conversation, when the client names one): "SESSION/N" where N counts
// the session's compactions, or "SESSION#CONVERSATION/N" and
// "SESSION#CONVERSATION/N.M" once the conversation itself was compacted M
// times. A name is never reused after a compaction.
func (e *engine) partition(session, conversation string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if conversation != "" && !slices.Contains(e.convs[session], conversation) {
		e.convs[session] = append(e.convs[session], conversation)
	}
	return e.partitionLocked(session, conversation)
}

func (e *engine) partitionLocked(session, conversation string) string {
	n := strconv.Itoa(e.gens[session])
	if conversation == "" {
		return session + "/" + n
	}
	key := session + "#" + conversation
	if m := e.gens[key]; m > 0 {
		return key + "/" + n + "." + strconv.Itoa(m)
	}
	return key + "/" + n
}

// compact advances the partition of one conversation of a session, or,
// when conversation is "", of the whole session and every conversation in
// it, and resets the partitions left behind.
func (e *engine) compact(session, conversation string) {
	e.mu.Lock()
	var old []string
	if conversation != "" {
		old = append(old, e.partitionLocked(session, conversation))
		e.gens[session+"#"+conversation]++
	} else {
		old = append(old, e.partitionLocked(session, ""))
		for _, c := range e.convs[session] {
			old = append(old, e.partitionLocked(session, c))
		}
		e.gens[session]++
	}
	e.mu.Unlock()
	if h, ok := e.opts.Transformer.(SessionHooks); ok {
		for _, p := range old {
			h.Reset(p)
		}
	}
}

// forget drops an ended session: its partitions and those of its
// conversations are reset and its counters deleted.
func (e *engine) forget(session string) {
	e.mu.Lock()
	old := []string{e.partitionLocked(session, "")}
	for _, c := range e.convs[session] {
		old = append(old, e.partitionLocked(session, c))
		delete(e.gens, session+"#"+c)
	}
	delete(e.gens, session)
	delete(e.convs, session)
	e.mu.Unlock()
	if h, ok := e.opts.Transformer.(SessionHooks); ok {
		for _, p := range old {
			h.Reset(p)
		}
	}
}

func (e *engine) invalidate(call *Call) {
	if h, ok := e.opts.Transformer.(SessionHooks); ok {
		h.Invalidate(call.Session, call)
	}
}

// chunk answers a _chunk request with a tools/call result.
func (e *engine) chunk(ctx context.Context, call *Call, ref string) (tree.Value, error) {
	if e.opts.Chunks == nil {
		return tree.Value{}, fmt.Errorf("%w: this proxy keeps no chunks", ErrChunkNotFound)
	}
	text, err := e.opts.Chunks.Chunk(ctx, call.Session, call.Tool, ref)
	if err != nil {
		return tree.Value{}, err
	}
	return tree.Object(tree.Member{Key: "content", Value: tree.Array(textBlock(text, "chunk"))}), nil
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

// transformResult runs the Transformer over a tools/call result. It returns
// the new result (or the input when nothing changed) and fills rec.
func (e *engine) transformResult(ctx context.Context, call Call, pol Policy, budget int, result tree.Value, rec *CallRecord) (tree.Value, error) {
	o := &e.opts
	rec.Outcome = "passed"
	if result.Kind() != tree.KindObject || !o.selected(call.Tool) {
		return result, nil
	}
	if v, ok := result.Get("isError"); ok && v.Kind() == tree.KindBool && v.Bool() {
		call.IsError, rec.IsError = true, true
	}
	content, _ := result.Get("content")
	structured, hasStructured := result.Get("structuredContent")
	dropStructured := hasStructured && pol.Reads == ReadsStructured

	blocks := append([]tree.Value(nil), content.Items()...)
	if dropStructured && !contentCarries(blocks, structured) {
		// The client would have shown structuredContent; its compact form
		// must reach the model through content instead.
		blocks = append(blocks, tree.Object(
			tree.Member{Key: "type", Value: tree.String("text")},
			tree.Member{Key: "text", Value: tree.String(string(tree.AppendJSON(nil, structured)))},
		))
	}
	var texts []int
	for i, b := range blocks {
		if t, ok := b.Get("type"); ok && t.Str() == "text" {
			if s, ok := b.Get("text"); ok && s.Kind() == tree.KindString {
				texts = append(texts, i)
			}
		}
	}
	changed := dropStructured
	var pipeErr error
	start := time.Now()
	for _, i := range texts {
		tv, _ := blocks[i].Get("text")
		text := tv.Str()
		if len(text) < o.minSize() {
			continue
		}
		c := call
		if budget > 0 {
			c.Budget = max(budget/len(texts), 64)
		}
		var out Output
		var err error
		if len(text) > o.maxSize() {
			// Too large to re-encode: only fit it, treating it as text.
			out, err = fitOnly(ctx, o.Transformer, &c, text)
		} else {
			out, err = o.Transformer.Transform(ctx, &c, text)
		}
		if err != nil {
			pipeErr = errors.Join(pipeErr, err)
			continue
		}
		rec.TokensBefore += out.TokensBefore
		rec.TokensAfter += out.TokensAfter
		if out.Format == "" || out.Text == text {
			continue
		}
		for k, v := range out.Saved {
			if rec.Saved == nil {
				rec.Saved = map[string]int{}
			}
			rec.Saved[k] += v
		}
		blocks[i] = replaceText(blocks[i], out.Text, out.Format)
		changed = true
	}
	rec.Pipeline = time.Since(start)
	if pipeErr != nil {
		if o.FailOnError {
			rec.Outcome = "error"
			return result, pipeErr
		}
		o.Logger.Warn("transform failed; passing the original result", "tool", call.Tool, "err", pipeErr)
		rec.Outcome = "skipped_error"
		return result, nil
	}
	if !changed {
		return result, nil
	}
	rec.Outcome = "transformed"
	mems := make([]tree.Member, 0, len(result.Members()))
	for _, m := range result.Members() {
		switch m.Key {
		case "content":
			m.Value = tree.Array(blocks...)
		case "structuredContent":
			if dropStructured {
				continue
			}
		}
		mems = append(mems, m)
	}
	if !result.Has("content") {
		mems = append(mems, tree.Member{Key: "content", Value: tree.Array(blocks...)})
	}
	return tree.Object(mems...), nil
}

// fitOnly runs the Transformer on text too large to re-encode by handing it
// a form that will not parse as JSON: only the budget stage applies.
func fitOnly(ctx context.Context, t Transformer, c *Call, text string) (Output, error) {
	if c.Budget <= 0 {
		return Output{Text: text}, nil
	}
	if f, ok := t.(interface {
		Fit(ctx context.Context, call *Call, text string) (Output, error)
	}); ok {
		return f.Fit(ctx, c, text)
	}
	return t.Transform(ctx, c, text)
}

// contentCarries reports whether the text blocks already hold what
// structured holds: one block is structured as JSON, or structured is an
// object that only wraps block texts (as in {"content": "<file text>"}).
func contentCarries(blocks []tree.Value, structured tree.Value) bool {
	if structured.Kind() == tree.KindObject && structured.Len() > 0 {
		wraps := true
		for _, m := range structured.Members() {
			found := false
			for _, b := range blocks {
				if s, ok := b.Get("text"); ok && m.Value.Kind() == tree.KindString && s.Str() == m.Value.Str() {
					found = true
					break
				}
			}
			wraps = wraps && found
		}
		if wraps {
			return true
		}
	}
	for _, b := range blocks {
		if s, ok := b.Get("text"); ok && s.Kind() == tree.KindString {
			if v, err := tree.ParseString(s.Str()); err == nil && sameValue(v, structured) {
				return true
			}
		}
	}
	return false
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

// sameValue is tree.Equal except that object members may come in any
// order: servers often serialize structuredContent from a map.
func sameValue(a, b tree.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case tree.KindArray:
		if a.Len() != b.Len() {
			return false
		}
		for i, x := range a.Items() {
			if !sameValue(x, b.Index(i)) {
				return false
			}
		}
		return true
	case tree.KindObject:
		if a.Len() != b.Len() {
			return false
		}
		for _, m := range a.Members() {
			y, ok := b.Get(m.Key)
			if !ok || !sameValue(m.Value, y) {
				return false
			}
		}
		return true
	}
	return tree.Equal(a, b)
}
