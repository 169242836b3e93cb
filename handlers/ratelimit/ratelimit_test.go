package ratelimit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/portcullis-dev/portcullis/handlers/ratelimit"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// ok is the backend behind the stage.
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(`{"ok":true}`))
})

// call describes one request through the stage.
type call struct {
	id       *caller.Identity // nil: no identity stage ran
	service  *store.Service   // nil: no target
	resource string
	method   string
	verb     string // the target's verb when it differs from method
}

func (c call) request(ctx context.Context) *http.Request {
	method := c.method
	if method == "" {
		method = http.MethodGet
	}
	r := httptest.NewRequestWithContext(ctx, method, "/api/v2/x/"+c.resource, nil)
	ctx = r.Context()
	if c.id != nil {
		ctx = caller.WithIdentity(ctx, c.id)
	}
	if c.service != nil {
		verb := c.verb
		if verb == "" {
			verb = method
		}
		ctx = service.WithTarget(ctx, &service.Target{Service: c.service, Resource: c.resource, Verb: verb})
	}
	return r.WithContext(ctx)
}

func newStage(t testing.TB, limits []limiter.Limit, opts ratelimit.Options) http.Handler {
	t.Helper()
	if opts.Limits == nil {
		src, err := ratelimit.Static(limits, limiter.NewMemoryStore(limiter.MemoryOptions{CleanUpInterval: -1}))
		if err != nil {
			t.Fatalf("Static: %v", err)
		}
		opts.Limits = src
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	stage, err := ratelimit.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return stage(ok)
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

var (
	db    = &store.Service{ID: 7, Name: "db"}
	files = &store.Service{ID: 8, Name: "files"}
	alice = &caller.Identity{AppID: 1, RoleID: 3, UserID: 11, Requestor: caller.API}
	bob   = &caller.Identity{AppID: 1, RoleID: 4, UserID: 12, Requestor: caller.API}
	carol = &caller.Identity{AppID: 1, RoleID: 3, UserID: 13, Requestor: caller.API}
	keyed = &caller.Identity{AppID: 1, RoleID: 3, Requestor: caller.API} // API key only
	admin = &caller.Identity{AppID: 1, UserID: 1, Admin: true, Requestor: caller.API}
	// script is an inner call made by an event script on alice's behalf.
	script = &caller.Identity{AppID: 1, RoleID: 3, UserID: 11, Requestor: caller.Script}
)

func lim(id int64, typ limiter.Type, rate int64, mod func(*limiter.Limit)) limiter.Limit {
	l := limiter.Limit{ID: id, Name: "limit " + strconv.FormatInt(id, 10), Type: typ, Rate: rate, Period: limiter.PeriodMinute, Active: true}
	if mod != nil {
		mod(&l)
	}
	return l
}

func TestNewValidates(t *testing.T) {
	if _, err := ratelimit.New(ratelimit.Options{}); err == nil {
		t.Fatal("New without Limits: no error")
	}
	if _, err := ratelimit.Static([]limiter.Limit{{ID: 1, Name: "bad", Type: "instance.nope", Rate: 1, Period: limiter.PeriodMinute}}, nil); err == nil {
		t.Fatal("Static with an invalid limit: no error")
	}
	if _, err := ratelimit.Static([]limiter.Limit{lim(0, limiter.TypeInstance, 1, nil)}, nil); err == nil {
		t.Fatal("Static with a limit without id: no error")
	}
}

// TestLimitTypes sends a sequence of calls through a stage holding one limit
// and checks which of them are rejected.
func TestLimitTypes(t *testing.T) {
	type step struct {
		call call
		want int
	}
	const ok, no = http.StatusOK, http.StatusTooManyRequests
	userEP := func(l *limiter.Limit) { l.UserID, l.ServiceID, l.Endpoint = alice.UserID, db.ID, "_table/contact" }
	tests := []struct {
		name   string
		limits []limiter.Limit
		steps  []step
	}{
		{"instance counts everyone", []limiter.Limit{lim(1, limiter.TypeInstance, 2, nil)}, []step{
			{call{id: alice, service: db}, ok}, {call{service: files}, ok}, {call{id: keyed}, no}, {call{id: bob, service: db}, no},
		}},
		{"instance.user counts one user", []limiter.Limit{lim(1, limiter.TypeUser, 1, func(l *limiter.Limit) { l.UserID = alice.UserID })}, []step{
			{call{id: alice, service: db}, ok}, {call{id: bob, service: db}, ok}, {call{id: alice, service: files}, no}, {call{id: keyed, service: db}, ok},
		}},
		{"instance.each_user counts each user apart", []limiter.Limit{lim(1, limiter.TypeEachUser, 1, nil)}, []step{
			{call{id: alice, service: db}, ok}, {call{id: bob, service: db}, ok}, {call{id: alice, service: db}, no},
			{call{id: bob, service: files}, no}, {call{id: keyed, service: db}, ok}, {call{id: keyed, service: db}, ok},
			{call{service: db}, ok},
		}},
		{"instance.role counts a role", []limiter.Limit{lim(1, limiter.TypeRole, 2, func(l *limiter.Limit) { l.RoleID = 3 })}, []step{
			{call{id: alice, service: db}, ok}, {call{id: bob, service: db}, ok}, {call{id: keyed, service: db}, ok},
			{call{id: carol, service: files}, no}, {call{id: bob, service: db}, ok},
		}},
		{"instance.service counts one service", []limiter.Limit{lim(1, limiter.TypeService, 1, func(l *limiter.Limit) { l.ServiceID = db.ID })}, []step{
			{call{id: alice, service: db}, ok}, {call{id: alice, service: files}, ok}, {call{id: bob, service: db}, no}, {call{id: bob}, ok},
		}},
		{"instance.user.service", []limiter.Limit{lim(1, limiter.TypeUserService, 1, func(l *limiter.Limit) { l.UserID, l.ServiceID = alice.UserID, db.ID })}, []step{
			{call{id: alice, service: db}, ok}, {call{id: alice, service: files}, ok}, {call{id: bob, service: db}, ok}, {call{id: alice, service: db}, no},
		}},
		{"instance.each_user.service", []limiter.Limit{lim(1, limiter.TypeEachUserService, 1, func(l *limiter.Limit) { l.ServiceID = db.ID })}, []step{
			{call{id: alice, service: db}, ok}, {call{id: bob, service: db}, ok}, {call{id: alice, service: files}, ok},
			{call{id: alice, service: db}, no}, {call{id: bob, service: db}, no},
		}},
		{"instance.service.endpoint buckets ids", []limiter.Limit{lim(1, limiter.TypeServiceEndpoint, 2, func(l *limiter.Limit) { l.ServiceID, l.Endpoint = db.ID, "_table/contact/:id" })}, []step{
			{call{id: alice, service: db, resource: "_table/contact/1"}, ok}, {call{id: bob, service: db, resource: "_table/contact"}, ok},
			{call{id: bob, service: db, resource: "_table/Contact/22/"}, ok}, {call{id: keyed, service: db, resource: "_table/contact/3"}, no},
			{call{id: alice, service: files, resource: "_table/contact/4"}, ok},
		}},
		{"instance.service.endpoint with a wildcard", []limiter.Limit{lim(1, limiter.TypeServiceEndpoint, 2, func(l *limiter.Limit) { l.ServiceID, l.Endpoint = db.ID, "_table/*" })}, []step{
			{call{id: alice, service: db, resource: "_table"}, ok}, {call{id: alice, service: db, resource: "_schema/contact"}, ok},
			{call{id: alice, service: db, resource: "_table/todo/5"}, ok}, {call{id: alice, service: db, resource: "_table/contact"}, no},
		}},
		{"instance.user.service.endpoint", []limiter.Limit{lim(1, limiter.TypeUserServiceEndpoint, 1, userEP)}, []step{
			{call{id: alice, service: db, resource: "_table/contact"}, ok}, {call{id: bob, service: db, resource: "_table/contact"}, ok},
			{call{id: alice, service: db, resource: "_table/todo"}, ok}, {call{id: alice, service: db, resource: "_table/contact"}, no},
		}},
		{"instance.each_user.service.endpoint", []limiter.Limit{lim(1, limiter.TypeEachUserServiceEndpoint, 1, func(l *limiter.Limit) {
			l.ServiceID, l.Endpoint = db.ID, "_table/contact"
		})}, []step{
			{call{id: alice, service: db, resource: "_table/contact"}, ok}, {call{id: bob, service: db, resource: "_table/contact"}, ok},
			{call{id: alice, service: db, resource: "_table/todo"}, ok}, {call{id: alice, service: db, resource: "_table/contact"}, no},
			{call{id: bob, service: db, resource: "_table/contact"}, no},
		}},
		{"verb restricts a limit, tunnelled verb counts", []limiter.Limit{lim(1, limiter.TypeInstance, 1, func(l *limiter.Limit) { l.Verb = "delete" })}, []step{
			{call{id: alice, service: db, method: http.MethodGet}, ok}, {call{id: alice, service: db, method: http.MethodPost}, ok},
			{call{id: alice, service: db, method: http.MethodPost, verb: http.MethodDelete}, ok},
			{call{id: alice, service: db, method: http.MethodDelete}, no}, {call{id: alice, service: db, method: http.MethodGet}, ok},
		}},
		{"inactive limits never count", []limiter.Limit{lim(1, limiter.TypeInstance, 1, func(l *limiter.Limit) { l.Active = false })}, []step{
			{call{id: alice, service: db}, ok}, {call{id: alice, service: db}, ok}, {call{id: alice, service: db}, ok},
		}},
		{"a specific-user limit overrides each_user at the same level", []limiter.Limit{
			lim(1, limiter.TypeEachUser, 1, nil),
			lim(2, limiter.TypeUser, 3, func(l *limiter.Limit) { l.UserID = alice.UserID }),
		}, []step{
			{call{id: bob, service: db}, ok}, {call{id: bob, service: db}, no},
			{call{id: alice, service: db}, ok}, {call{id: alice, service: db}, ok}, {call{id: alice, service: db}, ok}, {call{id: alice, service: db}, no},
		}},
		{"administrators and script calls are exempt", []limiter.Limit{lim(1, limiter.TypeInstance, 1, nil)}, []step{
			{call{id: admin, service: db}, ok}, {call{id: script, service: db}, ok}, {call{id: alice, service: db}, ok},
			{call{id: admin, service: db}, ok}, {call{id: script, service: db}, ok}, {call{id: alice, service: db}, no},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newStage(t, tt.limits, ratelimit.Options{})
			for i, s := range tt.steps {
				rec := serve(h, s.call.request(t.Context()))
				if rec.Code != s.want {
					t.Fatalf("step %d (%+v): status %d, want %d; body %s", i, s.call, rec.Code, s.want, rec.Body)
				}
			}
		})
	}
}

func TestHeadersAndEnvelope(t *testing.T) {
	limits := []limiter.Limit{
		lim(1, limiter.TypeInstance, 5, nil),
		lim(2, limiter.TypeEachUserService, 2, func(l *limiter.Limit) { l.ServiceID = db.ID; l.Name = "two per user"; l.Verb = "GET" }),
	}
	h := newStage(t, limits, ratelimit.Options{})
	start := time.Now().Unix()
	c := call{id: alice, service: db, resource: "_table/contact"}

	for i, wantRemaining := range []string{"1", "0"} {
		rec := serve(h, c.request(t.Context()))
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: status %d", i, rec.Code)
		}
		hd := rec.Header()
		if got := hd.Get(ratelimit.HeaderLimit); got != "2" {
			t.Errorf("request %d: %s = %q, want the tighter limit's 2", i, ratelimit.HeaderLimit, got)
		}
		if got := hd.Get(ratelimit.HeaderRemaining); got != wantRemaining {
			t.Errorf("request %d: %s = %q, want %s", i, ratelimit.HeaderRemaining, got, wantRemaining)
		}
		checkReset(t, hd.Get(ratelimit.HeaderReset), start)
		if got := hd.Get(ratelimit.HeaderRetryAfter); got != "" {
			t.Errorf("request %d: Retry-After %q on an allowed request", i, got)
		}
	}

	rec := serve(h, c.request(t.Context()))
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("third request: status %d, want 429", rec.Code)
	}
	hd := rec.Header()
	if got := hd.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q", got)
	}
	if got := hd.Get(ratelimit.HeaderLimit); got != "2" {
		t.Errorf("429 %s = %q, want 2", ratelimit.HeaderLimit, got)
	}
	if got := hd.Get(ratelimit.HeaderRemaining); got != "0" {
		t.Errorf("429 %s = %q, want 0", ratelimit.HeaderRemaining, got)
	}
	reset := checkReset(t, hd.Get(ratelimit.HeaderReset), start)
	ra, err := strconv.ParseInt(hd.Get(ratelimit.HeaderRetryAfter), 10, 64)
	if err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After %q, want 1..60 seconds (never more than the minute window)", hd.Get(ratelimit.HeaderRetryAfter))
	}
	if now := time.Now().Unix(); reset-now > ra+1 || reset-now < ra-1 {
		t.Errorf("Retry-After %d does not match the reset %d (now %d)", ra, reset, now)
	}

	var env struct {
		Error struct {
			Code       int                  `json:"code"`
			Message    string               `json:"message"`
			StatusCode int                  `json:"status_code"`
			Context    []ratelimit.Exceeded `json:"context"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	sid, verb := db.ID, "GET"
	want := []ratelimit.Exceeded{{
		ID: 2, Name: "two per user", Type: "instance.each_user.service", KeyText: "instance.each_user:.service:7.verb:GET.minute",
		Rate: 2, Period: "minute", ServiceID: &sid, Verb: &verb, Reset: reset,
	}}
	if env.Error.Code != 429 || env.Error.StatusCode != 429 || env.Error.Message != "API limit(s) exceeded. " {
		t.Errorf("envelope %+v", env.Error)
	}
	if diff := cmp.Diff(want, env.Error.Context); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	// The nullable fields are null, not absent, as in the limit record.
	for _, f := range []string{`"user_id":null`, `"role_id":null`, `"endpoint":null`} {
		if !bytes.Contains(rec.Body.Bytes(), []byte(f)) {
			t.Errorf("body lacks %s: %s", f, rec.Body)
		}
	}

	// Another user is not limited by alice's counter but still by the
	// instance limit (its 4th request of 5) and sees its headers.
	rec = serve(h, call{id: bob, service: files}.request(t.Context()))
	if rec.Code != http.StatusOK || rec.Header().Get(ratelimit.HeaderLimit) != "5" || rec.Header().Get(ratelimit.HeaderRemaining) != "1" {
		t.Errorf("bob: status %d, limit %q, remaining %q; want 200, 5, 1", rec.Code,
			rec.Header().Get(ratelimit.HeaderLimit), rec.Header().Get(ratelimit.HeaderRemaining))
	}
}

func checkReset(t *testing.T, v string, start int64) int64 {
	t.Helper()
	reset, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("X-RateLimit-Reset %q: %v", v, err)
	}
	if reset < start+59 || reset > time.Now().Unix()+61 {
		t.Errorf("X-RateLimit-Reset %d, want about a minute after %d", reset, start)
	}
	return reset
}

func TestNoHeadersWhenNoLimitApplies(t *testing.T) {
	limits := []limiter.Limit{lim(1, limiter.TypeService, 1, func(l *limiter.Limit) { l.ServiceID = db.ID })}
	h := newStage(t, limits, ratelimit.Options{})
	for _, c := range []call{{id: alice, service: files}, {id: admin, service: db}, {id: script, service: db}, {id: alice}} {
		rec := serve(h, c.request(t.Context()))
		if rec.Code != http.StatusOK {
			t.Fatalf("%+v: status %d", c, rec.Code)
		}
		for _, k := range []string{ratelimit.HeaderLimit, ratelimit.HeaderRemaining, ratelimit.HeaderReset, ratelimit.HeaderRetryAfter} {
			if v := rec.Header().Get(k); v != "" {
				t.Errorf("%+v: %s = %q, want none", c, k, v)
			}
		}
	}
	// A nil engine (no limits configured) passes everything.
	h = newStage(t, nil, ratelimit.Options{Limits: func() *limiter.Engine { return nil }})
	if rec := serve(h, call{id: alice, service: db}.request(t.Context())); rec.Code != http.StatusOK {
		t.Fatalf("nil engine: status %d", rec.Code)
	}
}

// TestEngineSwap checks that the stage reads the Limits source per request:
// new limits apply at once and, over the same store, counters carry on.
func TestEngineSwap(t *testing.T) {
	st := limiter.NewMemoryStore(limiter.MemoryOptions{CleanUpInterval: -1})
	build := func(rate int64) *limiter.Engine {
		e, err := limiter.New([]limiter.Limit{lim(1, limiter.TypeInstance, rate, nil)}, st)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	var cur atomic.Pointer[limiter.Engine]
	cur.Store(build(2))
	h := newStage(t, nil, ratelimit.Options{Limits: cur.Load})
	c := call{id: alice, service: db}
	for i, want := range []int{200, 200, 429} {
		if got := serve(h, c.request(t.Context())).Code; got != want {
			t.Fatalf("rate 2, request %d: %d, want %d", i, got, want)
		}
	}
	cur.Store(build(5)) // the counter (3) carries on: two more pass
	for i, want := range []int{200, 200, 429} {
		if got := serve(h, c.request(t.Context())).Code; got != want {
			t.Fatalf("rate 5, request %d: %d, want %d", i, got, want)
		}
	}
}

// TestConcurrency fires many more requests than the limit at once; exactly
// the limit succeed.
func TestConcurrency(t *testing.T) {
	const rate, n = 50, 800
	h := newStage(t, []limiter.Limit{lim(1, limiter.TypeEachUserService, rate, func(l *limiter.Limit) { l.ServiceID = db.ID })}, ratelimit.Options{})
	var passed, rejected atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			switch serve(h, call{id: alice, service: db}.request(t.Context())).Code {
			case http.StatusOK:
				passed.Add(1)
			case http.StatusTooManyRequests:
				rejected.Add(1)
			}
		})
	}
	wg.Wait()
	if passed.Load() != rate || rejected.Load() != n-rate {
		t.Fatalf("passed %d, rejected %d; want %d and %d", passed.Load(), rejected.Load(), rate, n-rate)
	}
}

// brokenRedis returns a Redis store whose server has gone away.
func brokenRedis(t *testing.T) *limiter.Store {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Millisecond, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	st, err := limiter.NewRedisStore(t.Context(), c, limiter.RedisOptions{Prefix: "rltest", RefreshInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	return st
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestStoreDown(t *testing.T) {
	for _, failClosed := range []bool{false, true} {
		t.Run("fail closed "+strconv.FormatBool(failClosed), func(t *testing.T) {
			var logs bytes.Buffer
			reg := prometheus.NewRegistry()
			clk := &clock{t: time.Unix(1_800_000_000, 0)}
			src, err := ratelimit.Static([]limiter.Limit{lim(1, limiter.TypeInstance, 1, nil)}, brokenRedis(t))
			if err != nil {
				t.Fatal(err)
			}
			h := newStage(t, nil, ratelimit.Options{
				Limits: src, FailClosed: failClosed, Registerer: reg, Now: clk.now,
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			})
			want := http.StatusOK
			if failClosed {
				want = http.StatusServiceUnavailable
			}
			for i := range 3 {
				rec := serve(h, call{id: alice, service: db}.request(t.Context()))
				if rec.Code != want {
					t.Fatalf("request %d: status %d, want %d; body %s", i, rec.Code, want, rec.Body)
				}
				if failClosed {
					if rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), ratelimit.MsgUnavailable) {
						t.Errorf("503: Retry-After %q, body %s", rec.Header().Get("Retry-After"), rec.Body)
					}
					if strings.Contains(rec.Body.String(), "127.0.0.1") {
						t.Errorf("503 leaks the cause: %s", rec.Body)
					}
				}
			}
			if n := strings.Count(logs.String(), "rate limits could not be counted"); n != 1 {
				t.Errorf("%d log lines for 3 failures within %v, want 1:\n%s", n, ratelimit.ErrorLogInterval, logs.String())
			}
			clk.add(ratelimit.ErrorLogInterval)
			serve(h, call{id: alice, service: db}.request(t.Context()))
			if !strings.Contains(logs.String(), "failures_not_logged=2") {
				t.Errorf("second log line does not report the 2 suppressed failures:\n%s", logs.String())
			}
			if got := counter(t, reg, "portcullis_ratelimit_errors_total"); got != 4 {
				t.Errorf("errors metric %v, want 4", got)
			}
		})
	}
}

// counter returns the value of a registered counter.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s not registered", name)
	return 0
}

func TestRejectedMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newStage(t, []limiter.Limit{lim(1, limiter.TypeInstance, 1, nil)}, ratelimit.Options{Registerer: reg})
	for range 4 {
		serve(h, call{id: alice, service: db}.request(t.Context()))
	}
	if got := counter(t, reg, "portcullis_ratelimit_rejected_total"); got != 3 {
		t.Errorf("rejected metric %v, want 3", got)
	}
	// A second stage on the same registry is a configuration error, not a panic.
	if _, err := ratelimit.New(ratelimit.Options{Limits: func() *limiter.Engine { return nil }, Registerer: reg}); err == nil {
		t.Error("registering the metrics twice: no error")
	}
}

// TestClientGone checks that a request whose client went away while the
// store was being asked is not answered and not logged as a store failure.
func TestClientGone(t *testing.T) {
	var logs bytes.Buffer
	src, err := ratelimit.Static([]limiter.Limit{lim(1, limiter.TypeInstance, 1, nil)}, brokenRedis(t))
	if err != nil {
		t.Fatal(err)
	}
	h := newStage(t, nil, ratelimit.Options{Limits: src, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rec := serve(h, call{id: alice, service: db}.request(ctx))
	if rec.Body.Len() != 0 || logs.Len() != 0 {
		t.Errorf("cancelled request: body %q, logs %q; want neither", rec.Body, logs.String())
	}
}
