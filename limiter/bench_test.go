package limiter

import (
	"context"
	"os"
	"testing"
)

// benchLimits returns 30 active limits: 5 at instance level and 5 for each
// of services 1 to 5 (service, each_user.service, user.service and two
// endpoint limits). Rates are high enough never to be exceeded.
func benchLimits() []Limit {
	const rate = 1 << 40
	var ls []Limit
	add := func(l Limit) {
		l.ID = int64(len(ls) + 1)
		l.Name, l.Rate, l.Active = "bench", rate, true
		if l.Period == "" {
			l.Period = PeriodHour
		}
		ls = append(ls, l)
	}
	add(Limit{Type: TypeInstance, Period: PeriodMinute})
	add(Limit{Type: TypeRole, RoleID: 3})
	add(Limit{Type: TypeEachUser, Period: PeriodDay})
	add(Limit{Type: TypeUser, UserID: 1})
	add(Limit{Type: TypeUser, UserID: 2, Verb: "POST"})
	for sid := int64(1); sid <= 5; sid++ {
		add(Limit{Type: TypeService, ServiceID: sid})
		add(Limit{Type: TypeEachUserService, ServiceID: sid, Period: PeriodWeek})
		add(Limit{Type: TypeUserService, ServiceID: sid, UserID: 2})
		add(Limit{Type: TypeServiceEndpoint, ServiceID: sid, Endpoint: "_table/contact/:id", Verb: "GET"})
		add(Limit{Type: TypeEachUserServiceEndpoint, ServiceID: sid, Endpoint: "_table/*", Period: PeriodMonth})
	}
	return ls
}

// benchRequest matches 7 of the 30 limits.
var benchRequest = Request{UserID: 7, RoleID: 3, ServiceID: 3, ServiceName: "db", Endpoint: "_table/contact/17", Verb: "GET"}

func BenchmarkEvaluate(b *testing.B) {
	e, err := New(benchLimits(), NewMemoryStore(MemoryOptions{}))
	if err != nil {
		b.Fatal(err)
	}
	if n := len(e.Match(benchRequest)); n != 7 {
		b.Fatalf("request matches %d limits, want 7", n)
	}
	ctx := context.Background()
	b.Run("memory/7-of-30", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Evaluate(ctx, benchRequest); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memory/7-of-30/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := e.Evaluate(ctx, benchRequest); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("memory/7-of-30/into", func(b *testing.B) {
		var out [8]Outcome
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.EvaluateInto(ctx, benchRequest, out[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memory/1-of-30", func(b *testing.B) {
		// Anonymous call to a service without limits: only the instance limit.
		req := Request{ServiceID: 99, Endpoint: "x", Verb: "GET"}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Evaluate(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("match-only/7-of-30", func(b *testing.B) {
		var epBuf [128]byte
		var ruleBuf [16]*rule
		b.ReportAllocs()
		for b.Loop() {
			_ = e.collect(ruleBuf[:0], &benchRequest, epBuf[:])
		}
	})
	b.Run("none-apply", func(b *testing.B) {
		none, err := New([]Limit{{ID: 1, Name: "x", Type: TypeService, ServiceID: 1, Rate: 1, Period: PeriodMinute, Active: true}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := none.Evaluate(ctx, benchRequest); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEvaluateRedis(b *testing.B) {
	url := os.Getenv("PORTCULLIS_TEST_REDIS")
	if url == "" {
		b.Skip("PORTCULLIS_TEST_REDIS not set")
	}
	c, err := OpenRedis(url)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	prefix := "pcbench:" + b.Name()
	s, err := NewRedisStore(ctx, c, RedisOptions{Prefix: prefix})
	if err != nil {
		b.Fatal(err)
	}
	e, err := New(benchLimits(), s)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		keys, _ := c.Keys(ctx, prefix+":*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Evaluate(ctx, benchRequest); err != nil {
			b.Fatal(err)
		}
	}
}
