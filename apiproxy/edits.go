package apiproxy

import (
	"fmt"
	"hash/maphash"
	"sort"
	"strings"

	"github.com/terse-dev/terse/history"
	"github.com/terse-dev/terse/hook"
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
	args, _ := tree.ParseString(c.args)
	return hook.RefHint(c.name, hook.Ref{ID: id, Input: args})
}

// staleText stands for a read that the write w superseded.
func staleText(r call, rid string, w call, wid string) string {
	return "> [stale: result of " + describe(r, rid) + " left out; " + describe(w, wid) +
		" changed the file since; read it again for its current content]"
}

// trimmedText stands for a result whose content history trimming left
// out, with the way back its call's kind allows: a read-only call can be
// made again; any other is never suggested again (that would repeat its
// side effects), and its result is declared not recoverable.
func trimmedText(c call, id string) string {
	args, _ := tree.ParseString(c.args)
	if readOnlyArgs(c, args, true) {
		return trimmedPrefix + describeArgs(c, id, args) + "; call it again to see it]"
	}
	return trimmedPrefix + describeArgs(c, id, args) + "; not recoverable: the call may have side effects, do not repeat it]"
}

// trimmedPrefix starts every trimmedText.
const trimmedPrefix = "> [trimmed: result of "

// isTrimmedText reports whether text is trimmedText(c, id), cheaply when
// it is not.
func isTrimmedText(text string, c call, id string) bool {
	return strings.HasPrefix(text, trimmedPrefix) && text == trimmedText(c, id)
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
	var b strings.Builder
	fmt.Fprintf(&b, "> [trimmed: %d earlier tool calls and their results left out (", n)
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		if i == 6 {
			fmt.Fprintf(&b, "…")
			break
		}
		fmt.Fprintf(&b, "%s ×%d", name, counts[name])
	}
	if writes == 0 {
		b.WriteString("); call a tool again to see its result]")
	} else {
		b.WriteString("); calls that only read can be made again, the others' results are not recoverable]")
	}
	return b.String()
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
	return "> [the result of " + describe(c, id) + " follows, as sent]"
}

// declare replaces stale reads before message index stale, and repeats
// (as many as prof allows, the first ones: the count starts from the
// conversation's first message on every request, so a repeat's fate
// changes only when stale reads are declared, which changes the prefix
// anyway).
func (rw *Rewriter) declare(msgs []history.Message, calls map[string]call, stale int, prof *Profile) ([]history.Message, []Edit) {
	refs := 0
	var staleBy map[string]string // read call id → writing call id
	if !rw.opt.NoStale && stale > 0 {
		staleBy = staleReads(msgs[:stale], calls)
	}
	var edits []Edit
	seen := make(map[uint64][]string) // content hash → first call ids showing it
	texts := make(map[string]string)  // call id → its text
	out := mapResults(msgs, func(i int, p *history.Part) (history.Part, bool) {
		c := calls[p.ID]
		if rw.excluded(c.name) || p.IsError {
			return *p, false
		}
		text, ok := resultText(p)
		if !ok {
			return *p, false
		}
		if w, ok := staleBy[p.ID]; ok && i < stale {
			s := staleText(c, p.ID, calls[w], w)
			if len(s) < len(text) {
				edits = append(edits, Edit{Source: SourceStale, CallID: p.ID, Tool: c.name, Ref: w, Before: text, After: s})
				return withText(*p, s), true
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
				edits = append(edits, Edit{Source: SourceRepeat, CallID: p.ID, Tool: c.name, Ref: first, Before: text, After: s})
				return withText(*p, s), true
			}
			return *p, false
		}
		seen[k] = append(seen[k], p.ID)
		texts[p.ID] = text
		return *p, false
	})
	return out, edits
}

// readTools name the file-reading tools of the usual agents (lower
// case); the writing ones are toolname.WritesFiles.
var readTools = map[string]bool{"read": true, "read_file": true, "readfile": true, "view": true, "view_file": true, "cat": true, "open_file": true}

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
			if !shown[e.Ref] {
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
