package redisstore

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/terse-dev/terse/dedup"
	"github.com/terse-dev/terse/dedup/deduptest"
)

// BenchmarkSharedDedup is one call's dedup work (Check, then Record on a
// miss) on a 4 KiB result, half of the results repeats: in memory (the
// single-process baseline), on the in-process Shared, and on Redis.
func BenchmarkSharedDedup(b *testing.B) {
	body := func(i int) []byte {
		return fmt.Appendf(nil, "%04d %s", i/2, make([]byte, 4091))
	}
	run := func(b *testing.B, c *dedup.Cache) {
		k := dedup.Key{Session: "bench", Partition: b.Name()}
		b.SetBytes(4096)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			call := dedup.Call{Tool: "read", Content: body(i % 200)}
			if o := c.Check(k, call); o.Kind == dedup.Miss {
				c.Record(k, call)
			}
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, dedup.New(dedup.Options{})) })
	b.Run("memshared", func(b *testing.B) {
		c := dedup.New(dedup.Options{})
		c.SetShared(&deduptest.MemShared{}, nil)
		run(b, c)
	})
	b.Run("redis", func(b *testing.B) {
		if os.Getenv("TERSE_REDIS_URL") == "" {
			b.Skip("TERSE_REDIS_URL is not set")
		}
		c := dedup.New(dedup.Options{})
		c.SetShared(newTestState(b), nil)
		run(b, c)
	})
}

// BenchmarkSharedNearRef is BenchmarkSharedDedup with near-references on,
// on 4 KiB JSON objects: of every four calls, two repeat a result and one
// differs from the one before in two scalar leaves (a near-reference).
func BenchmarkSharedNearRef(b *testing.B) {
	log := strings.Repeat("x", 3900)
	body := func(i int) []byte {
		return fmt.Appendf(nil, `{"job":"build-%d","status":"s%d","duration":%d,"log":%q}`, i/4, i%4/3, i%4/3, log)
	}
	run := func(b *testing.B, c *dedup.Cache) {
		k := dedup.Key{Session: "bench", Partition: b.Name()}
		b.SetBytes(4096)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			call := dedup.Call{Tool: "job", Content: body(i % 400)}
			if o := c.Check(k, call); o.Kind == dedup.Miss {
				c.Record(k, call)
			}
		}
	}
	opts := dedup.Options{NearRef: true}
	b.Run("memory", func(b *testing.B) { run(b, dedup.New(opts)) })
	b.Run("memshared", func(b *testing.B) {
		c := dedup.New(opts)
		c.SetShared(&deduptest.MemShared{}, nil)
		run(b, c)
	})
	b.Run("redis", func(b *testing.B) {
		if os.Getenv("TERSE_REDIS_URL") == "" {
			b.Skip("TERSE_REDIS_URL is not set")
		}
		c := dedup.New(opts)
		c.SetShared(newTestState(b), nil)
		run(b, c)
	})
}
