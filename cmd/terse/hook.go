package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/hook"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/meter"
	"github.com/terse-dev/terse/profile"
	"github.com/terse-dev/terse/shape"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/telemetry"
	"github.com/terse-dev/terse/tokens"
	"github.com/terse-dev/terse/toolname"
)

const hookDoc = `
Hook is an agent's tool-result hook: Claude Code runs it after every tool
call (PostToolUse) with the event JSON on standard input, and shows the
model what it prints instead of the tool's output. "terse setup
claude-code" installs it.

Each text field of the tool's output (Bash stdout and stderr, Grep content
and file names, Glob file names, WebFetch result, the text blocks of an
MCP tool) goes through the same pipeline as the proxies: text shaping,
the lossless encoding of JSON, the config's filters and templates by tool
name, and fitting to the budget (25,000 tokens, Claude Code's limit for a
tool result, unless the config says otherwise). What an elision leaves out
is stored (under the user cache directory) and named by the command that
prints it, "terse chunk --session ID HANDLE N", bound to the session. A
result byte-identical to an earlier one the model still has in context
(read from the session's transcript: after the last compaction, not
cleared, not replaced, not a path written since) becomes a reference to
that call, "> [ref: TOOL_USE_ID (TOOL \"ARGUMENT\"), byte-identical]"; in
other results (Bash stdout, Grep content, WebFetch result, MCP text), a
run of 4 lines or more repeating lines of one earlier result in context becomes
"> [ref: TOOL_USE_ID (TOOL \"ARGUMENT\"), lines 12–80 of its result,
byte-identical]", counted in the text the model was shown.
File reads (Read) are never changed: Claude Code numbers their lines after
the hook. Bash output over BASH_MAX_OUTPUT_LENGTH (30,000 characters by
default), which Claude Code keeps in a file and previews, is left alone.

The output keeps the tool's own output shape, with only text fields
replaced, and is printed only when the replacement is smaller, in tokens,
than the original. Otherwise, and on any error, an unknown event, an
unparseable payload or the --timeout, it prints nothing and exits 0: the
original output stands. Failures are logged, one line each, to the user
cache directory's terse/hook.log ($TERSE_HOOK_LOG names another file),
never to the agent's screen.

TERSE_DISABLE=1 turns the hook off. The config ($XDG_CONFIG_HOME/terse/
config.toml when it exists, or --config) selects tools with [proxy]
include_tools and exclude_tools (globs) and sets min_size_bytes; with
[telemetry] enabled, each call records one event (entry "hook"; numbers,
never content): "terse stats --entry hook" shows the savings by tool.

Examples:
  terse hook claude-code < event.json
  terse hook claude-code --config ~/.config/terse/config.toml
`

// hookTimeout is the hook's own time limit: well under Claude Code's
// (60 seconds by default), so that the original output stands when terse
// is slow.
const hookTimeout = 5 * time.Second

// maxHookEvent is the largest event read; a larger one is left alone.
const maxHookEvent = 256 << 20

// maxTranscript is how much of a transcript, from its end, is read to
// find earlier results still in context.
const maxTranscript = 64 << 20

func runHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("hook", "claude-code [--config FILE] [--timeout D]", hookDoc, stdout, stderr)
	cfgPath := fs.String("config", "", "terse config `file` (default: the user config directory's terse/config.toml, if any)")
	timeout := fs.Duration("timeout", hookTimeout, "give up after this `duration` and leave the output alone")
	lg := hookLog{path: hookLogPath()}
	if err := parseFlags(fs, args, stdout); err != nil {
		if errors.Is(err, errHelp) {
			return err
		}
		// A bad hook command line must not get in the agent's way.
		lg.printf("", "", "usage", err.Error())
		return nil
	}
	if os.Getenv("TERSE_DISABLE") == "1" {
		return nil
	}
	if fs.NArg() != 1 || fs.Arg(0) != "claude-code" {
		lg.printf("", "", "usage", "want: terse hook claude-code")
		return nil
	}
	type done struct {
		out       []byte
		tool      string
		err, warn error
	}
	ch := make(chan done, 1)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	go func() {
		// A transcript cut short while it is mapped faults: a panic, not
		// a crash (Claude Code shows the model a hook's exit status 2).
		debug.SetPanicOnFault(true)
		var d done
		defer func() {
			if r := recover(); r != nil {
				d.out, d.err = nil, fmt.Errorf("panic: %v", r)
			}
			ch <- d
		}()
		h := &hookRunner{cfgPath: *cfgPath}
		d.out, d.err = h.run(ctx, stdin)
		d.tool, d.warn = h.tool, h.warn
	}()
	select {
	case d := <-ch:
		if d.warn != nil {
			lg.printf("claude-code", d.tool, "error", d.warn.Error())
		}
		if d.err != nil {
			lg.printf("claude-code", d.tool, "error", d.err.Error())
			return nil
		}
		if d.out != nil {
			if _, err := stdout.Write(d.out); err != nil {
				lg.printf("claude-code", d.tool, "error", err.Error())
			}
		}
	case <-ctx.Done():
		lg.printf("claude-code", "", "timeout", "no output after "+timeout.String())
	}
	return nil
}

// hookRunner handles one hook event.
type hookRunner struct {
	cfgPath string
	tool    string // the event's tool, once known (for the log)
	// storeDir and transcript, when set, replace the store directory and
	// the transcript the event names (a replay of recorded sessions).
	storeDir   string
	transcript *hook.Transcript
	// warn is what went wrong without stopping the call (it is logged).
	warn error
}

