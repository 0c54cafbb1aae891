package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/terse-dev/terse"
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/fit"
	"github.com/terse-dev/terse/store"
	"github.com/terse-dev/terse/store/redisstore"
)

const chunkDoc = `
Chunk prints chunk N (1-based) of a result that "terse compact" trimmed,
in full, after one line saying which part of the source it is. HANDLE and
the chunk numbers are the ones the compacted output's chunk index shows;
"HANDLE.N" (the form MCP replies write, c_0123456789abcdef.2) is the same
as "HANDLE N".

The budget applies to the chunk: a chunk larger than --budget is not cut
but split into smaller chunks, listed with their ranges and a handle of
their own (an item or line larger than the budget into byte ranges to
join in order); the first line says which budget gets it in one piece.
Fetching every chunk, recursively, gives back the whole source.

Stored results are kept 30 minutes after they were last used (configurable
in the config file's [store] table). An unknown or expired handle prints one
message saying so; re-run the original command to get the data again.

With --config, the file's [store] table says where results are (dir, or a
shared Redis server) and for how long; --store and --ttl override it.

Examples:
  terse chunk c_0123456789abcdef 2
  terse chunk c_0123456789abcdef.2
  terse chunk --budget 2000 c_0123456789abcdef 2
  terse chunk --store /tmp/chunks c_0123456789abcdef 1
  terse chunk --config terse.toml c_0123456789abcdef 3
`

// chunkCommand is the command a compacted output shows for fetching a
// chunk: it names the store directory and TTL when they are not the
// defaults, so that it works as shown.
func chunkCommand(dir string, ttl time.Duration) string {
	cmd := "terse chunk"
	if dir != store.DefaultDir() {
		cmd += " --store " + shellQuote(dir)
	}
	if ttl != store.DefaultTTL {
		cmd += " --ttl " + ttl.String()
	}
	return cmd + " {handle} {n}"
}

// configStore opens the chunk store a config names: Redis when redisURL is
// set (what gateway replicas share), else the directory (default: the user
// cache directory).
// Content is stored once however many entries hold it (store.Shared);
// maxBytes bounds the directory (0: no bound).
func configStore(dir, redisURL string, ttl time.Duration, maxBytes int64) (*store.Shared, error) {
	if redisURL != "" {
		r, err := redisstore.New(redisURL, ttl)
		if err != nil {
			return nil, err
		}
		return &store.Shared{Store: r}, nil
	}
	if dir == "" {
		dir = store.DefaultDir()
	}
	return &store.Shared{Store: &store.Dir{Path: dir, TTL: ttl, MaxBytes: maxBytes}}, nil
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func runChunk(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("chunk", "[--config FILE] [--store DIR] [--ttl D] [--session ID] [--budget TOKENS] HANDLE N | HANDLE.N", chunkDoc, stdout, stderr)
	budget := fs.Int("budget", fit.DefaultBudget, "largest chunk `tokens` to print whole; a larger chunk is split into smaller ones")
	cfgPath := fs.String("config", "", "terse config `FILE` (TOML) whose [store] table (dir or redis, ttl) names the store")
	storeDir := fs.String("store", "", "chunk store `directory` (default: the user cache directory)")
	ttl := fs.Duration("ttl", store.DefaultTTL, "idle time-to-live of stored results")
	session := fs.String("session", "", "the `session` the handle is bound to (as the elision notice names it)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	handle, num := fs.Arg(0), fs.Arg(1)
	if fs.NArg() == 1 {
		// "c_….N", as MCP replies write a chunk.
		i := strings.LastIndexByte(handle, '.')
		if i < 0 {
			return &usageError{"chunk: want HANDLE N or HANDLE.N (see terse chunk --help)"}
		}
		handle, num = handle[:i], handle[i+1:]
	} else if fs.NArg() != 2 {
		return &usageError{"chunk: want HANDLE N or HANDLE.N (see terse chunk --help)"}
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return &usageError{fmt.Sprintf("chunk: N must be a chunk number ≥ 1, not %q", num)}
	}
	dir, redisURL := *storeDir, ""
	if *cfgPath != "" {
		cfg, err := config.Load(*cfgPath)
		if err != nil {
			return err
		}
		if dir == "" {
			dir, redisURL = cfg.Store.Dir, cfg.Store.Redis
		}
		if !set["ttl"] {
			*ttl = cfg.Store.TTL.Duration
		}
	}
	st, err := configStore(dir, redisURL, *ttl, 0)
	if err != nil {
		return err
	}
	fetch := "terse chunk --config " + shellQuote(*cfgPath) + " {handle} {n}"
	if r, ok := st.Store.(*redisstore.Redis); ok {
		defer r.Close()
	} else {
		if dir == "" {
			dir = store.DefaultDir()
		}
		fetch = chunkCommand(dir, *ttl)
	}
	if *budget < 1 {
		return &usageError{fmt.Sprintf("chunk: --budget must be ≥ 1, not %d", *budget)}
	}
	p, err := terse.New(&terse.Options{Store: st, Fetch: fetch, Budget: *budget})
	if err != nil {
		return err
	}
	ch, err := p.Chunk(ctx, handle, n, &terse.Request{Scope: *session})
	if _, ok := errors.AsType[*fit.ExpiredError](err); ok {
		fmt.Fprintf(stderr, "terse: %v\n", err)
		return errReported
	}
	if _, ok := errors.AsType[*fit.ScopeError](err); ok {
		fmt.Fprintf(stderr, "terse: %v\n", err)
		return errReported
	}
	if _, ok := errors.AsType[*fit.ChunkRangeError](err); ok {
		fmt.Fprintf(stderr, "terse: %v\n", err)
		return errReported
	}
	if err != nil {
		return err
	}
	text := ch.Text
	if len(text) > 0 && text[len(text)-1] != '\n' {
		text += "\n"
	}
	_, err = io.WriteString(stdout, text)
	return err
}
