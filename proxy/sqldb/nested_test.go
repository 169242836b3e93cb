package sqldb_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// TestNestedWrites writes records with their related records (has_many,
// belongs_to, many_many) on every engine, in the batch modes, and checks
// what the database holds afterwards.
func TestNestedWrites(t *testing.T) {
	c := "_table/customer"
	o := "_table/orders"
	steps := []step{
		{name: "has-many created with parent", method: "POST", path: c + "?related=orders_by_customer_id&fields=id,name",
			body: res(rec("name", "Nora", "orders_by_customer_id", []any{rec("total", 5), rec("total", "6.50", "placed", "2024-04-01")})), status: 200,
			want: `{"resource":[{"id":5,"name":"Nora","orders_by_customer_id":[{"id":5,"customer_id":5,"total":5.00,"placed":null},{"id":6,"customer_id":5,"total":6.50,"placed":"2024-04-01"}]}]}`},
		{name: "belongs-to created first", method: "POST", path: o + "?fields=id,customer_id&related=customer_by_customer_id",
			body: res(rec("total", 1, "customer_by_customer_id", rec("name", "Otto", "email", "otto@example.com"))), status: 200,
			want: `{"resource":[{"id":7,"customer_id":6,"customer_by_customer_id":{"id":6,"name":"Otto","email":"otto@example.com","age":null,"active":true,"balance":null,"rating":null,"born":null,"created":null,"notes":null}}]}`},
		{name: "belongs-to existing updated and linked", method: "PATCH", path: o + "/4?fields=id,customer_id",
			body: rec("customer_by_customer_id", rec("id", 2, "notes", "linked")), status: 200, want: `{"id":4,"customer_id":2}`},
		{name: "belongs-to update landed", method: "GET", path: c + "/2?fields=notes", status: 200, want: `{"notes":"linked"}`},
		{name: "many-many links existing and creates new", method: "PATCH", path: o + "/3?fields=id&related=tag_by_order_tag",
			body: rec("tag_by_order_tag", []any{rec("id", 1), rec("id", 20, "label", "new")}), status: 200,
			want: `{"id":3,"tag_by_order_tag":[{"id":1,"label":"red"},{"id":3,"label":"blue"},{"id":20,"label":"new"}]}`},
		{name: "many-many link twice is one link", method: "PATCH", path: o + "/3?fields=id&related=tag_by_order_tag",
			body: rec("tag_by_order_tag", []any{rec("id", 1)}), status: 200,
			want: `{"id":3,"tag_by_order_tag":[{"id":1,"label":"red"},{"id":3,"label":"blue"},{"id":20,"label":"new"}]}`},
		{name: "many-many unlink", method: "PATCH", path: o + "/3?fields=id&related=tag_by_order_tag",
			body: rec("tag_by_order_tag", []any{rec("id", 3, "orders.id", nil)}), status: 200,
			want: `{"id":3,"tag_by_order_tag":[{"id":1,"label":"red"},{"id":20,"label":"new"}]}`},
		{name: "many-many link of missing record", method: "PATCH", path: o + "/3", body: rec("tag_by_order_tag", []any{rec("id", 999)}), status: 404},
		{name: "has-many adopt and update", method: "PATCH", path: c + "/1?fields=id&related=orders_by_customer_id",
			body: rec("orders_by_customer_id", []any{rec("id", 3), rec("id", 2, "total", 26)}), status: 200,
			want: `{"id":1,"orders_by_customer_id":[{"id":1,"customer_id":1,"total":10.00,"placed":"2024-03-01"},{"id":2,"customer_id":1,"total":26.00,"placed":"2024-03-02"},{"id":3,"customer_id":1,"total":7.25,"placed":"2024-03-03"}]}`},
		{name: "has-many release", method: "PATCH", path: c + "/1?fields=id&related=orders_by_customer_id",
			body: rec("orders_by_customer_id", []any{rec("id", 3, "customer_id", nil)}), status: 200,
			want: `{"id":1,"orders_by_customer_id":[{"id":1,"customer_id":1,"total":10.00,"placed":"2024-03-01"},{"id":2,"customer_id":1,"total":26.00,"placed":"2024-03-02"}]}`},
		{name: "released child kept", method: "GET", path: o + "/3?fields=id,customer_id", status: 200, want: `{"id":3,"customer_id":null}`},
		{name: "nested in nested", method: "POST", path: c + "?fields=id",
			body: res(rec("name", "Pia", "orders_by_customer_id", []any{rec("total", 2, "tag_by_order_tag", []any{rec("id", 2)})})), status: 200,
			want: `{"resource":[{"id":7}]}`},
		{name: "nested in nested landed", method: "GET", path: o + "?filter=customer_id = 7&fields=total&related=tag_by_order_tag", status: 200,
			want: `{"resource":[{"total":2.00,"tag_by_order_tag":[{"id":2,"label":"green"}]}]}`},

		// Failures undo the record with its related records.
		{name: "bad child fails the record", method: "POST", path: c,
			body: res(rec("name", "Quin", "orders_by_customer_id", []any{rec("total", "lots")})), status: 400, contains: []string{"total"}},
		{name: "bad child left nothing", method: "GET", path: c + "?filter=name = 'Quin'&fields=id", status: 200, want: `{"resource":[]}`},
		{name: "rollback undoes every record and child", method: "POST", path: c + "?rollback=true",
			body: res(rec("name", "Rex", "orders_by_customer_id", []any{rec("total", 1)}),
				rec("name", "Sid", "orders_by_customer_id", []any{rec("total", 1), rec("total", "bad")})),
			status: 400, contains: []string{"All changes rolled back.", `"index":1`}},
		{name: "rollback left nothing", method: "GET", path: c + "?filter=name in ('Rex','Sid')&fields=id", status: 200, want: `{"resource":[]}`},
		{name: "rollback left children alone", method: "GET", path: o + "/1?fields=customer_id", status: 200, want: `{"customer_id":1}`},
		{name: "default batch keeps earlier record and its children", method: "POST", path: c,
			body: res(rec("name", "Tom", "orders_by_customer_id", []any{rec("total", 3)}),
				rec("name", "Uma", "orders_by_customer_id", []any{rec("total", "x")})),
			status: 400, contains: []string{`"index":1`}},
		{name: "default batch kept first", method: "GET", path: c + "?filter=name in ('Tom','Uma')&fields=name&related=orders_by_customer_id&orders_by_customer_id.fields=total", status: 200,
			want: `{"resource":[{"name":"Tom","orders_by_customer_id":[{"total":3.00}]}]}`},
		{name: "not an array", method: "POST", path: c, body: res(rec("name", "V", "orders_by_customer_id", "x")), status: 400, contains: []string{"orders_by_customer_id"}},
		{name: "not an object", method: "POST", path: o, body: res(rec("total", 1, "customer_by_customer_id", []any{})), status: 400, contains: []string{"customer_by_customer_id"}},
		{name: "nothing written by refused shapes", method: "GET", path: c + "?filter=name = 'V'&fields=id", status: 200, want: `{"resource":[]}`},
	}
	results := map[string]map[dialects.Kind]string{}
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		for _, s := range steps {
			status, got := e.do(t, s.method, q(s.path), s.body)
			checkStep(t, s, status, got)
			if results[s.name] == nil {
				results[s.name] = map[dialects.Kind]string{}
			}
			results[s.name][cfg.Kind] = fmt.Sprintf("%d %s", status, canonical(got))
		}
	})
	for _, s := range steps {
		base, ok := results[s.name][dialects.SQLite]
		if !ok || s.status != 200 {
			continue
		}
		for k, got := range results[s.name] {
			if got != base {
				t.Errorf("%s: %s differs from sqlite:\n%s\n%s", s.name, k, base, got)
			}
		}
	}
}

