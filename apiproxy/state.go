package apiproxy

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/terse-dev/terse/history"
)

// Conversation state.
//
// A conversation is found by its key (its format and first two messages),
// but the key alone does not say which history a request continues: a
// client may rewind (Claude Code's rewind, an edited earlier prompt, a
// resume from an older point), fork, or start a second conversation with
// the same first messages. So each key holds a few branches, each with the
// trimming state built from one history and the fingerprint of the prefix
// that state covers. A request uses the branch whose latest history it
// extends, unless another branch's state covers more of the request's
// history (a rewind back to a later point): then, or when no branch's
// latest history is a prefix of the request, it starts a branch from the
// state of the one whose covered prefix it shares, the longest; else it
// starts from nothing. State is never applied to a history it was not
// built from.

// maxBranches bounds the branches kept per conversation key; the least
// recently used is forgotten first.
const maxBranches = 8

// prefix names the first N messages of a normalised conversation by a
// hash chained over each message's [history.Fingerprint].
type prefix struct {
	N    int    `json:"n"`
	Hash uint64 `json:"hash"`
}

// on reports whether p is a prefix of the conversation whose chain is
// given.
func (p prefix) on(chain []uint64) bool { return p.N < len(chain) && chain[p.N] == p.Hash }

// at is the prefix of length n of the conversation whose chain is given.
func at(chain []uint64, n int) prefix { return prefix{n, chain[n]} }

// prefixChain returns the hash of every prefix of msgs: chain[i] names
// msgs[:i]. It is stable across processes (the store keeps it).
func prefixChain(msgs []history.Message) []uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	chain := make([]uint64, len(msgs)+1)
	h := uint64(offset)
	chain[0] = h
	for i := range msgs {
		fp := history.Fingerprint(&msgs[i])
		for j := 0; j < len(fp); j++ {
			h = (h ^ uint64(fp[j])) * prime
		}
		h = (h ^ 0xff) * prime // message separator
		chain[i+1] = h
	}
	return chain
}

// sample is the estimated size of one request and the history it had.
type sample struct {
	At   prefix `json:"at"`
	Size int    `json:"size"`
}

// branch is the state built from one history of a conversation.
type branch struct {
	used   uint64
	seen   prefix // the history of the latest request on the branch
	covers prefix // the history st and stale were built from
	st     history.State
	stale  int // the edit boundary: edits apply to messages before this index
	// batches are the edit boundaries of the batches made on the
	// history, in order (the last is stale): what the agent was shown
	// when it made each later call.
	batches []int
	sizes   []sample  // of the latest requests, oldest first
	prof    *Profile  // resolved on the branch's first request
	last    time.Time // of the latest request on the branch, in this process
	model   string    // of the latest request on the branch
}

// conv is the state of the conversations sharing one key.
type conv struct {
	mu       sync.Mutex
	used     uint64
	loaded   bool // from the store, when there is one
	tick     uint64
	branches []*branch
}

// How a request's history matched its conversation's state
// ([Result.State]).
const (
	StateNew       = "new"       // no state applied: a new history
	StateContinued = "continued" // the request extends the latest history of a branch
	StateForked    = "forked"    // it shares the prefix a branch's state covers, not the rest
)

// branch returns the branch for the conversation whose prefix chain is
// given, and how it matched (one of the State constants). A new or forked
// branch is added to c.
func (c *conv) branch(chain []uint64) (*branch, string) {
	c.tick++
	var cont, from *branch
	for _, b := range c.branches {
		if b.seen.on(chain) && (cont == nil || b.seen.N > cont.seen.N) {
			cont = b
		}
		if b.covers.on(chain) && (from == nil || b.covers.N > from.covers.N) {
			from = b
		}
	}
	if cont != nil && (from == nil || from.covers.N <= cont.seen.N) {
		cont.used = c.tick
		return cont, StateContinued
	}
	nb := &branch{used: c.tick, covers: at(chain, 0)}
	how := StateNew
	if from != nil && from.covers.N > 0 {
		nb.covers, nb.st, nb.stale, nb.prof = from.covers, from.st, from.stale, from.prof
		nb.batches = slices.Clone(from.batches)
		how = StateForked
	}
	if from != nil {
		// The growth seen on the shared history still holds.
		for _, s := range from.sizes {
			if s.At.on(chain) {
				nb.sizes = append(nb.sizes, s)
			}
		}
	}
	if len(c.branches) >= maxBranches {
		old := 0
		for i, b := range c.branches {
			if b.used < c.branches[old].used {
				old = i
			}
		}
		c.branches = append(c.branches[:old], c.branches[old+1:]...)
	}
	c.branches = append(c.branches, nb)
	return nb, how
}

