package limiter

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// redisTarget is a Redis server the tests run against.
type redisTarget struct {
	// client returns a new client (a new "process") for the server.
	client func(t *testing.T) redis.UniversalClient
	// prefix is unique to the test run.
	prefix string
	// fastForward moves the server's clock (miniredis only).
	fastForward func(time.Duration)
}

// forEachRedis runs f against miniredis (always) and against the real Redis
// named by PORTCULLIS_TEST_REDIS (skipped with a message when unset).
func forEachRedis(t *testing.T, f func(t *testing.T, rt redisTarget)) {
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		f(t, redisTarget{
			client: func(t *testing.T) redis.UniversalClient {
				c := redis.NewClient(&redis.Options{Addr: m.Addr()})
				t.Cleanup(func() { c.Close() })
				return c
			},
			prefix:      "pctest",
			fastForward: m.FastForward,
		})
	})
	t.Run("redis", func(t *testing.T) {
		url := os.Getenv("PORTCULLIS_TEST_REDIS")
		if url == "" {
			t.Skip("PORTCULLIS_TEST_REDIS not set: skipping the tests against a real Redis")
		}
		prefix := fmt.Sprintf("pctest:%d:%d:%s", os.Getpid(), time.Now().UnixNano(), t.Name())
		newClient := func(t *testing.T) redis.UniversalClient {
			c, err := OpenRedis(url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		}
		cleaner := newClient(t)
		t.Cleanup(func() {
			// Remove this run's keys (and only them).
			ctx := context.Background()
			iter := cleaner.Scan(ctx, 0, prefix+":*", 500).Iterator()
			var keys []string
			for iter.Next(ctx) {
				keys = append(keys, iter.Val())
			}
			if len(keys) > 0 {
				cleaner.Del(ctx, keys...)
			}
		})
		f(t, redisTarget{client: newClient, prefix: prefix})
	})
}

