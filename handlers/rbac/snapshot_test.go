package rbac_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/handlers/rbac"
	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func ptr(v int64) *int64 { return &v }

func TestRoleFromRecord(t *testing.T) {
	snap := store.NewSnapshot([]*store.Service{{ID: 1, Name: "db"}, {ID: 2, Name: "crm"}}, nil, nil)
	r := &store.Role{ID: 7, Name: "sales", IsActive: true, Accesses: []*store.RoleServiceAccess{
		{ID: 1, ServiceID: ptr(1), Component: "_table/contact/*", VerbMask: 9, RequestorMask: 1,
			Filters: `[{"name":"owner_id","operator":"=","value":"{user.id}"}]`, FilterOp: "AND", Fields: `["id","name"]`},
		{ID: 2, ServiceID: nil, Component: "*", VerbMask: 1, RequestorMask: 3, FilterOp: "AND"},
		{ID: 3, ServiceID: ptr(2), Component: "", VerbMask: 1, RequestorMask: 2, Fields: "id, total ,", Filters: "null"},
	}}
	got, err := rbac.RoleFromRecord(snap, r)
	if err != nil {
		t.Fatal(err)
	}
	want := policy.Role{ID: 7, Name: "sales", Active: true, Accesses: []policy.Access{
		{ServiceID: 1, Service: "db", Component: "_table/contact/*", VerbMask: 9, RequestorMask: 1,
			Filters: []caller.Filter{{Name: "owner_id", Operator: "=", Value: "{user.id}"}}, FilterOp: "AND", Fields: []string{"id", "name"}},
		{Component: "*", VerbMask: 1, RequestorMask: 3, FilterOp: "AND"},
		{ServiceID: 2, Service: "crm", VerbMask: 1, RequestorMask: 2, Fields: []string{"id", "total"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("role (-want +got):\n%s", diff)
	}
}

func TestRoleFromRecordErrors(t *testing.T) {
	snap := store.NewSnapshot([]*store.Service{{ID: 1, Name: "db"}}, nil, nil)
	for _, tc := range []struct {
		name string
		rec  store.RoleServiceAccess
		want string
	}{
		{"missing service", store.RoleServiceAccess{ID: 1, ServiceID: ptr(9), Component: "*", VerbMask: 1, RequestorMask: 1}, "service 9 does not exist"},
		{"bad filters", store.RoleServiceAccess{ID: 2, ServiceID: ptr(1), VerbMask: 1, RequestorMask: 1, Filters: "{"}, "filters are not a JSON array"},
		{"bad fields", store.RoleServiceAccess{ID: 3, ServiceID: ptr(1), VerbMask: 1, RequestorMask: 1, Fields: "[1]"}, "fields are not a JSON array"},
		{"bad operator", store.RoleServiceAccess{ID: 4, ServiceID: ptr(1), VerbMask: 1, RequestorMask: 1,
			Filters: `[{"name":"a","operator":"LIKE","value":"x"}]`}, "operator"},
		{"bad component", store.RoleServiceAccess{ID: 5, ServiceID: ptr(1), Component: "a*b", VerbMask: 1, RequestorMask: 1}, "component"},
		{"all services with a component", store.RoleServiceAccess{ID: 6, Component: "_table/*", VerbMask: 1, RequestorMask: 1}, "all services"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tc.rec
			_, err := rbac.RoleFromRecord(snap, &store.Role{ID: 3, Name: "r", Accesses: []*store.RoleServiceAccess{&rec}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestPolicyFailsClosed: a role with an unreadable entry grants nothing,
// not what its other entries would give without the fence.
func TestPolicyFailsClosed(t *testing.T) {
	snap := store.NewSnapshot([]*store.Service{{ID: 1, Name: "db"}}, nil, []*store.Role{
		{ID: 1, Name: "good", IsActive: true, Accesses: []*store.RoleServiceAccess{
			{ID: 1, ServiceID: ptr(1), Component: "*", VerbMask: 31, RequestorMask: 1},
		}},
		{ID: 2, Name: "broken", IsActive: true, Accesses: []*store.RoleServiceAccess{
			{ID: 2, ServiceID: ptr(1), Component: "*", VerbMask: 31, RequestorMask: 1},
			{ID: 3, ServiceID: ptr(1), Component: "_table/secret", VerbMask: 0, RequestorMask: 1, Filters: "not json"},
		}},
	})
	a, err := rbac.Policy(snap)
	if a == nil {
		t.Fatalf("no authorizer: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), `role 2 ("broken")`) {
		t.Fatalf("error %v", err)
	}
	if d := a.Authorize(1, "db", "_table/x", "GET", caller.API); !d.Allowed {
		t.Fatalf("good role refused: %+v", d)
	}
	for _, comp := range []string{"_table/secret", "_table/x"} {
		if d := a.Authorize(2, "db", comp, "GET", caller.API); d.Allowed || d.Reason != policy.ReasonDenied {
			t.Fatalf("broken role on %s: %+v", comp, d)
		}
	}
	if _, err := rbac.Policy(snap, policy.WithCacheSize(-1)); err == nil {
		t.Fatal("bad options accepted")
	}
}

func TestSnapshotLookups(t *testing.T) {
	snap := &store.Snapshot{Lookups: []*store.Lookup{
		{Name: "region", Value: "global"},
		{Name: "tier", Value: "free"},
		{Name: "secret", Value: "s3cret", Private: true},
		{Name: "region", Value: "app", AppID: ptr(10)},
		{Name: "region", Value: "other app", AppID: ptr(11)},
		{Name: "region", Value: "role", RoleID: ptr(3)},
		{Name: "tier", Value: "hidden", RoleID: ptr(3), Private: true},
		{Name: "region", Value: "user", UserID: ptr(42)},
	}}
	for _, tc := range []struct {
		name string
		id   *caller.Identity
		want map[string]string
	}{
		{"nobody", nil, map[string]string{"region": "global", "tier": "free"}},
		{"app", &caller.Identity{AppID: 10}, map[string]string{"region": "app", "tier": "free"}},
		{"role hides a public lookup with a private one", &caller.Identity{AppID: 10, RoleID: 3}, map[string]string{"region": "role"}},
		{"user", &caller.Identity{AppID: 11, RoleID: 3, UserID: 42}, map[string]string{"region": "user"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, rbac.SnapshotLookups(snap, tc.id)); diff != "" {
				t.Fatalf("lookups (-want +got):\n%s", diff)
			}
		})
	}
	if got := rbac.SnapshotLookups(nil, nil); len(got) != 0 {
		t.Fatalf("nil snapshot: %v", got)
	}
}
