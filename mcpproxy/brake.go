package mcpproxy

import (
	"slices"
	"strings"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/inband"
	"github.com/terse-dev/terse/tree"
)

// BrakeNotice is the line a braked tool's next result starts with: the
// session fetched what terse left out of that tool's results again and
// again, so terse stops leaving anything out of them. It is said once
// per tool and session. Its wording is read by models.
var BrakeNotice = inband.Brake{}.String()

// DefaultBrakeFetches is Options.BrakeFetches' default.
const DefaultBrakeFetches = 8

// brakeState is one session's re-fetch tracking, per tool (server and
// tool name).
type brakeState struct {
	fetches map[string]int      // chunk fetches and re-reads of the tool's results
	last    map[string]lastCall // the tool's last result
	braked  map[string]bool     // lossless for the rest of the session
	told    map[string]bool     // BrakeNotice shown
	// elided holds the calls (tool and arguments) whose result left
	// something out, and resources the resources (paths, files, URLs)
	// such a call named, each with the tool that left it out: a call
	// again, or a read of the same resource, is a re-read (until a write
	// of one of its resources).
	elided    map[string][]string
	resources map[string]string
}

// maxElidedCalls bounds the elided calls and resources a session's
// brake remembers; past it, it remembers no more.
const maxElidedCalls = 4096

// resourceKeys are the argument names (lower case) that name a resource
// whose re-read counts toward the brake: narrower than pathKeys, whose
// ids and names two tools share for different things.
var resourceKeys = []string{"path", "paths", "file", "files", "filename", "file_path", "uri", "url"}

// resourcesOf returns the resources a call's arguments name, each
// prefixed with its key's class (a path and a URL of the same text
// differ).
func resourcesOf(args tree.Value) []string {
	if args.Kind() != tree.KindObject {
		return nil
	}
	var out []string
	add := func(k string, v tree.Value) {
		if v.Kind() == tree.KindString && v.Str() != "" {
			class := "path:"
			if k == "uri" || k == "url" {
				class = "url:"
			}
			out = append(out, class+v.Str())
		}
	}
	for _, m := range args.Members() {
		k := strings.ToLower(m.Key)
		if !slices.Contains(resourceKeys, k) {
			continue
		}
		if m.Value.Kind() == tree.KindArray {
			for _, it := range m.Value.Items() {
				add(k, it)
			}
			continue
		}
		add(k, m.Value)
	}
	return out
}

// lastCall is what the brake remembers of a tool's last result.
type lastCall struct {
	args   string // the arguments as JSON, without reserved parameters
	budget int    // the effective budget applied
	elided bool   // something was left out
}

func brakeTool(c *call) string { return c.server + "\x00" + c.tool }

// brakeThreshold is the number of chunk fetches of one tool's results in
// a session beyond which the tool is braked; 0 when the brake is off.
func (o *Options) brakeThreshold() int {
	switch {
	case o.BrakeFetches < 0:
		return 0
	case o.BrakeFetches == 0:
		return DefaultBrakeFetches
	}
	return o.BrakeFetches
}

// brakeOf returns the state of a call's session, creating it when create
// is set; nil for an ephemeral call (nothing is kept for it) or when the
// brake is off. e.mu is held.
func (e *engine) brakeOfLocked(c *call, create bool) *brakeState {
	if e.opts.brakeThreshold() == 0 || isEphemeralScope(c.sessionID) {
		return nil
	}
	st := e.sessionLocked(c.sessionID, create)
	if st.brake == nil && create {
		st.brake = &brakeState{fetches: map[string]int{}, last: map[string]lastCall{}, braked: map[string]bool{}, told: map[string]bool{},
			elided: map[string][]string{}, resources: map[string]string{}}
	}
	return st.brake
}

// noteFetch counts a chunk fetch of a call's tool and reports whether the
// tool is braked, and whether this fetch braked it.
func (e *engine) noteFetch(c *call) (braked, now bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.brakeOfLocked(c, true)
	if b == nil {
		return false, false
	}
	t := brakeTool(c)
	if b.braked[t] {
		return true, false
	}
	b.fetches[t]++
	if b.fetches[t] > e.opts.brakeThreshold() {
		b.braked[t] = true
		return true, true
	}
	return false, false
}

