package proxy

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func ptr(v int64) *int64 { return &v }

func TestLimitFromRecord(t *testing.T) {
	tests := []struct {
		name string
		rec  store.Limit
		want limiter.Limit
	}{
		{"period name, nullable ids", store.Limit{ID: 3, Name: "n", Description: "d", Type: "instance.user.service", Rate: 10,
			Period: "hour", UserID: ptr(4), ServiceID: ptr(5), Verb: " get ", IsActive: true},
			limiter.Limit{ID: 3, Name: "n", Description: "d", Type: limiter.TypeUserService, Rate: 10, Period: limiter.PeriodHour,
				UserID: 4, ServiceID: 5, Verb: "get", Active: true}},
		{"DreamFactory period index", store.Limit{ID: 1, Name: "n", Type: "instance", Rate: 1, Period: "3"},
			limiter.Limit{ID: 1, Name: "n", Type: limiter.TypeInstance, Rate: 1, Period: limiter.PeriodWeek}},
		{"period in upper case", store.Limit{ID: 1, Name: "n", Type: "instance", Rate: 1, Period: " 30-DAY "},
			limiter.Limit{ID: 1, Name: "n", Type: limiter.TypeInstance, Rate: 1, Period: limiter.PeriodMonth}},
		{"out-of-range index stays invalid", store.Limit{ID: 1, Name: "n", Type: "instance", Rate: 1, Period: "9"},
			limiter.Limit{ID: 1, Name: "n", Type: limiter.TypeInstance, Rate: 1, Period: "9"}},
		{"endpoint and role", store.Limit{ID: 2, Name: "n", Type: "instance.role", Rate: 1, Period: "day", RoleID: ptr(8), Endpoint: "_table/x"},
			limiter.Limit{ID: 2, Name: "n", Type: limiter.TypeRole, Rate: 1, Period: limiter.PeriodDay, RoleID: 8, Endpoint: "_table/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, LimitFromRecord(&tt.rec)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLimitEngineSkipsInvalidRecords(t *testing.T) {
	var logs bytes.Buffer
	s := &Server{logger: slog.New(slog.NewTextHandler(&logs, nil)), limitStore: limiter.NewMemoryStore(limiter.MemoryOptions{CleanUpInterval: -1})}
	snap := &store.Snapshot{Limits: []*store.Limit{
		{ID: 1, Name: "good", Type: "instance", Rate: 5, Period: "minute", IsActive: true},
		{ID: 2, Name: "no user", Type: "instance.user", Rate: 5, Period: "minute", IsActive: true},
		{ID: 3, Name: "bad period", Type: "instance", Rate: 5, Period: "fortnight", IsActive: true},
		{ID: 4, Name: "also good", Type: "instance.service", Rate: 5, Period: "0", ServiceID: ptr(9), IsActive: false},
	}}
	e := s.limitEngine(snap, nil)
	var ids []int64
	for _, l := range e.Limits() {
		ids = append(ids, l.ID)
	}
	if !slices.Equal(ids, []int64{1, 4}) {
		t.Errorf("engine limits %v, want [1 4]", ids)
	}
	for _, want := range []string{"limit_id=2", "limit_id=3"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no warning for %s:\n%s", want, logs.String())
		}
	}
	if e.Store() != s.limitStore {
		t.Error("the engine does not count in the server's store")
	}
}

func TestStaleLimits(t *testing.T) {
	st := limiter.NewMemoryStore(limiter.MemoryOptions{CleanUpInterval: -1})
	base := []limiter.Limit{
		{ID: 1, Name: "a", Type: limiter.TypeUser, Rate: 5, Period: limiter.PeriodMinute, UserID: 3, Active: true},
		{ID: 2, Name: "b", Type: limiter.TypeServiceEndpoint, Rate: 5, Period: limiter.PeriodMinute, ServiceID: 4, Endpoint: "_table/x", Active: true},
		{ID: 3, Name: "c", Type: limiter.TypeEachUser, Rate: 5, Period: limiter.PeriodHour, Active: true},
	}
	build := func(mod func([]limiter.Limit) []limiter.Limit) *limiter.Engine {
		ls := mod(slices.Clone(base))
		e, err := limiter.New(ls, st)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	old := build(func(l []limiter.Limit) []limiter.Limit { return l })
	tests := []struct {
		name string
		mod  func([]limiter.Limit) []limiter.Limit
		want []int64
	}{
		{"nothing changed", func(l []limiter.Limit) []limiter.Limit { return l }, nil},
		{"rate, name, description, is_active keep counters", func(l []limiter.Limit) []limiter.Limit {
			l[0].Rate, l[1].Name, l[2].Description, l[2].Active = 50, "renamed", "new", false
			return l
		}, nil},
		{"endpoint written differently but the same", func(l []limiter.Limit) []limiter.Limit {
			l[1].Endpoint = "/_table/X/"
			return l
		}, nil},
		{"user changed", func(l []limiter.Limit) []limiter.Limit { l[0].UserID = 7; return l }, []int64{1}},
		{"endpoint and verb changed", func(l []limiter.Limit) []limiter.Limit {
			l[1].Endpoint = "_table/y"
			l[2].Verb = "GET"
			return l
		}, []int64{2, 3}},
		{"deleted", func(l []limiter.Limit) []limiter.Limit { return l[1:] }, []int64{1}},
		{"period changed", func(l []limiter.Limit) []limiter.Limit { l[2].Period = limiter.PeriodDay; return l }, []int64{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, staleLimits(old, build(tt.mod))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := staleLimits(nil, old); got != nil {
		t.Errorf("first load: %v, want nothing", got)
	}
	if got := staleLimits(old, nil); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("all gone: %v", got)
	}
}
