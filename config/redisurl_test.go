package config

import (
	"net/url"
	"strings"
	"testing"

	"github.com/terse-dev/terse/store/redisstore"
)

// FuzzRedisURL holds checkRedisURL to the Redis store's own check (which
// parses with go-redis): both accept or both refuse, and the refusal
// never shows the password.
func FuzzRedisURL(f *testing.F) {
	for _, s := range []string{
		"redis://localhost:6379/0", "redis://:s3cret@cache.internal:6380/2", "rediss://user:s3cret@cache.example.com:6380",
		"redis://127.0.0.1", "unix:///run/redis.sock?db=1", "", "localhost:6379", "http://localhost:6379",
		"redis://:s3cret@host:6379/x", "redis://:s3cret@host:6379/0?bogus=1", "redis://:s3cret@host:bad port/0", "unix://",
		"redis://h/0/1", "redis://h//3//", "redis://h?db=x", "redis://h?db=", "redis://h?dial_timeout=5&read_timeout=2s",
		"redis://h?dial_timeout=soon", "redis://h?pool_fifo=yes", "redis://h?pool_fifo=1&pool_size=10",
		"redis://h?skip_verify=true", "rediss://h?skip_verify=true", "redis://h?conn_max_idle_time=1m&idle_timeout=2m",
		"redis://h?idle_timeout=2m", "redis://h?max_conn_age=1h&conn_max_lifetime=1h", "redis://h?protocol=3&client_name=terse",
		"redis://h?max_retries=-1&min_retry_backoff=0&max_retry_backoff=-1", "redis://h?conn_max_lifetime_jitter=5s",
		"redis://h?pipeline_pool_size=-1", "redis://h?db=1&db=x", "redis://h?db=x&db=1", "unix:///s?skip_verify=1",
		"redis://h?a=1&db=x", "redis://h?%zz", "redis://[::1]:6379/0", "REDIS://h", "unix:/// ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := checkRedisURL(s), redisstore.CheckURL(s)
		if (got == nil) != (want == nil) {
			t.Fatalf("checkRedisURL(%q) = %v, the store's check says %v", s, got, want)
		}
		if got == nil {
			return
		}
		if u, err := url.Parse(s); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && p == "s3cret" && strings.Contains(got.Error(), p) {
				t.Fatalf("checkRedisURL(%q) = %q, which shows the password", s, got)
			}
		}
	})
}
