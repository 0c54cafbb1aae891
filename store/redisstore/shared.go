package redisstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/terse-dev/terse/dedup"
)

// State is what gateway replicas share in Redis besides chunks: dedup
// partitions (it is a [dedup.Shared]), compaction counters of sessions and
// conversations, which owner each chunk handle was issued to, and
// records (sessions of session-based clients, client names of
// conversations, shapes of chunk handles). Keys, all under [Namespace] (chunks,
// of [Redis], are at terse:v1:chunk:HANDLE):
//
//	terse:v1:dd:{SESSION|PARTITION}:h   hash: "f:FP" → entry, "i:ID" → FP,
//	                                    "n:SKELETON" → FP, "v:FP" → content (near-references)
//	terse:v1:dd:{SESSION|PARTITION}:z   sorted set of FP by record time (the bound)
//	terse:v1:gen:SCOPE                  compaction counter
//	terse:v1:own:HANDLE                 owner of a chunk handle
//	terse:v1:rec:s:TENANT:SESSION       a session: its client's name and version
//	terse:v1:rec:c:OWNER                the client name of a conversation
//	terse:v1:rec:h:HANDLE               the shape of a handle's structuredContent
//
// Every key expires TTL after its last write. Writes are idempotent. The
// client fails fast (Timeout per command, no retries), so that a call
// goes on without the shared state instead of waiting for it, and
// reconnects by itself when Redis is back.
type State struct {
	TTL time.Duration

	client *redis.Client
}

// DefaultStateTimeout bounds each command of a [State].
const DefaultStateTimeout = 300 * time.Millisecond

// NewState connects (lazily) to the Redis server at url. ttl 0 means
// the store's default.
func NewState(url string, ttl time.Duration) (*State, error) {
	opt, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	opt.DialTimeout = DefaultStateTimeout
	opt.ReadTimeout = DefaultStateTimeout
	opt.WriteTimeout = DefaultStateTimeout
	opt.MaxRetries = -1
	opt.DialerRetries = 1 // a refused connection fails the command at once
	opt.PoolSize = 64
	if ttl <= 0 {
		ttl = 30 * time.Minute
	}
	return &State{TTL: ttl, client: redis.NewClient(opt)}, nil
}

// Close releases the connection pool.
func (s *State) Close() error { return s.client.Close() }

// Ping reports whether Redis answers.
func (s *State) Ping(ctx context.Context) error { return s.client.Ping(ctx).Err() }

func ddKeys(k dedup.Key) (h, z string) {
	tag := "{" + strings.ReplaceAll(k.Session, "}", ")") + "|" + strings.ReplaceAll(k.Partition, "}", ")") + "}"
	return Namespace + "dd:" + tag + ":h", Namespace + "dd:" + tag + ":z"
}

func wrap(op string, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return nil
	}
	return fmt.Errorf("redis %s: %w", op, err)
}

// Lookup implements [dedup.Shared].
func (s *State) Lookup(ctx context.Context, k dedup.Key, fp [16]byte) (string, bool, error) {
	h, _ := ddKeys(k)
	raw, err := s.client.HGet(ctx, h, "f:"+hex.EncodeToString(fp[:])).Bytes()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, wrap("dedup lookup", err)
	}
	var e dedup.SharedEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", false, fmt.Errorf("redis dedup lookup: %w", err)
	}
	return e.ID, true, nil
}

// addScript records an entry (an entry already recorded keeps its
// paths and moves to the newest) and trims the partition to ARGV[5] entries,
// oldest first, in one atomic step; with ARGV[7] (a skeleton) it also
// keeps ARGV[8], the content, as that skeleton's near-reference
// candidate. An entry leaves with its content and, when it is its
// skeleton's candidate, the candidate. KEYS: hash, zset. ARGV: fp, id,
// entry JSON, score, max, ttl ms[, skeleton, content].
var addScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], 'f:'..ARGV[1]) == 0 then
  redis.call('HSET', KEYS[1], 'f:'..ARGV[1], ARGV[3], 'i:'..ARGV[2], ARGV[1])
end
if ARGV[7] then
  redis.call('HSET', KEYS[1], 'n:'..ARGV[7], ARGV[1], 'v:'..ARGV[1], ARGV[8])
