package apiproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toolname"
	"github.com/terse-dev/terse/tree"
)

// claudeRequests rebuilds the requests a Claude Code transcript's agent
// sent: one before each assistant message, holding every message before
// it (an assistant message's blocks are spread over several lines sharing
// the message id; they are joined again). The transcripts do not hold the
// system prompt or tool definitions, so the requests carry neither.
func claudeRequests(tb testing.TB, file string) [][]byte {
	items, ends, model := claudeTurns(tb, file)
	return buildRequests(items, ends, model)
}

func buildRequests(items []tree.Value, ends []int, model string) [][]byte {
	var reqs [][]byte
	for _, e := range ends {
		body := obj("model", model, "max_tokens", tree.Number("32000"), "messages", items[:e], "stream", true)
		reqs = append(reqs, tree.AppendJSON(nil, body))
	}
	return reqs
}

// claudeTurns returns a transcript's messages, the number of messages
// each request held, and the model.
func claudeTurns(tb testing.TB, file string) (items []tree.Value, ends []int, model string) {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	type msg struct {
		role, id string
		blocks   []tree.Value
		str      *tree.Value
	}
	var msgs []msg
	model = "claude-sonnet-4-5"
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		v, err := tree.Parse(sc.Bytes())
		if err != nil {
			tb.Fatal(err)
		}
		typ := get(v, "type").Str()
		if typ != "user" && typ != "assistant" {
			continue
		}
		m := get(v, "message")
		role := get(m, "role").Str()
		c := get(m, "content")
		if role == "assistant" {
			if s := get(m, "model").Str(); s != "" && !strings.HasPrefix(s, "<") {
				model = s
			}
			id := get(m, "id").Str()
			if n := len(msgs); n > 0 && msgs[n-1].role == "assistant" && msgs[n-1].id == id && id != "" {
				msgs[n-1].blocks = append(msgs[n-1].blocks, c.Items()...)
				continue
			}
			if len(msgs) > 0 {
				ends = append(ends, len(msgs))
			}
			msgs = append(msgs, msg{role: role, id: id, blocks: c.Items()})
			continue
		}
		if c.Kind() == tree.KindString {
			msgs = append(msgs, msg{role: role, str: &c})
		} else {
			msgs = append(msgs, msg{role: role, blocks: c.Items()})
		}
	}
	for _, m := range msgs {
		c := tree.Array(m.blocks...)
		if m.str != nil {
			c = *m.str
		}
		items = append(items, obj("role", m.role, "content", c))
	}
	return items, ends, model
}

// replayStats are one session's figures under one setting.
type replayStats struct {
	name                string
	turns, stableTurns  int // stableTurns counts turns after the first
	direct, terse       int // summed input tokens
	costDirect, costTer float64
	saved               [numSources]int
	violations          []string
	larger              int // requests larger than direct
	batches             int // requests that moved the edit boundary
}

// msgTokens counts each message of a request body (compact JSON,
// o200k_base), remembering counts by content.
type msgCounter struct {
	c    tokens.Counter
	memo map[string]int
}

func (mc *msgCounter) messages(body []byte) (msgs []string, toks []int) {
	v, err := tree.Parse(body)
	if err != nil {
		panic(err)
	}
	list, ok := v.Get("messages")
	if !ok {
		list = get(v, "input")
	}
	for _, m := range list.Items() {
		s := string(tree.AppendJSON(nil, m))
		n, ok := mc.memo[s]
		if !ok {
			n = mc.c.Count(s)
			mc.memo[s] = n
		}
		msgs = append(msgs, s)
		toks = append(toks, n)
	}
	return
}

// cost models prompt caching: tokens in the messages shared with the
// previous request at 0.1, the rest at 1.25.
func cost(prev, cur []string, toks []int) (c float64, prefix bool) {
	i := 0
	for i < len(prev) && i < len(cur) && prev[i] == cur[i] {
		i++
	}
	for j, n := range toks {
		if j < i {
			c += 0.1 * float64(n)
		} else {
			c += 1.25 * float64(n)
		}
	}
	return c, i == len(prev)
}

func sum(xs []int) (n int) {
	for _, x := range xs {
		n += x
	}
	return n
}

