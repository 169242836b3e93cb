package sqldb_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

// FuzzTableQuery sends arbitrary filter, order, fields and ids values to a
// SQLite service: every answer is 200, 400 or 404 (never a server error or
// a database error shown to the client), and the data stays intact.
func FuzzTableQuery(f *testing.F) {
	for _, corpus := range injection {
		for _, s := range corpus {
			f.Add(s, "id", "*", "")
		}
	}
	f.Add("age > 25 and name like 'A%'", "name desc", "id,name", "1,2")
	f.Add("orders_by_customer_id.total > 1", "age asc nulls first", "count(*) as n", "'1','2'")
	cfg := dbtest.Fresh(f, dialects.SQLite)
	d := newDirect(f, cfg)
	f.Fuzz(func(t *testing.T, filter, order, fields, ids string) {
		v := url.Values{"filter": {filter}, "order": {order}, "fields": {fields}}
		if ids != "" {
			v.Set("ids", ids)
		}
		status, body := d.call(t, nil, "GET", "_table/customer?"+v.Encode(), nil)
		if status != 200 && status != 400 && status != 404 {
			t.Fatalf("status %d for %v: %s", status, v, body)
		}
		if strings.Contains(strings.ToLower(body), "syntax error") {
			t.Fatalf("database error shown for %v: %s", v, body)
		}
		status, body = d.call(t, nil, "DELETE", "_table/tag?"+url.Values{"filter": {filter}, "ids": {ids}}.Encode(), nil)
		if status != 200 && status != 400 && status != 404 && status != 409 { // 409: a tag still referenced
			t.Fatalf("delete: status %d for %q %q: %s", status, filter, ids, body)
		}
		// Restore what a valid delete removed.
		d.call(t, nil, "POST", "_table/tag?continue=true", res(rec("id", 1, "label", "red"), rec("id", 2, "label", "green"), rec("id", 3, "label", "blue")))
	})
}

// FuzzTableGroup sends arbitrary group, having and fields values (issue
// 16: a column that is not grouped was a 500 on PostgreSQL and a 409 on
// MySQL): every answer is 200, 400 or 404, and no database error is shown.
func FuzzTableGroup(f *testing.F) {
	for _, s := range [][3]string{
		{"name", "", "name"},
		{"name", "count(*) > 1", "name,count(*) as n"},
		{"name", "age > 1", "name"},
		{"", "", "name,age"},
		{"city", "", "name"},
		{"name,age", "sum(age) > 10", "name,age,sum(age) as s"},
		{"name;drop table customer", "1=1) or (1", "*"},
		{"(select 1)", "count(*) > (select 1)", "count(*)"},
		{"name", "max(name) like 'A%'", "name,max(age) as m"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	cfg := dbtest.Fresh(f, dialects.SQLite)
	d := newDirect(f, cfg)
	f.Fuzz(func(t *testing.T, group, having, fields string) {
		v := url.Values{"group": {group}, "having": {having}, "fields": {fields}}
		status, body := d.call(t, nil, "GET", "_table/customer?"+v.Encode(), nil)
		if status != 200 && status != 400 && status != 404 {
			t.Fatalf("status %d for %v: %s", status, v, body)
		}
		if strings.Contains(strings.ToLower(body), "syntax error") {
			t.Fatalf("database error shown for %v: %s", v, body)
		}
	})
}
