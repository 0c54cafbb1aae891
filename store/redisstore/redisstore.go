// Package redisstore is a store.Store shared through a Redis server, in a
// package of its own so that programs without it do not link go-redis.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/terse-dev/terse/store"
)

// Namespace leads every key terse writes to Redis, chunks ([Redis]) and
// shared state ([State]) alike. Its version changes when the layout of any
// key does, so that processes of two layouts never misread each other's
// keys (a process of the new layout finds nothing of the old one, which
// expires by its TTL).
const Namespace = "terse:v1:"

// DefaultPrefix is the prefix of [Redis] keys within [Namespace] when
// Prefix is empty: a chunk stored under key k lives at
// "terse:v1:chunk:k".
const DefaultPrefix = "chunk:"

// Redis is a [store.Store] shared through a Redis server (6.2 or later), for
// several processes or gateway replicas behind a load balancer: an entry
// put by one is found by all. Each entry is one string key with an expiry
// of TTL; Put sets it and Get reads and re-arms it in one GETEX command, so
// the TTL is idle, as in [store.Dir], and Redis itself removes expired entries.
//
// The zero value is not usable: URL must be set, in the form
// redis://[user:password@]host:port/db, rediss://… (TLS) or
// unix:///path/to/socket ([CheckURL] accepts exactly these). TTL zero
// means [store.DefaultTTL]; keys are [Namespace]+Prefix+key, and Prefix ""
// means [DefaultPrefix]. The
// connection pool is opened on first use; release it with Close. Fields
// must not change after first use. [New] checks the URL up front.
type Redis struct {
	URL    string
	TTL    time.Duration
	Prefix string

	once   sync.Once
	client *redis.Client
	err    error
}

// NewRedis returns a Redis store on url with the given idle TTL (0 means
// [store.DefaultTTL]), or an error if url is not one [CheckURL] accepts. It
// does not connect: the first Put or Get does.
func New(url string, ttl time.Duration) (*Redis, error) {
	r := &Redis{URL: url, TTL: ttl}
	if _, err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

// CheckURL reports whether s is a Redis URL that [Redis] can use. The
// error never repeats s, which may hold a password.
func CheckURL(s string) error {
	_, err := parseURL(s)
	return err
}

func parseURL(s string) (*redis.Options, error) {
	if s == "" {
		return nil, errors.New("store: Redis URL is empty")
	}
	if _, err := url.Parse(s); err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // url.Error repeats the URL
		}
		return nil, fmt.Errorf("store: bad Redis URL: %v", err)
	}
	opt, err := redis.ParseURL(s)
	if err != nil {
		return nil, fmt.Errorf("store: bad Redis URL: %v", err)
	}
	return opt, nil
}

func (r *Redis) open() (*redis.Client, error) {
	r.once.Do(func() {
		opt, err := parseURL(r.URL)
		if err != nil {
			r.err = err
			return
		}
		// Maintenance notifications are a Redis Enterprise/Cloud feature;
		// probing for them on a plain server only costs a handshake and a
		// log line.
		opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		r.client = redis.NewClient(opt)
	})
	return r.client, r.err
}

func (r *Redis) ttl() time.Duration {
	if r.TTL > 0 {
		return r.TTL
	}
	return store.DefaultTTL
}

func (r *Redis) key(k string) string {
	if r.Prefix != "" {
		return Namespace + r.Prefix + k
	}
	return Namespace + DefaultPrefix + k
}

// Put stores data under key with a fresh idle timer, replacing any
// existing entry.
func (r *Redis) Put(ctx context.Context, key string, data []byte) error {
	if !store.ValidKey(key) {
		return &store.KeyError{Key: key}
	}
	c, err := r.open()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.Set(ctx, r.key(key), data, r.ttl()).Err(); err != nil {
		return fmt.Errorf("store: redis put: %w", err)
	}
	return nil
}

// Get returns the data under key and restarts its idle timer.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	if !store.ValidKey(key) {
		return nil, &store.KeyError{Key: key}
	}
	c, err := r.open()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := c.GetEx(ctx, r.key(key), r.ttl()).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: redis get: %w", err)
	}
	return data, nil
}

// Close releases the connection pool. The store must not be used after.
func (r *Redis) Close() error {
	r.once.Do(func() { r.err = errors.New("store: Redis is closed") })
	if r.client == nil {
		return nil
	}
	return r.client.Close()
}