// TestNestedWritesRole checks that a nested write reaches a related table
// only as far as the caller's role allows there.
func TestNestedWritesRole(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		admin := e.c
		svcID := serviceID(t, admin, "data")
		key := roleApp(t, admin, "nested", []map[string]any{
			{"service_id": svcID, "component": "_table/customer", "verb_mask": 3, "requestor_mask": 1},
			{"service_id": svcID, "component": "_table/orders", "verb_mask": 1, "requestor_mask": 1},
			{"service_id": svcID, "component": "_table/tag", "verb_mask": 3, "requestor_mask": 1},
			{"service_id": svcID, "component": "_table/order_tag", "verb_mask": 3, "requestor_mask": 1,
				"filters": []any{map[string]any{"name": "tag_id", "operator": "=", "value": "2"}}, "filter_op": "AND"},
		})
		c := &proxytest.Client{Inst: e.in, APIKey: key}
		r := c.Do(t, http.MethodPost, "/api/v2/data/_table/customer", res(rec("name", "Role", "orders_by_customer_id", []any{rec("total", 1)})))
		if r.Status != http.StatusForbidden {
			t.Fatalf("nested POST into a table the role only reads = %d %s, want 403", r.Status, r.Body)
		}
		r = c.Do(t, http.MethodPost, "/api/v2/data/_table/customer", res(rec("name", "Role")))
		if r.Status != http.StatusOK {
			t.Fatalf("plain POST = %d %s", r.Status, r.Body)
		}
		if r := admin.Do(t, http.MethodGet, q("/api/v2/data/_table/customer?filter=name = 'Role'&count_only=true"), nil); string(r.Body) != "{\"meta\":{\"count\":1}}\n" {
			t.Fatalf("refused nested write left records: %s", r.Body)
		}
		// The junction's record filter: tag 2 may be linked, tag 3 not.
		r = c.Do(t, http.MethodPost, "/api/v2/data/_table/tag", res(rec("id", 30, "label", "x", "orders_by_order_tag", []any{rec("id", 1)})))
		if r.Status != http.StatusForbidden {
			t.Fatalf("nested POST into an order the role may not write = %d %s, want 403", r.Status, r.Body)
		}
	})
}

