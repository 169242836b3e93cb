package limiter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	ulule "github.com/ulule/limiter/v3"
	uredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// Defaults of the stores.
const (
	// DefaultRedisPrefix is the key prefix of a Redis store.
	DefaultRedisPrefix = "portcullis:limit"
	// DefaultCleanUpInterval is how often a memory store drops expired counters.
	DefaultCleanUpInterval = 30 * time.Second
	// DefaultRefreshInterval is how often a Redis store re-reads the reset
	// generations, and so the longest a reset made by another process takes
	// to reach this one.
	DefaultRefreshInterval = time.Second
)

// generationKey is the Redis hash (below the prefix) holding the reset
// generations: field "<limit id>" per reset limit and field "*" for the epoch
// bumped by ResetAll. Counter keys start with "instance", so it cannot clash.
const generationKey = "generation"

// epochField is the hash field of the ResetAll epoch.
const epochField = "*"

// Store holds the counters and the reset generations. It outlives Engines:
// when the limits change, build a new Engine over the same Store so the
// counters carry on. A Store is safe for concurrent use.
//
// Counters live in this package's memory counters (ulule's memory store's
// model, see memCounters) or in ulule/limiter's Redis store; every counter
// key contains the limit's reset generation and the store-wide epoch, so
// resetting a limit (or all of them) is O(1): it bumps a number, and the old
// keys are never read again and expire with their window.
type Store struct {
	// Exactly one of mem (memory) and backend (Redis) is set.
	mem     *memCounters
	backend ulule.Store
	kind    string

	// rdb and genKey are set for a Redis store.
	rdb     redis.UniversalClient
	prefix  string
	genKey  string
	refresh time.Duration

	// mu serialises writers of gens (reset, refresh); readers only Load.
	mu   sync.Mutex
	gens atomic.Pointer[generations]
}

// generations is an immutable snapshot of the reset counters.
type generations struct {
	epoch   uint64
	byLimit map[int64]uint64
	loaded  time.Time
}

func (g *generations) of(limitID int64) uint64 {
	return g.byLimit[limitID]
}

// MemoryOptions configures NewMemoryStore.
type MemoryOptions struct {
	// CleanUpInterval is how often expired counters are dropped; 0 means
	// DefaultCleanUpInterval, a negative value disables the cleaner goroutine
	// (expired counters are then only replaced when hit again).
	CleanUpInterval time.Duration
}

// NewMemoryStore returns a Store whose counters live in this process.
// They count as ulule's memory store does (fixed windows from a counter's
// first request), in a table of this package that an Engine reaches
// without hashing a key per count and with one clock read per request
// (see memCounters). Counters are not shared with other processes.
func NewMemoryStore(opts MemoryOptions) *Store {
	s := &Store{mem: &memCounters{}, kind: "memory"}
	s.gens.Store(&generations{byLimit: map[int64]uint64{}})
	switch {
	case opts.CleanUpInterval == 0:
		startCleaner(s, s.mem, DefaultCleanUpInterval)
	case opts.CleanUpInterval > 0:
		startCleaner(s, s.mem, opts.CleanUpInterval)
	}
	return s
}

// RedisOptions configures NewRedisStore.
type RedisOptions struct {
	// Prefix is put before every key ("<prefix>:<counter key>"); default
	// DefaultRedisPrefix. Processes that must share counters use the same
	// prefix; give each test run its own.
	Prefix string
	// RefreshInterval is how often the reset generations are re-read from
	// Redis, bounding how long a reset made by another process takes to be
	// seen here; 0 means DefaultRefreshInterval.
	RefreshInterval time.Duration
}

// NewRedisStore returns a Store whose counters live in Redis (ulule's Redis
// store, one atomic Lua script per count), shared by every process that uses
// the same Redis and prefix. It loads the Lua scripts and the reset
// generations, so it fails when Redis cannot be reached. The client stays
// owned by the caller, who closes it.
func NewRedisStore(ctx context.Context, client redis.UniversalClient, opts RedisOptions) (*Store, error) {
	if client == nil {
		return nil, errors.New("limiter: redis store: nil client")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultRedisPrefix
	}
	if opts.RefreshInterval <= 0 {
		opts.RefreshInterval = DefaultRefreshInterval
	}
	backend, err := uredis.NewStoreWithOptions(client, ulule.StoreOptions{Prefix: opts.Prefix})
	if err != nil {
		return nil, fmt.Errorf("limiter: redis store: %w", err)
	}
	s := &Store{
		backend: backend,
		kind:    "redis",
		rdb:     client,
		prefix:  opts.Prefix,
		genKey:  opts.Prefix + ":" + generationKey,
		refresh: opts.RefreshInterval,
	}
	if err := s.Refresh(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenRedis returns a go-redis client for a URL such as
// "redis://user:password@127.0.0.1:6379/0" or "rediss://…" (TLS), as parsed
// by redis.ParseURL. It does not connect; NewRedisStore does.
func OpenRedis(rawURL string) (*redis.Client, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("limiter: redis URL: %w", err)
	}
	return redis.NewClient(opt), nil
}

// Kind returns "memory" or "redis".
func (s *Store) Kind() string { return s.kind }

// Refresh re-reads the reset generations from Redis now, instead of waiting
// for the refresh interval. It does nothing for a memory store.
func (s *Store) Refresh(ctx context.Context) error {
	if s.rdb == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshLocked(ctx)
}

func (s *Store) refreshLocked(ctx context.Context) error {
	fields, err := s.rdb.HGetAll(ctx, s.genKey).Result()
	if err != nil {
		return fmt.Errorf("limiter: reading reset generations: %w", err)
	}
	g := &generations{byLimit: make(map[int64]uint64, len(fields)), loaded: time.Now()}
	for k, v := range fields {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			continue // not ours to interpret; never written by this package
		}
		if k == epochField {
			g.epoch = n
			continue
		}
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			continue
		}
		g.byLimit[id] = n
	}
	s.gens.Store(g)
	return nil
}

