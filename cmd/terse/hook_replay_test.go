package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/hook"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/internal/corpus"
	"github.com/terse-dev/terse/render"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/tree"
)

// replayRow is one tool's (or the total's) figures in the replay.
type replayRow struct {
	calls, outputs, refs, elided    int
	lineRefs                        int // results with line references
	encoded, tables                 int
	lossless, display               int // shaped text results (package shape)
	before, after                   int // o200k tokens the model reads
	costBefore, costAfter           float64
	reconstructed, failed, untested int
}

func (r *replayRow) add(o replayRow) {
	r.calls += o.calls
	r.outputs += o.outputs
	r.refs += o.refs
	r.lineRefs += o.lineRefs
	r.elided += o.elided
	r.encoded += o.encoded
	r.tables += o.tables
	r.lossless += o.lossless
	r.display += o.display
	r.before += o.before
	r.after += o.after
	r.costBefore += o.costBefore
	r.costAfter += o.costAfter
	r.reconstructed += o.reconstructed
	r.failed += o.failed
}

// TestHookReplay replays every tool call of the Claude Code transcripts of
// the shared corpus (agent-sessions/claude and claude-long) through the
// hook: the event is built as Claude Code builds it (the tool's input and
// its toolUseResult as tool_response, the transcript up to that point),
// handled by the same code as "terse hook claude-code", and every
// replacement is checked: a reference names an earlier call whose result
// has the same texts and is still in context (after the last compaction
// boundary), line references resolve, with the text the transcript
// shows for the result each names (in the same context), to one of the
// rest, an elision names chunks that give the original back, a
// lossless text shaping expands to the original byte for byte ("terse
// expand"), a display shaping to the original's terminal view, and any
// other change decodes back to the original (JSON encodings, Markdown
// tables as CSV). Anything else fails the test. The table (run with -v,
// or scripts/hook-replay.sh) gives, per tool and in total, the o200k
// tokens before and after, the outputs produced, and the modeled session
// cost: each result written to the prompt cache once (1.25×) and read
// back by every later request of the session (0.1× each).
//
// Calls that failed (is_error) are not replayed: Claude Code sends them
// to PostToolUseFailure, not PostToolUse. A sub-agent transcript that
// records no toolUseResult gets one rebuilt from the text shown (Bash
// stdout, Glob and Grep lines); those calls are counted as rebuilt.
func TestHookReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 1,000+ calls; not with -short")
	}
	shared := corpus.Shared()
	if shared == "" {
		t.Skip("shared corpus not found")
	}
	var files []string
	for _, d := range []string{"claude", "claude-long"} {
		fs, _ := filepath.Glob(filepath.Join(shared, "corpus", "agent-sessions", d, "*.jsonl"))
		files = append(files, fs...)
	}
	if len(files) == 0 {
		t.Skip("no Claude Code transcripts in the corpus")
	}
	c := tokens.O200kBase()
	storeDir := t.TempDir()
	rows := map[string]*replayRow{}
	var total replayRow
	cfg := config.Default()
	dirs := map[string]*replayRow{}
	var dirNames []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		one := map[string]*replayRow{}
		replayFile(t, f, data, cfg, storeDir, c, one)
		d := filepath.Base(filepath.Dir(f)) + "/"
		if dirs[d] == nil {
			dirs[d] = &replayRow{}
			dirNames = append(dirNames, d)
		}
		for k, r := range one {
			if rows[k] == nil {
				rows[k] = &replayRow{}
			}
			rows[k].add(*r)
			dirs[d].add(*r)
		}
	}
	var names []string
	for k, r := range rows {
		names = append(names, k)
		total.add(*r)
	}
	slices.Sort(names)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tcalls\trebuilt\toutputs\trefs\tline refs\telided\tlossless\tdisplay\tjson\ttables\ttokens before\tafter\tsaved\tcost before\tafter\t")
	line := func(name string, r replayRow) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f%%\t%.0f\t%.0f\t\n", name, r.calls, r.reconstructed, r.outputs, r.refs, r.lineRefs, r.elided, r.lossless, r.display, r.encoded, r.tables,
			r.before, r.after, replayPct(r.before-r.after, r.before), r.costBefore, r.costAfter)
	}
	for _, n := range names {
		line(n, *rows[n])
	}
	for _, d := range dirNames {
		line("total "+d, *dirs[d])
	}
	line("total", total)
	tw.Flush()
	t.Logf("hook replay of %d transcripts (o200k_base tokens; cost in token-equivalents, cache write 1.25×, read 0.1×):\n%s", len(files), b.String())
	if out := os.Getenv("TERSE_REPLAY_OUT"); out != "" {
		os.WriteFile(out, []byte(b.String()), 0o644)
	}
	if total.failed > 0 {
		t.Errorf("%d replacements could not be shown to give the original back", total.failed)
	}
}

