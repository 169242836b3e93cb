package rbac_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/apikey"
	"github.com/portcullis-dev/portcullis/handlers/rbac"
	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// A stack without a system database: two apps with static API keys, roles
// written in Go, and one upstream handler that reads the grant.
func Example() {
	keys, _ := apikey.New(apikey.Options{Apps: apikey.NewStatic(
		apikey.App{ID: 1, Name: "reader", APIKey: "key-r", Active: true, RoleID: 1, RoleName: "readers"},
		apikey.App{ID: 2, Name: "writer", APIKey: "key-w", Active: true, RoleID: 2, RoleName: "writers"},
	)})
	roles, err := rbac.Static([]policy.Role{
		{ID: 1, Name: "readers", Active: true, Accesses: []policy.Access{
			{Service: "orders", Component: "*", VerbMask: policy.VerbGet, RequestorMask: policy.RequestorAPI,
				Fields: []string{"id", "total"}},
		}},
		{ID: 2, Name: "writers", Active: true, Accesses: []policy.Access{
			{Service: "orders", Component: "*", VerbMask: policy.VerbAll, RequestorMask: policy.RequestorAPI,
				Filters: []caller.Filter{{Name: "app_id", Operator: "=", Value: "{app.id}"}}},
		}},
	})
	if err != nil {
		panic(err)
	}
	access, err := rbac.New(rbac.Options{Policy: roles, Target: rbac.FixedService("orders", "rws")})
	if err != nil {
		panic(err)
	}
	backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := caller.GrantFrom(r.Context())
		fmt.Fprintf(w, "fields %v filters %v", g.Fields, g.Filters)
	})
	stack := handlers.Chain(keys, access)(backend)

	for _, c := range []struct{ method, key string }{{"GET", "key-r"}, {"DELETE", "key-r"}, {"DELETE", "key-w"}} {
		req := httptest.NewRequest(c.method, "/items/7", nil)
		req.Header.Set(apikey.Header, c.key)
		rec := httptest.NewRecorder()
		stack.ServeHTTP(rec, req)
		fmt.Println(c.method, c.key, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	// Output:
	// GET key-r 200 fields [id total] filters []
	// DELETE key-r 403 {"error":{"code":403,"message":"Access Forbidden. DELETE access to component 'items/7' of service 'orders' is not allowed by this user's role.","context":null,"status_code":403}}
	// DELETE key-w 200 fields [] filters [{app_id = 2}]
}