// run reads the event and returns the hook's output, or nil for none.
func (h *hookRunner) run(ctx context.Context, stdin io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(stdin, maxHookEvent+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxHookEvent {
		return nil, fmt.Errorf("event over %d bytes, left alone", maxHookEvent)
	}
	if len(data) < hookGCMax {
		defer hookGC()()
	}
	limitMemory(len(data), true)
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	rec, err := openTelemetry(cfg)
	if err != nil {
		rec = nil // telemetry must not stop the hook
	}
	defer rec.Close()
	ev, err := hook.ParseEvent(data)
	if err != nil {
		if _, ok := errors.AsType[*hook.UnknownEventError](err); ok {
			return nil, nil // not a tool result: nothing to say
		}
		rec.Record(&telemetry.Event{Entry: telemetry.EntryHook, Err: "parse", Untouched: telemetry.UntouchedError, BytesIn: len(data)})
		return nil, err
	}
	h.tool = ev.ToolName
	start := time.Now()
	out, tev, err := h.handle(ctx, cfg, ev)
	tev.Latency = time.Since(start)
	tev.Entry, tev.Session, tev.Tool, tev.Sidechain = telemetry.EntryHook, ev.SessionID, ev.ToolName, ev.AgentID != ""
	if err != nil {
		tev.Err, tev.Untouched = "pipeline", telemetry.UntouchedError
	}
	rec.Record(&tev)
	return out, err
}

// config is the --config file, else the default file when it exists,
// else the built-in defaults.
func (h *hookRunner) config() (*config.Config, error) {
	p := h.cfgPath
	if p == "" {
		if d, err := os.UserConfigDir(); err == nil {
			if _, err := os.Stat(filepath.Join(d, "terse", "config.toml")); err == nil {
				p = filepath.Join(d, "terse", "config.toml")
			}
		}
	}
	if p == "" {
		return config.Default(), nil
	}
	h.cfgPath = p // the file a Redis store's fetch command names
	return config.Load(p)
}

// hookSelected reports whether the config lets the hook change tool's
// output ([proxy] include_tools and exclude_tools).
func hookSelected(cfg *config.Config, tool string) bool {
	if len(cfg.Proxy.IncludeTools) > 0 {
		return toolname.MatchAny(cfg.Proxy.IncludeTools, tool)
	}
	return !toolname.MatchAny(cfg.Proxy.ExcludeTools, tool)
}

// handle computes the hook output for ev (nil: none) and its telemetry
// event. Token figures are in tokens of the pipeline's counter; savings
// are against compact JSON of each field shaped (meter.Baseline), as on
// every surface; fields left alone count as sent.
func (h *hookRunner) handle(ctx context.Context, cfg *config.Config, ev *hook.Event) ([]byte, telemetry.Event, error) {
	var tev telemetry.Event
	if !hookSelected(cfg, ev.ToolName) {
		tev.Untouched = telemetry.UntouchedExcluded
		return nil, tev, nil
	}
	slots := hook.Slots(ev.ToolName, ev.ToolResponse)
	if len(slots) == 0 {
		tev.Untouched = telemetry.UntouchedExcluded
		return nil, tev, nil
	}
	size := 0
	for _, s := range slots {
		size += len(s.Text)
	}
	eff := profile.Resolve(cfg, profile.Context{ClientName: "claude-code", Tool: ev.ToolName})
	p, err := h.pipeline(cfg, &eff, ev)
	if err != nil {
		return nil, tev, err
	}
	c := p.Counter()
	tev.Tokenizer = c.Name()
	orig := make([]string, len(slots))
	for i, s := range slots {
		orig[i] = s.Text
		tev.BytesIn += len(s.Text)
	}
	tev.BytesOut = tev.BytesIn
	untouched := func(why string) ([]byte, telemetry.Event, error) {
		if cfg.Telemetry.Enabled {
			// Counted only for the telemetry event.
			n := 0
			for _, t := range orig {
				n += c.Count(t)
			}
			tev.TokensIn, tev.TokensOut = n, n
		}
		tev.Untouched = why
		return nil, tev, nil
	}
	if size < cfg.Proxy.MinSizeBytes {
		return untouched(telemetry.UntouchedTooSmall)
	}
	if (ev.ToolName == "Bash" || ev.ToolName == "BashOutput") && size > bashMaxOutput() {
		// Claude Code saves such an output to a file and shows the model a
		// preview and the file's path: a shaped text would replace the
		// saved original and be cut to the same preview.
		return untouched(telemetry.UntouchedTooLarge)
	}
	// The original fields are counted on the side while the pipeline
	// works (the hook is a process with a core to spare): their counts
	// are needed only to compare and report.
	origCounts := countAside(c, orig)
	texts := append([]string(nil), orig...)
	saved := meter.Saved{}
	tokExtra, bytesIn := 0, tev.BytesIn // the baseline's excess over the fields as sent: meter.Baseline per field shaped
	// References, whole or of lines, are the "ref" hint family: off for
	// the client or tool, results are shown as they are.
	var tr *hook.Transcript
	refs := eff.Hint(telemetry.HintNames[telemetry.HintRef]).Allowed
	if refs {
		var done func()
		tr, done = h.openTranscript(ev, size, &tev)
		defer done()
	}
	rest := telemetry.SrcEncoding // what no source claims of the saving
	if ref, ok := tr.Find(ev.ToolName, ev.AgentID, ev.ToolUseID, orig); ok {
		texts[0] = hook.RefHint(ev.ToolName, ref)
		for i := 1; i < len(texts); i++ {
			texts[i] = ""
		}
		tev.Dedup, tev.Format = telemetry.DedupHit, "hint"
		tev.Hints[telemetry.HintRef]++
		rest = telemetry.SrcDedup
	} else {
		req := &terse.Request{Tool: ev.ToolName, ToolInput: ev.ToolInputJSON, Scope: ev.SessionID, WorkDir: ev.Cwd,
			Hints: profile.Gate{E: &eff, C: new(profile.HintCounter)}}
		classes := make([]string, len(slots))
		if tokExtra, bytesIn, err = shapeSlots(ctx, p, req, slots, origCounts, texts, classes, &tev, saved, bytesIn); err != nil {
			return nil, tev, err
		}
		if err := referLines(tr, ev, slots, texts, classes, c, &tev, saved); err != nil {
			h.warn = err // the fields stay as shaped
		}
	}
	counts, err := origCounts()
	if err != nil {
		return nil, tev, err
	}
	if !settleHook(&tev, saved, c, counts, orig, texts, tokExtra, bytesIn, rest) {
		return nil, tev, nil
	}
	return hook.Reply(ev.ToolName, hook.Replace(ev.ToolName, ev.ToolResponse, slots, texts)), tev, nil
}

// shapeSlots runs each field through the pipeline and keeps, in texts,
// the shaped text of each that it makes smaller, and in classes its
// shaping's class (Report.ShapeClass), adding to tev and saved. It
// returns the baseline's excess over the fields as sent and
// the bytes in (the raw size of each field shaped).
func shapeSlots(ctx context.Context, p *terse.Pipeline, req *terse.Request, slots []hook.Slot, origCounts func() ([]int, error), texts, classes []string, tev *telemetry.Event, saved meter.Saved, bytesIn int) (int, int, error) {
	tokExtra := 0
	for i, s := range slots {
		res, err := p.ProcessString(ctx, s.Text, req)
		if err != nil {
			// JSON-looking text that is not JSON: text.
			if res, err = p.ProcessText(ctx, s.Text, req); err != nil {
				return 0, 0, err
			}
		}
		counts, err := origCounts()
		if err != nil {
			return 0, 0, err
		}
		n0, n1 := counts[i], res.Report.OutputTokens
		if tev.TextShape == "" {
			tev.TextShape = res.Report.Shape
		}
		if res.Text == s.Text || n1 >= n0 {
			continue // this field is kept as it is
		}
		texts[i] = res.Text
		r := &res.Report
		classes[i] = r.ShapeClass
		if r.ShapeClass != "" && tev.ShapeClass == "" {
			tev.TextShape, tev.ShapeClass = r.Shape, r.ShapeClass
		}
		if r.ShapeClass == "elide" {
			tev.Hints[telemetry.HintMore]++
		}
		// Against compact JSON of the field, as on every surface
		// (the text as sent only for a result larger than that).
		direct := meter.Baseline(r, func() int { return n0 })
		tokExtra += direct - n0
		if r.OutputTokens <= r.RawTokens {
			bytesIn += r.RawChars - len(s.Text)
		}
		telemetry.AddSaved(saved, r.SavedAgainst(direct))
		if r.Truncated {
			tev.Hints[telemetry.HintMore]++
		}
		tev.Format = r.Format
	}
	return tokExtra, bytesIn, nil
}

// settleHook sets tev's token and byte figures and its savings from the
// fields' counts before and after; it reports false (tev then says why)
// when the shaped fields save nothing.
// The rest of the saving, what no source claims, is rest's: the
// encoding's, or all of it the reference's for a result in context.
func settleHook(tev *telemetry.Event, saved meter.Saved, c tokens.Counter, counts []int, orig, texts []string, tokExtra, bytesIn int, rest telemetry.Source) bool {
	before, after, bytesOut := 0, 0, 0
	for i, t := range texts {
		before += counts[i]
		if t == orig[i] {
			after += counts[i]
		} else {
			after += c.Count(t)
		}
		bytesOut += len(t)
	}
	tev.TokensIn, tev.TokensOut = before, before
	tokIn := before + tokExtra
	if after >= before {
		tev.Untouched, tev.Hints, tev.Dedup = telemetry.UntouchedNoSaving, [telemetry.NumHints]uint16{}, telemetry.DedupOff
		tev.ShapeClass = ""
		return false
	}
	tev.TokensIn, tev.BytesIn, tev.TokensOut, tev.BytesOut = tokIn, bytesIn, after, bytesOut
	if rest == telemetry.SrcDedup {
		tev.ShapeClass = ""
	}
	// Counted apart, the fields may tokenize a little differently than
	// the pipeline counted them.
	saved.Settle(tokIn-after, rest.String())
	tev.Saved = saved.BySource()
	return true
}

// countAside counts texts in a goroutine of its own and returns the
// function that waits for the counts; a panic there is an error of the
// call, as one in the hook's own goroutine is.
func countAside(c tokens.Counter, texts []string) func() ([]int, error) {
	type counted struct {
		n   []int
		err error
	}
	ch := make(chan counted, 1)
	go func() {
		var r counted
		defer func() {
			if p := recover(); p != nil {
				r = counted{err: fmt.Errorf("panic: %v", p)}
			}
			ch <- r
		}()
		r.n = make([]int, len(texts))
		for i, t := range texts {
			r.n[i] = c.Count(t)
		}
	}()
	return sync.OnceValues(func() ([]int, error) {
		r := <-ch
		return r.n, r.err
	})
}

// shapingHeader reports whether text starts with a lossless or display
// shaping's declaration (an elided text may carry one too).
func shapingHeader(text string) bool {
	first, _, _ := strings.Cut(text, "\n")
	v, err := inband.Parse(first)
	_, ok := v.(inband.Shaping)
	return err == nil && ok
}

// openTranscript reads the transcript the event names, to find the
// earlier results the model still has: nil (no references) for a result
// too small to refer to, or a transcript missing or unreadable. done
// releases what it read (not the runner's own transcript).
func (h *hookRunner) openTranscript(ev *hook.Event, size int, tev *telemetry.Event) (tr *hook.Transcript, done func()) {
	done = func() {}
	if size < dedup.DefaultMinBytes {
		return nil, done
	}
	tr = h.transcript
	if tr == nil {
		if ev.TranscriptPath == "" {
			return nil, done
		}
		var err error
		if tr, err = hook.ReadTranscript(ev.TranscriptPath, maxTranscript); err != nil {
			return nil, done
		}
		done = tr.Close
	}
	tev.Compactions = tr.Compactions
	return tr, done
}

// referLines replaces, in the fields that may have them
// ([hook.LineSlot]), each run of lines that repeats lines of one earlier
// result the model still has ([hook.Transcript.Shown]) by a line
// reference to that result (package dedup's [dedup.Lines]), where it
// saves tokens. Its saving is dedup's. Only a field left as it was or
// elided (classes[i]) gets them: a lossless or display shaping's rule,
// an encoding's decoder, read the text as it is, line numbers included
// ("paths as a tree from line K"). On an error (a panic reading a
// transcript cut short) texts, tev and saved are left as they were.
func referLines(tr *hook.Transcript, ev *hook.Event, slots []hook.Slot, texts, classes []string, c tokens.Counter, tev *telemetry.Event, saved meter.Saved) (err error) {
	if tr == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("line references: panic: %v", r)
		}
	}()
	var idx []int
	var cand []string
	for i, s := range slots {
		plain := texts[i] == s.Text || classes[i] == shape.Elide.String() && !shapingHeader(texts[i])
		if plain && hook.LineSlot(ev.ToolName, s) && len(texts[i]) >= dedup.DefaultMinBytes {
			idx = append(idx, i)
			cand = append(cand, texts[i])
		}
	}
	if len(idx) == 0 {
		return nil
	}
	shown := tr.Shown(ev.AgentID, ev.ToolUseID, cand)
	if len(shown) == 0 {
		return nil
	}
	// A reference counts the lines of a result before its own line
	// references: one shown with them is not referred to.
	var lx dedup.Lines
	for _, s := range shown {
		if !inband.HasRefLines(s.Text) {
			lx.Add(s.Name, s.Text)
		}
	}
	type referred struct {
		i, refs, saved int
		text           string
	}
	var done []referred
	for _, i := range idx {
		// A command's error and verdict lines and file:line findings
		// stay in view.
		var keep func(string) bool
		if shape.Outcome(slots[i].Text, shape.Call{Tool: ev.ToolName}) {
			keep = shape.InView
		}
		s, n := lx.Refer(texts[i], keep)
		if n == 0 || len(s) >= len(texts[i]) {
			continue
		}
		if d := c.Count(texts[i]) - c.Count(s); d > 0 {
			done = append(done, referred{i, n, d, s})
		}
	}
	for _, d := range done {
		texts[d.i] = d.text
		saved[telemetry.SrcDedup.String()] += d.saved
		tev.Hints[telemetry.HintRef] += uint16(min(d.refs, math.MaxUint16))
		tev.Dedup = telemetry.DedupHit
	}
	return nil
}