func replayPct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// replayFile replays one transcript.
func replayFile(t *testing.T, name string, data []byte, cfg *config.Config, storeDir string, c tokens.Counter, rows map[string]*replayRow) {
	type call struct {
		name  string
		input tree.Value
	}
	calls := map[string]call{}
	// offsets[i] is where line i starts; requests after a line are the
	// distinct assistant message ids that follow it.
	var lines [][]byte
	var offsets []int
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data) - off
		}
		lines = append(lines, data[off:off+end])
		offsets = append(offsets, off)
		off += end + 1
	}
	// laterRequests[i]: assistant requests after line i.
	laterRequests := make([]int, len(lines)+1)
	seen := map[string]bool{}
	for i := len(lines) - 1; i >= 0; i-- {
		laterRequests[i] = laterRequests[i+1]
		v, err := tree.Parse(lines[i])
		if err != nil {
			continue
		}
		if typ, _ := v.Get("type"); typ.Str() != "assistant" {
			continue
		}
		msg, _ := v.Get("message")
		id, _ := msg.Get("id")
		if !seen[id.Str()] {
			seen[id.Str()] = true
			laterRequests[i]++
		}
	}
	// The requests after a line, until the next compaction boundary: a
	// result is read from the cache only until then.
	for i, l := range lines {
		v, err := tree.Parse(l)
		if err != nil {
			continue
		}
		sid, _ := v.Get("sessionId")
		agent, _ := v.Get("agentId")
		cwd, _ := v.Get("cwd")
		msg, _ := v.Get("message")
		content, _ := msg.Get("content")
		out, hasOut := v.Get("toolUseResult")
		for _, b := range content.Items() {
			typ, _ := b.Get("type")
			switch typ.Str() {
			case "tool_use":
				id, _ := b.Get("id")
				n, _ := b.Get("name")
				in, _ := b.Get("input")
				calls[id.Str()] = call{n.Str(), in}
			case "tool_result":
				if e, _ := b.Get("is_error"); e.Bool() {
					continue
				}
				id, _ := b.Get("tool_use_id")
				cl, ok := calls[id.Str()]
				if !ok {
					continue
				}
				r := rows[cl.name]
				if r == nil {
					r = &replayRow{}
					rows[cl.name] = r
				}
				resp, rebuilt := out, false
				if !hasOut {
					resp, rebuilt = rebuild(cl.name, b)
				}
				ev := &hook.Event{SessionID: sid.Str(), Cwd: cwd.Str(), ToolName: cl.name, ToolUseID: id.Str(), AgentID: agent.Str(),
					ToolInput: cl.input, ToolInputJSON: cl.input.String(), ToolResponse: resp}
				tr := hook.ParseTranscript(data[:offsets[i]])
				one := replayCall(t, name, ev, tr, cfg, storeDir, c, visibleOf(b))
				if rebuilt {
					one.reconstructed = 1
				}
				reads := float64(laterRequests[i+1])
				if tr2 := hook.ParseTranscript(data[offsets[i]:]); tr2.Compactions > 0 {
					reads = float64(requestsBeforeBoundary(lines[i+1:]))
				}
				one.costBefore = float64(one.before) * (1.25 + 0.1*reads)
				one.costAfter = float64(one.after) * (1.25 + 0.1*reads)
				r.add(one)
			}
		}
	}
}