// replaySession runs a session's requests through a fresh Rewriter.
//
// With times (one per request), the cache is modeled with its 5-minute
// lifetime: a request more than 5 minutes after the previous one reads
// nothing from the cache, direct or rewritten, and the rewriter's clock
// is the request's time.
func replaySession(name string, reqs [][]byte, o Options, mc *msgCounter, roomy bool, responses bool, times ...time.Time) replayStats {
	if o.ChunkStore == nil {
		o.ChunkStore = &store.Mem{}
	}
	var now time.Time
	if times != nil {
		o.Now = func() time.Time { return now }
	}
	o2 := o
	rw := NewRewriter(o)
	st := replayStats{name: name, turns: len(reqs)}
	var prevD, prevT []string
	forms := make(map[string]string) // call id → its result as last sent
	for ti, body := range reqs {
		if times != nil {
			if ti > 0 && times[ti].Sub(times[ti-1]) > 5*time.Minute {
				prevD, prevT = nil, nil // the cache expired
			}
			now = times[ti]
		}
		var res Result
		if responses {
			res = rw.Rewrite(body, history.Responses)
		} else {
			res = rw.Rewrite(body, history.Anthropic)
		}
		if res.Batch != "" {
			st.batches++
		}
		if res.Skipped != "" {
			st.violations = append(st.violations, fmt.Sprintf("turn %d: forwarded untouched: %s", ti, res.Skipped))
		}
		out := body
		if res.Body != nil {
			out = res.Body
		}
		dm, dt := mc.messages(body)
		tm, tt := mc.messages(out)
		st.direct += sum(dt)
		st.terse += sum(tt)
		cd, _ := cost(prevD, dm, dt)
		ct, stable := cost(prevT, tm, tt)
		st.costDirect += cd
		st.costTer += ct
		if ti > 0 && (stable || prevT == nil) {
			st.stableTurns++
		}
		if sum(tt) > sum(dt) {
			st.larger++
			if roomy {
				st.violations = append(st.violations, fmt.Sprintf("turn %d: %d tokens, direct %d", ti, sum(tt), sum(dt)))
			}
		}
		for _, e := range res.Edits {
			// As the messages are counted: JSON strings.
			if e.Source == SourceApplied { // a call's input: JSON in the request
				st.saved[e.Source] += mc.c.Count(e.Before) - mc.c.Count(e.After)
				continue
			}
			st.saved[e.Source] += mc.c.Count(string(tree.AppendString(nil, e.Before))) - mc.c.Count(string(tree.AppendString(nil, e.After)))
		}
		check := func(d, o []byte, r bool) []string { return checkRequest(d, o, r, o2.ChunkStore) }
		if responses {
			check = checkResponses
		}
		for _, v := range check(body, out, roomy) {
			st.violations = append(st.violations, fmt.Sprintf("turn %d: %s", ti, v))
		}
		// At the source: a result keeps the form it was first sent in
		// until the trimming boundary moves.
		for id, f := range resultForms(out, responses) {
			if was, ok := forms[id]; ok && was != f && !res.PrefixChanged {
				st.violations = append(st.violations, fmt.Sprintf("turn %d: the result of %s changed form without a boundary move", ti, id))
			}
			forms[id] = f
		}
		prevD, prevT = dm, tm
	}
	other := 0
	for _, s := range sources[1:] {
		other += st.saved[s]
	}
	st.saved[SourceHistory] = st.direct - st.terse - other
	return st
}

// checkRequest lists what a rewritten request breaks: tool pairing, user
// and system text, and a changed result that neither restores exactly to
// the original nor names its call.
//
// The batched edits are checked by their form: a stale marker names a
// later successful write call of the same file; an elided result either
// names its call, which only reads, or a `terse chunk` command whose
// handle resolves, in st (when given), to the original; an edited
// tool_use input keeps its keys and every field but payloads, and each
// payload marker names its call, whose result is in the request and did
// not fail. Thinking blocks are sent as they were, signatures included.
func checkRequest(direct, out []byte, _ bool, st ...store.Store) []string {
	dv, _ := tree.Parse(direct)
	ov, err := tree.Parse(out)
	if err != nil {
		return []string{"rewritten body is not JSON: " + err.Error()}
	}
	var bad []string
	for _, k := range []string{"system", "tools", "model", "max_tokens", "stream"} {
		a, _ := dv.Get(k)
		b, _ := ov.Get(k)
		if !tree.Equal(a, b) {
			bad = append(bad, k+" changed")
		}
	}
	userTexts := func(v tree.Value) (out []string) {
		for _, m := range get(v, "messages").Items() {
			if get(m, "role").Str() != "user" {
				continue
			}
			c := get(m, "content")
			if c.Kind() == tree.KindString {
				out = append(out, c.Str())
				continue
			}
			for _, b := range c.Items() {
				if get(b, "type").Str() != "tool_result" {
					out = append(out, b.String())
				}
			}
		}
		return out
	}
	if !slices.Equal(userTexts(dv), userTexts(ov)) {
		bad = append(bad, "user text changed")
	}
	if pairing(dv) == "" {
		if p := pairing(ov); p != "" {
			bad = append(bad, "pairing: "+p)
		}
	}
	bad = append(bad, checkCalls(dv, ov)...)
	before := results(dv)
	afterAll := results(ov)
	for id, after := range afterAll {
		b := before[id]
		if tree.Equal(b, after) {
			continue
		}
		text, err := resolvedText(id, afterAll, 0)
		if err != nil {
			bad = append(bad, "result "+id+": "+err.Error())
			continue
		}
		bt := b.Str()
		if b.Kind() == tree.KindArray {
			bt = get(b.Index(0), "text").Str()
		}
		text = withoutDropNote(text)
		if text == bt {
			continue
		}
		if v := checkBatched(dv, id, text, joinedText(b), st); v != "" {
			bad = append(bad, v)
			continue
		}
		if strings.Contains(text, id) || namesSame(text, id, before) {
			continue
		}
		if !restores(text, bt) {
			bad = append(bad, "result "+id+" changed without naming its call or restoring to it")
		}
	}
	return bad
}

