package sqldb_test

import (
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
)

// TestFastCreateMatchesGeneral checks the POST of one record kept as text
// (body.go, create.go) against the general path on a twin database: the
// same status, the same bytes and the same rows written, on every engine.
func TestFastCreateMatchesGeneral(t *testing.T) {
	c := "_table/customer"
	posts, all := createPosts()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		fast := newDirect(t, cfg)
		general := newDirect(t, dbtest.Fresh(t, cfg.Kind))
		for _, p := range posts {
			fs, fb := fast.call(t, nil, "POST", p.target, rawBody(p.body))
			restore := sqldb.SetRawBodies(false)
			gs, gb := general.call(t, nil, "POST", p.target, rawBody(p.body))
			restore()
			if fs != gs || fb != gb {
				t.Errorf("POST %s %s:\n fast    %d %s\n general %d %s", p.target, p.body, fs, fb, gs, gb)
			}
		}
		// A role's field list and record filter are the general path's.
		for _, g := range []*caller.Grant{
			{Fields: []string{"id", "name"}},
			{Filters: []caller.Filter{{Name: "active", Operator: "=", Value: "true"}}},
		} {
			for _, body := range []string{`{"resource":[{"name":"G1"}]}`, `{"resource":[{"name":"G2","age":4}]}`, `{"resource":[{"name":"G3","active":false}]}`} {
				fs, fb := fast.call(t, g, "POST", c, rawBody(body))
				restore := sqldb.SetRawBodies(false)
				gs, gb := general.call(t, g, "POST", c, rawBody(body))
				restore()
				if fs != gs || fb != gb {
					t.Errorf("POST %s as %+v:\n fast    %d %s\n general %d %s", body, g, fs, fb, gs, gb)
				}
			}
		}
		for table, target := range all {
			fs, fb := fast.call(t, nil, "GET", target, nil)
			gs, gb := general.call(t, nil, "GET", target, nil)
			if fs != 200 || fs != gs || fb != gb {
				t.Errorf("%s after the posts:\n fast    %d %s\n general %d %s", table, fs, fb, gs, gb)
			}
		}
	})
}

type post struct{ target, body string }

// createPosts are the POSTs TestFastCreateMatchesGeneral sends, and the
// reads of every table they write.
func createPosts() ([]post, map[string]string) {
	c := "_table/customer"
	posts := []post{
		{c, `{"resource":[{"name":"Eve","email":"eve@example.com","age":33,"active":false,"balance":12.5,"rating":4.25,"born":"1991-02-03","created":"2024-05-06 07:08:09","notes":"n"}]}`},
		{c, `[{"name":"Fay"}]`},
		{c, `{"resource":[{"id":50,"name":"Gus"}]}`},
		{c, `{"resource":[{"name":"Hal","active":null,"notes":null,"age":null}]}`},
		{c, `{"resource":[{"name":null}]}`},
		{c, `{"resource":[{"age":3}]}`},
		{c, `{"resource":[{}]}`},
		{c, `{"resource":[{"zzz":1}]}`},
		{c, `{"resource":[{"name":"Ida","zzz":1,"age":"12","balance":"7","rating":1e2}]}`},
		{c, `{"resource":[{"name":"Jo","age":1.0,"active":"yes","balance":1e1}]}`},
		{c, `{"resource":[{"name":"Kim","age":true,"active":1}]}`},
		{c, `{"resource":[{"name":"Lu","age":"abc"}]}`},
		{c, `{"resource":[{"name":"Lu","age":1.5}]}`},
		{c, `{"resource":[{"name":"Lu","active":"maybe"}]}`},
		{c, `{"resource":[{"name":"Lu","balance":"x"}]}`},
		{c, `{"resource":[{"name":"Lu","born":5}]}`},
		{c, `{"resource":[{"name":"Lu","born":"not a date"}]}`},
		{c, `{"resource":[{"name":"Mo","born":"2024-01-31T23:30:00-02:00","created":"2024-01-31T10:00:00Z"}]}`},
		{c, `{"resource":[{"name":"Ned","notes":5,"email":true}]}`},
		{c, `{"resource":[{"name":"O\u00e9\ud83d\ude00\"\\\/","notes":"tab\there"}]}`},
		{c, "{\"resource\":[{\"name\":\"bad \xff utf8\"}]}"},
		{c, `{"resource":[{"name":"nul\u0000"}]}`},
		{c, `{"resource":[{"name":"Pat","name":"Pia","age":1,"age":2}]}`},
		{c, `{"resource":[{"name":"Dup","email":"alice@example.com"}]}`},
		{c, `{"resource":[{"id":1,"name":"Dup key"}]}`},
		{c, `{"resource":[{"NAME":"Case"}]}`},
		{c, `{"resource":[{"name":"Rel","orders_by_customer_id":[{"total":1}]}]}`},
		{c, `{"resource":[{"name":"Obj","notes":{"a":1}}]}`},
		{c, `{"resource":[{"name":"Arr","notes":[1,2]}]}`},
		{c + "?fields=*", `{"resource":[{"name":"Fields"}]}`},
		{c + "?fields=name", `{"resource":[{"name":"Fields2"}]}`},
		{c + "?id_field=name", `{"resource":[{"name":"IDField"}]}`},
		{c + "?rollback=true", `{"resource":[{"name":"Rollback"}]}`},
		{c + "?rollback=true", `{"resource":[{"name":null}]}`},
		{c + "?continue=true", `{"resource":[{"name":"Continue"}]}`},
		{c + "?related=orders_by_customer_id", `{"resource":[{"name":"Related"}]}`},
		{c, `{"resource":[{"name":"Opt"}],"fields":"*"}`},
		{c, `{"resource":[{"name":"A1"},{"name":"A2"}]}`},
		{c, `{"resource":[]}`},
		{c, `{"resource":[{"name":"Trailing"}]} x`},
		{c, `{"resource":[{"name":"Broken"}`},
		{c, ``},
		{c, `{"name":"Bare"}`},
		{"_table/orders", `{"resource":[{"customer_id":2,"total":"3.10","placed":"2024-03-04"}]}`},
		{"_table/orders", `{"resource":[{"customer_id":99,"total":1}]}`},
		{"_table/orders", `{"resource":[{"placed":null}]}`},
		{"_table/tag", `{"resource":[{"id":9,"label":"nine"}]}`},
		{"_table/tag", `{"resource":[{"label":"no id"}]}`},
		{"_table/order_tag", `{"resource":[{"order_id":2,"tag_id":3}]}`},
		{"_table/order_tag", `{"resource":[{"order_id":2}]}`},
		{"_table/nokey", `{"resource":[{"a":3,"b":"three"}]}`},
		{"_table/nosuch", `{"resource":[{"a":3}]}`},
	}
	all := map[string]string{
		"customer": "_table/customer?order=id", "orders": "_table/orders?order=id", "tag": "_table/tag?order=id",
		"order_tag": "_table/order_tag?order=order_id,tag_id", "nokey": "_table/nokey?order=a,b",
	}
	return posts, all
}

