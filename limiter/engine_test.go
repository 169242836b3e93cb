package limiter

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newEngine builds an Engine over a fresh memory store without a cleaner
// goroutine (so it also works inside synctest bubbles).
func newEngine(t testing.TB, limits ...Limit) *Engine {
	t.Helper()
	e, err := New(limits, NewMemoryStore(MemoryOptions{CleanUpInterval: -1}))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func ids(ls []Limit) []int64 {
	out := []int64{}
	for _, l := range ls {
		out = append(out, l.ID)
	}
	return out
}

// The requests of the applicability table.
var (
	reqAnon      = Request{ServiceID: 10, Endpoint: "_table/contact/17", Verb: "GET"}
	reqAnonRole7 = Request{RoleID: 7, ServiceID: 10, Endpoint: "_table/contact/17", Verb: "GET"}
	reqU5        = Request{UserID: 5, RoleID: 7, ServiceID: 10, Endpoint: "_table/contact/17", Verb: "GET"}
	reqU6        = Request{UserID: 6, RoleID: 8, ServiceID: 10, Endpoint: "_table/contact/17", Verb: "GET"}
	reqU5Svc11   = Request{UserID: 5, RoleID: 7, ServiceID: 11, Endpoint: "_table/contact/17", Verb: "GET"}
	reqU5Account = Request{UserID: 5, RoleID: 7, ServiceID: 10, Endpoint: "_table/account", Verb: "GET"}
)

func TestEveryTypeApplies(t *testing.T) {
	requests := map[string]Request{
		"anon": reqAnon, "anonRole7": reqAnonRole7, "u5": reqU5, "u6": reqU6,
		"u5svc11": reqU5Svc11, "u5account": reqU5Account,
	}
	base := Limit{ID: 1, Name: "l", Rate: 100, Period: PeriodMinute, Active: true}
	with := func(f func(*Limit)) Limit { l := base; f(&l); return l }
	tests := []struct {
		name  string
		limit Limit
		want  []string // the requests it applies to
	}{
		{"instance", with(func(l *Limit) { l.Type = TypeInstance }),
			[]string{"anon", "anonRole7", "u5", "u6", "u5svc11", "u5account"}},
		{"instance.user", with(func(l *Limit) { l.Type, l.UserID = TypeUser, 5 }),
			[]string{"u5", "u5svc11", "u5account"}},
		{"instance.each_user", with(func(l *Limit) { l.Type = TypeEachUser }),
			[]string{"u5", "u6", "u5svc11", "u5account"}},
		{"instance.role", with(func(l *Limit) { l.Type, l.RoleID = TypeRole, 7 }),
			[]string{"anonRole7", "u5", "u5svc11", "u5account"}},
		{"instance.service", with(func(l *Limit) { l.Type, l.ServiceID = TypeService, 10 }),
			[]string{"anon", "anonRole7", "u5", "u6", "u5account"}},
		{"instance.user.service", with(func(l *Limit) { l.Type, l.UserID, l.ServiceID = TypeUserService, 5, 10 }),
			[]string{"u5", "u5account"}},
		{"instance.each_user.service", with(func(l *Limit) { l.Type, l.ServiceID = TypeEachUserService, 10 }),
			[]string{"u5", "u6", "u5account"}},
		{"instance.service.endpoint", with(func(l *Limit) {
			l.Type, l.ServiceID, l.Endpoint = TypeServiceEndpoint, 10, "_table/contact/:id"
		}), []string{"anon", "anonRole7", "u5", "u6"}},
		{"instance.user.service.endpoint", with(func(l *Limit) {
			l.Type, l.UserID, l.ServiceID, l.Endpoint = TypeUserServiceEndpoint, 5, 10, "_table/contact/*"
		}), []string{"u5"}},
		{"instance.each_user.service.endpoint", with(func(l *Limit) {
			l.Type, l.ServiceID, l.Endpoint = TypeEachUserServiceEndpoint, 10, "_table/Contact/5"
		}), []string{"u5", "u6"}},
		{"inactive", with(func(l *Limit) { l.Type, l.Active = TypeInstance, false }), nil},
		{"verb restricted, other verb", with(func(l *Limit) { l.Type, l.Verb = TypeInstance, "POST" }), nil},
		{"verb restricted, same verb any case", with(func(l *Limit) { l.Type, l.Verb = TypeInstance, "get" }),
			[]string{"anon", "anonRole7", "u5", "u6", "u5svc11", "u5account"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, tt.limit)
			var got []string
			for name, req := range requests {
				if m := e.Match(req); len(m) == 1 {
					got = append(got, name)
				} else if len(m) > 1 {
					t.Fatalf("Match returned %d limits", len(m))
				}
			}
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("applies to (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerbRestriction(t *testing.T) {
	e := newEngine(t,
		Limit{ID: 1, Name: "all", Type: TypeInstance, Rate: 1, Period: PeriodMinute, Active: true},
		Limit{ID: 2, Name: "get", Type: TypeInstance, Rate: 1, Period: PeriodMinute, Verb: "GET", Active: true},
		Limit{ID: 3, Name: "delete", Type: TypeInstance, Rate: 1, Period: PeriodMinute, Verb: "DELETE", Active: true},
	)
	tests := []struct {
		verb string
		want []int64
	}{
		{"GET", []int64{1, 2}},
		{"get", []int64{1, 2}},
		{"DELETE", []int64{1, 3}},
		{"POST", []int64{1}},
		{"HEAD", []int64{1}},
		{"", []int64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.verb, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ids(e.Match(Request{Verb: tt.verb}))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUserOverridesEachUser(t *testing.T) {
	l := func(id int64, typ Type, f func(*Limit)) Limit {
		x := Limit{ID: id, Name: "l", Type: typ, Rate: 100, Period: PeriodMinute, Active: true}
		if f != nil {
			f(&x)
		}
		return x
	}
	limits := []Limit{
		l(1, TypeEachUser, nil),
		l(2, TypeUser, func(x *Limit) { x.UserID = 5; x.Period = PeriodDay }), // overrides 1 for user 5
		l(3, TypeEachUserService, func(x *Limit) { x.ServiceID = 10 }),
		l(4, TypeUserService, func(x *Limit) { x.UserID = 5; x.ServiceID = 10 }), // overrides 3 for user 5
		l(5, TypeUserService, func(x *Limit) { x.UserID = 6; x.ServiceID = 11 }), // other service: no override of 3
		l(6, TypeEachUserServiceEndpoint, func(x *Limit) { x.ServiceID = 10; x.Endpoint = "_table/contact/:id" }),
		l(7, TypeUserServiceEndpoint, func(x *Limit) { x.UserID = 6; x.ServiceID = 10; x.Endpoint = "_table/contact/99" }), // same pattern: overrides 6 for user 6
		l(8, TypeUserServiceEndpoint, func(x *Limit) { x.UserID = 5; x.ServiceID = 10; x.Endpoint = "_table/*" }),          // other pattern: no override
		l(9, TypeEachUser, func(x *Limit) { x.Verb = "POST" }),
		l(10, TypeUser, func(x *Limit) { x.UserID = 6; x.Verb = "GET" }),   // other verb than 9 and 1: overrides nothing
		l(11, TypeUser, func(x *Limit) { x.UserID = 7; x.Active = false }), // inactive: overrides nothing
	}
	e := newEngine(t, limits...)
	tests := []struct {
		name string
		req  Request
		want []int64
	}{
		{"user 5 on service 10", Request{UserID: 5, ServiceID: 10, Endpoint: "_table/contact/1", Verb: "GET"}, []int64{2, 4, 6, 8}},
		{"user 5 posting", Request{UserID: 5, ServiceID: 10, Endpoint: "_table/contact/1", Verb: "POST"}, []int64{2, 4, 6, 8, 9}},
		{"user 6 on service 10", Request{UserID: 6, ServiceID: 10, Endpoint: "_table/contact/1", Verb: "GET"}, []int64{1, 3, 7, 10}},
		{"user 6 on service 11", Request{UserID: 6, ServiceID: 11, Endpoint: "x", Verb: "GET"}, []int64{1, 5, 10}},
		{"user 7 (inactive limit)", Request{UserID: 7, ServiceID: 10, Endpoint: "x", Verb: "GET"}, []int64{1, 3}},
		{"anonymous", Request{ServiceID: 10, Endpoint: "_table/contact/1", Verb: "POST"}, []int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ids(e.Match(tt.req))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	ok := Limit{ID: 1, Name: "a", Type: TypeInstance, Rate: 1, Period: PeriodMinute, Active: true}
	tests := []struct {
		name   string
		limits []Limit
		want   []string
	}{
		{"zero id", []Limit{{Name: "z", Type: TypeInstance, Rate: 1, Period: PeriodMinute}},
			[]string{`limit "z": id must be positive, got 0`}},
		{"duplicate id", []Limit{ok, ok}, []string{"limit 1: duplicate id"}},
		{"invalid inactive limit", []Limit{ok, {ID: 2, Name: "b", Type: TypeUser, Rate: 1, Period: PeriodMinute}},
			[]string{"limit 2 (b): user_id must be specified with this limit type. Limit: b"}},
		{"all reported", []Limit{{ID: -1, Name: "neg"}, {ID: 3, Name: "c", Type: TypeInstance, Period: PeriodMinute}},
			[]string{`limit "neg": id must be positive, got -1`, "limit 3 (c): Limit rate must be a positive integer. Limit not saved."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.limits, nil)
			if err == nil {
				t.Fatal("New succeeded")
			}
			if diff := cmp.Diff(strings.Join(tt.want, "\n"), err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	if e, err := New(nil, nil); err != nil || e.Store().Kind() != "memory" {
		t.Errorf("New(nil, nil) = %v, %v", e, err)
	}
}

func TestKeys(t *testing.T) {
	ctx := context.Background()
	limits := []Limit{
		{ID: 1, Name: "a", Type: TypeInstance, Rate: 100, Period: PeriodMinute, Active: true},
		{ID: 12, Name: "b", Type: TypeEachUserService, Rate: 100, Period: PeriodHour, ServiceID: 10, Active: true},
		{ID: 13, Name: "c", Type: TypeUserServiceEndpoint, Rate: 100, Period: PeriodWeek, UserID: 5, ServiceID: 10, Endpoint: "_table/*", Verb: "GET", Active: true},
		{ID: 14, Name: "d", Type: TypeEachUser, Rate: 100, Period: PeriodMonth, Active: true},
		{ID: 15, Name: "e", Type: TypeRole, Rate: 100, Period: PeriodDay, RoleID: 7, Active: true},
	}
	e := newEngine(t, limits...)
	keys := func(req Request) []string {
		t.Helper()
		d, err := e.Evaluate(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range d.Outcomes {
			out = append(out, o.Key)
		}
		return out
	}
	u5 := Request{UserID: 5, RoleID: 7, ServiceID: 10, Endpoint: "_table/contact", Verb: "GET"}
	u6 := Request{UserID: 6, ServiceID: 10, Endpoint: "_table/contact", Verb: "GET"}
	steps := []struct {
		name  string
		reset func() error
		req   Request
		want  []string
	}{
		{"initial user 5", nil, u5, []string{
			"instance:1:minute:0.0", "instance.each_user.service:12:hour:0.0:5",
			"instance.user.service.endpoint:13:7-day:0.0", "instance.each_user:14:30-day:0.0:5", "instance.role:15:day:0.0"}},
		{"initial user 6", nil, u6, []string{
			"instance:1:minute:0.0", "instance.each_user.service:12:hour:0.0:6", "instance.each_user:14:30-day:0.0:6"}},
		{"after reset of 12", func() error { return e.ResetLimit(ctx, 12) }, u6, []string{
			"instance:1:minute:0.0", "instance.each_user.service:12:hour:0.1:6", "instance.each_user:14:30-day:0.0:6"}},
		{"after reset of 1", func() error { return e.ResetLimit(ctx, 1) }, u6, []string{
			"instance:1:minute:0.1", "instance.each_user.service:12:hour:0.1:6", "instance.each_user:14:30-day:0.0:6"}},
		{"after reset all", func() error { return e.ResetAll(ctx) }, u6, []string{
			"instance:1:minute:1.1", "instance.each_user.service:12:hour:1.1:6", "instance.each_user:14:30-day:1.0:6"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.reset != nil {
				if err := s.reset(); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(s.want, keys(s.req)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUserKeySlots checks the each_user key cache: users that share a
// slot (ids userSlots apart) and a user seen again after a reset get their
// own key, the same as a key built afresh.
func TestUserKeySlots(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Limit{ID: 14, Name: "d", Type: TypeEachUser, Rate: 100, Period: PeriodMonth, Active: true})
	key := func(uid int64) string {
		t.Helper()
		d, err := e.Evaluate(ctx, Request{UserID: uid, Verb: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		return d.Outcomes[0].Key
	}
	for _, step := range []struct {
		uid   int64
		reset bool
		want  string
	}{
		{5, false, "instance.each_user:14:30-day:0.0:5"},
		{5, false, "instance.each_user:14:30-day:0.0:5"},
		{5 + userSlots, false, "instance.each_user:14:30-day:0.0:261"},
		{5, false, "instance.each_user:14:30-day:0.0:5"},
		{5, true, "instance.each_user:14:30-day:0.1:5"},
		{5 + 2*userSlots, false, "instance.each_user:14:30-day:0.1:517"},
	} {
		if step.reset {
			if err := e.ResetLimit(ctx, 14); err != nil {
				t.Fatal(err)
			}
		}
		if got := key(step.uid); got != step.want {
			t.Errorf("user %d: key %q, want %q", step.uid, got, step.want)
		}
	}
}

// TestEvaluateInto checks that EvaluateInto decides as Evaluate does and
// uses the caller's array when it has room.
func TestEvaluateInto(t *testing.T) {
	ctx := context.Background()
	limits := []Limit{
		{ID: 1, Name: "a", Type: TypeInstance, Rate: 100, Period: PeriodMinute, Active: true},
		{ID: 2, Name: "b", Type: TypeEachUser, Rate: 100, Period: PeriodHour, Active: true},
	}
	req := Request{UserID: 5, Verb: "GET"}
	for _, size := range []int{0, 1, 2, 4} {
		a, b := newEngine(t, limits...), newEngine(t, limits...)
		want, err := a.Evaluate(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]Outcome, 0, size)
		got, err := b.EvaluateInto(ctx, req, buf)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("room for %d (-Evaluate +EvaluateInto):\n%s", size, diff)
		}
		if inBuf := size >= 2 && &got.Outcomes[0] == &buf[:1][0]; inBuf != (size >= 2) {
			t.Errorf("room for %d: outcomes in the caller's array = %v", size, inBuf)
		}
	}
}

func TestNoLimitApplies(t *testing.T) {
	e := newEngine(t, Limit{ID: 1, Name: "a", Type: TypeService, ServiceID: 3, Rate: 1, Period: PeriodMinute, Active: true})
	for range 3 {
		d, err := e.Evaluate(context.Background(), Request{ServiceID: 4, Verb: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Decision{Allowed: true}, d); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

// TestDecisionHeaders checks the counts and the header values of a
// Decision, in a synctest bubble so the clock is exact: the bubble starts at
// 2000-01-01T00:00:00Z.
func TestDecisionHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		start := time.Now().Unix()
		minute := Limit{ID: 1, Name: "per minute", Type: TypeEachUser, Rate: 2, Period: PeriodMinute, Active: true}
		hour := Limit{ID: 2, Name: "per hour", Type: TypeInstance, Rate: 3, Period: PeriodHour, Active: true}
		e := newEngine(t, minute, hour)
		req := Request{UserID: 9, Verb: "GET"}
		type view struct {
			Allowed                             bool
			Limit, Remaining, Reset, RetryAfter int64
			Counts                              []int64
			Exceeded                            []int64
		}
		eval := func() view {
			t.Helper()
			d, err := e.Evaluate(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			v := view{Allowed: d.Allowed, Limit: d.Limit, Remaining: d.Remaining, Reset: d.Reset - start, RetryAfter: d.RetryAfter}
			for _, o := range d.Outcomes {
				v.Counts = append(v.Counts, o.Count)
				if o.Remaining != max(o.Limit.Rate-o.Count, 0) {
					t.Errorf("limit %d: remaining %d with count %d", o.Limit.ID, o.Remaining, o.Count)
				}
			}
			v.Exceeded = ids(limitsOf(d.Exceeded()))
			return v
		}
		steps := []struct {
			name    string
			advance time.Duration
			want    view
		}{
			// The fewest remaining decides while allowed: minute (1 left) over hour (2 left).
			{"first", 0, view{Allowed: true, Limit: 2, Remaining: 1, Reset: 61, Counts: []int64{1, 1}, Exceeded: []int64{}}},
			// The call that reaches the rate is still allowed, with 0 left.
			{"second", 10 * time.Second, view{Allowed: true, Limit: 2, Remaining: 0, Reset: 61, Counts: []int64{2, 2}, Exceeded: []int64{}}},
			// Minute exceeded: its reset; hour still counts the rejected request.
			{"third rejected", 10 * time.Second, view{Allowed: false, Limit: 2, Remaining: 0, Reset: 61, RetryAfter: 41, Counts: []int64{3, 3}, Exceeded: []int64{1}}},
			// Both exceeded: the one reopening last (hour) gives the headers.
			{"fourth both exceeded", 10 * time.Second, view{Allowed: false, Limit: 3, Remaining: 0, Reset: 3601, RetryAfter: 3571, Counts: []int64{4, 4}, Exceeded: []int64{1, 2}}},
			// The minute window reopened (new window starts at 90 s); hour still exceeded.
			{"after the minute", 60 * time.Second, view{Allowed: false, Limit: 3, Remaining: 0, Reset: 3601, RetryAfter: 3511, Counts: []int64{1, 5}, Exceeded: []int64{2}}},
			{"after the hour", time.Hour, view{Allowed: true, Limit: 2, Remaining: 1, Reset: 3690 + 61, Counts: []int64{1, 1}, Exceeded: []int64{}}},
		}
		for _, s := range steps {
			time.Sleep(s.advance)
			if diff := cmp.Diff(s.want, eval()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", s.name, diff)
			}
		}
	})
}

func limitsOf(os []Outcome) []Limit {
	var out []Limit
	for _, o := range os {
		out = append(out, o.Limit)
	}
	return out
}

func TestCounters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		start := time.Now().Unix()
		limits := []Limit{
			{ID: 1, Name: "inst", Type: TypeInstance, Rate: 2, Period: PeriodMinute, Active: true},
			{ID: 2, Name: "each", Type: TypeEachUser, Rate: 10, Period: PeriodHour, Active: true},
			{ID: 3, Name: "off", Type: TypeInstance, Rate: 5, Period: PeriodDay, Active: false},
		}
		e := newEngine(t, limits...)
		for _, uid := range []int64{4, 4, 4, 4, 4, 6} {
			if _, err := e.Evaluate(ctx, Request{UserID: uid, Verb: "GET"}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := e.Counters(ctx, []int64{4, 5, 6, 0})
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i].Reset -= start
		}
		want := []Counter{
			// Attempts are exact beyond the rate.
			{LimitID: 1, Key: "instance:1:minute:0.0", Max: 2, Attempts: 6, Remaining: 0, Reset: 61},
			{LimitID: 2, UserID: 4, Key: "instance.each_user:2:hour:0.0:4", Max: 10, Attempts: 5, Remaining: 5, Reset: 3601},
			{LimitID: 2, UserID: 5, Key: "instance.each_user:2:hour:0.0:5", Max: 10, Attempts: 0, Remaining: 10, Reset: 3601},
			{LimitID: 2, UserID: 6, Key: "instance.each_user:2:hour:0.0:6", Max: 10, Attempts: 1, Remaining: 9, Reset: 3601},
			{LimitID: 3, Key: "instance:3:day:0.0", Max: 5, Attempts: 0, Remaining: 5, Reset: 86401},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Counters (-want +got):\n%s", diff)
		}
		c, err := e.Counter(ctx, 2, 4)
		if err != nil || c.Attempts != 5 {
			t.Errorf("Counter(2, 4) = %+v, %v", c, err)
		}
		if c, err := e.Counter(ctx, 1, 99); err != nil || c.UserID != 0 || c.Attempts != 6 {
			t.Errorf("Counter(1, 99) = %+v, %v", c, err)
		}
		if _, err := e.Counter(ctx, 2, 0); !errors.Is(err, ErrUserRequired) {
			t.Errorf("Counter(2, 0) error = %v", err)
		}
		if _, err := e.Counter(ctx, 42, 0); !errors.Is(err, ErrUnknownLimit) {
			t.Errorf("Counter(42, 0) error = %v", err)
		}
		// Peeking did not count.
		if c, _ := e.Counter(ctx, 2, 5); c.Attempts != 0 {
			t.Errorf("peek counted: %+v", c)
		}
	})
}

func TestMoreRestrictive(t *testing.T) {
	o := func(rate, remaining, reset int64) *Outcome {
		return &Outcome{Limit: Limit{Rate: rate}, Remaining: remaining, Reset: reset}
	}
	tests := []struct {
		name    string
		a, b    *Outcome
		allowed bool
		want    bool
	}{
		{"allowed: fewer remaining", o(10, 1, 100), o(5, 2, 200), true, true},
		{"allowed: more remaining", o(5, 2, 200), o(10, 1, 100), true, false},
		{"allowed: tie, later reset", o(10, 1, 200), o(5, 1, 100), true, true},
		{"allowed: tie, earlier reset", o(5, 1, 100), o(10, 1, 200), true, false},
		{"allowed: tie, smaller rate", o(5, 1, 100), o(10, 1, 100), true, true},
		{"rejected: later reset", o(100, 0, 900), o(2, 0, 100), false, true},
		{"rejected: earlier reset", o(2, 0, 100), o(100, 0, 900), false, false},
		{"rejected: tie, smaller rate", o(2, 0, 100), o(3, 0, 100), false, true},
		{"rejected: tie, larger rate", o(3, 0, 100), o(2, 0, 100), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := moreRestrictive(tt.a, tt.b, tt.allowed); got != tt.want {
				t.Errorf("moreRestrictive = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRetryAfterNeverExceedsWindow(t *testing.T) {
	now := time.Unix(1_000_000, 400_000_000) // 0.4 s into a second
	for _, tc := range []struct {
		name  string
		reset int64
		p     Period
		want  int64
	}{
		{"minute window just opened, reset rounded up", now.Unix() + 61, PeriodMinute, 60},
		{"hour window just opened", now.Unix() + 3601, PeriodHour, 3600},
		{"day window", now.Unix() + 86401, PeriodDay, 86400},
		{"half a minute left", now.Unix() + 30, PeriodMinute, 30},
		{"reset now", now.Unix(), PeriodMinute, 1},
		{"reset passed", now.Unix() - 5, PeriodMinute, 1},
	} {
		if got := retryAfter(tc.reset, now, tc.p); got != tc.want {
			t.Errorf("%s: retryAfter = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestCollectMatchesScan checks the rule index against the definition:
// for many random sets of limits and requests, the rules collect finds are
// those of a scan of every active rule with applies, in the order given
// to New.
func TestCollectMatchesScan(t *testing.T) {
	types := []Type{TypeInstance, TypeUser, TypeEachUser, TypeRole, TypeService, TypeUserService,
		TypeEachUserService, TypeServiceEndpoint, TypeUserServiceEndpoint, TypeEachUserServiceEndpoint}
	endpoints := []string{"_table/contact", "_table/*", "_table/contact/:id", "_proc/x"}
	verbs := []string{"", "GET", "post"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(n int) int64 { return int64(rng.IntN(n) + 1) }
	for round := range 200 {
		var limits []Limit
		for i := range 1 + rng.IntN(40) {
			l := Limit{ID: int64(i + 1), Name: "l", Type: types[rng.IntN(len(types))], Rate: 1000, Period: PeriodHour,
				Verb: verbs[rng.IntN(len(verbs))], Active: rng.IntN(8) != 0}
			ti := l.Type.info()
			if ti.user {
				l.UserID = pick(4)
			}
			if ti.role {
				l.RoleID = pick(3)
			}
			if ti.level >= levelService {
				l.ServiceID = pick(3)
			}
			if ti.level == levelEndpoint {
				l.Endpoint = endpoints[rng.IntN(len(endpoints))]
			}
			limits = append(limits, l)
		}
		e := newEngine(t, limits...)
		for range 20 {
			req := Request{UserID: pick(5) - 1, RoleID: pick(4) - 1, ServiceID: pick(4) - 1,
				Endpoint: []string{"_table/contact", "_table/contact/17", "_table/account", "_proc/x", ""}[rng.IntN(5)],
				Verb:     []string{"GET", "POST", "get"}[rng.IntN(3)]}
			var epBuf [128]byte
			ep := appendBucket(epBuf[:0], req.Endpoint)
			var want []int64
			for _, r := range e.rules {
				if r.limit.Active && r.applies(&req, ep) {
					want = append(want, r.limit.ID)
				}
			}
			var got []int64
			for _, r := range e.collect(nil, &req, make([]byte, 128)) {
				got = append(got, r.limit.ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, %+v: collect %v, scan %v", round, req, got, want)
			}
		}
	}
}
