package apiproxy

import (
	"bytes"
	"context"
	"hash/maphash"
	"strings"
	"sync"
	"time"

	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/history"
)

// Batched editing (see the package's Editing section): the edits of
// earlier messages (stale reads, applied payloads, old bulky results)
// apply to the messages before a conversation's edit boundary, and the
// boundary moves, all edits at once, only when that pays: when the
// provider's cache is cold anyway, or when the batch takes out at least
// Options.EditShare of the prompt.

// The defaults of the editing options.
const (
	DefaultEditAge    = 6    // requests
	DefaultEditBulky  = 1024 // bytes
	DefaultEditShare  = 0.30
	DefaultChunkFetch = "terse chunk --session {scope} {handle} {n}"
)

// Why the cache is cold anyway ([batchCase.Cold]).
const (
	coldIdle  = "idle"  // idle longer than the cache's lifetime
	coldModel = "model" // another model: its cache is another one
	coldTrim  = "trim"  // the trimming boundary moves
)

// batchCase is what the decision to apply a batch of edits is made from,
// in tokens.
type batchCase struct {
	Prompt  int    // the prompt as it would be sent without the batch
	Reclaim int    // what the batch takes out of it
	Keep    int    // the prompt before the batch's first change
	Cold    string // why the cache is cold anyway ("": warm)
	TTL1h   bool   // the request's cache writes are of the 1-hour kind
	Turns   int    // the requests of the conversation so far
}

// batchDecision is the decision and the figures it was made by.
type batchDecision struct {
	Apply bool
	// Share is Reclaim's share of Prompt.
	Share float64
	// Now and Without are this request's modeled prompt cost in USD with
	// and without the batch; Saving is what each later request saves
	// (cache reads of what the batch took out).
	Now, Without, Saving float64
	// Payback is how many later requests pay for the cache the batch
	// breaks (0 when it costs nothing extra).
	Payback float64
}

// decideBatch decides whether to apply a batch at price p: when the
// cache is cold anyway, whenever it makes this request cheaper (it then
// saves on every later one too); when it is warm, only when it takes out
// at least share of the prompt, since it turns cache reads of the prompt
// after its first change into cache writes.
func decideBatch(p Price, c batchCase, share float64) batchDecision {
	if c.Prompt <= 0 || c.Reclaim <= 0 {
		return batchDecision{}
	}
	write := func(n int) Usage {
		u := Usage{CacheCreation: n}
		if c.TTL1h {
			u.CacheCreation1h = n
		}
		return u
	}
	plus := func(a, b Usage) Usage {
		a.CacheRead += b.CacheRead
		a.CacheCreation += b.CacheCreation
		a.CacheCreation1h += b.CacheCreation1h
		return a
	}
	keep := min(max(c.Keep, 0), c.Prompt-c.Reclaim)
	d := batchDecision{Share: float64(c.Reclaim) / float64(c.Prompt)}
	if c.Cold != "" {
		d.Without = p.Cost(write(c.Prompt))
		d.Now = p.Cost(write(c.Prompt - c.Reclaim))
	} else {
		d.Without = p.Cost(Usage{CacheRead: c.Prompt})
		d.Now = p.Cost(plus(Usage{CacheRead: keep}, write(c.Prompt-c.Reclaim-keep)))
	}
	d.Saving = p.Cost(Usage{CacheRead: c.Reclaim})
	if extra := d.Now - d.Without; extra > 0 && d.Saving > 0 {
		d.Payback = extra / d.Saving
	}
	if c.Cold != "" {
		d.Apply = d.Now < d.Without || d.Now == d.Without && d.Saving > 0
	} else {
		// A conversation is expected to go on for about as many
		// requests as it has had: the batch must pay for itself by then.
		d.Apply = d.Share >= share && d.Payback <= float64(c.Turns)
	}
	return d
}

