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

// Usage is what the provider reported for one response.
type Usage struct {
	Input         int `json:"input"`
	Output        int `json:"output"`
	CacheRead     int `json:"cache_read"`
	CacheCreation int `json:"cache_creation"`
}

func (u *Usage) add(x Usage) {
	u.Input += x.Input
	u.Output += x.Output
	u.CacheRead += x.CacheRead
	u.CacheCreation += x.CacheCreation
}

// merge keeps the largest figure of each field (stream events repeat and
// grow them).
func (u *Usage) merge(x Usage) {
	u.Input = max(u.Input, x.Input)
	u.Output = max(u.Output, x.Output)
	u.CacheRead = max(u.CacheRead, x.CacheRead)
	u.CacheCreation = max(u.CacheCreation, x.CacheCreation)
}

// usageOf reads the usage object of an event or response body: at
// "usage", "message.usage" or "response.usage", in Anthropic's or
// OpenAI's field names.
func usageOf(v tree.Value) (Usage, bool) {
	u, ok := v.Get("usage")
	if !ok || u.Kind() != tree.KindObject {
		for _, k := range []string{"message", "response"} {
			if x, ok2 := v.Get(k); ok2 {
				if u, ok = x.Get("usage"); ok && u.Kind() == tree.KindObject {
					break
				}
			}
		}
	}
	if !ok || u.Kind() != tree.KindObject {
		return Usage{}, false
	}
	num := func(v tree.Value, keys ...string) int {
		for _, k := range keys {
			if x, ok := v.Get(k); ok && x.Kind() == tree.KindNumber {
				n, _ := x.Int()
				return int(n)
			}
		}
		return 0
	}
	out := Usage{
		Input:         num(u, "input_tokens", "prompt_tokens"),
		Output:        num(u, "output_tokens", "completion_tokens"),
		CacheRead:     num(u, "cache_read_input_tokens"),
		CacheCreation: num(u, "cache_creation_input_tokens"),
	}
	for _, k := range []string{"prompt_tokens_details", "input_tokens_details"} {
		if d, ok := u.Get(k); ok {
			out.CacheRead = max(out.CacheRead, num(d, "cached_tokens"))
		}
	}
	return out, true
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
	done  func(Usage)
	once  sync.Once
}

func newUsageReader(rc io.ReadCloser, sse bool, done func(Usage)) *usageReader {
	return &usageReader{rc: rc, sse: sse, done: done}
}

var usageKey = []byte(`"usage"`)

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
	if u.over || !bytes.Contains(line, usageKey) {
		return
	}
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	if x, ok := parseUsage(bytes.TrimSpace(data)); ok {
		u.usage.merge(x)
	}
}

// parseUsage reads the usage of one event or body; anything going wrong
// (a panic included) means no usage, never a broken response.
func parseUsage(b []byte) (x Usage, ok bool) {
	defer func() {
		if recover() != nil {
			x, ok = Usage{}, false
		}
	}()
	v, err := tree.Parse(b)
	if err != nil {
		return Usage{}, false
	}
	return usageOf(v)
}

func (u *usageReader) finish() {
	u.once.Do(func() {
		if !u.sse && !u.over && bytes.Contains(u.line, usageKey) {
			u.usage, _ = parseUsage(u.line)
		}
		u.line = nil
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
