package rbac_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/portcullis-dev/portcullis/handlers/rbac"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkStage measures the stage's cost for one request whose decision
// is cached (every iteration after the first): the identity and target
// lookups, the cached decision, lookups substituted into the grant where
// the entry has a {user.id} filter, and the context the backend gets.
func BenchmarkStage(b *testing.B) {
	snap := &store.Snapshot{Lookups: []*store.Lookup{{Name: "region", Value: "emea"}, {Name: "tier", Value: "gold", AppID: ptr(10)}}}
	src, err := rbac.Static(testRoles())
	if err != nil {
		b.Fatal(err)
	}
	stage, err := rbac.New(rbac.Options{Policy: src, Lookups: func(id *caller.Identity) map[string]string {
		return rbac.SnapshotLookups(snap, id)
	}})
	if err != nil {
		b.Fatal(err)
	}
	var granted bool
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		granted = caller.RoleGranted(r.Context())
	}))
	user := &caller.Identity{AppID: 10, RoleID: roleStaff, UserID: 42, UserEmail: "ann@example.com", Requestor: caller.API}
	for _, bc := range []struct {
		name          string
		svc, res, vrb string
		id            *caller.Identity
		allowed       bool
	}{
		{"allowed", "db", "_table/other/5", "GET", user, true},
		{"allowed with row filter", "db", "_table/contact/5", "GET", user, true},
		{"refused", "db", "_table/other/5", "DELETE", user, false},
		{"admin", "db", "_table/other/5", "DELETE", &caller.Identity{Admin: true, UserID: 1}, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(bc.vrb, "/api/v2/"+bc.svc+"/"+bc.res, nil)
			ctx := service.WithTarget(req.Context(), &service.Target{Service: services[bc.svc], Resource: bc.res, Verb: bc.vrb})
			req = req.WithContext(caller.WithIdentity(ctx, bc.id))
			w := &discard{h: http.Header{}}
			h.ServeHTTP(w, req) // fill the cache
			b.ReportAllocs()
			for b.Loop() {
				granted = false
				h.ServeHTTP(w, req)
				clear(w.h)
			}
			if granted != bc.allowed {
				b.Fatalf("granted = %v", granted)
			}
		})
	}
}