// coldCache says why the cache of the conversation on b is cold anyway
// for a request of model at now ("" when it may be warm): the branch
// was idle longer than the cache's lifetime (an hour when the request
// asks for 1-hour cache writes), or its previous request was for
// another model. A branch with no previous request in this process
// (new, forked, loaded from the store) is taken as warm.
func (rw *Rewriter) coldCache(b *branch, model string, now time.Time, ttl1h func() bool) string {
	if b.last.IsZero() {
		return ""
	}
	if idle := now.Sub(b.last); idle > rw.opt.CacheTTL && (idle > time.Hour || !ttl1h()) {
		return coldIdle
	}
	if b.model != "" && b.model != model {
		return coldModel
	}
	return ""
}

// ttl1h reports whether a request asks for 1-hour cache writes.
func ttl1h(body []byte) bool {
	return bytes.Contains(body, []byte(`"ttl":"1h"`)) || bytes.Contains(body, []byte(`"ttl": "1h"`))
}

// batchCaseOf measures the batch that moves the edit boundary from the
// edits in cur to those in next, for a request of body bytes (tokens
// estimated as bytes / 3.5): what it takes out, and the prompt before
// its first new change.
func batchCaseOf(msgs []history.Message, body int, cur, next []Edit) batchCase {
	type key struct {
		id  string
		src Source
	}
	batched := func(s Source) bool { return s == SourceStale || s == SourceApplied || s == SourceElided }
	had := make(map[key]bool)
	a := 0
	for _, e := range cur {
		if batched(e.Source) {
			a += len(e.Before) - len(e.After)
			had[key{e.CallID, e.Source}] = true
		}
	}
	b, first := 0, len(msgs)
	for _, e := range next {
		if batched(e.Source) {
			b += len(e.Before) - len(e.After)
			if !had[key{e.CallID, e.Source}] {
				first = min(first, e.msg)
			}
		}
	}
	keep := 0
	if first < len(msgs) {
		keep = history.Estimate(msgs[:first])
	}
	tok := func(n int) int { return int(float64(n) / 3.5) }
	turns := 0
	for i := range msgs {
		if msgs[i].Role == history.RoleAssistant {
			turns++
		}
	}
	return batchCase{Prompt: tok(body - a), Reclaim: tok(b - a), Keep: keep, Turns: turns + 1}
}

// stashed remembers the originals put in the chunk store, so that each
// is put once (again after stashAgain, so that its idle lifetime there
// keeps being renewed while the conversation shows its handle).
type stashed struct {
	mu sync.Mutex
	m  map[uint64]stashEntry
}

type stashEntry struct {
	cmd string
	at  time.Time
}

const (
	maxStashed = 8192
	stashAgain = 5 * time.Minute
)

// stash keeps text in the chunk store under a handle bound to scope and
// returns the command that prints it from the agent's shell ("" when
// there is no store or it failed). The handle depends only on scope and
// text, so the command is the same in every request and process.
func (rw *Rewriter) stash(scope, text string) string {
	if rw.opt.ChunkStore == nil || strings.TrimSuffix(text, "\n") == "" {
		return ""
	}
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(scope)
	h.WriteByte(0)
	h.WriteString(text)
	k := h.Sum64()
	now := rw.opt.Now()
	rw.stashes.mu.Lock()
	e, ok := rw.stashes.m[k]
	rw.stashes.mu.Unlock()
	if ok && now.Sub(e.at) < stashAgain {
		return e.cmd
	}
	tmpl := strings.ReplaceAll(rw.opt.ChunkFetch, "{scope}", scope)
	fo := fit.Options{Store: rw.opt.ChunkStore, Scope: scope, Fetch: tmpl}
	lines := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	handle, err := fit.StoreLines(ctx, text, [][2]int{{1, lines}}, &fo)
	if err != nil {
		return ""
	}
	cmd := strings.NewReplacer("{handle}", handle, "{n}", "1").Replace(tmpl)
	rw.stashes.mu.Lock()
	if rw.stashes.m == nil || len(rw.stashes.m) >= maxStashed {
		rw.stashes.m = make(map[uint64]stashEntry)
	}
	rw.stashes.m[k] = stashEntry{cmd, now}
	rw.stashes.mu.Unlock()
	return cmd
}
