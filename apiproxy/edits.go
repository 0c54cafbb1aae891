package apiproxy

import (
	"hash/maphash"
	"slices"
	"sort"
	"strings"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/hook"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/toolname"
	"github.com/terse-dev/terse/tree"
)

// The in-band texts models read, single-line hints in the project's
// "> [family: payload]" form. Their wording is part of the API: each names
// what was left out and how to get it back.

// repeatText stands for a result identical to the earlier result of c:
// the dedup dialect's reference naming a tool call, worded as the hook
// words it (hook.RefHint), e.g.
//
//	> [ref: toolu_01ABC (Bash "git status"), byte-identical]
func repeatText(c call, id string) string {
	return inband.Ref{ID: refName(c, id)}.String()
}

// refName names the call id of c in a reference: `toolu_01ABC (Bash
// "git status")` (hook.RefName).
func refName(c call, id string) string {
	args, _ := tree.ParseString(c.args)
	return hook.RefName(c.name, hook.Ref{ID: id, Input: args})
}

// staleText stands for a read that the write w superseded.
func staleText(r call, rid string, w call, wid string) string {
	return inband.Stale{Read: describe(r, rid), Write: describe(w, wid)}.String()
}

// appliedText stands in a write call's input for a payload field (the
// text written or replaced) of a call that succeeded, whose result the
// conversation holds: what was left out, in bytes of the original, and
// where its effect can be seen now. It names the call it is part of.
func appliedText(c call, id, field string, n int) string {
	return inband.Applied{N: n, Field: field, Call: describe(c, id)}.String()
}

// elidedText stands for an old bulky result left out by a batch of
// edits: which call, how large (bytes of the original), how old it was
// when it was left out (in requests), and the way back: calling again a
// call that only reads, else the command that prints the stored
// original from the agent's shell (fetch).
func elidedText(c call, id string, size, age int, fetch string) string {
	return inband.ElidedResult{Call: describe(c, id), Size: size, Age: age, Fetch: fetch}.String()
}

// trimmedText stands for a result whose content history trimming left
// out, with the way back its call's kind allows: a read-only call can be
// made again; any other is never suggested again (that would repeat its
// side effects), and its result is declared not recoverable.
func trimmedText(c call, id string) string {
	args, _ := tree.ParseString(c.args)
	return inband.Trimmed{Call: describeArgs(c, id, args), ReadOnly: readOnlyArgs(c, args, true)}.String()
}

// isTrimmedText reports whether text is trimmedText(c, id), cheaply when
// it is not.
func isTrimmedText(text string, c call, id string) bool {
	return strings.HasPrefix(text, inband.TrimmedHead) && text == trimmedText(c, id)
}

// droppedText declares the tool calls trimming removed whole (with their
// results), counted by tool, and how their results can be had again: by
// calling again when every one of them only read, else only for those
// that did.
func droppedText(dropped []history.Message) string {
	counts := map[string]int{}
	var names []string
	n, writes := 0, 0
	for i := range dropped {
		for _, p := range dropped[i].Parts {
			if p.Kind == history.ToolCall && dropped[i].Role == history.RoleAssistant {
				if counts[p.Name] == 0 {
					names = append(names, p.Name)
				}
				counts[p.Name]++
				n++
				if !readOnly(call{id: p.ID, name: p.Name, args: p.Args}) {
					writes++
				}
			}
		}
	}
	if n == 0 {
		return ""
	}
	sort.SliceStable(names, func(i, j int) bool { return counts[names[i]] > counts[names[j]] })
	x := inband.Dropped{N: n, More: len(names) > 6, Writes: writes > 0}
	for _, name := range names[:min(len(names), 6)] {
		x.Tools = append(x.Tools, inband.ToolCount{Name: name, N: counts[name]})
	}
	return x.String()
}

