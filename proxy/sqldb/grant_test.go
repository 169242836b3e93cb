package sqldb_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// direct is a backend called without the pipeline, as the router would
// after the RBAC stage put a grant in the context.
type direct struct {
	b   service.Backend
	svc *store.Service
}

func newDirect(t testing.TB, cfg dialects.Config) *direct {
	t.Helper()
	db := dbtest.Open(t, cfg)
	fixture(t, cfg.Kind, db)
	return newDirectOn(t, cfg)
}

// newDirectOn builds the backend on cfg without a fixture.
func newDirectOn(t testing.TB, cfg dialects.Config) *direct {
	t.Helper()
	svc := &store.Service{ID: 1, Name: "data", Type: string(cfg.Kind), IsActive: true, Config: serviceConfig(cfg, nil)}
	b, err := sqldb.NewType(cfg.Kind).New(t.Context(), svc, service.Deps{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return &direct{b: b, svc: svc}
}

// rawBody is a request body sent as it is.
type rawBody string

func (d *direct) call(t testing.TB, g *caller.Grant, method, target string, body any) (int, string) {
	t.Helper()
	return d.callCtx(t.Context(), g, method, target, body)
}

// callCtx is call with the request's context ctx.
func (d *direct) callCtx(ctx context.Context, g *caller.Grant, method, target string, body any) (int, string) {
	var rd *bytes.Reader
	if raw, ok := body.(rawBody); ok {
		rd = bytes.NewReader([]byte(raw))
	} else if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequestWithContext(ctx, method, "/api/v2/data/"+q(target), rd)
	path, _, _ := strings.Cut(target, "?")
	ctx = service.WithTarget(req.Context(), &service.Target{Service: d.svc, Resource: path, Verb: method})
	if g != nil {
		ctx = caller.WithGrant(ctx, g)
	}
	rec := httptest.NewRecorder()
	d.b.ServeHTTP(rec, req.WithContext(ctx))
	return rec.Code, rec.Body.String()
}

func TestGrantFields(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		d := newDirect(t, cfg)
		g := &caller.Grant{Fields: []string{"id", "name", "orders_by_customer_id", "total"}}
		for _, s := range []step{
			{name: "reads drop fields", method: "GET", path: "_table/customer?filter=id < 3", status: 200,
				want: `{"resource":[{"id":1,"name":"Alice"},{"id":2,"name":"Bob"}]}`},
			{name: "by id drops fields", method: "GET", path: "_table/customer/1", status: 200, want: `{"id":1,"name":"Alice"}`},
			{name: "asked-for hidden field dropped", method: "GET", path: "_table/customer/1?fields=name,email", status: 200, want: `{"name":"Alice"}`},
			{name: "only hidden fields", method: "GET", path: "_table/customer/1?fields=email", status: 403},
			{name: "related records drop fields", method: "GET", path: "_table/customer/2?related=orders_by_customer_id", status: 200,
				want: `{"id":2,"name":"Bob","orders_by_customer_id":[{"id":3,"total":7.25}]}`},
			{name: "relation not granted is left out", method: "GET", path: "_table/orders/1?related=customer_by_customer_id", status: 200,
				want: `{"id":1,"total":10.00}`},
			{name: "filter on hidden field", method: "GET", path: "_table/customer?filter=email = 'alice@example.com'", status: 400},
			{name: "order on hidden field", method: "GET", path: "_table/customer?order=age", status: 400},
			{name: "write naming hidden field", method: "PATCH", path: "_table/customer/1", body: rec("name", "A", "email", "x@y"), status: 403},
			{name: "write naming hidden unknown field", method: "POST", path: "_table/customer", body: res(rec("name", "A", "secret", 1)), status: 403},
			{name: "write of allowed fields", method: "POST", path: "_table/customer", body: res(rec("name", "Zed")), status: 200, want: `{"resource":[{"id":5}]}`},
			{name: "nothing written by refused write", method: "GET", path: "_table/customer/1", status: 200, want: `{"id":1,"name":"Alice"}`},
		} {
			status, body := d.call(t, g, s.method, s.path, s.body)
			checkStep(t, s, status, body)
		}
	})
}

func TestGrantRowFilters(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		d := newDirect(t, cfg)
		g := &caller.Grant{Filters: []caller.Filter{{Name: "active", Operator: "=", Value: "true"}}}
		for _, s := range []step{
			{name: "list", method: "GET", path: "_table/customer?fields=id", status: 200, ids: []int{1, 3, 4}},
			{name: "list with client filter", method: "GET", path: "_table/customer?fields=id&filter=age > 20 or name = 'Bob'", status: 200, ids: []int{1, 4}},
			{name: "count", method: "GET", path: "_table/customer?count_only=true", status: 200, want: `{"meta":{"count":3}}`},
			{name: "hidden by id", method: "GET", path: "_table/customer/2", status: 404},
			{name: "hidden in ids", method: "GET", path: "_table/customer?ids=1,2", status: 400},
			{name: "patch hidden", method: "PATCH", path: "_table/customer/2", body: rec("age", 1), status: 404},
			{name: "delete hidden", method: "DELETE", path: "_table/customer/2", status: 404},
			{name: "patch by filter only touches visible", method: "PATCH", path: "_table/customer?filter=age > 0", body: rec("notes", "seen"), status: 200,
				want: `{"resource":[{"id":1},{"id":4}]}`},
			{name: "create outside the filter", method: "POST", path: "_table/customer", body: res(rec("name", "Out", "active", false)), status: 403},
			{name: "create inside the filter", method: "POST", path: "_table/customer", body: res(rec("name", "In", "active", true)), status: 200},
			{name: "update out of the filter", method: "PATCH", path: "_table/customer/1", body: rec("active", false), status: 403},
			{name: "force delete only visible", method: "DELETE", path: "_table/customer?force=true&filter=id > 4", status: 200},
		} {
			status, body := d.call(t, g, s.method, s.path, s.body)
			checkStep(t, s, status, body)
		}
		// Nothing the refused writes touched changed.
		status, body := d.call(t, nil, "GET", "_table/customer?fields=id,name,active,notes", nil)
		checkStep(t, step{name: "state", status: 200,
			want: `{"resource":[{"id":1,"name":"Alice","active":true,"notes":"seen"},{"id":2,"name":"Bob","active":false,"notes":null},{"id":3,"name":"Carol","active":true,"notes":"it's \"quoted\""},{"id":4,"name":"Dave","active":true,"notes":"seen"}]}`},
			status, body)

		or := &caller.Grant{FilterOp: "OR", Filters: []caller.Filter{{Name: "name", Operator: "in", Value: "(Bob, 'Carol')"}, {Name: "age", Operator: ">", Value: "40"}}}
		status, body = d.call(t, or, "GET", "_table/customer?fields=id", nil)
		checkStep(t, step{name: "or filters", status: 200, ids: []int{2, 3, 4}}, status, body)

		bad := &caller.Grant{Filters: []caller.Filter{{Name: "nosuch", Operator: "=", Value: "1"}}}
		status, body = d.call(t, bad, "GET", "_table/customer", nil)
		checkStep(t, step{name: "role filter on unknown field fails closed", status: 403}, status, body)
		weird := &caller.Grant{Filters: []caller.Filter{{Name: "id", Operator: "; DROP", Value: "1"}}}
		status, body = d.call(t, weird, "GET", "_table/customer", nil)
		checkStep(t, step{name: "role filter with unknown operator fails closed", status: 403}, status, body)
	})
}
