// Package dedup replaces a tool result the agent has already seen with a
// one-line reference to it, and ([Lines]) runs of lines it has already
// seen with line references.
//
// A [Cache] keeps, per session and context partition ([Key]), a bounded
// LRU of fingerprints (the first 128 bits of SHA-256) of results the agent
// was shown in full. Each recorded result carries a short visible id line,
//
//	> [id: 3f2a1c9d]
//
// and a later byte-identical result becomes
//
//	> [ref: 3f2a1c9d, byte-identical]
//
// With [Options.NearRef] (off by default), a JSON object that differs from
// an earlier one of the same tool only in a few scalar leaves becomes
//
//	> [near-ref: 3f2a1c9d, status: pending→success]
//
// listing the exact delta. A reference never points at something the agent
// cannot see: only results shown verbatim with their id line are recorded,
// a hit is not recorded again, a compaction boundary ([Cache.Compact])
// clears the partition, [Cache.Forget] drops results that context trimming
// removed, and a mutating call on a path (write/edit tools, configurable)
// drops earlier reads of that path, of paths under it and of the
// directories above it ([Cache.Invalidate]).
//
// A Cache is safe for concurrent use.
package dedup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/terse-dev/terse/internal/lru"
	"github.com/terse-dev/terse/toolname"
	"github.com/terse-dev/terse/tree"
)

// Defaults for the zero Options.
const (
	DefaultMaxEntries    = 256
	DefaultMaxBytes      = 8 << 20
	DefaultMinBytes      = 200
	DefaultMaxPartitions = 1024
	DefaultNearMinBytes  = 500
	DefaultNearMaxDelta  = 50
)

// Options configure a [Cache]. The zero value works: exact references on,
// near-references off, the defaults above.
type Options struct {
	// MaxEntries bounds the results remembered per partition (LRU).
	MaxEntries int
	// MaxBytes bounds the total size of the results remembered per
	// partition: references point only at that much recent context.
	MaxBytes int
	// MinBytes is the smallest result worth an id line and a reference.
	MinBytes int
	// MaxPartitions bounds the partitions kept (LRU over partitions).
	MaxPartitions int

	// NearRef enables near-references for JSON objects.
	NearRef bool
	// NearMinBytes is the smallest result a near-reference replaces.
	NearMinBytes int
	// NearMaxDelta bounds the delta's size: Σ len(path)+len(old)+len(new)+4.
	NearMaxDelta int

	// MutatingTools, when non-nil, are the tools whose call on a path
	// invalidates earlier reads of that path: tool names or globs
	// (toolname.Match: "write_*"). Nil means the agents' file-writing
	// tools (toolname.WritesFiles: Edit, Write, write_file, …).
	MutatingTools []string
}

func (o Options) withDefaults() Options {
	def := func(p *int, d int) {
		if *p <= 0 {
			*p = d
		}
	}
	def(&o.MaxEntries, DefaultMaxEntries)
	def(&o.MaxBytes, DefaultMaxBytes)
	def(&o.MinBytes, DefaultMinBytes)
	def(&o.MaxPartitions, DefaultMaxPartitions)
	def(&o.NearMinBytes, DefaultNearMinBytes)
	def(&o.NearMaxDelta, DefaultNearMaxDelta)
	return o
}

// Key names one context partition: a session and, within it, a partition
// such as the main conversation or one sub-agent.
type Key struct {
	Session   string
	Partition string
}

// Call is one tool result.
type Call struct {
	Tool string
	// Paths are the file paths the call reads or writes, if any.
	Paths []string
	// Content is the result the agent would be shown; the Pipeline passes
	// the filtered result before encoding, whose encoding is deterministic.
	// The cache neither keeps nor changes it.
	Content []byte
	// Sum, when not zero, is Fingerprint(Variant, Content), computed once
	// by the caller for a Check and the Record that follows it.
	Sum [16]byte
	// Variant distinguishes renderings of the same content (for example
	// the encoding options); results are identical only if both match.
	Variant string
	// Mutating marks a call that writes Paths even if its tool is not in
	// Options.MutatingTools (per-tool configuration).
	Mutating bool
}

// Kind is the outcome of a check.
type Kind uint8

const (
	Miss    Kind = iota // not seen: show the result
	Ref                 // byte-identical to a visible earlier result
	NearRef             // an earlier result plus a small exact delta
)

func (k Kind) String() string {
	return [...]string{"miss", "ref", "near-ref"}[k]
}

