package proxy_test

import (
	"net/http"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// TestInnerCall sends inner calls through a whole instance's pipeline: the
// identity in the context is the caller (no credentials needed), roles
// apply to it, and a request from outside cannot claim one.
func TestInnerCall(t *testing.T) {
	in := proxytest.StartSQLite(t)
	ctx := t.Context()
	db := in.Store.DB
	svc := &store.Service{}
	if err := db.NewSelect().Model(svc).Where("name = ?", "db").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	role := &store.Role{Name: "schema-readers", IsActive: true}
	if _, err := db.NewInsert().Model(role).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewInsert().Model(&store.RoleServiceAccess{RoleID: role.ID, ServiceID: &svc.ID, Component: "_schema",
		VerbMask: 1, RequestorMask: 1, FilterOp: "AND"}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := in.Proxy.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	h := in.Proxy.Handler()
	reader := &caller.Identity{AppID: 1, AppName: "admin", RoleID: role.ID, RoleName: role.Name, Requestor: caller.API}
	for _, tc := range []struct {
		name   string
		id     *caller.Identity
		call   service.InnerCall
		status int
	}{
		{"role grants the schema", reader, service.InnerCall{Path: "db/_schema"}, 200},
		{"role does not grant a table", reader, service.InnerCall{Path: "db/_table/nothing"}, 403},
		{"role does not grant writes", reader, service.InnerCall{Method: "POST", Path: "db/_schema", Body: []byte(`{"resource":[]}`)}, 403},
		{"administrator reaches the system service", &caller.Identity{AppID: 1, UserID: 1, Admin: true, Requestor: caller.API},
			service.InnerCall{Path: "system/service", Query: map[string][]string{"fields": {"name"}}}, 200},
		{"unknown service", reader, service.InnerCall{Path: "nope/_table/x"}, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := service.Call(ctx, h, tc.id, tc.call)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", rep.Status, tc.status, rep.Body)
			}
		})
	}
	if _, err := service.Call(ctx, h, nil, service.InnerCall{Path: "db/_schema"}); err == nil {
		t.Error("a call without an identity was made")
	}
	if _, err := service.Call(ctx, h, &caller.Identity{Admin: true, UserID: 1}, service.InnerCall{Path: "system/service", MaxReplyBytes: 10}); err == nil {
		t.Error("a reply over MaxReplyBytes was returned")
	}
	// From outside, the same request without credentials is refused.
	if r := (&proxytest.Client{Inst: in}).Do(t, http.MethodGet, "/api/v2/db/_schema", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("outside call without a key = %d", r.Status)
	}
}