// declareDropped puts the declaration of the calls dropped before the
// drop boundary where it changes no result shown in full: at the head of
// the first result after them that trimming already replaced (whose text
// names its own call). When every result sent is shown in full, it leads
// the first one, followed by a line naming that result's call, so that
// the result is not read as changed. It depends only on what was dropped
// and trimmed, so it stays the same until the boundary moves.
func declareDropped(out, dropped []history.Message, calls map[string]call) []history.Message {
	note := droppedText(dropped)
	if note == "" {
		return out
	}
	host := ""
	for i := range out {
		for j := range out[i].Parts {
			p := &out[i].Parts[j]
			if p.Kind != history.ToolResult || host != "" {
				continue
			}
			if text, ok := resultText(p); ok && isTrimmedText(text, calls[p.ID], p.ID) {
				host = p.ID
			}
		}
	}
	done := false
	return mapResults(out, func(_ int, p *history.Part) (history.Part, bool) {
		if done || host != "" && p.ID != host {
			return *p, false
		}
		text, ok := resultText(p)
		if !ok {
			return *p, false
		}
		done = true
		if host != "" {
			return withText(*p, note+"\n"+text), true
		}
		return withText(*p, note+"\n"+followsText(calls[p.ID], p.ID)+"\n"+text), true
	})
}

// followsText names the call whose result, as sent, follows a note placed
// at its head.
func followsText(c call, id string) string {
	return inband.Resent{Call: describe(c, id)}.String()
}

// editCtx is what the edits of one request are made from.
type editCtx struct {
	norm  []history.Message // the request's messages as the client sent them
	calls map[string]call
	prof  *Profile
	scope string // the conversation's handle scope (stored originals)
	// batches are the boundaries of the batches made so far (see
	// fetchedBack).
	batches []int
}