// forget removes b from c.
func (c *conv) forget(b *branch) {
	c.branches = slices.DeleteFunc(c.branches, func(x *branch) bool { return x == b })
}

// record notes a request on b: its history (and, unless it repeats the
// latest one, its size), the state Reduce returned and the prefix that
// state covers.
func (b *branch) record(chain []uint64, est int, st history.State) {
	n := len(chain) - 1
	if n != b.seen.N || chain[n] != b.seen.Hash {
		b.sizes = append(b.sizes, sample{at(chain, n), est})
		if len(b.sizes) > growthSamples {
			b.sizes = b.sizes[len(b.sizes)-growthSamples:]
		}
	}
	b.seen = at(chain, n)
	b.st = st
	b.covers = at(chain, max(st.Boundary, b.stale))
}

// savedConv is a conversation key's state in the store.
type savedConv struct {
	Version  int           `json:"version"`
	Branches []savedBranch `json:"branches"`
}

// savedVersion is the version of savedConv written; entries of other
// versions (which held no prefix fingerprint) are not used.
const savedVersion = 2

// savedBranch is a branch in the store, most recently used first.
type savedBranch struct {
	Seen    prefix        `json:"seen"`
	Covers  prefix        `json:"covers"`
	State   history.State `json:"state"`
	Stale   int           `json:"stale"`
	Batches []int         `json:"batches,omitempty"`
	Sizes   []sample      `json:"sizes"`
	Profile *Profile      `json:"profile,omitempty"`
}

// storeTimeout bounds each store access on the request path.
const storeTimeout = 2 * time.Second

// load reads c's branches from the store (once; a missing or unreadable
// entry leaves it fresh, and a branch whose state does not fit the prefix
// it names is left out).
func (rw *Rewriter) load(key string, c *conv) {
	if c.loaded || rw.opt.Store == nil {
		return
	}
	c.loaded = true
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	data, err := rw.opt.Store.Get(ctx, "api-"+key)
	if err != nil {
		return
	}
	var sc savedConv
	if json.Unmarshal(data, &sc) != nil || sc.Version != savedVersion {
		return
	}
	for i, s := range sc.Branches {
		if i == maxBranches {
			break
		}
		if s.Covers.N < 0 || s.Seen.N < s.Covers.N || s.Stale < 0 || s.Stale > s.Covers.N ||
			s.State.Boundary > s.Covers.N || !slices.IsSorted(s.Batches) || len(s.Batches) > 0 && s.Batches[len(s.Batches)-1] > s.Stale {
			continue
		}
		c.branches = append(c.branches, &branch{used: uint64(len(sc.Branches) - i), seen: s.Seen, covers: s.Covers,
			st: s.State, stale: s.Stale, batches: s.Batches, sizes: s.Sizes, prof: s.Profile})
	}
	c.tick = uint64(len(sc.Branches))
}

// save writes c's branches to the store.
func (rw *Rewriter) save(key string, c *conv) {
	if rw.opt.Store == nil {
		return
	}
	// Most recently used first (ticks are not kept).
	bs := slices.Clone(c.branches)
	slices.SortStableFunc(bs, func(a, b *branch) int { return cmp.Compare(b.used, a.used) })
	sc := savedConv{Version: savedVersion}
	for _, b := range bs {
		sc.Branches = append(sc.Branches, savedBranch{Seen: b.seen, Covers: b.covers, State: b.st, Stale: b.stale, Batches: b.batches,
			Sizes: b.sizes, Profile: b.prof})
	}
	data, err := json.Marshal(sc)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	rw.opt.Store.Put(ctx, "api-"+key, data)
}

// conv returns the state of the conversations with key, remembering at
// most maxConvs keys.
func (rw *Rewriter) conv(key string) *conv {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.tick++
	c := rw.convs[key]
	if c == nil {
		if len(rw.convs) >= maxConvs {
			var old string
			var oldest uint64 = math.MaxUint64
			for k, x := range rw.convs {
				if x.used < oldest {
					old, oldest = k, x.used
				}
			}
			delete(rw.convs, old)
		}
		c = &conv{}
		rw.convs[key] = c
	}
	c.used = rw.tick
	return c
}

// maxBatches bounds the batch boundaries a branch remembers (the oldest
// are forgotten first: a re-read that old is then no longer told from a
// fetch-back, which changes the prefix only at a batch).
const maxBatches = 64

// batched notes a batch made at boundary n.
func (b *branch) batched(n int) {
	b.stale = n
	if len(b.batches) == 0 || b.batches[len(b.batches)-1] < n {
		b.batches = append(b.batches, n)
	}
	if len(b.batches) > maxBatches {
		b.batches = b.batches[len(b.batches)-maxBatches:]
	}
}