// Outcome says what to show the agent.
type Outcome struct {
	Kind Kind
	// ID is the referenced result's id (Ref, NearRef) or the id given to
	// this result (Miss, when recorded).
	ID string
	// Hint replaces the result (Ref, NearRef).
	Hint string
	// IDLine is prepended to the result on a recorded Miss; empty when the
	// result is too small to be worth referencing.
	IDLine string
}

type entry struct {
	fp    [16]byte
	id    string
	tool  string
	paths []string
	size  int
	value tree.Value // JSON object snapshot, for near-references
	hasV  bool
}

type partition struct {
	key   Key
	lru   lru.Cache[[16]byte, *entry] // by fingerprint; bounded by record
	byID  map[string][16]byte
	bytes int
}

// Cache remembers what each partition has been shown.
type Cache struct {
	opts Options

	mu    sync.Mutex
	parts lru.Cache[Key, *partition] // at most MaxPartitions

	// shared, when set (SetShared), keeps the partitions instead of parts.
	shared     Shared
	onErr      func(error)
	sharedErrs atomic.Int64
}

// New returns an empty cache.
func New(opts Options) *Cache {
	o := opts.withDefaults()
	c := &Cache{opts: o}
	c.parts.Max = o.MaxPartitions
	return c
}

// isMutating reports whether call writes its path.
func (c *Cache) isMutating(call Call) bool {
	if call.Mutating {
		return true
	}
	if c.opts.MutatingTools == nil {
		return toolname.WritesFiles(call.Tool)
	}
	return toolname.MatchAny(c.opts.MutatingTools, call.Tool)
}

// fingerprint is call.Sum, or its content's fingerprint when not given.
func (call *Call) fingerprint() [16]byte {
	if call.Sum != ([16]byte{}) {
		return call.Sum
	}
	return Fingerprint(call.Variant, call.Content)
}

// Fingerprint returns the first 128 bits of SHA-256 over variant and content.
func Fingerprint(variant string, content []byte) [16]byte {
	var sum [32]byte
	if variant == "" {
		sum = sha256.Sum256(content)
	} else {
		h := sha256.New()
		h.Write([]byte(variant))
		h.Write([]byte{0})
		h.Write(content)
		h.Sum(sum[:0])
	}
	return [16]byte(sum[:16])
}

func (c *Cache) part(k Key, create bool) *partition {
	if p, ok := c.parts.Get(k); ok {
		return p
	}
	if !create {
		return nil
	}
	p := &partition{key: k, byID: map[string][16]byte{}}
	c.parts.Set(k, p)
	return p
}