// declare returns msgs with the edits of the messages before index edit
// (the conversation's edit boundary: see the package's Editing section)
// and the repeats of the whole request:
//
//   - a read that a later call before edit wrote becomes staleText;
//   - a write call older than Options.EditAge requests whose result
//     (before edit) did not fail keeps its input's naming fields, its
//     payload fields become appliedText;
//   - a result of at least Options.EditBulky bytes older than EditAge
//     requests becomes elidedText: call it again when the call only
//     reads, else fetch the original, stored under a handle bound to the
//     conversation (no store, or a store that fails: it stays). A result
//     the agent may have fetched back (a call repeating an earlier one,
//     a chunk fetch) is never elided, and a result identical to an
//     earlier one of the same call is never declared stale either;
//   - repeats, as many as prof allows, the first ones (the count starts
//     from the conversation's first message on every request, so a
//     repeat's fate changes only when the boundary moves, which changes
//     the prefix anyway). A result left out is never referred to.
//
// Everything before edit depends only on the messages before edit, so
// every request of the conversation carries the same edited prefix.
func (rw *Rewriter) declare(msgs []history.Message, x *editCtx, edit int) ([]history.Message, []Edit) {
	calls, prof := x.calls, x.prof
	edit = min(edit, len(msgs))
	refs := 0
	var staleBy map[string]string // read call id → writing call id
	var old map[string]int        // call id → its result's age, when old enough to elide
	var applied map[string]bool   // write calls whose payloads are left out
	if edit > 0 {
		if !rw.opt.NoStale {
			staleBy = staleReads(msgs[:edit], calls)
		}
		if !rw.opt.NoEdit {
			old, applied = rw.oldCalls(msgs[:edit], calls)
		}
	}
	// A result the same call gave before, word for word, asked for after
	// a batch that may have elided the earlier one, is what the agent
	// fetched back (a re-read of a file whose read was elided): it keeps
	// it, nothing is elided twice.
	var again map[string]bool
	if len(staleBy) > 0 && len(x.batches) > 0 {
		again = fetchedBack(msgs[:edit], calls, x.batches)
	}
	var back map[string]bool // results given whole, never line references
	if len(x.batches) > 0 {
		back = fetchedBack(msgs, calls, x.batches)
	}
	var origs map[string]string // call id → its result as the client sent it
	if len(old) > 0 {
		origs = make(map[string]string)
		for i := range x.norm[:min(edit, len(x.norm))] {
			for j := range x.norm[i].Parts {
				p := &x.norm[i].Parts[j]
				if _, ok := old[p.ID]; ok && p.Kind == history.ToolResult {
					if t, ok := resultText(p); ok {
						origs[p.ID] = t
					}
				}
			}
		}
	}
	// A result's form is the one it got at the first batch that could
	// edit it, and its marker's words (an elision's age included) are
	// those of that batch: a line already sent never changes.
	var first firstBatch
	if len(old) > 0 || len(staleBy) > 0 {
		first = newFirstBatch(msgs[:edit], x.batches, edit, rw.opt.EditAge)
	}
	var edits []Edit
	seen := make(map[uint64][]string) // content hash → first call ids showing it
	texts := make(map[string]string)  // call id → its text
	// The texts shown, by call id, for line references naming the call
	// as a repeat does.
	lines := dedup.Lines{Name: func(id string) string { return refName(calls[id], id) }}
	out := mapResults(msgs, func(i int, p *history.Part) (history.Part, bool) {
		c := calls[p.ID]
		if rw.excluded(c.name) || p.IsError {
			return *p, false
		}
		text, ok := resultText(p)
		if !ok {
			return *p, false
		}
		age, isOld := old[p.ID]
		isOld = isOld && i < edit && len(text) >= rw.opt.EditBulky
		oldAt := 0 // the first batch that could elide it
		if isOld {
			oldAt, age = first.old(i)
		}
		if w, ok := staleBy[p.ID]; ok && i < edit && !again[p.ID] && (!isOld || first.stale(calls[w].msg) <= oldAt) {
			s := staleText(c, p.ID, calls[w], w)
			if len(s) < len(text) {
				edits = append(edits, Edit{Source: SourceStale, CallID: p.ID, Tool: c.name, Ref: w, Before: text, After: s, msg: i})
				return withText(*p, s), true
			}
		}
		if isOld {
			orig, ok := origs[p.ID]
			fetch := ""
			if ok && !readOnly(c) {
				fetch = rw.stash(x.scope, orig)
				ok = fetch != ""
			}
			if ok {
				if s := elidedText(c, p.ID, len(orig), age, fetch); len(s) < len(text) {
					edits = append(edits, Edit{Source: SourceElided, CallID: p.ID, Tool: c.name, Ref: fetch, Before: text, After: s, msg: i})
					return withText(*p, s), true
				}
			}
		}
		if rw.opt.NoRepeats || len(text) < rw.opt.MinRepeat {
			return *p, false
		}
		k := maphash.String(seed, text)
		for _, first := range seen[k] {
			if texts[first] != text {
				continue
			}
			if prof.NoRefs || prof.MaxRefs > 0 && refs >= prof.MaxRefs {
				return *p, false
			}
			s := repeatText(calls[first], first)
			if len(s) < len(text) {
				refs++
				edits = append(edits, Edit{Source: SourceRepeat, CallID: p.ID, Tool: c.name, Ref: first, Before: text, After: s, msg: i})
				return withText(*p, s), true
			}
			return *p, false
		}
		seen[k] = append(seen[k], p.ID)
		texts[p.ID] = text
		if prof.NoRefs || prof.MaxRefs > 0 && refs >= prof.MaxRefs {
			return *p, false
		}
		// Runs of lines an earlier result showed: line references.
		// A command's error and verdict lines and file:line findings stay in view.
		// (Asked only when a run is found.)
		outcome := -1
		keep := func(line string) bool {
			if outcome < 0 {
				outcome = 0
				if orig, ok := sentText(x.norm, i, p.ID); ok && shape.Outcome(orig, shape.Call{Tool: c.name, Input: []byte(c.args)}) {
					outcome = 1
				}
			}
			return outcome == 1 && shape.InView(line)
		}
		// What the agent fetched back stays whole: a chunk, a result as
		// an earlier one of the same call a batch may have left out.
		if back[p.ID] || fetchesChunk(c.name, c.args) {
			lines.Add(p.ID, text)
			return *p, false
		}
		// Lines are counted in a result's text before its own line
		// references (it gets that text back when one it names is
		// trimmed: finish).
		s, n := lines.Refer(text, keep)
		lines.Add(p.ID, text)
		if n > 0 && len(s) < len(text) {
			refs++
			named := referredCalls(s)
			edits = append(edits, Edit{Source: SourceRepeat, CallID: p.ID, Tool: c.name, Ref: named[0], Before: text, After: s, msg: i, refs: named})
			return withText(*p, s), true
		}
		return *p, false
	})
	if len(applied) > 0 {
		out = mapParts(out, history.ToolCall, func(i int, p *history.Part) (history.Part, bool) {
			c := calls[p.ID]
			if !applied[p.ID] || i >= edit || rw.excluded(c.name) {
				return *p, false
			}
			args, ok := appliedArgs(c, p.ID, p.Args)
			if !ok {
				return *p, false
			}
			edits = append(edits, Edit{Source: SourceApplied, CallID: p.ID, Tool: c.name, Before: p.Args, After: args, msg: i})
			q := *p
			q.Args = args
			return q, true
		})
	}
	return out, edits
}