end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
local n = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[5])
if n > 0 then
  for _, f in ipairs(redis.call('ZRANGE', KEYS[2], 0, n-1)) do
    local e = redis.call('HGET', KEYS[1], 'f:'..f)
    if e then
      local d = cjson.decode(e)
      redis.call('HDEL', KEYS[1], 'i:'..d.id)
      if d.skel and redis.call('HGET', KEYS[1], 'n:'..d.skel) == f then redis.call('HDEL', KEYS[1], 'n:'..d.skel) end
    end
    redis.call('HDEL', KEYS[1], 'f:'..f, 'v:'..f)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, n-1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 1`)

// Add implements [dedup.Shared].
func (s *State) Add(ctx context.Context, k dedup.Key, e dedup.SharedEntry, maxEntries int) error {
	e.Skel = ""
	return s.add(ctx, k, e, nil, maxEntries)
}

// AddNear implements [dedup.NearShared]: in the same one script as Add.
func (s *State) AddNear(ctx context.Context, k dedup.Key, e dedup.SharedEntry, content []byte, maxEntries int) error {
	if e.Skel == "" || len(content) > dedup.NearMaxStored {
		e.Skel = ""
		content = nil
	}
	return s.add(ctx, k, e, content, maxEntries)
}

func (s *State) add(ctx context.Context, k dedup.Key, e dedup.SharedEntry, content []byte, maxEntries int) error {
	h, z := ddKeys(k)
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if maxEntries <= 0 {
		maxEntries = dedup.DefaultMaxEntries
	}
	args := []any{hex.EncodeToString(e.FP[:]), e.ID, data, time.Now().UnixNano(), maxEntries, s.TTL.Milliseconds()}
	if e.Skel != "" {
		args = append(args, e.Skel, content)
	}
	return wrap("dedup add", addScript.Run(ctx, s.client, []string{h, z}, args...).Err())
}

// lookupNearScript is Lookup that, on a miss, returns the candidate of
// the skeleton: {1, entry} on a hit, {2, entry, content} for a
// candidate, {0} for neither. KEYS: hash. ARGV: fp, skeleton.
var lookupNearScript = redis.NewScript(`
local e = redis.call('HGET', KEYS[1], 'f:'..ARGV[1])
if e then return {1, e} end
local f = redis.call('HGET', KEYS[1], 'n:'..ARGV[2])
if not f then return {0} end
local c = redis.call('HMGET', KEYS[1], 'f:'..f, 'v:'..f)
if not c[1] or not c[2] then return {0} end
return {2, c[1], c[2]}`)

// LookupNear implements [dedup.NearShared], in one round trip.
func (s *State) LookupNear(ctx context.Context, k dedup.Key, fp [16]byte, skel string) (string, bool, *dedup.SharedEntry, []byte, error) {
	h, _ := ddKeys(k)
	res, err := lookupNearScript.Run(ctx, s.client, []string{h}, hex.EncodeToString(fp[:]), skel).Slice()
	if err != nil {
		return "", false, nil, nil, wrap("dedup lookup", err)
	}
	kind, _ := res[0].(int64)
	if kind == 0 || len(res) < 2 {
		return "", false, nil, nil, nil
	}
	raw, _ := res[1].(string)
	var e dedup.SharedEntry
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return "", false, nil, nil, fmt.Errorf("redis dedup lookup: %w", err)
	}
	if kind == 1 {
		return e.ID, true, nil, nil, nil
	}
	content, _ := res[2].(string)
	return "", false, &e, []byte(content), nil
}

// Entries implements [dedup.Shared].
func (s *State) Entries(ctx context.Context, k dedup.Key) ([]dedup.SharedEntry, error) {
	h, _ := ddKeys(k)
	all, err := s.client.HGetAll(ctx, h).Result()
	if err != nil {
		return nil, wrap("dedup entries", err)
	}
	var out []dedup.SharedEntry
	for f, v := range all {
		fp, ok := strings.CutPrefix(f, "f:")
		if !ok {
			continue
		}
		var e dedup.SharedEntry
		b, err := hex.DecodeString(fp)
		if err != nil || len(b) != 16 || json.Unmarshal([]byte(v), &e) != nil {
			continue
		}
		e.FP = [16]byte(b)
		out = append(out, e)
	}
	return out, nil
}

var removeScript = redis.NewScript(`
for _, id in ipairs(ARGV) do
  local f = redis.call('HGET', KEYS[1], 'i:'..id)
  if f then
    local e = redis.call('HGET', KEYS[1], 'f:'..f)
    if e then
      local d = cjson.decode(e)
      if d.skel and redis.call('HGET', KEYS[1], 'n:'..d.skel) == f then redis.call('HDEL', KEYS[1], 'n:'..d.skel) end
    end
    redis.call('HDEL', KEYS[1], 'f:'..f, 'i:'..id, 'v:'..f)
    redis.call('ZREM', KEYS[2], f)
  end
