package sqldb_test

import (
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// TestFastReadsMatchGeneral checks the fast paths of a read by key and of
// a plain page (fast.go) against the general path, forced by naming every
// column in fields: the same status and the same bytes, on every engine.
func TestFastReadsMatchGeneral(t *testing.T) {
	all := map[string]string{
		"customer":  "id,name,email,age,active,balance,rating,born,created,notes",
		"orders":    "id,customer_id,total,placed",
		"order_tag": "order_id,tag_id",
		"tag":       "id,label",
		"nokey":     "a,b",
	}
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		d := newDirect(t, cfg)
		for _, target := range []string{
			"_table/customer/1", "_table/customer/2", "_table/customer/3", "_table/customer/4",
			"_table/customer/99", "_table/customer/abc", "_table/customer/%20", "_table/customer/1.0", "_table/customer/007",
			"_table/orders/4", "_table/tag/2", "_table/order_tag/1,2", "_table/order_tag/1", "_table/order_tag/3,3",
			"_table/order_tag/1,2,3", "_table/order_tag/2,1", "_table/nokey/1",
			"_table/customer", "_table/customer?limit=2", "_table/customer?limit=2&offset=1", "_table/customer?limit=2&offset=2",
			"_table/customer?limit=3&offset=1", "_table/customer?offset=3", "_table/customer?offset=10", "_table/customer?limit=1&offset=3",
			"_table/orders?limit=1&offset=2", "_table/order_tag?limit=3", "_table/order_tag?offset=1", "_table/tag", "_table/nokey",
		} {
			path, query, _ := strings.Cut(target, "?")
			table := strings.Split(path, "/")[1]
			sep := "?"
			if query != "" {
				sep = "&"
			}
			fs, fb := d.call(t, nil, "GET", target, nil)
			gs, gb := d.call(t, nil, "GET", target+sep+"fields="+all[table], nil)
			if fs != gs || fb != gb {
				t.Errorf("%s: fast path %d %s, general path %d %s", target, fs, fb, gs, gb)
			}
			if fs != 200 && fs != 400 && fs != 404 {
				t.Errorf("%s: status %d %s", target, fs, fb)
			}
			// fields=* is the fast path too.
			ss, sb := d.call(t, nil, "GET", target+sep+"fields=*", nil)
			if ss != fs || sb != fb {
				t.Errorf("%s with fields=*: %d %s, want %d %s", target, ss, sb, fs, fb)
			}
		}
	})
}

// TestFastReadsFallBack checks that the reads a fast path could serve are
// answered by the general path whenever the role limits fields or rows.
func TestFastReadsFallBack(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		d := newDirect(t, cfg)
		fields := &caller.Grant{Fields: []string{"id", "name"}}
		rows := &caller.Grant{Filters: []caller.Filter{{Name: "active", Operator: "=", Value: "true"}}}
		for _, s := range []struct {
			g *caller.Grant
			step
		}{
			{fields, step{name: "page drops fields", method: "GET", path: "_table/customer?limit=2&offset=1", status: 200,
				want: `{"resource":[{"id":2,"name":"Bob"},{"id":3,"name":"Carol"}],"meta":{"next":3}}`}},
			{fields, step{name: "by id drops fields", method: "GET", path: "_table/customer/4", status: 200, want: `{"id":4,"name":"Dave"}`}},
			{rows, step{name: "page keeps to the record filter", method: "GET", path: "_table/customer?limit=2", status: 200, ids: []int{1, 3}}},
			{rows, step{name: "by id outside the record filter", method: "GET", path: "_table/customer/2", status: 404}},
			{rows, step{name: "by id inside the record filter", method: "GET", path: "_table/customer/3", status: 200,
				contains: []string{`"id":3,"name":"Carol"`}}},
		} {
			status, body := d.call(t, s.g, s.method, s.path, nil)
			checkStep(t, s.step, status, body)
		}
	})
}