// requestsBeforeBoundary counts the assistant requests in lines before
// the first compaction boundary.
func requestsBeforeBoundary(lines [][]byte) int {
	seen := map[string]bool{}
	for _, l := range lines {
		v, err := tree.Parse(l)
		if err != nil {
			continue
		}
		typ, _ := v.Get("type")
		if sub, _ := v.Get("subtype"); typ.Str() == "system" && sub.Str() == "compact_boundary" {
			break
		}
		if typ.Str() == "assistant" {
			msg, _ := v.Get("message")
			id, _ := msg.Get("id")
			seen[id.Str()] = true
		}
	}
	return len(seen)
}

func visibleOf(b tree.Value) string {
	c, _ := b.Get("content")
	if c.Kind() == tree.KindString {
		return c.Str()
	}
	var parts []string
	for _, it := range c.Items() {
		if t, _ := it.Get("text"); t.Kind() == tree.KindString {
			parts = append(parts, t.Str())
		}
	}
	return strings.Join(parts, "\n")
}

// rebuild makes a tool_response from the text a sub-agent transcript
// shows, for the tools whose shape follows from it.
func rebuild(tool string, b tree.Value) (tree.Value, bool) {
	text := visibleOf(b)
	str := func(s string) tree.Value { return tree.String(s) }
	lines := func(s string) tree.Value {
		var items []tree.Value
		for _, l := range strings.Split(s, "\n") {
			if l != "" {
				items = append(items, str(l))
			}
		}
		return tree.Array(items...)
	}
	switch tool {
	case "Bash":
		return tree.Object(tree.Member{Key: "stdout", Value: str(text)}, tree.Member{Key: "stderr", Value: str("")},
			tree.Member{Key: "interrupted", Value: tree.Bool(false)}, tree.Member{Key: "isImage", Value: tree.Bool(false)}), true
	case "Glob":
		if text == "No files found" {
			text = ""
		}
		return tree.Object(tree.Member{Key: "filenames", Value: lines(text)}), true
	case "Grep":
		return tree.Object(tree.Member{Key: "mode", Value: str("content")}, tree.Member{Key: "content", Value: str(text)}), true
	}
	if strings.HasPrefix(tool, "mcp__") {
		return tree.Array(tree.Object(tree.Member{Key: "type", Value: str("text")}, tree.Member{Key: "text", Value: str(text)})), true
	}
	// Other tools: the text as the output (no slots: left alone).
	return tree.Object(tree.Member{Key: "text", Value: str(text)}), true
}

// chunkHandle returns the handle of the fetch call a note of text names:
// an elided text's header, an overflow hint or a chunk index's foot.
func chunkHandle(text string) (string, bool) {
	for line := range strings.Lines(text) {
		v, err := inband.Parse(strings.TrimSuffix(line, "\n"))
		if err != nil {
			continue
		}
		var call string
		switch x := v.(type) {
		case inband.ElidedRuns:
			call = x.Call
		case inband.Overflow:
			call = x.Call
		case inband.IndexFoot:
			call = x.Call
		}
		// "terse chunk [--flag value]… HANDLE N"
		if f := strings.Fields(call); len(f) >= 2 && strings.HasPrefix(f[len(f)-2], "c_") {
			return f[len(f)-2], true
		}
	}
	return "", false
}