// referredCalls lists the calls the line references of text name, in
// order (a name is the call id, then its label).
func referredCalls(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "> [ref: ") {
			continue
		}
		if v, err := inband.Parse(l); err == nil {
			if r, ok := v.(inband.RefLines); ok {
				if id, _, _ := strings.Cut(r.ID, " ("); !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
		}
	}
	return out
}

// sentText is the text of the result of call id in message i as the
// client sent it.
func sentText(norm []history.Message, i int, id string) (string, bool) {
	if i >= len(norm) {
		return "", false
	}
	for j := range norm[i].Parts {
		if p := &norm[i].Parts[j]; p.Kind == history.ToolResult && p.ID == id {
			return resultText(p)
		}
	}
	return "", false
}

// firstBatch finds, for a message before the edit boundary, the first
// batch boundary (of the batches made so far and the boundary edit)
// that could edit it.
type firstBatch struct {
	bounds []int // the batch boundaries up to edit, in order, edit last
	asst   []int // assistant messages before each index (asst[i]: in msgs[:i])
	age    int   // Options.EditAge
}

func newFirstBatch(msgs []history.Message, batches []int, edit, age int) firstBatch {
	f := firstBatch{age: age, asst: make([]int, len(msgs)+1)}
	for i := range msgs {
		f.asst[i+1] = f.asst[i]
		if msgs[i].Role == history.RoleAssistant {
			f.asst[i+1]++
		}
	}
	for _, b := range batches {
		if b < edit {
			f.bounds = append(f.bounds, b)
		}
	}
	f.bounds = append(f.bounds, edit)
	return f
}

// old returns the first boundary at which the result in message at is
// old enough to elide, and its age there (in requests).
func (f firstBatch) old(at int) (bound, age int) {
	for _, b := range f.bounds {
		if b <= at || b >= len(f.asst) {
			continue
		}
		if a := f.asst[b] - f.asst[at+1]; a >= f.age {
			return b, a
		}
	}
	b := f.bounds[len(f.bounds)-1]
	return b, f.asst[min(b, len(f.asst)-1)] - f.asst[min(at+1, len(f.asst)-1)]
}

// stale returns the first boundary after the writing call in message w.
func (f firstBatch) stale(w int) int {
	for _, b := range f.bounds {
		if b > w {
			return b
		}
	}
	return f.bounds[len(f.bounds)-1]
}

// readTools name the file-reading tools of the usual agents (lower
// case); the writing ones are toolname.WritesFiles.
var readTools = map[string]bool{"read": true, "read_file": true, "readfile": true, "view": true, "view_file": true, "cat": true, "open_file": true}

// payloadFields are the input fields of write calls that hold what was
// written or replaced (Claude Code's Write, Edit, MultiEdit and
// NotebookEdit, and the usual editor tools'); every other field (the
// file's path first) is kept.
var payloadFields = map[string]bool{"content": true, "old_string": true, "new_string": true, "new_source": true,
	"file_text": true, "old_str": true, "new_str": true}