// TestFastReadsSchemaChange checks that a change of a table's structure
// reaches the fast paths at once: their SQL and the plan of their columns
// are dropped with the schema.
func TestFastReadsSchemaChange(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		for range 2 { // the second read uses the cached shape and plan
			checkStep(t, step{name: "before", status: 200, contains: []string{`"age":30,`, `"active":true,`}}, 200, e.mustDo(t, 200, "GET", "_table/customer/1", nil))
			checkStep(t, step{name: "page before", status: 200, contains: []string{`"age":30,`}}, 200, e.mustDo(t, 200, "GET", "_table/customer?limit=1", nil))
		}
		e.mustDo(t, 200, "PATCH", "_schema/customer", obj("field", list(
			obj("name", "age", "type", "string", "length", 10),
			obj("name", "nickname", "type", "string", "length", 32),
		)))
		for range 2 {
			checkStep(t, step{name: "after", status: 200, contains: []string{`"age":"30",`, `"nickname":null`}}, 200, e.mustDo(t, 200, "GET", "_table/customer/1", nil))
			checkStep(t, step{name: "page after", status: 200, contains: []string{`"age":"30",`, `"nickname":null`}}, 200, e.mustDo(t, 200, "GET", "_table/customer?limit=1", nil))
		}
		e.mustDo(t, 200, "DELETE", "_schema/customer/_field/nickname", nil)
		if got := e.mustDo(t, 200, "GET", "_table/customer/1", nil); strings.Contains(got, "nickname") {
			t.Errorf("after dropping nickname: %s", got)
		}
		if got := e.mustDo(t, 200, "GET", "_table/customer?limit=1", nil); strings.Contains(got, "nickname") {
			t.Errorf("page after dropping nickname: %s", got)
		}
	})
}

// TestWritesReusePreparedInTransaction checks that an UPDATE whose
// statement the pool has prepared (a single update by id runs without a
// transaction) runs inside a batch's transaction when reused there: a
// batch with rollback undoes it; and that bound deletes roll back too.
func TestWritesReusePreparedInTransaction(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		d := newDirect(t, cfg)
		for _, s := range []step{
			{name: "single update prepares", method: "PATCH", path: "_table/customer/1", body: rec("notes", "one"), status: 200,
				contains: []string{`"id":1,`, `"notes":"one"`}},
			{name: "single update of a missing record", method: "PATCH", path: "_table/customer/99", body: rec("notes", "x"), status: 404},
			{name: "batch reuses it", method: "PATCH", path: "_table/customer?fields=id,notes", body: res(rec("id", 2, "notes", "two"), rec("id", 3, "notes", "three")), status: 200,
				want: `{"resource":[{"id":2,"notes":"two"},{"id":3,"notes":"three"}]}`},
			{name: "batch rolled back", method: "PATCH", path: "_table/customer?rollback=true", body: res(rec("id", 1, "notes", "changed"), rec("id", 99, "notes", "x")), status: 400},
			{name: "first record of the rolled back batch unchanged", method: "GET", path: "_table/customer/1?fields=notes", status: 200, want: `{"notes":"one"}`},
			{name: "delete by id", method: "DELETE", path: "_table/order_tag/1,1", status: 200, want: `{"order_id":1,"tag_id":1}`},
			{name: "delete batch rolled back", method: "DELETE", path: "_table/order_tag?rollback=true", body: res(rec("order_id", 1, "tag_id", 2), rec("order_id", 9, "tag_id", 9)), status: 400},
			{name: "record of the rolled back delete kept", method: "GET", path: "_table/order_tag/1,2", status: 200, want: `{"order_id":1,"tag_id":2}`},
		} {
			status, body := d.call(t, nil, s.method, s.path, s.body)
			checkStep(t, s, status, body)
		}
	})
}

// TestDecimalWrites pins what each engine stores for decimals written by
// POST and PATCH, bound as parameters (they were written into the text
// before, with the same results): rounding to the column's scale, signs,
// integers, and a value too large for the column.
func TestDecimalWrites(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		d := newDirect(t, cfg)
		sqlite := cfg.Kind == dialects.SQLite
		pick := func(lite, other string) string {
			if sqlite {
				return lite
			}
			return other
		}
		for _, c := range []struct{ in, want string }{
			{"12.505", pick("12.505", "12.51")}, {"12.5", "12.50"}, {"-0.5", "-0.50"}, {"7", "7.00"},
			{"0.004", pick("0.004", "0.00")}, {"99999999.99", "99999999.99"}, {"00012.10", "12.10"},
		} {
			status, body := d.call(t, nil, "POST", "_table/customer?fields=balance", res(rec("name", "D", "balance", c.in)))
			checkStep(t, step{name: "POST " + c.in, status: 200, want: `{"resource":[{"balance":` + c.want + `}]}`}, status, body)
			status, body = d.call(t, nil, "PATCH", "_table/customer/1?fields=balance", rec("balance", c.in))
			checkStep(t, step{name: "PATCH " + c.in, status: 200, want: `{"balance":` + c.want + `}`}, status, body)
		}
		status, body := d.call(t, nil, "POST", "_table/customer?fields=balance", res(rec("name", "D", "balance", "123456789.99")))
		if sqlite {
			checkStep(t, step{name: "too large", status: 200, want: `{"resource":[{"balance":123456789.99}]}`}, status, body)
		} else {
			checkStep(t, step{name: "too large", status: 400}, status, body)
		}
	})
}
