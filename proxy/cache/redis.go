package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a [Store] over a Redis database (go-redis). The client keeps a
// pool and reconnects by itself once the server is back.
type Redis struct {
	client *redis.Client
	prefix string
}

// NewRedis returns a store over the Redis server of opts; prefix is put
// before every key. It does not connect until the first request.
func NewRedis(opts *redis.Options, prefix string) *Redis {
	return &Redis{client: redis.NewClient(opts), prefix: prefix}
}

// addScript stores every KEYS[i] = ARGV[i+1] (ARGV[1] is the TTL in
// milliseconds, 0 for none) only when none of the keys exists, and returns
// the keys that exist.
var addScript = redis.NewScript(`
local found = {}
for i, k in ipairs(KEYS) do
  if redis.call('EXISTS', k) == 1 then found[#found + 1] = k end
end
if #found > 0 then return found end
local ttl = tonumber(ARGV[1])
for i, k in ipairs(KEYS) do
  if ttl > 0 then redis.call('SET', k, ARGV[i + 1], 'PX', ttl) else redis.call('SET', k, ARGV[i + 1]) end
end
return found
`)

// Get reads the keys that exist.
func (s *Redis) Get(ctx context.Context, keys ...string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	if len(keys) == 1 {
		v, err := s.client.Get(ctx, s.prefix+keys[0]).Bytes()
		if errors.Is(err, redis.Nil) {
			return out, nil
		}
		if err != nil {
			return nil, redisErr(err)
		}
		out[keys[0]] = v
		return out, nil
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = s.prefix + k
	}
	vals, err := s.client.MGet(ctx, full...).Result()
	if err != nil {
		return nil, redisErr(err)
	}
	for i, v := range vals {
		// MGET answers nil for keys that are missing or hold another kind.
		if str, ok := v.(string); ok {
			out[keys[i]] = []byte(str)
		}
	}
	return out, nil
}

// Add stores the items only when none of their keys exists, atomically.
func (s *Redis) Add(ctx context.Context, items []Item) ([]string, error) {
	if len(items) == 1 {
		it := items[0]
		ok, err := s.client.SetNX(ctx, s.prefix+it.Key, it.Value, it.TTL).Result()
		if err != nil {
			return nil, redisErr(err)
		}
		if !ok {
			return []string{it.Key}, nil
		}
		return nil, nil
	}
	keys := make([]string, len(items))
	args := make([]any, 1, len(items)+1)
	var ttl time.Duration
	if len(items) > 0 {
		ttl = items[0].TTL
	}
	args[0] = ttl.Milliseconds()
	for i, it := range items {
		if it.TTL != ttl {
			return nil, errors.New("cache: Redis.Add needs one TTL for every item")
		}
		keys[i] = s.prefix + it.Key
		args = append(args, it.Value)
	}
	res, err := addScript.Run(ctx, s.client, keys, args...).StringSlice()
	if err != nil {
		return nil, redisErr(err)
	}
	for i, k := range res {
		res[i] = strings.TrimPrefix(k, s.prefix)
	}
	return res, nil
}

// Set stores the items in one transaction.
func (s *Redis) Set(ctx context.Context, items []Item) error {
	if len(items) == 1 {
		return redisErr(s.client.Set(ctx, s.prefix+items[0].Key, items[0].Value, items[0].TTL).Err())
	}
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, it := range items {
			p.Set(ctx, s.prefix+it.Key, it.Value, it.TTL)
		}
		return nil
	})
	return redisErr(err)
}

// Delete removes the keys and says which existed.
func (s *Redis) Delete(ctx context.Context, keys ...string) (map[string]bool, error) {
	cmds := make([]*redis.IntCmd, len(keys))
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.Del(ctx, s.prefix+k)
		}
		return nil
	})
	if err != nil {
		return nil, redisErr(err)
	}
	out := make(map[string]bool, len(keys))
	for i, k := range keys {
		out[k] = cmds[i].Val() > 0
	}
	return out, nil
}

// CheckKey accepts every non-empty key: Redis keys are binary-safe.
func (s *Redis) CheckKey(key string) error {
	if key == "" {
		return errors.New("a key must not be empty")
	}
	return nil
}

// Close closes the pool.
func (s *Redis) Close() error { return s.client.Close() }

// redisErr classifies a go-redis error: a reply about the key's kind is
// ErrWrongType, a value over the server's limits ErrTooLarge, anything
// else (refused, timed out, authentication, loading) ErrUnavailable.
func redisErr(err error) error {
	if err == nil {
		return nil
	}
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		switch {
		case strings.HasPrefix(msg, "WRONGTYPE"):
			return fmt.Errorf("%w: %w", ErrWrongType, err)
		case strings.Contains(msg, "too large") || strings.HasPrefix(msg, "OOM"):
			return fmt.Errorf("%w: %w", ErrTooLarge, err)
		}
	}
	return unavailable(err)
}
