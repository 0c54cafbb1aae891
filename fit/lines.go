package fit

import (
	"context"
	"strings"
)

// StoreLines stores text as a text view whose chunks are the given line
// ranges (1-based, inclusive, in order, covering lines 1 to the last
// without gaps), so that chunk N of the returned handle (FetchChunk) is
// ranges[N-1] in full. It is how a caller that elides lines itself (a
// text shaping) makes them recoverable. It needs opts.Store.
func StoreLines(ctx context.Context, text string, ranges [][2]int, opts *Options) (string, error) {
	o := opts.normalized()
	if o.Store == nil {
		return "", &Error{"no store configured"}
	}
	n := len(splitLines(text))
	spans := make([]span, len(ranges))
	next := 1
	for i, r := range ranges {
		if r[0] != next || r[1] < r[0] || r[1] > n {
			return "", &Error{"line ranges must cover the text in order"}
		}
		spans[i] = span{A: r[0] - 1, B: r[1]}
		next = r[1] + 1
	}
	if next != n+1 {
		return "", &Error{"line ranges must cover the text in order"}
	}
	return put(ctx, o, header{Kind: "text", Unit: "lines", Total: n, Chunks: spans}, []byte(text))
}

// FetchCommand is the command that fetches chunk N of handle, as
// opts.Fetch writes it, with "N" for the chunk number.
func FetchCommand(opts *Options, handle string) string {
	o := opts.normalized()
	return strings.NewReplacer("{handle}", handle, "{n}", "N").Replace(o.Fetch)
}