// joinedText is a result's content as one text: its text blocks joined
// by newlines, as the rewriter reads it.
func joinedText(c tree.Value) string {
	if c.Kind() != tree.KindArray {
		return c.Str()
	}
	var parts []string
	for _, b := range c.Items() {
		parts = append(parts, get(b, "text").Str())
	}
	return strings.Join(parts, "\n")
}

// checkCalls lists what a rewritten request breaks in its assistant
// messages: a tool_use changed other than by applied-payload markers, or
// a thinking block not sent as it was.
func checkCalls(dv, ov tree.Value) []string {
	var bad []string
	uses := func(v tree.Value) (map[string]tree.Value, map[string]bool) {
		calls, think := map[string]tree.Value{}, map[string]bool{}
		for _, m := range get(v, "messages").Items() {
			for _, b := range get(m, "content").Items() {
				switch get(b, "type").Str() {
				case "tool_use":
					calls[get(b, "id").Str()] = b
				case "thinking", "redacted_thinking":
					think[b.String()] = true
				}
			}
		}
		return calls, think
	}
	dc, dt := uses(dv)
	oc, ot := uses(ov)
	for b := range ot {
		if !dt[b] {
			bad = append(bad, "a thinking block changed")
		}
	}
	failed := map[string]bool{}
	answered := map[string]bool{}
	for _, m := range get(dv, "messages").Items() {
		for _, b := range get(m, "content").Items() {
			if get(b, "type").Str() == "tool_result" {
				answered[get(b, "tool_use_id").Str()] = true
				if x, ok := b.Get("is_error"); ok && x.Kind() == tree.KindBool && x.Bool() {
					failed[get(b, "tool_use_id").Str()] = true
				}
			}
		}
	}
	for id, o := range oc {
		d := dc[id]
		if tree.Equal(d, o) {
			continue
		}
		if get(d, "name").Str() != get(o, "name").Str() {
			bad = append(bad, "call "+id+" renamed")
			continue
		}
		if !answered[id] || failed[id] {
			bad = append(bad, "call "+id+" changed, whose result is missing or failed")
			continue
		}
		if v := checkApplied(id, get(d, "input"), get(o, "input"), 0); v != "" {
			bad = append(bad, "call "+id+": "+v)
		}
	}
	return bad
}

// checkApplied says how an edited input breaks the applied-payload form:
// an object with the same keys, every field the same but payloads (and
// MultiEdit's edits), a payload replaced by a shorter marker naming the
// call.
func checkApplied(id string, d, o tree.Value, depth int) string {
	if d.Kind() != tree.KindObject || o.Kind() != tree.KindObject {
		return "input is not an object"
	}
	dm, om := d.Members(), o.Members()
	if len(dm) != len(om) {
		return "input keys changed"
	}
	for i := range dm {
		if dm[i].Key != om[i].Key {
			return "input keys changed"
		}
		a, b := dm[i].Value, om[i].Value
		if tree.Equal(a, b) {
			continue
		}
		switch {
		case payloadFields[dm[i].Key] && a.Kind() == tree.KindString && b.Kind() == tree.KindString:
			t := b.Str()
			x, ok := parseLine[inband.Applied](t)
			if !ok || x.Call.ID != id || len(t) >= len(a.Str()) || x.N != len(a.Str()) || x.Field != dm[i].Key {
				return dm[i].Key + " changed without an applied marker naming the call and its size"
			}
		case depth == 0 && dm[i].Key == "edits" && a.Kind() == tree.KindArray && b.Kind() == tree.KindArray && a.Len() == b.Len():
			for j := 0; j < a.Len(); j++ {
				if v := checkApplied(id, a.Index(j), b.Index(j), 1); v != "" {
					return "edits: " + v
				}
			}
		default:
			return dm[i].Key + " changed"
		}
	}
	return ""
}