// noteCall checks a call of a tool against the session's earlier
// results: the same arguments again, raw or with a larger budget, after
// a result that left something out, brake the tool at once; a re-read of
// what terse left out (the same call again, or a call that reads a
// resource an elided call named) counts toward the brake of the tool
// that left it out, as a chunk fetch does. A write of a resource ends
// its re-reads. It sets c.lossless when the tool is braked and reports
// whether this call braked it.
func (e *engine) noteCall(c *call, mutating bool) (now bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.brakeOfLocked(c, false)
	if b == nil {
		return false
	}
	t := brakeTool(c)
	res := resourcesOf(c.args)
	if mutating && len(res) > 0 {
		for _, r := range res {
			delete(b.resources, r)
		}
		for k, rs := range b.elided {
			if slices.ContainsFunc(rs, func(r string) bool { return slices.Contains(res, r) }) {
				delete(b.elided, k)
			}
		}
	}
	if !b.braked[t] {
		l, ok := b.last[t]
		if ok && l.elided && l.args == c.argsKey && (c.raw || c.budget > l.budget) {
			b.braked[t], now = true, true
		}
	}
	if !b.braked[t] && !mutating {
		// A re-read counts once, for the tool whose result it re-reads.
		reread := ""
		if _, ok := b.elided[t+"\x00"+c.argsKey]; ok {
			reread = t
		}
		for _, r := range res {
			if o, ok := b.resources[r]; ok && reread == "" {
				reread = o
			}
		}
		if reread != "" && !b.braked[reread] {
			b.fetches[reread]++
			if b.fetches[reread] > e.opts.brakeThreshold() {
				b.braked[reread], now = true, true
			}
		}
	}
	c.lossless = b.braked[t]
	return now
}

// noteResult remembers a call's result for noteCall.
func (e *engine) noteResult(c *call, budget int, elided bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.brakeOfLocked(c, true)
	if b == nil {
		return
	}
	t := brakeTool(c)
	b.last[t] = lastCall{args: c.argsKey, budget: budget, elided: elided}
	if !elided || c.raw || len(b.elided)+len(b.resources) >= maxElidedCalls {
		return
	}
	res := resourcesOf(c.args)
	b.elided[t+"\x00"+c.argsKey] = res
	for _, r := range res {
		b.resources[r] = t
	}
}

// tell reports whether the notice of a braked tool is still to be shown
// to the session, and marks it shown.
func (e *engine) tell(c *call) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.brakeOfLocked(c, false)
	if b == nil || !b.braked[brakeTool(c)] || b.told[brakeTool(c)] {
		return false
	}
	b.told[brakeTool(c)] = true
	return true
}

// lossless passes hints on but refuses "more": a result is never elided,
// it comes back whole.
type lossless struct{ h terse.Hints }

func (l lossless) Allow(f string) bool { return f != "more" && (l.h == nil || l.h.Allow(f)) }
func (l lossless) Take(f string) bool  { return f != "more" && (l.h == nil || l.h.Take(f)) }

// withNotice puts BrakeNotice on its own line before the first text
// block of a result (a text block of its own when there is none).
func withNotice(result tree.Value) tree.Value {
	content, _ := result.Get("content")
	blocks := append([]tree.Value(nil), content.Items()...)
	done := false
	for i, b := range blocks {
		if isText(b) {
			tv, _ := b.Get("text")
			f, _ := b.Get("_meta")
			format, _ := f.Get(MetaFormat)
			name := format.Str()
			if name == "" {
				name = "text"
			}
			blocks[i] = replaceText(b, BrakeNotice+"\n"+tv.Str(), name)
			done = true
			break
		}
	}
	if !done {
		blocks = append([]tree.Value{textBlock(BrakeNotice, "text")}, blocks...)
	}
	return setMember(result, "content", tree.Array(blocks...))
}