// TestLiteCreateMatchesStmt checks the POST of one record on SQLite's
// driver (litecreate.go) against the same fast path through database/sql's
// Stmt on a twin database: the same status, bytes and rows, failures
// (a duplicate, a missing parent) undone; then the columns change and the
// next POST writes the new one at once.
func TestLiteCreateMatchesStmt(t *testing.T) {
	posts, all := createPosts()
	cfg := dbtest.Fresh(t, dialects.SQLite)
	lite := newDirect(t, cfg)
	stmt := newDirect(t, dbtest.Fresh(t, dialects.SQLite))
	posts = append(posts, posts...) // the second round meets kept statements
	for _, p := range posts {
		ls, lb := lite.call(t, nil, "POST", p.target, rawBody(p.body))
		restore := sqldb.SetLiteWrites(false)
		ss, sb := stmt.call(t, nil, "POST", p.target, rawBody(p.body))
		restore()
		if ls != ss || lb != sb {
			t.Errorf("POST %s %s:\n driver %d %s\n stmt   %d %s", p.target, p.body, ls, lb, ss, sb)
		}
	}
	for table, target := range all {
		ls, lb := lite.call(t, nil, "GET", target, nil)
		ss, sb := stmt.call(t, nil, "GET", target, nil)
		if ls != 200 || ls != ss || lb != sb {
			t.Errorf("%s after the posts:\n driver %d %s\n stmt   %d %s", table, ls, lb, ss, sb)
		}
	}
	if n := sqldb.LiteStatements(lite.b); n == 0 {
		t.Errorf("no statement kept on the driver's connections")
	}
	// A new column is written by the next POST.
	db := dbtest.Open(t, cfg)
	if _, err := db.ExecContext(t.Context(), `ALTER TABLE tag ADD COLUMN extra TEXT`); err != nil {
		t.Fatal(err)
	}
	lite.b.(interface{ InvalidateSchema() }).InvalidateSchema()
	if s, body := lite.call(t, nil, "POST", "_table/tag", rawBody(`{"resource":[{"label":"x","extra":"new"}]}`)); s != 200 {
		t.Fatalf("POST after a new column: %d %s", s, body)
	}
	if _, body := lite.call(t, nil, "GET", "_table/tag?order=id", nil); !strings.Contains(body, `"extra":"new"`) {
		t.Errorf("after a new column: %s", body)
	}
}