// appliedArgs is a write call's input with each payload field longer
// than its marker replaced by appliedText (in MultiEdit's edits array
// too); ok is false when nothing changes. The input stays a JSON object
// with the same keys, as the providers require of a tool call's input.
func appliedArgs(c call, id, args string) (string, bool) {
	v, err := tree.ParseString(args)
	if err != nil || v.Kind() != tree.KindObject {
		return args, false
	}
	changed := false
	var edit func(v tree.Value, depth int) tree.Value
	edit = func(v tree.Value, depth int) tree.Value {
		switch v.Kind() {
		case tree.KindObject:
			mems := v.Members()
			var out []tree.Member
			for i, m := range mems {
				nv := m.Value
				switch {
				case m.Value.Kind() == tree.KindString && payloadFields[m.Key]:
					if s := appliedText(c, id, m.Key, len(m.Value.Str())); len(s) < len(m.Value.Str()) {
						nv = tree.String(s)
					}
				case depth == 0 && m.Key == "edits" && m.Value.Kind() == tree.KindArray:
					items := m.Value.Items()
					ni := make([]tree.Value, len(items))
					for j, it := range items {
						ni[j] = edit(it, depth+1)
					}
					nv = tree.Array(ni...)
				}
				if out == nil && !tree.Equal(nv, m.Value) {
					out = append(make([]tree.Member, 0, len(mems)), mems[:i]...)
				}
				if out != nil {
					out = append(out, tree.Member{Key: m.Key, Value: nv})
				}
			}
			if out == nil {
				return v
			}
			changed = true
			return tree.Object(out...)
		}
		return v
	}
	nv := edit(v, 0)
	if !changed {
		return args, false
	}
	return string(tree.AppendJSON(nil, nv)), true
}

// oldCalls finds, in msgs (the messages before the edit boundary), the
// results old enough to elide (older than Options.EditAge requests: the
// assistant messages after them; a call repeating an earlier one's name
// and arguments, or fetching a chunk, is left out: the agent may have
// fetched back what an elision left out) and the write calls whose
// payloads are applied (as old, with a result that is not an error).
func (rw *Rewriter) oldCalls(msgs []history.Message, calls map[string]call) (old map[string]int, applied map[string]bool) {
	ages := make([]int, len(msgs)) // assistant messages after each message
	n := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		ages[i] = n
		if msgs[i].Role == history.RoleAssistant {
			n++
		}
	}
	if n <= rw.opt.EditAge {
		return nil, nil
	}
	type res struct {
		at     int
		failed bool
	}
	results := make(map[string]res)
	for i := range msgs {
		for _, p := range msgs[i].Parts {
			if p.Kind == history.ToolResult {
				results[p.ID] = res{i, p.IsError}
			}
		}
	}
	made := make(map[string]bool) // name and arguments of the calls made
	for i := range msgs {
		for _, p := range msgs[i].Parts {
			if p.Kind != history.ToolCall {
				continue
			}
			k := p.Name + "\x00" + p.Args
			again := made[k]
			made[k] = true
			r, ok := results[p.ID]
			if !ok || ages[r.at] < rw.opt.EditAge {
				continue
			}
			if !again && !fetchesChunk(p.Name, p.Args) {
				if old == nil {
					old = make(map[string]int)
				}
				old[p.ID] = ages[r.at]
			}
			if toolname.WritesFiles(p.Name) && !r.failed {
				if applied == nil {
					applied = make(map[string]bool)
				}
				applied[p.ID] = true
			}
		}
	}
	return old, applied
}

// fetchedBack finds the results in msgs identical to an earlier result
// of a call with the same name and arguments, called after a batch (one
// of batches, the boundaries of the batches made) that came after that
// earlier result: the agent may have been shown it elided.
func fetchedBack(msgs []history.Message, calls map[string]call, batches []int) map[string]bool {
	var out map[string]bool
	type shown struct {
		text string
		at   int
	}
	seen := make(map[string][]shown) // name and arguments → their results
	for i := range msgs {
		for j := range msgs[i].Parts {
			p := &msgs[i].Parts[j]
			if p.Kind != history.ToolResult {
				continue
			}
			text, ok := resultText(p)
			if !ok {
				continue
			}
			c := calls[p.ID]
			k := c.name + "\x00" + c.args
			for _, r := range seen[k] {
				if r.text != text {
					continue
				}
				// A batch after the earlier result, before this call.
				b, _ := slices.BinarySearch(batches, r.at+1)
				if b < len(batches) && batches[b] <= c.msg {
					if out == nil {
						out = make(map[string]bool)
					}
					out[p.ID] = true
					break
				}
			}
			seen[k] = append(seen[k], shown{text, i})
		}
	}
	return out
}