// parseLine reads text as the one in-band line of type T it should be.
func parseLine[T inband.Line](text string) (T, bool) {
	v, err := inband.Parse(text)
	x, ok := v.(T)
	return x, err == nil && ok
}

// checkBatched says how a result changed into a batched edit's marker
// breaks it ("" when it is not one, or is sound): a stale read must name
// a later write call of the same file that did not fail; an elided result
// must name its call, and either that call only reads or its handle
// resolves in st to the original.
func checkBatched(dv tree.Value, id, text, orig string, st []store.Store) string {
	type use struct {
		name string
		args tree.Value
		at   int
	}
	calls := map[string]use{}
	failed := map[string]bool{}
	for i, m := range get(dv, "messages").Items() {
		for _, b := range get(m, "content").Items() {
			switch get(b, "type").Str() {
			case "tool_use":
				calls[get(b, "id").Str()] = use{get(b, "name").Str(), get(b, "input"), i}
			case "tool_result":
				if x, ok := b.Get("is_error"); ok && x.Kind() == tree.KindBool && x.Bool() {
					failed[get(b, "tool_use_id").Str()] = true
				}
			}
		}
	}
	self := calls[id]
	switch {
	case strings.HasPrefix(text, "> [stale: "):
		x, ok := parseLine[inband.Stale](text)
		if !ok || x.Read.ID != id {
			return "stale result " + id + " names no superseding call"
		}
		w, ok := calls[x.Write.ID]
		path := func(v tree.Value) string {
			return get(v, "file_path").Str() + get(v, "notebook_path").Str() + get(v, "path").Str()
		}
		if !ok || w.name != x.Write.Tool || !toolname.WritesFiles(w.name) || failed[x.Write.ID] || w.at <= self.at || path(w.args) != path(self.args) {
			return "stale result " + id + " names " + x.Write.ID + ", not a later successful write of its file"
		}
	case strings.HasPrefix(text, inband.ElidedResultHead):
		x, ok := parseLine[inband.ElidedResult](text)
		if !ok || x.Call.ID != id {
			return "elided result " + id + " does not name its call"
		}
		if x.Fetch == "" {
			if !readOnly(call{id: id, name: self.name, args: self.args.String()}) {
				return "elided result " + id + " of a call that may have side effects has no handle"
			}
			return ""
		}
		f := strings.Fields(x.Fetch)
		if len(f) != 6 || f[1] != "chunk" || f[2] != "--session" || f[5] != "1" {
			return "elided result " + id + ": " + x.Fetch + " is not the chunk command of the replay"
		}
		scope, handle := f[3], f[4]
		if len(st) == 0 || st[0] == nil {
			return "elided result " + id + ": no store to resolve " + handle
		}
		ch, err := fit.FetchChunk(context.Background(), handle, 1, &fit.Options{Store: st[0], Scope: scope, Budget: 1 << 30})
		if err != nil {
			return "elided result " + id + ": " + err.Error()
		}
		_, body, _ := strings.Cut(ch.Text, "\n")
		if !ch.Whole || body != strings.TrimSuffix(orig, "\n") {
			return "elided result " + id + ": its handle does not give back the original"
		}
	}
	return ""
}

// resultForms maps the call ids of a request to their results as sent.
func resultForms(body []byte, responses bool) map[string]string {
	v, _ := tree.Parse(body)
	out := make(map[string]string)
	if !responses {
		for id, c := range results(v) {
			out[id] = c.String()
		}
		return out
	}
	seen := make(map[string]int) // ids need not be unique (fixtures)
	for _, it := range get(v, "input").Items() {
		if t := get(it, "type").Str(); t == "function_call_output" || t == "custom_tool_call_output" {
			id := get(it, "call_id").Str()
			seen[id]++
			out[fmt.Sprintf("%s#%d", id, seen[id])] = get(it, "output").String()
		}
	}
	return out
}

// get is v's member k (the zero Value when absent).
func get(v tree.Value, k string) tree.Value {
	x, _ := v.Get(k)
	return x
}

// outputsOf maps the call ids of a Responses request to their outputs.
func outputsOf(v tree.Value) map[string]tree.Value {
	out := make(map[string]tree.Value)
	for _, it := range get(v, "input").Items() {
		if t := get(it, "type").Str(); t == "function_call_output" || t == "custom_tool_call_output" {
			out[get(it, "call_id").Str()] = get(it, "output")
		}
	}
	return out
}

// hasLineRefs reports whether text holds a line reference.
func hasLineRefs(text string) bool {
	return strings.Contains(text, " of its result, byte-identical]")
}

