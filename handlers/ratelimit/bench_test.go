package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/handlers/ratelimit"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// benchLimits is a configuration of 30 limits of every type over ten
// services, of which six apply to the benchmark's request (instance,
// each_user, role, service, each_user.service and an endpoint limit).
func benchLimits() []limiter.Limit {
	var ls []limiter.Limit
	add := func(typ limiter.Type, mod func(*limiter.Limit)) {
		l := limiter.Limit{ID: int64(len(ls) + 1), Name: "l", Type: typ, Rate: 1 << 40, Period: limiter.PeriodHour, Active: true}
		if mod != nil {
			mod(&l)
		}
		ls = append(ls, l)
	}
	add(limiter.TypeInstance, nil)
	add(limiter.TypeEachUser, nil)
	add(limiter.TypeRole, func(l *limiter.Limit) { l.RoleID = 3 })
	add(limiter.TypeService, func(l *limiter.Limit) { l.ServiceID = 7 })
	add(limiter.TypeEachUserService, func(l *limiter.Limit) { l.ServiceID = 7 })
	add(limiter.TypeServiceEndpoint, func(l *limiter.Limit) { l.ServiceID = 7; l.Endpoint = "_table/contact/*" })
	for i := int64(0); len(ls) < 30; i++ {
		sid := 10 + i%10
		switch i % 6 {
		case 0:
			add(limiter.TypeService, func(l *limiter.Limit) { l.ServiceID = sid })
		case 1:
			add(limiter.TypeUser, func(l *limiter.Limit) { l.UserID = 100 + i })
		case 2:
			add(limiter.TypeRole, func(l *limiter.Limit) { l.RoleID = 100 + i })
		case 3:
			add(limiter.TypeServiceEndpoint, func(l *limiter.Limit) { l.ServiceID = 7; l.Endpoint = "_table/t" + string(rune('a'+i)) })
		case 4:
			add(limiter.TypeEachUserServiceEndpoint, func(l *limiter.Limit) { l.ServiceID = sid; l.Endpoint = "_table/x/*" })
		case 5:
			add(limiter.TypeInstance, func(l *limiter.Limit) { l.Verb = "DELETE" })
		}
	}
	return ls
}

// BenchmarkStage measures what the stage adds to a request with 30 limits
// defined: "limits" (six apply) and "limits-1-applies" against "none" (a
// stage with no limits) and "bare" (no stage at all); "limits-redis" is
// "limits" counting in the Redis of PORTCULLIS_TEST_REDIS.
func BenchmarkStage(b *testing.B) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	id := &caller.Identity{AppID: 1, RoleID: 3, UserID: 11, Requestor: caller.API}
	r := httptest.NewRequest(http.MethodGet, "/api/v2/db/_table/contact/123", nil)
	ctx := caller.WithIdentity(r.Context(), id)
	ctx = service.WithTarget(ctx, &service.Target{Service: &store.Service{ID: 7, Name: "db"}, Resource: "_table/contact/123", Verb: http.MethodGet})
	r = r.WithContext(ctx)

	// anon is an anonymous request to a service no limit names: only the
	// instance limit applies.
	anon := httptest.NewRequest(http.MethodGet, "/api/v2/files/a.txt", nil)
	anon = anon.WithContext(service.WithTarget(anon.Context(), &service.Target{Service: &store.Service{ID: 99, Name: "files"}, Resource: "a.txt", Verb: http.MethodGet}))

	runReq := func(b *testing.B, h http.Handler, r *http.Request) {
		w := httptest.NewRecorder()
		b.ReportAllocs()
		for b.Loop() {
			clear(w.Header())
			h.ServeHTTP(w, r)
		}
	}
	run := func(b *testing.B, h http.Handler) { runReq(b, h, r) }
	b.Run("bare", func(b *testing.B) { run(b, ok) })
	b.Run("none", func(b *testing.B) {
		stage, _ := ratelimit.New(ratelimit.Options{Limits: func() *limiter.Engine { return nil }})
		run(b, stage(ok))
	})
	b.Run("limits", func(b *testing.B) {
		src, err := ratelimit.Static(benchLimits(), limiter.NewMemoryStore(limiter.MemoryOptions{}))
		if err != nil {
			b.Fatal(err)
		}
		if n := len(src().Match(limiter.Request{UserID: 11, RoleID: 3, ServiceID: 7, Endpoint: "_table/contact/123", Verb: "GET"})); n != 6 {
			b.Fatalf("%d limits apply, want 6", n)
		}
		stage, _ := ratelimit.New(ratelimit.Options{Limits: src})
		run(b, stage(ok))
	})
	b.Run("limits-1-applies", func(b *testing.B) {
		src, err := ratelimit.Static(benchLimits(), limiter.NewMemoryStore(limiter.MemoryOptions{}))
		if err != nil {
			b.Fatal(err)
		}
		if n := len(src().Match(limiter.Request{ServiceID: 99, Endpoint: "a.txt", Verb: "GET"})); n != 1 {
			b.Fatalf("%d limits apply, want 1", n)
		}
		stage, _ := ratelimit.New(ratelimit.Options{Limits: src})
		runReq(b, stage(ok), anon)
	})
	b.Run("limits-redis", func(b *testing.B) {
		url := os.Getenv("PORTCULLIS_TEST_REDIS")
		if url == "" {
			b.Skip("PORTCULLIS_TEST_REDIS not set: skipping the Redis run")
		}
		c, err := limiter.OpenRedis(url)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		prefix := fmt.Sprintf("pcbench:%d:%d", os.Getpid(), time.Now().UnixNano())
		defer func() {
			ctx := context.Background()
			keys, _ := c.Keys(ctx, prefix+":*").Result()
			if len(keys) > 0 {
				c.Del(ctx, keys...)
			}
		}()
		st, err := limiter.NewRedisStore(b.Context(), c, limiter.RedisOptions{Prefix: prefix})
		if err != nil {
			b.Fatal(err)
		}
		src, err := ratelimit.Static(benchLimits(), st)
		if err != nil {
			b.Fatal(err)
		}
		stage, _ := ratelimit.New(ratelimit.Options{Limits: src})
		run(b, stage(ok))
	})
}