end
return 1`)

// Remove implements [dedup.Shared].
func (s *State) Remove(ctx context.Context, k dedup.Key, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	h, z := ddKeys(k)
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return wrap("dedup remove", removeScript.Run(ctx, s.client, []string{h, z}, args...).Err())
}

// Drop implements [dedup.Shared].
func (s *State) Drop(ctx context.Context, k dedup.Key) error {
	h, z := ddKeys(k)
	return wrap("dedup drop", s.client.Del(ctx, h, z).Err())
}

// Generations returns the compaction counters of the given scopes (0 for
// a scope never compacted), in one round trip.
func (s *State) Generations(ctx context.Context, scopes ...string) ([]int, error) {
	keys := make([]string, len(scopes))
	for i, sc := range scopes {
		keys[i] = Namespace + "gen:" + sc
	}
	vals, err := s.client.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, wrap("generations", err)
	}
	out := make([]int, len(vals))
	for i, v := range vals {
		if str, ok := v.(string); ok {
			out[i], _ = strconv.Atoi(str)
		}
	}
	return out, nil
}

// Advance increments the compaction counter of scope to after seen (the
// value the caller read): concurrent compactions of one partition
// advance it once.
func (s *State) Advance(ctx context.Context, scope string, seen int) error {
	err := advanceScript.Run(ctx, s.client, []string{Namespace + "gen:" + scope}, seen, s.TTL.Milliseconds()).Err()
	return wrap("advance", err)
}

var advanceScript = redis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if v <= tonumber(ARGV[1]) then redis.call('SET', KEYS[1], tonumber(ARGV[1]) + 1) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)

// Own adds owner to the owners of each handle (idempotent): a handle
// minted from the same content in two sessions has both.
func (s *State) Own(ctx context.Context, owner string, handles ...string) error {
	if len(handles) == 0 {
		return nil
	}
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, h := range handles {
			p.SAdd(ctx, Namespace+"own:"+h, owner)
			p.PExpire(ctx, Namespace+"own:"+h, s.TTL)
		}
		return nil
	})
	return wrap("own", err)
}

// Owns reports whether owner is an owner of handle, and whether the
// handle has any owner, in one round trip; it re-arms the handle's TTL.
func (s *State) Owns(ctx context.Context, handle, owner string) (owns, known bool, err error) {
	k := Namespace + "own:" + handle
	var is *redis.BoolCmd
	var n *redis.IntCmd
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		is = p.SIsMember(ctx, k, owner)
		n = p.Exists(ctx, k)
		p.PExpire(ctx, k, s.TTL)
		return nil
	})
	if err != nil {
		return false, false, wrap("owns", err)
	}
	return is.Val(), n.Val() > 0, nil
}

// PutRecord records value under key (a gateway's session, a
// conversation's client, a chunk handle's shape) until it is idle for TTL.
func (s *State) PutRecord(ctx context.Context, key, value string) error {
	return wrap("record", s.client.Set(ctx, Namespace+"rec:"+key, value, s.TTL).Err())
}

// Record returns the value recorded under key and restarts its idle
// timer (one GETEX).
func (s *State) Record(ctx context.Context, key string) (string, bool, error) {
	v, err := s.client.GetEx(ctx, Namespace+"rec:"+key, s.TTL).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, wrap("record", err)
	}
	return v, true, nil
}

// DropRecord forgets key.
func (s *State) DropRecord(ctx context.Context, key string) error {
	return wrap("record", s.client.Del(ctx, Namespace+"rec:"+key).Err())
}

var _ dedup.NearShared = (*State)(nil)