// sameJSONDocs reports whether docs are the JSON documents of text, in
// order.
func sameJSONDocs(docs []tree.Value, text string) bool {
	dec := json.NewDecoder(strings.NewReader(text))
	for i := 0; ; i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err == io.EOF && i == len(docs)
		}
		v, err := tree.Parse(raw)
		if err != nil || i >= len(docs) || !tree.Equal(v, docs[i]) {
			return false
		}
	}
}

// resolvedText is the text of the result of id in results with its line
// references resolved (against the results they name, resolved in turn).
func resolvedText(id string, results map[string]tree.Value, depth int) (string, error) {
	v := results[id]
	text := v.Str()
	if v.Kind() == tree.KindArray {
		text = get(v.Index(0), "text").Str()
	}
	// Lines are counted in the result, without terse's notes before it.
	text = withoutDropNote(text)
	if first, rest, ok := strings.Cut(text, "\n"); ok {
		if _, ok := parseLine[inband.Resent](first); ok {
			text = rest
		}
	}
	if depth > 64 {
		return "", fmt.Errorf("line references nest deeper than 64")
	}
	var lookupErr error
	out, err := dedup.ResolveLines(text, func(name string) (string, bool) {
		ref, _, _ := strings.Cut(name, " (")
		if _, ok := results[ref]; !ok {
			return "", false
		}
		t, err := resolvedText(ref, results, depth+1)
		if err != nil {
			lookupErr = err
			return "", false
		}
		return t, true
	})
	if lookupErr != nil {
		return "", lookupErr
	}
	return out, err
}

// restores reports whether a changed result text gives back the original
// exactly: a shaped text by terse expand (shape.Expand), byte for byte; a
// re-encoded JSON document by terse decode (render.Decode), value for
// value.
func restores(text, orig string) bool {
	if strings.HasPrefix(text, "> [JSON document 1 of ") {
		docs, err := terse.DecodeJSONDocuments(text)
		return err == nil && sameJSONDocs(docs, orig)
	}
	if strings.HasPrefix(text, "> [lossless: ") {
		back, err := shape.Expand(text)
		return err == nil && back == orig
	}
	want, err1 := tree.ParseString(strings.TrimSpace(orig))
	got, err2 := render.Decode(text)
	return err1 == nil && err2 == nil && tree.Equal(want, got)
}

// namesCall reports whether a replaced text names the call it stands for
// or the one whose identical result it refers to.
func namesCall(text string) bool {
	return strings.Contains(text, " call ") || strings.HasPrefix(text, "> [ref: ")
}

// withoutDropNote removes the declaration of dropped calls that may lead
// the first result sent.
func withoutDropNote(text string) string {
	if first, rest, ok := strings.Cut(text, "\n"); ok {
		if _, ok := parseLine[inband.Dropped](first); ok {
			return rest
		}
	}
	return text
}

// namesSame reports whether text names another call whose result was
// identical to that of id (a repeat reference).
func namesSame(text, id string, before map[string]tree.Value) bool {
	for other, v := range before {
		if other != id && strings.Contains(text, other) && tree.Equal(v, before[id]) {
			return true
		}
	}
	return false
}

// results maps tool_use ids to their result content.
func results(v tree.Value) map[string]tree.Value {
	out := make(map[string]tree.Value)
	for _, m := range get(v, "messages").Items() {
		for _, b := range get(m, "content").Items() {
			if get(b, "type").Str() == "tool_result" {
				out[get(b, "tool_use_id").Str()] = get(b, "content")
			}
		}
	}
	return out
}

// pairing says how an Anthropic request breaks tool pairing ("" when it
// does not): every tool_use answered in the next message, every
// tool_result answering the message before.
func pairing(v tree.Value) string {
	msgs := get(v, "messages").Items()
	for i, m := range msgs {
		var uses []string
		for _, b := range get(m, "content").Items() {
			switch get(b, "type").Str() {
			case "tool_use":
				uses = append(uses, get(b, "id").Str())
			case "tool_result":
				id := get(b, "tool_use_id").Str()
				ok := false
				if i > 0 {
					for _, pb := range get(msgs[i-1], "content").Items() {
						ok = ok || (get(pb, "type").Str() == "tool_use" && get(pb, "id").Str() == id)
					}
				}
				if !ok {
					return fmt.Sprintf("message %d: result %s without its call before it", i, id)
				}
			}
		}
		if len(uses) > 0 && i+1 < len(msgs) {
			got := make(map[string]bool)
			for _, b := range get(msgs[i+1], "content").Items() {
				got[get(b, "tool_use_id").Str()] = true
			}
			for _, id := range uses {
				if !got[id] {
					return fmt.Sprintf("message %d: call %s without its result after it", i, id)
				}
			}
		}
	}
	return ""
}

