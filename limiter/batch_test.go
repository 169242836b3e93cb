package limiter

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// countingHook counts the commands a client sends (a pipeline counts once).
type countingHook struct{ n atomic.Int64 }

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}
func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

func TestRedisCountsAllLimitsInOneRoundTrip(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rt redisTarget) {
		client := rt.client(t)
		hook := &countingHook{}
		client.AddHook(hook)
		s, err := NewRedisStore(t.Context(), client, RedisOptions{Prefix: rt.prefix, RefreshInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		limits := []Limit{
			{ID: 1, Name: "all", Type: TypeInstance, Rate: 10, Period: PeriodHour, Active: true},
			{ID: 2, Name: "svc", Type: TypeService, ServiceID: 7, Rate: 3, Period: PeriodMinute, Active: true},
			{ID: 3, Name: "each", Type: TypeEachUser, Rate: 10, Period: PeriodDay, Active: true},
		}
		e, err := New(limits, s)
		if err != nil {
			t.Fatal(err)
		}
		req := Request{UserID: 9, ServiceID: 7, ServiceName: "db", Endpoint: "_table/t", Verb: "GET"}
		// The first call may load the script (EVALSHA, then EVAL on NOSCRIPT).
		if _, err := e.Evaluate(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		hook.n.Store(0)
		d, err := e.Evaluate(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got := hook.n.Load(); got != 1 {
			t.Fatalf("Evaluate with 3 limits sent %d commands to Redis, want 1", got)
		}
		if len(d.Outcomes) != 3 || !d.Allowed {
			t.Fatalf("decision = %+v", d)
		}
		for _, o := range d.Outcomes {
			if o.Count != 2 {
				t.Errorf("limit %s counted %d, want 2", o.Limit.Name, o.Count)
			}
			if o.Reset <= time.Now().Unix() || o.Reset > time.Now().Add(o.Limit.Period.Duration()).Unix()+1 {
				t.Errorf("limit %s reset %d outside its window", o.Limit.Name, o.Reset)
			}
		}
		// The third request exhausts "svc" (rate 3): the fourth is refused,
		// and ulule's Peek reads the same counters the script wrote.
		e.Evaluate(t.Context(), req)
		d, _ = e.Evaluate(t.Context(), req)
		if d.Allowed || len(d.Exceeded()) != 1 || d.Exceeded()[0].Limit.Name != "svc" {
			t.Fatalf("fourth request: %+v", d)
		}
		c, err := e.Counter(t.Context(), 2, 0)
		if err != nil || c.Attempts != 4 {
			t.Fatalf("Counter(svc) = %+v, %v; want 4 attempts", c, err)
		}
		if err := e.ResetLimit(t.Context(), 2); err != nil {
			t.Fatal(err)
		}
		if d, _ := e.Evaluate(t.Context(), req); !d.Allowed {
			t.Fatalf("after reset: %+v", d)
		}
	})
}

func TestRedisSeveralLimitsExactUnderConcurrency(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rt redisTarget) {
		limits := []Limit{
			limit100,
			{ID: 2, Name: "svc", Type: TypeService, ServiceID: 7, Rate: 40, Period: PeriodHour, Active: true},
		}
		a := newRedisEngine(t, rt, time.Second, limits...)
		b := newRedisEngine(t, rt, time.Second, limits...)
		got := hammer(t, 400, Request{ServiceID: 7, ServiceName: "db", Verb: "GET"}, a, b)
		if got != 40 {
			t.Fatalf("%d allowed across two processes, want exactly 40", got)
		}
	})
}