// newRedisEngine builds an Engine over a new Redis store (a new "process").
func newRedisEngine(t *testing.T, rt redisTarget, refresh time.Duration, limits ...Limit) *Engine {
	t.Helper()
	s, err := NewRedisStore(t.Context(), rt.client(t), RedisOptions{Prefix: rt.prefix, RefreshInterval: refresh})
	if err != nil {
		t.Fatalf("NewRedisStore: %v", err)
	}
	if s.Kind() != "redis" {
		t.Fatalf("Kind() = %q", s.Kind())
	}
	e, err := New(limits, s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// hammer sends n concurrent requests spread over the engines and returns
// how many were allowed.
func hammer(t *testing.T, n int, req Request, engines ...*Engine) int64 {
	t.Helper()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			d, err := engines[i%len(engines)].Evaluate(context.Background(), req)
			if err != nil {
				errs <- err
				return
			}
			if d.Allowed {
				allowed.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return allowed.Load()
}

var limit100 = Limit{ID: 1, Name: "hundred", Type: TypeInstance, Rate: 100, Period: PeriodHour, Active: true}

func TestConcurrencyMemory(t *testing.T) {
	e := newEngine(t, limit100)
	if got := hammer(t, 2000, Request{Verb: "GET"}, e); got != 100 {
		t.Errorf("allowed %d of 2000, want exactly 100", got)
	}
	c, err := e.Counter(t.Context(), 1, 0)
	if err != nil || c.Attempts != 2000 {
		t.Errorf("counter = %+v, %v; want 2000 attempts", c, err)
	}
}

func TestConcurrencyRedis(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rt redisTarget) {
		// Two engines over two stores and two clients: two processes.
		a := newRedisEngine(t, rt, 0, limit100)
		b := newRedisEngine(t, rt, 0, limit100)
		if got := hammer(t, 2000, Request{Verb: "GET"}, a, b); got != 100 {
			t.Errorf("allowed %d of 2000, want exactly 100", got)
		}
		c, err := b.Counter(t.Context(), 1, 0)
		if err != nil || c.Attempts != 2000 {
			t.Errorf("counter = %+v, %v; want 2000 attempts", c, err)
		}
	})
}

// TestConcurrencySeveralLimits checks that with several limits applying, no
// limit lets more than its rate through.
func TestConcurrencySeveralLimits(t *testing.T) {
	each := Limit{ID: 2, Name: "each", Type: TypeEachUser, Rate: 15, Period: PeriodHour, Active: true}
	e := newEngine(t, limit100, each)
	var wg sync.WaitGroup
	allowed := make([]atomic.Int64, 10)
	for i := range 2000 {
		wg.Go(func() {
			uid := int64(i%10) + 1
			d, err := e.Evaluate(context.Background(), Request{UserID: uid, Verb: "GET"})
			if err != nil {
				t.Error(err)
				return
			}
			if d.Allowed {
				allowed[uid-1].Add(1)
			}
		})
	}
	wg.Wait()
	var total int64
	for i := range allowed {
		n := allowed[i].Load()
		if n > 15 {
			t.Errorf("user %d: %d allowed, more than the each_user rate 15", i+1, n)
		}
		total += n
	}
	if total > 100 || total == 0 {
		t.Errorf("%d allowed in total, want 1..100", total)
	}
}

// exhaust sends requests until one is rejected (at most rate+1 requests).
func exhaust(t *testing.T, e *Engine, req Request, rate int) {
	t.Helper()
	for i := range rate + 1 {
		d, err := e.Evaluate(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if want := i < rate; d.Allowed != want {
			t.Fatalf("request %d: allowed = %v, want %v", i+1, d.Allowed, want)
		}
	}
}

func allowed(t *testing.T, e *Engine, req Request) bool {
	t.Helper()
	d, err := e.Evaluate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return d.Allowed
}

var resetLimits = []Limit{
	{ID: 1, Name: "inst", Type: TypeInstance, Rate: 3, Period: PeriodMinute, Active: true, Verb: "GET"},
	{ID: 2, Name: "each", Type: TypeEachUser, Rate: 2, Period: PeriodMinute, Active: true, Verb: "POST"},
}

// testReset exhausts limits, resets one then all, on engine e.
func testReset(t *testing.T, e *Engine) {
	get := Request{Verb: "GET"}
	u1 := Request{UserID: 1, Verb: "POST"}
	u2 := Request{UserID: 2, Verb: "POST"}
	exhaust(t, e, get, 3)
	exhaust(t, e, u1, 2)
	exhaust(t, e, u2, 2)

	if err := e.ResetLimit(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	if !allowed(t, e, u1) || !allowed(t, e, u2) {
		t.Error("each_user counters not reset for every user")
	}
	if allowed(t, e, get) {
		t.Error("resetting limit 2 reset limit 1")
	}
	exhaust(t, e, Request{UserID: 3, Verb: "POST"}, 2)

	if err := e.ResetLimit(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	exhaust(t, e, get, 3)

	if err := e.ResetAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, req := range []Request{get, u1, u2, {UserID: 3, Verb: "POST"}} {
		exhaust(t, e, req, resetRate(req))
	}
	if err := e.ResetLimit(t.Context(), 0); err == nil {
		t.Error("ResetLimit(0) succeeded")
	}
	// Resetting a limit the engine does not know is allowed (deleted limit).
	if err := e.ResetLimit(t.Context(), 99); err != nil {
		t.Error(err)
	}
}

func resetRate(req Request) int {
	if req.UserID != 0 {
		return 2
	}
	return 3
}

func TestResetMemory(t *testing.T) {
	testReset(t, newEngine(t, resetLimits...))
}

func TestResetRedis(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rt redisTarget) {
		testReset(t, newRedisEngine(t, rt, 0, resetLimits...))
	})
}

// TestResetAcrossProcesses checks that a reset made by one process reaches
// another when it refreshes its generations.
func TestResetAcrossProcesses(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rt redisTarget) {
		a := newRedisEngine(t, rt, time.Hour, resetLimits...)
		b := newRedisEngine(t, rt, time.Hour, resetLimits...)
		u1 := Request{UserID: 1, Verb: "POST"}
		exhaust(t, a, u1, 2)
		if allowed(t, b, u1) {
			t.Fatal("the second process does not share the counter")
		}
		if err := a.ResetLimit(t.Context(), 2); err != nil {
			t.Fatal(err)
		}
		if allowed(t, b, u1) {
			t.Fatal("the second process saw the reset before refreshing (refresh interval 1h)")
		}
		if err := b.Store().Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		// b counted one more on the old generation; a and b now share the new one.
		exhaust(t, b, u1, 2)
		if allowed(t, a, u1) {
			t.Error("the processes do not share the new generation")
		}

		if err := b.ResetAll(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := a.Store().Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		exhaust(t, a, u1, 2)
		if allowed(t, b, u1) {
			t.Error("the processes do not share the new epoch")
		}
	})
}

// periodLimit is a limit of rate 2 over p, with an id per period so the
// counters of the subtests never meet.
func periodLimit(p Period) Limit {
	return Limit{ID: int64(p.Index()) + 1, Name: string(p), Type: TypeEachUser, Rate: 2, Period: p, Active: true}
}

func TestWindowExpiryRedis(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rt redisTarget) {
		if rt.fastForward == nil {
			t.Skip("window expiry needs miniredis's FastForward")
		}
		for _, p := range Periods() {
			t.Run(string(p), func(t *testing.T) {
				e := newRedisEngine(t, rt, 0, periodLimit(p))
				u := Request{UserID: 4, Verb: "GET"}
				exhaust(t, e, u, 2)
				d, err := e.Evaluate(t.Context(), u)
				if err != nil {
					t.Fatal(err)
				}
				// Real time passes between the calls; allow 2 s of it.
				secs := int64(p.Duration() / time.Second)
				if d.Allowed || d.Limit != 2 || d.RetryAfter < secs-1 || d.RetryAfter > secs+1 {
					t.Errorf("decision = %+v, want rejected with Retry-After about %d s", d, secs)
				}
				if now := time.Now().Unix(); d.Reset < now+secs-1 || d.Reset > now+secs+2 {
					t.Errorf("Reset = %d, want about now+%d = %d", d.Reset, secs, now+secs)
				}
				rt.fastForward(p.Duration() - time.Second)
				if allowed(t, e, u) {
					t.Error("the window reopened a second early")
				}
				rt.fastForward(2 * time.Second)
				exhaust(t, e, u, 2)
			})
		}
	})
}