// snapshot returns the current generations, re-reading them from Redis when
// they are older than the refresh interval. Only one caller refreshes at a
// time; the others go on with the previous snapshot.
func (s *Store) snapshot(ctx context.Context, now time.Time) (*generations, error) {
	g := s.gens.Load()
	if s.rdb == nil || now.Sub(g.loaded) < s.refresh {
		return g, nil
	}
	if !s.mu.TryLock() {
		return g, nil
	}
	defer s.mu.Unlock()
	if g2 := s.gens.Load(); g2 != g {
		return g2, nil // refreshed by someone else meanwhile
	}
	if err := s.refreshLocked(ctx); err != nil {
		return nil, err
	}
	return s.gens.Load(), nil
}

// ResetLimit starts every counter of the limit with this id afresh (for each
// user, for each_user limits), in every process sharing the store: other
// processes of a Redis store see it within the refresh interval. It works for
// ids no Engine knows (a deleted limit), so call it when a limit is deleted.
func (s *Store) ResetLimit(ctx context.Context, limitID int64) error {
	if limitID <= 0 {
		return fmt.Errorf("limiter: reset: invalid limit id %d", limitID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.gens.Load()
	g := &generations{epoch: old.epoch, byLimit: make(map[int64]uint64, len(old.byLimit)+1), loaded: old.loaded}
	for k, v := range old.byLimit {
		g.byLimit[k] = v
	}
	if s.rdb != nil {
		n, err := s.rdb.HIncrBy(ctx, s.genKey, strconv.FormatInt(limitID, 10), 1).Result()
		if err != nil {
			return fmt.Errorf("limiter: reset limit %d: %w", limitID, err)
		}
		g.byLimit[limitID] = uint64(n)
	} else {
		g.byLimit[limitID]++
	}
	s.gens.Store(g)
	return nil
}

// ResetAll starts every counter of every limit afresh, in every process
// sharing the store (see ResetLimit).
func (s *Store) ResetAll(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.gens.Load()
	g := &generations{epoch: old.epoch + 1, byLimit: old.byLimit, loaded: old.loaded}
	if s.rdb != nil {
		n, err := s.rdb.HIncrBy(ctx, s.genKey, epochField, 1).Result()
		if err != nil {
			return fmt.Errorf("limiter: reset all: %w", err)
		}
		g.epoch = uint64(n)
	}
	s.gens.Store(g)
	return nil
}

// rateFor is the rate handed to ulule's Redis store. Its Limit is the
// largest int64 so that the returned Remaining gives the exact count
// (count = MaxInt64 - Remaining, see ulule's common.GetContextFromState);
// the engine compares the count with the limit's own rate itself. The store
// uses only the Period, to set the window.
func rateFor(p Period) ulule.Rate {
	return ulule.Rate{Period: p.Duration(), Limit: maxCount}
}

const maxCount = int64(^uint64(0) >> 1)

// hit counts one request on key at now and returns the count and the
// window's end (Unix seconds, rounded up: the window is open again from
// then on). kc, when not nil, is the key's cache entry, where a memory
// store keeps the key's counter.
func (s *Store) hit(ctx context.Context, key string, kc *keyCache, p Period, now time.Time) (count, reset int64, err error) {
	if s.mem != nil {
		n, end := s.mem.hit(key, kc, p.Duration(), now.UnixNano())
		return n, unixSeconds(end) + 1, nil
	}
	c, err := s.backend.Get(ctx, key, rateFor(p))
	if err != nil {
		return 0, 0, fmt.Errorf("limiter: counting %s: %w", key, err)
	}
	return maxCount - c.Remaining, c.Reset + 1, nil
}

// unixSeconds is time.Unix(0, ns).Unix(): ns in whole seconds, rounded
// down.
func unixSeconds(ns int64) int64 {
	s := ns / int64(time.Second)
	if ns%int64(time.Second) < 0 {
		s--
	}
	return s
}

// peek reads the count of key at now without counting; a missing counter
// reports 0 and a window ending one period from now.
func (s *Store) peek(ctx context.Context, key string, p Period, now time.Time) (count, reset int64, err error) {
	if s.mem != nil {
		n, end := s.mem.peek(key, p.Duration(), now.UnixNano())
		return n, unixSeconds(end) + 1, nil
	}
	c, err := s.backend.Peek(ctx, key, rateFor(p))
	if err != nil {
		return 0, 0, fmt.Errorf("limiter: reading %s: %w", key, err)
	}
	return maxCount - c.Remaining, c.Reset + 1, nil
}

// drop deletes one counter key (used to free it at once on reset).
func (s *Store) drop(ctx context.Context, key string, p Period) error {
	if s.mem != nil {
		s.mem.drop(key)
		return nil
	}
	if _, err := s.backend.Reset(ctx, key, rateFor(p)); err != nil {
		return fmt.Errorf("limiter: deleting %s: %w", key, err)
	}
	return nil
}