// replayCall runs one event through the hook and checks its output.
func replayCall(t *testing.T, file string, ev *hook.Event, tr *hook.Transcript, cfg *config.Config, storeDir string, c tokens.Counter, visible string) replayRow {
	r := replayRow{calls: 1}
	slots := hook.Slots(ev.ToolName, ev.ToolResponse)
	if len(slots) == 0 {
		n := c.Count(visible)
		r.before, r.after = n, n
		return r
	}
	// The baseline is what the model read (the result as Claude Code
	// showed it); a replacement changes it by what it changes the fields.
	shown := c.Count(visible)
	r.before, r.after = shown, shown
	h := &hookRunner{storeDir: storeDir, transcript: tr}
	out, _, err := h.handle(context.Background(), cfg, ev)
	if err != nil {
		t.Errorf("%s: %s %s: %v", filepath.Base(file), ev.ToolName, ev.ToolUseID, err)
		r.failed++
		return r
	}
	if out == nil {
		return r
	}
	r.outputs = 1
	reply, err := tree.Parse(out)
	if err != nil {
		t.Fatalf("reply is not JSON: %v", err)
	}
	hso, _ := reply.Get("hookSpecificOutput")
	upd, _ := hso.Get("updatedToolOutput")
	texts := slotTexts(ev.ToolName, upd, slots)
	for i, s := range slots {
		nt := texts[i]
		r.after += c.Count(nt) - c.Count(s.Text)
		if nt == s.Text {
			continue
		}
		ok, why := declared(ev, tr, slots, texts, i, storeDir)
		if ok {
			if w, found := strings.CutSuffix(why, "+lines"); found {
				r.lineRefs, why = 1, w
			}
		}
		if !ok {
			t.Errorf("%s: %s %s: field %s changed without a declaration: %s", filepath.Base(file), ev.ToolName, ev.ToolUseID, s.Name, why)
			r.failed++
		} else if why == "ref" {
			r.refs = 1
		} else if why == "elided" {
			r.elided = 1
		} else if why == "encoded" {
			r.encoded = 1
		} else if why == "csv_from_md" {
			r.tables = 1
		} else if why == "lossless" {
			r.lossless = 1
		} else if why == "display" {
			r.display = 1
		}
	}
	return r
}

// slotTexts reads the new text of each slot from the updated output.
func slotTexts(tool string, upd tree.Value, slots []hook.Slot) []string {
	out := make([]string, len(slots))
	if hook.IsMCP(tool) {
		blocks := upd.Items()
		if upd.Kind() == tree.KindObject {
			cv, _ := upd.Get("content")
			blocks = cv.Items()
		}
		k := 0
		for _, b := range blocks {
			if typ, _ := b.Get("type"); typ.Str() != "text" {
				continue
			}
			if k < len(out) {
				tv, _ := b.Get("text")
				out[k] = tv.Str()
			}
			k++
		}
		return out
	}
	for i, s := range slots {
		v, _ := upd.Get(s.Name)
		if s.Lines {
			var parts []string
			for _, it := range v.Items() {
				parts = append(parts, it.Str())
			}
			out[i] = strings.Join(parts, "\n")
		} else {
			out[i] = v.Str()
		}
	}
	return out
}

