package limiter

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// batchIncr is ulule's increment script (INCRBY, then PEXPIRE when the key is
// new, else PTTL) applied to every key of a request in one round trip. The
// keys and TTL semantics are exactly ulule's, so Peek and Reset through
// ulule's store read and delete the same counters.
//
// ulule's store counts one key per call, which costs one round trip per
// applicable limit; the spec's Redis target is one round trip per request,
// so this extends it for the case of several limits.
var batchIncr = redis.NewScript(`
local out = {}
for i, key in ipairs(KEYS) do
	local ttl = tonumber(ARGV[i])
	local n = redis.call("incrby", key, 1)
	if n == 1 then
		if ttl > 0 then
			redis.call("pexpire", key, ttl)
		end
	else
		ttl = redis.call("pttl", key)
	end
	out[#out + 1] = n
	out[#out + 1] = ttl
end
return out
`)

// batchable reports whether hitMany may count several keys in one script:
// a Redis store on a single server (a cluster would refuse keys in
// different slots).
func (s *Store) batchable() bool {
	if s.rdb == nil {
		return false
	}
	_, cluster := s.rdb.(*redis.ClusterClient)
	return !cluster
}

// hitMany counts one request on each key in one round trip and fills
// counts and resets (Unix seconds, rounded up as hit does).
func (s *Store) hitMany(ctx context.Context, keys []string, periods []Period, counts, resets []int64) error {
	full := make([]string, len(keys))
	args := make([]any, len(keys))
	for i, k := range keys {
		full[i] = s.prefix + ":" + k
		args[i] = periods[i].Duration().Milliseconds()
	}
	res, err := batchIncr.Run(ctx, s.rdb, full, args...).Int64Slice()
	if err != nil {
		return fmt.Errorf("limiter: counting %d keys: %w", len(keys), err)
	}
	if len(res) != 2*len(keys) {
		return fmt.Errorf("limiter: counting %d keys: script returned %d values", len(keys), len(res))
	}
	now := time.Now()
	for i := range keys {
		counts[i] = res[2*i]
		exp := now.Add(periods[i].Duration())
		if ttl := res[2*i+1]; ttl > 0 {
			exp = now.Add(time.Duration(ttl) * time.Millisecond)
		}
		resets[i] = exp.Unix() + 1
	}
	return nil
}
