package apiproxy

import (
	"bytes"
	"context"
	"github.com/terse-dev/terse/telemetry"
	"io"
	"sync"
	"time"

	"github.com/terse-dev/terse/tree"
)

// Usage is what the provider reported for one response, in the
// provider's tokens, split the way it is billed:
//
//   - Input: input tokens billed at the base input price (Anthropic
//     input_tokens; OpenAI prompt_tokens or input_tokens less the cached
//     and cache-written tokens they include);
//   - CacheCreation: tokens written to the prompt cache (Anthropic
//     cache_creation_input_tokens; OpenAI input_tokens_details
//     cache_write_tokens), of which CacheCreation1h with the 1-hour TTL
//     (Anthropic cache_creation.ephemeral_1h_input_tokens; the rest has
//     the 5-minute TTL);
//   - CacheRead: tokens read from the prompt cache (Anthropic
//     cache_read_input_tokens; OpenAI cached_tokens);
//   - Output: output tokens, reasoning included.
//
// Reported counts the responses whose usage was read (1 on one request's
// record, 0 when the response reported none).
type Usage struct {
	Input           int `json:"input"`
	Output          int `json:"output"`
	CacheRead       int `json:"cache_read"`
	CacheCreation   int `json:"cache_creation"`
	CacheCreation1h int `json:"cache_creation_1h,omitempty"`
	Reported        int `json:"reported,omitempty"`
}

// Prompt is the whole prompt the provider counted: uncached input, cache
// writes and cache reads.
func (u Usage) Prompt() int { return u.Input + u.CacheCreation + u.CacheRead }

func (u *Usage) add(x Usage) {
	u.Input += x.Input
	u.Output += x.Output
	u.CacheRead += x.CacheRead
	u.CacheCreation += x.CacheCreation
	u.CacheCreation1h += x.CacheCreation1h
	u.Reported += x.Reported
}

// usageFields is one usage object as read: -1 marks a field it did not
// carry.
type usageFields Usage

// merge takes each field x carries: stream events report whole-response
// totals, so the latest one present is the response's (as the providers'
// SDKs accumulate them).
func (u *Usage) merge(x usageFields) {
	set := func(dst *int, v int) {
		if v >= 0 {
			*dst = v
		}
	}
	set(&u.Input, x.Input)
	set(&u.Output, x.Output)
	set(&u.CacheRead, x.CacheRead)
	set(&u.CacheCreation, x.CacheCreation)
	set(&u.CacheCreation1h, x.CacheCreation1h)
	u.Reported = 1
}

// usageOf reads the usage object of an event or response body: at
// "usage", "message.usage" or "response.usage", in Anthropic's or
// OpenAI's field names. OpenAI's input counts include the cached tokens
// (their details say how many); Anthropic's do not.
func usageOf(v tree.Value) (usageFields, bool) {
	none := usageFields{-1, -1, -1, -1, -1, 0}
	u, ok := v.Get("usage")
	if !ok || u.Kind() != tree.KindObject {
		for _, k := range []string{"message", "response"} {
			if x, ok2 := v.Get(k); ok2 && x.Kind() == tree.KindObject {
				if u, ok = x.Get("usage"); ok && u.Kind() == tree.KindObject {
					break
				}
			}
		}
	}
	if !ok || u.Kind() != tree.KindObject {
		return none, false
	}
	num := func(v tree.Value, keys ...string) int {
		for _, k := range keys {
			if x, ok := v.Get(k); ok && x.Kind() == tree.KindNumber {
				n, err := x.Int()
				if err != nil || n < 0 || n > 1<<40 {
					return -1
				}
				return int(n)
			}
		}
		return -1
	}
	out := none
	out.Output = num(u, "output_tokens", "completion_tokens")
	var details tree.Value
	openai := false
	for _, k := range []string{"prompt_tokens_details", "input_tokens_details"} {
		if d, ok := u.Get(k); ok && d.Kind() == tree.KindObject {
			details, openai = d, true
		}
	}
	if _, ok := u.Get("prompt_tokens"); ok {
		openai = true
	}
	if !openai {
		out.Input = num(u, "input_tokens")
		out.CacheRead = num(u, "cache_read_input_tokens")
		out.CacheCreation = num(u, "cache_creation_input_tokens")
		if cc, ok := u.Get("cache_creation"); ok && cc.Kind() == tree.KindObject {
			out.CacheCreation1h = num(cc, "ephemeral_1h_input_tokens")
		}
		if out.Input >= 0 || out.Output >= 0 || out.CacheRead >= 0 || out.CacheCreation >= 0 {
			return out, true
		}
		return none, false
	}
	prompt := num(u, "prompt_tokens", "input_tokens")
	cached, written := 0, 0
	if details.Kind() == tree.KindObject {
		cached = max(num(details, "cached_tokens"), 0)
		written = max(num(details, "cache_write_tokens"), 0)
	}
	if prompt >= 0 {
		out.Input = max(prompt-cached-written, 0)
		out.CacheRead = cached
		out.CacheCreation = written
		out.CacheCreation1h = 0
	}
	return out, prompt >= 0 || out.Output >= 0
}