// declared reports whether slot i's new text nt is a declared change of
// its original: a reference to a result still in context with the same
// texts, an elision whose chunks give the original back, a lossless text
// shaping that expands to it (a display shaping: to its terminal view),
// or an encoding that decodes to it.
//
// Line references are resolved first, with the text the transcript shows
// for the result each names, which must be in the current call's
// context; what they give back must then be one of the above, or the
// original ("+lines" is added to the reason).
func declared(ev *hook.Event, tr *hook.Transcript, slots []hook.Slot, newTexts []string, i int, storeDir string) (bool, string) {
	orig, nt := slots[i].Text, newTexts[i]
	if lineRefRE.MatchString(nt) {
		shown := shownByName(tr.Text())
		back, err := dedup.ResolveLines(nt, func(name string) (string, bool) {
			s, ok := shown[name]
			return s.text, ok && s.agent == ev.AgentID
		})
		if err != nil {
			return false, "line references: " + err.Error()
		}
		if back == orig {
			return true, "text+lines"
		}
		texts := append([]string(nil), newTexts...)
		texts[i] = back
		ok, why := declared(ev, tr, slots, texts, i, storeDir)
		return ok, why + "+lines"
	}
	if strings.HasPrefix(nt, "> [ref: ") {
		texts := make([]string, len(slots))
		for k := range slots {
			texts[k] = slots[k].Text
		}
		ref, ok := tr.Find(ev.ToolName, ev.AgentID, ev.ToolUseID, texts)
		if !ok || nt != hook.RefHint(ev.ToolName, ref) {
			return false, "reference not to a result in context: " + nt
		}
		if !sameResult(tr, ref.ID, texts) {
			return false, "the result of " + ref.ID + " differs"
		}
		return true, "ref"
	}
	if i > 0 && nt == "" && strings.HasPrefix(newTexts[0], "> [ref: ") {
		return true, "ref" // the reference in the first field stands for the whole result
	}
	if handle, ok := chunkHandle(nt); ok {
		whole, err := fetchAll(handle, ev.SessionID, storeDir)
		if err != nil {
			return false, "chunks: " + err.Error()
		}
		if whole != orig && whole != strings.TrimSuffix(orig, "\n") {
			return false, fmt.Sprintf("chunks give %d bytes back, not the %d of the original", len(whole), len(orig))
		}
		return true, "elided"
	}
	if back, class, err := shape.ExpandClass(nt); err == nil {
		switch {
		case class == shape.Lossless && back == orig:
			return true, "lossless"
		case class == shape.Display && back == shape.TerminalView(orig):
			return true, "display"
		}
		return false, "a shaping that does not expand to the original"
	}
	if docs, err := terse.DecodeJSONDocuments(nt); err == nil {
		if sameJSONDocs(docs, orig) {
			return true, "encoded"
		}
		return false, "JSON documents that do not decode to the original's"
	}
	if v, err := render.Decode(nt); err == nil {
		if ov, err := tree.ParseString(orig); err == nil && tree.Equal(v, ov) {
			return true, "encoded"
		}
	}
	if md, err := render.DecodeMarkdown(nt); err == nil && render.EqualMarkdown(md, orig) {
		return true, "csv_from_md"
	}
	return false, "not a reference, an elision or a lossless encoding"
}

// fetchAll joins the chunks of handle, fetched as "terse chunk" does.
func fetchAll(handle, session, storeDir string) (string, error) {
	st, err := configStore(storeDir, "", store.DefaultTTL, 0)
	if err != nil {
		return "", err
	}
	p, err := terse.New(&terse.Options{Store: st, Budget: 1 << 30})
	if err != nil {
		return "", err
	}
	var parts []string
	for n := 1; ; n++ {
		ch, err := p.Chunk(context.Background(), handle, n, &terse.Request{Scope: session})
		if _, ok := errors.AsType[*fit.ChunkRangeError](err); ok && n > 1 {
			break
		}
		if err != nil {
			return "", err
		}
		_, body, _ := strings.Cut(ch.Text, "\n")
		parts = append(parts, body)
	}
	return strings.Join(parts, "\n"), nil
}

// sameResult checks, apart from Find, that the transcript holds a result
// of call id whose tool output has texts in its slots, after the last
// compaction boundary.
func sameResult(tr *hook.Transcript, id string, texts []string) bool {
	for _, line := range strings.Split(tr.Text(), "\n") {
		if !strings.Contains(line, `"tool_use_id":"`+id+`"`) && !strings.Contains(line, `"tool_use_id": "`+id+`"`) {
			continue
		}
		v, err := tree.ParseString(line)
		if err != nil {
			continue
		}
		out, _ := v.Get("toolUseResult")
		msg, _ := v.Get("message")
		content, _ := msg.Get("content")
		for _, b := range content.Items() {
			if tid, _ := b.Get("tool_use_id"); tid.Str() != id {
				continue
			}
			for _, tool := range []string{"Bash", "BashOutput", "Grep", "Glob", "WebFetch", "mcp__x__y"} {
				got := hook.Slots(tool, out)
				if len(got) != len(texts) || len(got) == 0 {
					continue
				}
				same := true
				for k := range got {
					same = same && got[k].Text == texts[k]
				}
				if same {
					return true
				}
			}
		}
	}
	return false
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