// replayTable runs every Claude Code transcript under o and returns the
// per-session figures and the total.
func replayTable(tb testing.TB, o Options, roomy bool) ([]replayStats, replayStats) {
	dir := filepath.Join(corpus.Dir(tb, "corpus"), "agent-sessions")
	files, _ := filepath.Glob(filepath.Join(dir, "claude", "*.jsonl"))
	codex, _ := filepath.Glob(filepath.Join(dir, "codex", "*.jsonl"))
	files = append(files, codex...)
	if len(files) == 0 {
		tb.Skip("no Claude Code transcripts in " + dir)
	}
	mc := &msgCounter{c: tokens.O200kBase(), memo: make(map[string]int)}
	var rows []replayStats
	total := replayStats{name: "total"}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		responses := strings.Contains(f, string(filepath.Separator)+"codex"+string(filepath.Separator))
		var reqs [][]byte
		if responses {
			reqs = codexRequests(tb, f)
		} else {
			reqs = claudeRequests(tb, f)
		}
		st := replaySession(name, reqs, o, mc, roomy, responses)
		rows = append(rows, st)
		total.turns += st.turns
		total.stableTurns += st.stableTurns
		total.direct += st.direct
		total.terse += st.terse
		total.costDirect += st.costDirect
		total.costTer += st.costTer
		total.larger += st.larger
		total.batches += st.batches
		for s := range st.saved {
			total.saved[s] += st.saved[s]
		}
		total.violations = append(total.violations, st.violations...)
	}
	return rows, total
}

func (st replayStats) stableShare(sessions int) float64 {
	return float64(st.stableTurns) / float64(max(1, st.turns-sessions))
}

func printTable(tb testing.TB, title string, rows []replayStats, total replayStats) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s (o200k_base tokens of the messages, summed over requests)\n", title)
	fmt.Fprintf(&b, "| session | requests | direct | terse | ratio | history | dedup | stale | applied | elided | shaping | batches | prefix-stable | cost ratio | violations |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	line := func(st replayStats, sessions int) {
		stable := "–"
		if st.turns > sessions {
			stable = fmt.Sprintf("%.1f %%", 100*st.stableShare(sessions))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.3f | %d | %d | %d | %d | %d | %d | %d | %s | %.3f | %d |\n",
			st.name, st.turns, st.direct, st.terse, float64(st.terse)/float64(max(1, st.direct)),
			st.saved[SourceHistory], st.saved[SourceRepeat], st.saved[SourceStale], st.saved[SourceApplied],
			st.saved[SourceElided], st.saved[SourceEncoding]+st.saved[SourceFilter], st.batches,
			stable, st.costTer/max(1, st.costDirect), len(st.violations))
	}
	for _, r := range rows {
		line(r, 1)
	}
	line(total, len(rows))
	tb.Log(b.String())
}

// TestReplayRoomy replays the transcripts with a 200,000-token window:
// no request grows, ≥ 97 % of requests keep the previous one as their
// prefix, and every changed result restores exactly (terse expand, terse
// decode) or names its call.
func TestReplayRoomy(t *testing.T) {
	rows, total := replayTable(t, Options{Window: 200_000}, true)
	printTable(t, "window 200,000", rows, total)
	for _, v := range total.violations {
		t.Error(v)
	}
	if total.larger > 0 {
		t.Errorf("%d requests larger than direct", total.larger)
	}
	if s := total.stableShare(len(rows)); s < 0.97 {
		t.Errorf("prefix-stable turns %.1f %%, want ≥ 97 %%", 100*s)
	}
}

// TestReplayTight replays the transcripts with a 40,000-token window.
func TestReplayTight(t *testing.T) {
	rows, total := replayTable(t, Options{Window: 40_000}, false)
	printTable(t, "window 40,000", rows, total)
	for _, v := range total.violations {
		t.Error(v)
	}
	if s := total.stableShare(len(rows)); s < 0.97 {
		t.Errorf("prefix-stable turns %.1f %%, want ≥ 97 %%", 100*s)
	}
	if r := float64(total.terse) / float64(total.direct); r > 0.75 {
		t.Errorf("summed input %.3f× direct, want ≤ 0.75", r)
	}
	if r := total.costTer / total.costDirect; r > 1.0 {
		t.Errorf("modeled cost %.3f× direct, want ≤ 1.0", r)
	}
}