// TestWindowExpiryMemory runs the memory store in a synctest bubble, whose
// fake clock ulule's memory store reads through time.Now.
func TestWindowExpiryMemory(t *testing.T) {
	for _, p := range Periods() {
		t.Run(string(p), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEngine(t, periodLimit(p))
				u := Request{UserID: 4, Verb: "GET"}
				start := time.Now().Unix()
				secs := int64(p.Duration() / time.Second)
				exhaust(t, e, u, 2)
				time.Sleep(10 * time.Second)
				d, err := e.Evaluate(t.Context(), u)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed || d.Reset != start+secs+1 || d.RetryAfter != secs+1-10 {
					t.Errorf("decision = %+v, want Reset %d, Retry-After %d", d, start+secs+1, secs+1-10)
				}
				time.Sleep(p.Duration() - 10*time.Second)
				if allowed(t, e, u) {
					t.Error("the window reopened at its last instant")
				}
				time.Sleep(time.Nanosecond)
				exhaust(t, e, u, 2)
			})
		})
	}
}

// TestStoreOutlivesEngine checks that a rebuilt Engine over the same Store
// carries the counters on.
func TestStoreOutlivesEngine(t *testing.T) {
	store := NewMemoryStore(MemoryOptions{})
	e1, err := New([]Limit{limit100}, store)
	if err != nil {
		t.Fatal(err)
	}
	for range 60 {
		if !allowed(t, e1, Request{}) {
			t.Fatal("rejected")
		}
	}
	changed := limit100
	changed.Rate = 61 // a changed rate keeps the counter
	extra := Limit{ID: 2, Name: "x", Type: TypeService, ServiceID: 1, Rate: 5, Period: PeriodDay, Active: true}
	e2, err := New([]Limit{changed, extra}, store)
	if err != nil {
		t.Fatal(err)
	}
	if !allowed(t, e2, Request{}) || allowed(t, e2, Request{}) {
		t.Error("the rebuilt engine did not carry the counter on")
	}
}

func TestRedisErrors(t *testing.T) {
	if _, err := OpenRedis("http://nope"); err == nil {
		t.Error("OpenRedis accepted an http URL")
	}
	if _, err := NewRedisStore(t.Context(), nil, RedisOptions{}); err == nil {
		t.Error("NewRedisStore accepted a nil client")
	}
	c, err := OpenRedis("redis://user:secret@127.0.0.1:1/3")
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Options(); o.Addr != "127.0.0.1:1" || o.DB != 3 || o.Username != "user" || o.Password != "secret" {
		t.Errorf("OpenRedis options = %+v", o)
	}
	c.Close()
	c = redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialerRetries: 1, MaxRetries: -1})
	defer c.Close()
	if _, err := NewRedisStore(t.Context(), c, RedisOptions{}); err == nil {
		t.Error("NewRedisStore succeeded without a server")
	}

	// A server that goes away: Evaluate reports the error.
	m := miniredis.RunT(t)
	rc := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	defer rc.Close()
	s, err := NewRedisStore(t.Context(), rc, RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New([]Limit{limit100}, s)
	if err != nil {
		t.Fatal(err)
	}
	if !allowed(t, e, Request{}) {
		t.Fatal("rejected")
	}
	m.Close()
	if _, err := e.Evaluate(t.Context(), Request{}); err == nil {
		t.Error("Evaluate succeeded with Redis down")
	}
}