// pipeline builds the pipeline of one hook call: the config's options
// for the tool (as the proxies resolve them), chunks stored in the
// config's store (default: the user cache directory) and bound to the
// session.
func (h *hookRunner) pipeline(cfg *config.Config, eff *profile.Effective, ev *hook.Event) (*terse.Pipeline, error) {
	ttl := store.DefaultTTL
	if cfg.Store.TTL.Duration > 0 {
		ttl = cfg.Store.TTL.Duration
	}
	dir := h.storeDir
	if dir == "" {
		dir = cfg.Store.Dir
	}
	if dir == "" {
		dir = store.DefaultDir()
	}
	st, err := configStore(dir, cfg.Store.Redis, ttl, cfg.Store.MaxBytes)
	if err != nil {
		return nil, err
	}
	fetch := chunkCommand(dir, ttl)
	if cfg.Store.Redis != "" {
		fetch = "terse chunk --config " + shellQuote(h.cfgPath) + " {handle} {n}"
	}
	// The command the model runs from its shell: this binary when the
	// terse on PATH is another one, and the session the handles are
	// bound to.
	cmd := "terse chunk"
	if ev.SessionID != "" {
		cmd += " --session " + shellQuote(ev.SessionID)
	}
	fetch = strings.Replace(fetch, "terse chunk", cmd, 1)
	if self := defaultTerseCommand(); self != "terse" {
		fetch = shellQuote(self) + strings.TrimPrefix(fetch, "terse")
	}
	ps := newPipelines(cfg, terse.Options{Store: st, Fetch: fetch, Shape: cfg.Shape.Options()})
	return ps.pipeline(eff)
}