func mustParse(tb testing.TB, b []byte) tree.Value {
	tb.Helper()
	v, err := tree.Parse(b)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// codexRequests rebuilds the Responses API requests of a Codex rollout:
// one before each run of model output items, holding every item before
// it (the rollout's response_item payloads are the items as sent back).
func codexRequests(tb testing.TB, file string) [][]byte {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	var items []tree.Value
	var reqs [][]byte
	model := "gpt-5-codex"
	fromModel := func(it tree.Value) bool {
		switch get(it, "type").Str() {
		case "message":
			return get(it, "role").Str() == "assistant"
		case "function_call", "custom_tool_call", "reasoning", "web_search_call", "tool_search_call", "image_generation_call", "agent_message":
			return true
		}
		return false
	}
	prevModel := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		v, err := tree.Parse(sc.Bytes())
		if err != nil {
			tb.Fatal(err)
		}
		if get(v, "type").Str() != "response_item" {
			continue
		}
		it := get(v, "payload")
		m := fromModel(it)
		if m && !prevModel && len(items) > 0 {
			reqs = append(reqs, tree.AppendJSON(nil, obj("model", model, "instructions", "You are Codex.", "input", items, "stream", true)))
		}
		prevModel = m
		items = append(items, it)
	}
	return reqs
}

// checkResponses lists what a rewritten Responses request breaks: every
// item but tool outputs unchanged; a changed output names a call or
// decodes to the original.
func checkResponses(direct, out []byte, _ bool) []string {
	dv, _ := tree.Parse(direct)
	ov, err := tree.Parse(out)
	if err != nil {
		return []string{"rewritten body is not JSON: " + err.Error()}
	}
	var bad []string
	a, b := get(dv, "input").Items(), get(ov, "input").Items()
	if len(a) != len(b) {
		return []string{"items added or removed"}
	}
	for i := range a {
		if tree.Equal(a[i], b[i]) {
			continue
		}
		typ := get(a[i], "type").Str()
		if typ == "function_call" && get(a[i], "name").Str() == get(b[i], "name").Str() &&
			get(a[i], "call_id").Str() == get(b[i], "call_id").Str() {
			// An edited input: applied-payload markers only.
			da, err1 := tree.ParseString(get(a[i], "arguments").Str())
			db, err2 := tree.ParseString(get(b[i], "arguments").Str())
			if err1 != nil || err2 != nil {
				bad = append(bad, fmt.Sprintf("item %d: arguments do not decode", i))
			} else if v := checkApplied(get(a[i], "call_id").Str(), da, db, 0); v != "" {
				bad = append(bad, fmt.Sprintf("item %d: %s", i, v))
			}
			continue
		}
		if typ != "function_call_output" && typ != "custom_tool_call_output" {
			bad = append(bad, fmt.Sprintf("item %d (%s) changed", i, typ))
			continue
		}
		text, err := resolvedText(get(b[i], "call_id").Str(), outputsOf(ov), 0)
		if err != nil {
			bad = append(bad, fmt.Sprintf("item %d: %v", i, err))
			continue
		}
		if !hasLineRefs(get(b[i], "output").Str()) && namesCall(text) {
			continue
		}
		if text != get(a[i], "output").Str() && !restores(text, get(a[i], "output").Str()) {
			bad = append(bad, fmt.Sprintf("item %d: output changed without naming a call or restoring to it", i))
		}
	}
	return bad
}

// TestReplayLong joins the Claude Code transcripts into one long session
// (each one's messages after the last's) and replays it with a 40,000 and
// a 60,000-token window: the stress case for prefix stability, many
// boundary moves in one conversation (≥ 97 % prefix-stable required at
// 60,000).
func TestReplayLong(t *testing.T) {
	dir := filepath.Join(corpus.Dir(t, "corpus"), "agent-sessions", "claude")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) == 0 {
		t.Skip("no Claude Code transcripts")
	}
	var items []tree.Value
	var ends []int
	for _, f := range files {
		it, e, _ := claudeTurns(t, f)
		for _, x := range e {
			ends = append(ends, len(items)+x)
		}
		items = append(items, it...)
	}
	reqs := buildRequests(items, ends, "claude-sonnet-4-5")
	mc := &msgCounter{c: tokens.O200kBase(), memo: make(map[string]int)}
	var rows []replayStats
	for _, w := range []int{40_000, 60_000} {
		st := replaySession(fmt.Sprintf("all transcripts joined, window %d", w), reqs, Options{Window: w}, mc, false, false)
		rows = append(rows, st)
		for _, v := range st.violations {
			t.Error(v)
		}
		// At 40,000 a few reads of 10,000+ tokens in a row force steps
		// three turns apart (the newest exchange is never trimmed), so
		// the share is reported, not required.
		if s := st.stableShare(1); s < 0.97 && w >= 60_000 {
			t.Errorf("window %d: prefix-stable %.1f %%, want ≥ 97 %%", w, 100*s)
		}
		if r := st.costTer / st.costDirect; r > 1 {
			t.Errorf("window %d: modeled cost %.3f× direct", w, r)
		}
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s: %d requests, %d → %d tokens (%.3f), prefix-stable %.1f %%, cost %.3f× direct\n",
			r.name, r.turns, r.direct, r.terse, float64(r.terse)/float64(r.direct), 100*r.stableShare(1), r.costTer/r.costDirect)
	}
	t.Log("\n" + b.String())
}

