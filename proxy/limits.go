package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/ratelimit"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Rate limits in the root: one limiter.Store for the server's life (Redis
// when Config.RedisURL is set, else memory), one limiter.Engine per
// configuration state built from the snapshot's limits over that Store, and
// the ratelimit stage reading the Engine of the state in force.

// resetTimeout bounds the counter resets a reload makes.
const resetTimeout = 5 * time.Second

// openLimitStore sets s.limitStore: Config.LimitStore when given, a Redis
// store on Config.RedisURL (whose client the server owns and closes), or a
// memory store.
func (s *Server) openLimitStore(ctx context.Context) error {
	switch {
	case s.cfg.LimitStore != nil:
		s.limitStore = s.cfg.LimitStore
	case s.cfg.RedisURL != "":
		opt, err := redis.ParseURL(s.cfg.RedisURL)
		if err != nil {
			return fmt.Errorf("proxy: redis URL: %w", err)
		}
		// With Redis down, fail fast: the default of five dial retries
		// would hold every request for half a second.
		opt.DialerRetries = 1
		if opt.DialTimeout == 0 {
			opt.DialTimeout = 2 * time.Second
		}
		c := redis.NewClient(opt)
		st, err := limiter.NewRedisStore(ctx, c, limiter.RedisOptions{Prefix: s.cfg.RedisPrefix})
		if err != nil {
			_ = c.Close()
			return fmt.Errorf("proxy: rate-limit counters: %w", err)
		}
		s.redis, s.limitStore = c, st
	default:
		s.limitStore = limiter.NewMemoryStore(limiter.MemoryOptions{})
	}
	return nil
}

// closeLimitStore closes the Redis client the server opened.
func (s *Server) closeLimitStore() {
	if s.redis != nil {
		_ = s.redis.Close()
		s.redis = nil
	}
}

// LimitStore returns the store holding the rate-limit counters, shared by
// every configuration state (system/limit_cache reads and resets it).
func (s *Server) LimitStore() *limiter.Store { return s.limitStore }

// Limits returns the rate-limit engine in force (nil before the first load).
func (s *Server) Limits() *limiter.Engine {
	if st := s.state.Load(); st != nil {
		return st.limits
	}
	return nil
}

// limitStage builds the rate-limit stage over the engine in force.
func (s *Server) limitStage() (handlers.Stage, error) {
	return ratelimit.New(ratelimit.Options{
		Limits:     s.Limits,
		Logger:     s.logger,
		Registerer: s.metrics,
		FailClosed: s.cfg.LimitsFailClosed,
	})
}

// limitEngine builds the engine of snap's limits over the server's store.
// A record the engine refuses (edited behind the system API's back) is
// skipped and logged, so one bad limit never disables the others. If the
// engine still cannot be built, the previous one stays in force.
func (s *Server) limitEngine(snap *store.Snapshot, old *limiter.Engine) *limiter.Engine {
	ls := make([]limiter.Limit, 0, len(snap.Limits))
	for _, rec := range snap.Limits {
		l := LimitFromRecord(rec)
		if err := l.Validate(); err != nil || l.ID <= 0 {
			s.logger.Warn("skipping invalid rate limit", "limit_id", rec.ID, "name", rec.Name, "error", err)
			continue
		}
		ls = append(ls, l)
	}
	e, err := limiter.New(ls, s.limitStore)
	if err != nil {
		s.logger.Error("rate limits not reloaded: keeping the previous ones", "error", err)
		return old
	}
	return e
}

// LimitFromRecord converts a system limit record to the engine's form
// (store.Limit.Engine).
func LimitFromRecord(rec *store.Limit) limiter.Limit { return rec.Engine() }

// staleLimits returns the ids of the limits of old whose counters must not
// carry over to next: deleted limits, and limits whose parameters changed
// (user, role, service, endpoint, verb, type or period: DreamFactory's
// key_text). A changed rate, name, description or is_active keeps the
// counter, as in DreamFactory.
func staleLimits(old, next *limiter.Engine) []int64 {
	if old == nil || old == next {
		return nil
	}
	keys := map[int64]string{}
	if next != nil {
		for _, l := range next.Limits() {
			keys[l.ID] = l.KeyText()
		}
	}
	var ids []int64
	for _, l := range old.Limits() {
		if k, ok := keys[l.ID]; !ok || k != l.KeyText() {
			ids = append(ids, l.ID)
		}
	}
	return ids
}

// resetStale resets the counters of the limits a reload deleted or changed
// (old is the engine they were counted by). Every instance does this on its
// own reload, so with Redis a change is reset once per instance within the
// reload interval, and requests counted on that one limit in between are
// forgotten: a bounded leniency right after an administrator changes a
// limit, of the same order as the Redis store's generation refresh.
func (s *Server) resetStale(ctx context.Context, old *limiter.Engine, ids []int64) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resetTimeout)
	defer cancel()
	for _, id := range ids {
		if err := old.ResetLimit(ctx, id); err != nil {
			s.logger.Warn("resetting the counters of a changed rate limit failed", "limit_id", id, "error", err)
			continue
		}
		s.logger.Debug("rate limit counters reset after a change", slog.Int64("limit_id", id))
	}
}