// serviceID returns the id of the service called name.
func serviceID(t *testing.T, admin *proxytest.Client, name string) int64 {
	t.Helper()
	r := admin.Do(t, http.MethodGet, q("/api/v2/system/service?filter=name = '"+name+"'&fields=id"), nil)
	var v struct {
		Resource []struct {
			ID int64 `json:"id"`
		} `json:"resource"`
	}
	r.JSON(t, &v)
	if len(v.Resource) != 1 {
		t.Fatalf("service %s: %s", name, r.Body)
	}
	return v.Resource[0].ID
}

// roleApp creates a role with access entries and an app bound to it, and
// returns the app's API key.
func roleApp(t *testing.T, admin *proxytest.Client, name string, access []map[string]any) string {
	t.Helper()
	entries := make([]any, len(access))
	for i, a := range access {
		entries[i] = a
	}
	r := admin.Do(t, http.MethodPost, "/api/v2/system/role", map[string]any{"resource": []any{
		map[string]any{"name": name, "is_active": true, "role_service_access_by_role_id": entries}}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create role: %d %s", r.Status, r.Body)
	}
	var ids struct {
		Resource []struct {
			ID int64 `json:"id"`
		} `json:"resource"`
	}
	r.JSON(t, &ids)
	r = admin.Do(t, http.MethodPost, "/api/v2/system/app?fields=api_key", map[string]any{"resource": []any{
		map[string]any{"name": name, "is_active": true, "role_id": ids.Resource[0].ID}}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create app: %d %s", r.Status, r.Body)
	}
	var keys struct {
		Resource []struct {
			APIKey string `json:"api_key"`
		} `json:"resource"`
	}
	r.JSON(t, &keys)
	return keys.Resource[0].APIKey
}