// Process handles one result that will be shown in full if it is not a
// repeat: a mutating call first invalidates reads of its path; then a
// byte-identical earlier result gives a Ref, a near-identical one a NearRef
// (if enabled); otherwise the result is recorded and gets an id line. Use
// [Cache.Check] and [Cache.Record] instead when the result may be shown
// only in part (budget fitting).
func (c *Cache) Process(k Key, call Call) Outcome {
	fp := call.fingerprint()
	if c.shared != nil {
		if o := c.sharedCheck(k, call, fp); o.Kind != Miss {
			return o
		}
		return c.sharedRecord(k, call, fp)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.check(k, call, fp); o.Kind != Miss {
		return o
	}
	return c.record(k, call, fp)
}

// Check reports whether call repeats a visible earlier result, without
// recording it. A mutating call invalidates earlier reads of its path.
func (c *Cache) Check(k Key, call Call) Outcome {
	fp := call.fingerprint()
	if c.shared != nil {
		return c.sharedCheck(k, call, fp)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.check(k, call, fp)
}

// Record remembers a result the agent is shown verbatim and returns its
// id line (Outcome.IDLine), which must be shown with it. Results smaller
// than MinBytes are not recorded.
func (c *Cache) Record(k Key, call Call) Outcome {
	fp := call.fingerprint()
	if c.shared != nil {
		return c.sharedRecord(k, call, fp)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.record(k, call, fp)
}

func (c *Cache) check(k Key, call Call, fp [16]byte) Outcome {
	if len(call.Paths) > 0 && c.isMutating(call) {
		c.invalidate(k, call.Paths)
	}
	p := c.part(k, false)
	if p == nil || len(call.Content) < c.opts.MinBytes {
		return Outcome{}
	}
	if e, ok := p.lru.Get(fp); ok {
		return Outcome{Kind: Ref, ID: e.id, Hint: RefHint(e.id)}
	}
	if c.opts.NearRef && len(call.Content) >= c.opts.NearMinBytes {
		v, err := tree.Parse(call.Content)
		if err != nil || v.Kind() != tree.KindObject {
			return Outcome{}
		}
		for efp, e := range p.lru.All() {
			if !e.hasV || e.tool != call.Tool {
				continue
			}
			if d, ok := Delta(e.value, v, c.opts.NearMaxDelta); ok {
				p.lru.Get(efp)
				return Outcome{Kind: NearRef, ID: e.id, Hint: NearRefHint(e.id, d)}
			}
		}
	}
	return Outcome{}
}

func (c *Cache) record(k Key, call Call, fp [16]byte) Outcome {
	if len(call.Content) < c.opts.MinBytes || len(call.Content) > c.opts.MaxBytes {
		return Outcome{}
	}
	p := c.part(k, true)
	if e, ok := p.lru.Get(fp); ok {
		return Outcome{ID: e.id, IDLine: IDLine(e.id)}
	}
	e := &entry{fp: fp, tool: call.Tool, paths: call.Paths, size: len(call.Content), id: c.shortID(p, fp)}
	if c.opts.NearRef && len(call.Content) >= c.opts.NearMinBytes {
		if v, err := tree.Parse(call.Content); err == nil && v.Kind() == tree.KindObject {
			e.value, e.hasV = v, true
		}
	}
	p.lru.Set(fp, e)
	p.byID[e.id] = fp
	p.bytes += e.size
	for p.lru.Len() > c.opts.MaxEntries || p.bytes > c.opts.MaxBytes {
		_, old, _ := p.lru.Oldest()
		c.remove(p, old)
	}
	return Outcome{ID: e.id, IDLine: IDLine(e.id)}
}

// shortID is 8 hex digits of the fingerprint, lengthened while another
// entry of the partition already uses it.
func (c *Cache) shortID(p *partition, fp [16]byte) string {
	full := hex.EncodeToString(fp[:])
	for n := 8; n < len(full); n += 4 {
		if id := full[:n]; !p.used(id) {
			return id
		}
	}
	return full
}

// used reports whether an entry of the partition has id.
func (p *partition) used(id string) bool {
	_, ok := p.byID[id]
	return ok
}

func (c *Cache) remove(p *partition, e *entry) {
	p.lru.Delete(e.fp)
	delete(p.byID, e.id)
	p.bytes -= e.size
}

func (c *Cache) invalidate(k Key, written []string) {
	p := c.part(k, false)
	if p == nil {
		return
	}
	for _, e := range p.lru.All() {
		if touches(written, e.paths) {
			c.remove(p, e)
		}
	}
}

// touches reports whether a written path overlaps a read one.
func touches(written, read []string) bool {
	for _, w := range written {
		for _, r := range read {
			if Overlaps(w, r) {
				return true
			}
		}
	}
	return false
}

// Overlaps reports whether writing path w may change what reading path r
// returned: they are equal, or one is a directory prefix of the other
// (writing a file changes its directory's listing; moving a directory
// changes the files under it). A trailing slash is ignored.
func Overlaps(w, r string) bool {
	w, r = strings.TrimSuffix(w, "/"), strings.TrimSuffix(r, "/")
	if w == "" || r == "" {
		return w == r
	}
	return w == r || strings.HasPrefix(r, w+"/") || strings.HasPrefix(w, r+"/")
}

// Invalidate drops the partition's results that read one of paths (or a
// path under or above one of them, see [Overlaps]). With no paths it
// drops every result of the partition: a write of unknown reach may have
// changed any of them.
func (c *Cache) Invalidate(k Key, paths ...string) {
	if c.shared != nil {
		c.sharedInvalidate(k, paths)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(paths) == 0 {
		c.parts.Delete(k)
		return
	}
	c.invalidate(k, paths)
}

// Compact marks a compaction boundary: the partition forgets everything,
// since the agent no longer sees the earlier results.
func (c *Cache) Compact(k Key) {
	if c.shared != nil {
		c.sharedDo(func(ctx context.Context) error { return c.shared.Drop(ctx, k) })
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parts.Delete(k)
}

// Forget drops the results with the given ids, for example those context
// trimming removed from the conversation.
func (c *Cache) Forget(k Key, ids ...string) {
	if c.shared != nil {
		c.sharedDo(func(ctx context.Context) error { return c.shared.Remove(ctx, k, ids...) })
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.parts.Peek(k)
	if !ok {
		return
	}
	for _, id := range ids {
		if fp, ok := p.byID[id]; ok {
			e, _ := p.lru.Peek(fp)
			c.remove(p, e)
		}
	}
}

// Len returns the number of results remembered for k and their total size.
func (c *Cache) Len(k Key) (entries, bytes int) {
	if c.shared != nil {
		return c.sharedLen(k)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.parts.Peek(k); ok {
		return p.lru.Len(), p.bytes
	}
	return 0, 0
}