// bashMaxOutput is the Bash output length above which Claude Code keeps
// the output in a file and shows a preview: BASH_MAX_OUTPUT_LENGTH (the
// hook runs in Claude Code's environment), else its default, 30,000.
func bashMaxOutput() int {
	if n, err := strconv.Atoi(os.Getenv("BASH_MAX_OUTPUT_LENGTH")); err == nil && n > 0 {
		return n
	}
	return 30000
}

// hookGC turns the collector off for the hook's short life, with a soft
// memory limit (hookHeap) at which it collects after all, and returns the
// function that restores the settings it found. The hook is a process
// per tool call that lives a few milliseconds: collecting garbage that
// the process's exit frees anyway costs it a collector start and marking
// that, for a 100 KB result, take about as long as the work. It is used
// for events under hookGCMax, whose garbage stays well under the limit;
// larger ones keep the collector (limitMemory paces it from 16 MB).
// GOGC and GOMEMLIMIT, when set, are kept.
func hookGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gc := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(hookHeap)
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}
}

// hookHeap is the soft memory limit under which the hook does not
// collect, and hookGCMax the largest event it does so for.
const (
	hookHeap  = 256 << 20
	hookGCMax = 4 << 20
)

// hookLog appends one line per failure to the hook's log file; it never
// writes to the agent's screen, and a log it cannot write is skipped.
type hookLog struct{ path string }

// maxHookLog is the log size past which it is moved to hook.log.1.
const maxHookLog = 1 << 20

func (l hookLog) printf(agent, tool, class, msg string) {
	if l.path == "" {
		return
	}
	if st, err := os.Stat(l.path); err == nil && st.Size() > maxHookLog {
		os.Rename(l.path, l.path+".1")
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	msg = strings.ReplaceAll(msg, "\n", " ")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	fmt.Fprintf(f, "%s hook %s tool=%q %s: %s\n", time.Now().UTC().Format(time.RFC3339), agent, tool, class, msg)
}

// hookLogPath is $TERSE_HOOK_LOG, else the user cache directory's
// terse/hook.log.
func hookLogPath() string {
	if p := os.Getenv("TERSE_HOOK_LOG"); p != "" {
		return p
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "terse", "hook.log")
}