// fetchesChunk reports whether a call fetches a stored chunk (terse
// chunk from a shell, an MCP chunk tool).
func fetchesChunk(name, args string) bool {
	return strings.Contains(args, "terse chunk") || telemetry.ClassOf(name) == "chunk"
}

// filePaths returns the files a call reads or writes.
func filePaths(c call) []string {
	v, err := tree.ParseString(c.args)
	if err != nil {
		return nil
	}
	var out []string
	for _, k := range []string{"file_path", "notebook_path", "path", "filename", "file"} {
		if x, ok := v.Get(k); ok && x.Kind() == tree.KindString && x.Str() != "" {
			out = append(out, x.Str())
			break
		}
	}
	if strings.EqualFold(c.name, "apply_patch") {
		patch := ""
		for _, k := range []string{"input", "patch"} {
			if x, ok := v.Get(k); ok {
				patch = x.Str()
			}
		}
		for _, line := range strings.Split(patch, "\n") {
			for _, pre := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: "} {
				if rest, ok := strings.CutPrefix(line, pre); ok {
					out = append(out, strings.TrimSpace(rest))
				}
			}
		}
	}
	return out
}

// staleReads maps each read call in msgs whose file a later call in msgs
// writes (and did not fail) to the first such writing call.
func staleReads(msgs []history.Message, calls map[string]call) map[string]string {
	type rd struct {
		id   string
		path string
	}
	failed := make(map[string]bool) // calls whose result is an error: they changed nothing
	for i := range msgs {
		for _, p := range msgs[i].Parts {
			if p.Kind == history.ToolResult && p.IsError {
				failed[p.ID] = true
			}
		}
	}
	var open []rd
	var out map[string]string
	for i := range msgs {
		for _, p := range msgs[i].Parts {
			if p.Kind != history.ToolCall {
				continue
			}
			name := strings.ToLower(p.Name)
			switch {
			case readTools[name]:
				for _, f := range filePaths(calls[p.ID]) {
					open = append(open, rd{p.ID, f})
				}
			case toolname.WritesFiles(name) && !failed[p.ID]:
				for _, f := range filePaths(calls[p.ID]) {
					kept := open[:0]
					for _, r := range open {
						if r.path == f {
							if out == nil {
								out = make(map[string]string)
							}
							out[r.id] = p.ID
							continue
						}
						kept = append(kept, r)
					}
					open = kept
				}
			}
		}
	}
	return out
}

// finish completes a trimmed conversation: a repeat whose original was
// trimmed or dropped gets its text back (this happens only when the
// boundary moves), and edits of results no longer shown are forgotten.
func finish(out, edited, base []history.Message, calls map[string]call, edits []Edit) ([]history.Message, []Edit) {
	if len(edits) == 0 {
		return out, edits
	}
	shown := make(map[string]bool) // call id → result shown in full (not trimmed)
	for i := range out {
		for j := range out[i].Parts {
			p := &out[i].Parts[j]
			if p.Kind == history.ToolResult {
				t, _ := resultText(p)
				shown[p.ID] = !isTrimmedText(t, calls[p.ID], p.ID)
			}
		}
	}
	restore := make(map[string]bool)
	kept := edits[:0]
	for _, e := range edits {
		if !shown[e.CallID] {
			continue // trimmed or dropped: history's saving
		}
		if e.Source == SourceRepeat {
			gone := !shown[e.Ref]
			for _, id := range e.refs {
				gone = gone || !shown[id]
			}
			if gone {
				restore[e.CallID] = true
				continue
			}
		}
		kept = append(kept, e)
	}
	if len(restore) == 0 {
		return out, kept
	}
	orig := make(map[string]history.Part)
	for i := range base {
		for _, p := range base[i].Parts {
			if p.Kind == history.ToolResult && restore[p.ID] {
				orig[p.ID] = p
			}
		}
	}
	out = mapResults(out, func(_ int, p *history.Part) (history.Part, bool) {
		if restore[p.ID] {
			return orig[p.ID], true
		}
		return *p, false
	})
	return out, kept
}