// maxLine bounds the part of an event line kept to find usage in; longer
// lines are passed on but not inspected.
const maxLine = 1 << 20

// usageReader passes a response body through unchanged while reading the
// provider's usage from it: from each SSE data line that mentions
// "usage", or from the whole body (up to maxLine) when not streaming.
type usageReader struct {
	rc    io.ReadCloser
	sse   bool
	line  []byte
	over  bool
	usage Usage
	meta  respMeta
	done  func(Usage)
	// onMeta, when set, gets the response's message id and diagnostics
	// just before done.
	onMeta func(respMeta)
	once   sync.Once
}

func newUsageReader(rc io.ReadCloser, sse bool, done func(Usage)) *usageReader {
	return &usageReader{rc: rc, sse: sse, done: done}
}

var (
	usageKey = []byte(`"usage"`)
	diagKey  = []byte(`"diagnostics"`)
)

func (u *usageReader) Read(p []byte) (int, error) {
	n, err := u.rc.Read(p)
	if n > 0 {
		u.scan(p[:n])
	}
	if err != nil {
		u.finish()
	}
	return n, err
}

func (u *usageReader) scan(b []byte) {
	if !u.sse {
		if !u.over {
			if len(u.line)+len(b) > maxLine {
				u.over, u.line = true, nil
			} else {
				u.line = append(u.line, b...)
			}
		}
		return
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			u.keep(b)
			return
		}
		u.keep(b[:i])
		u.event(u.line)
		u.line, u.over = u.line[:0], false
		b = b[i+1:]
	}
}

func (u *usageReader) keep(b []byte) {
	if u.over || len(u.line)+len(b) > maxLine {
		u.over = true
		return
	}
	u.line = append(u.line, b...)
}

// event inspects one SSE line.
func (u *usageReader) event(line []byte) {
	if u.over || !bytes.Contains(line, usageKey) && !bytes.Contains(line, diagKey) {
		return
	}
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	if x, ok := parseUsage(bytes.TrimSpace(data), &u.meta); ok {
		u.usage.merge(x)
	}
}

// parseUsage reads the usage of one event or body, and into m (when not
// nil) its message id and diagnostics; anything going wrong (a panic
// included) means no usage, never a broken response.
func parseUsage(b []byte, m *respMeta) (x usageFields, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	v, err := tree.Parse(b)
	if err != nil {
		return x, false
	}
	if m != nil {
		metaOf(v, m)
	}
	return usageOf(v)
}

func (u *usageReader) finish() {
	u.once.Do(func() {
		if !u.sse && !u.over && (bytes.Contains(u.line, usageKey) || bytes.Contains(u.line, diagKey)) {
			if x, ok := parseUsage(u.line, &u.meta); ok {
				u.usage.merge(x)
			}
		}
		u.line = nil
		if u.onMeta != nil {
			u.onMeta(u.meta)
		}
		u.done(u.usage)
	})
}

func (u *usageReader) Close() error {
	err := u.rc.Close()
	u.finish()
	return err
}

// exchange is one rewritten request on its way through the proxy.
type exchange struct {
	stats         *Stats
	rec           *telemetry.Recorder // nil: telemetry off
	path          string
	start         time.Time
	added         time.Duration // time the proxy added before forwarding
	dryRun        bool
	skipped       string
	before, after []byte
	res           Result
	internal      bool // rewriting failed with an internal error
	arm, thread   string
	held          bool            // held out: the original was sent
	diag          *CacheDiagnosis // the request's diagnostics, then the response's (nil: none)
	onMeta        func(respMeta)  // takes the response's id and diagnostics (nil: ignored)
	status        int
	once          sync.Once
}

type exchangeKey struct{}

func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

// finish records the exchange once, with the usage the response reported.
func (ex *exchange) finish(u Usage) {
	ex.once.Do(func() {
		if ex.stats != nil {
			ex.stats.record(ex, u)
		}
	})
}