// claudeSegments rebuilds the requests of a long Claude Code transcript
// as Claude Code sends them: after each compaction (a compact_boundary)
// the conversation starts again from the compaction's summary, so each
// segment is a conversation of its own. Each request has the time of the
// assistant message it was answered by.
func claudeSegments(tb testing.TB, file string) (segs [][][]byte, times [][]time.Time, model string) {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	model = "claude-sonnet-4-5"
	var items []tree.Value
	var reqs [][]byte
	var ts []time.Time
	lastID := ""
	var pending []tree.Value // the blocks of the assistant message being read
	flushAssistant := func() {
		if pending != nil {
			items = append(items, obj("role", "assistant", "content", pending))
			pending = nil
		}
	}
	flushSeg := func() {
		flushAssistant()
		if len(reqs) > 0 {
			segs, times = append(segs, reqs), append(times, ts)
		}
		items, reqs, ts, lastID = nil, nil, nil, ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		v, err := tree.Parse(sc.Bytes())
		if err != nil {
			tb.Fatal(err)
		}
		typ := get(v, "type").Str()
		if typ == "system" && get(v, "subtype").Str() == "compact_boundary" {
			flushSeg()
			continue
		}
		if typ != "user" && typ != "assistant" {
			continue
		}
		m := get(v, "message")
		c := get(m, "content")
		if get(m, "role").Str() == "assistant" {
			if s := get(m, "model").Str(); s != "" && !strings.HasPrefix(s, "<") {
				model = s
			}
			id := get(m, "id").Str()
			if pending != nil && id == lastID && id != "" {
				pending = append(pending, c.Items()...)
				continue
			}
			flushAssistant()
			if len(items) > 0 {
				at, _ := time.Parse(time.RFC3339Nano, get(v, "timestamp").Str())
				reqs = append(reqs, tree.AppendJSON(nil, obj("model", model, "max_tokens", tree.Number("32000"), "messages", items, "stream", true)))
				ts = append(ts, at)
			}
			lastID = id
			pending = append([]tree.Value{}, c.Items()...)
			continue
		}
		flushAssistant()
		items = append(items, obj("role", "user", "content", c))
	}
	flushSeg()
	return segs, times, model
}

// TestReplayLongSessions replays the long real Claude Code sessions at
// the model's window (200,000) as Claude Code sends them (compactions
// start the conversation again), with the cache's 5-minute lifetime
// modeled from the transcripts' times: every request valid, every
// changed block declared, and the figures reported.
func TestReplayLongSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	dir := filepath.Join(corpus.Dir(t, "corpus"), "agent-sessions", "claude-long")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) == 0 {
		t.Skip("no long Claude Code transcripts in " + dir)
	}
	mc := &msgCounter{c: tokens.O200kBase(), memo: make(map[string]int)}
	var rows []replayStats
	total := replayStats{name: "total"}
	segments := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		segs, times, _ := claudeSegments(t, f)
		row := replayStats{name: name}
		for i, reqs := range segs {
			segments++
			st := replaySession(name, reqs, Options{Window: 200_000}, mc, false, false, times[i]...)
			row.turns += st.turns
			row.stableTurns += st.stableTurns
			row.direct += st.direct
			row.terse += st.terse
			row.costDirect += st.costDirect
			row.costTer += st.costTer
			row.batches += st.batches
			for s := range st.saved {
				row.saved[s] += st.saved[s]
			}
			row.violations = append(row.violations, st.violations...)
		}
		rows = append(rows, row)
		total.turns += row.turns
		total.stableTurns += row.stableTurns
		total.direct += row.direct
		total.terse += row.terse
		total.costDirect += row.costDirect
		total.costTer += row.costTer
		total.batches += row.batches
		for s := range row.saved {
			total.saved[s] += row.saved[s]
		}
		total.violations = append(total.violations, row.violations...)
	}
	printTable(t, fmt.Sprintf("long sessions, window 200,000, 5-minute cache lifetime (%d conversations)", segments), rows, total)
	for _, v := range total.violations {
		t.Error(v)
	}
}
