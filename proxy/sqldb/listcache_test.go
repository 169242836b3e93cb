package sqldb_test

import (
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
)

// TestListReadCache checks the compiled list reads: a read answers the
// same from its compiled form as when it was compiled, errors are the
// same every time, grants never share a compiled read that would change
// the answer, one prepared statement serves every page and value of a
// shape, and a schema change takes effect at once.
func TestListReadCache(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		d := newDirect(t, cfg)
		twice := func(t *testing.T, g *caller.Grant, path string, status int, want string) {
			t.Helper()
			for i := range 2 {
				gotStatus, got := d.call(t, g, "GET", path, nil)
				if gotStatus != status || want != "" && got != want {
					t.Fatalf("%s (call %d): %d %s\nwant %d %s", path, i+1, gotStatus, got, status, want)
				}
			}
		}
		for _, c := range []struct {
			name, path string
			status     int
			want       string
		}{
			{"filter and order", "_table/customer?fields=id,name&filter=(age > 20) and (active = true)&order=age desc, id asc", 200,
				`{"resource":[{"id":4,"name":"Dave"},{"id":1,"name":"Alice"}]}` + "\n"},
			{"next page", "_table/customer?fields=id&filter=age > 20&limit=1&offset=1", 200,
				`{"resource":[{"id":2}],"meta":{"next":2}}` + "\n"},
			{"count", "_table/customer?fields=id&filter=age > 20&limit=1&include_count=true", 200,
				`{"resource":[{"id":1}],"meta":{"count":3,"next":1}}` + "\n"},
			{"count, last page", "_table/customer?fields=id&filter=age > 20&limit=2&offset=2&include_count=true", 200,
				`{"resource":[{"id":4}],"meta":{"count":3}}` + "\n"},
			{"alias", "_table/customer?fields=name as who&filter=id = 2", 200, `{"resource":[{"who":"Bob"}]}` + "\n"},
			{"syntax error", "_table/customer?filter=age >", 400,
				`{"error":{"code":400,"message":"Invalid request: filter: unexpected end of input at position 5; expected a value.","context":null,"status_code":400}}` + "\n"},
			{"unknown field", "_table/customer?filter=nope = 1", 400, ""},
			{"bad order", "_table/customer?order=nope", 400, ""},
		} {
			t.Run(c.name, func(t *testing.T) { twice(t, nil, c.path, c.status, c.want) })
		}

		t.Run("grants", func(t *testing.T) {
			path := "_table/customer?filter=id < 3&order=id"
			few := &caller.Grant{Fields: []string{"id", "name"}}
			twice(t, few, path, 200, `{"resource":[{"id":1,"name":"Alice"},{"id":2,"name":"Bob"}]}`+"\n")
			twice(t, nil, "_table/customer?fields=id,email&filter=id < 3&order=id", 200,
				`{"resource":[{"id":1,"email":"alice@example.com"},{"id":2,"email":"bob@example.com"}]}`+"\n")
			twice(t, few, "_table/customer?fields=id,email&filter=id < 3&order=id", 200, `{"resource":[{"id":1},{"id":2}]}`+"\n")
			twice(t, few, "_table/customer?filter=email is null", 400, "")
			older := &caller.Grant{Filters: []caller.Filter{{Name: "age", Operator: ">", Value: "26"}}}
			younger := &caller.Grant{Filters: []caller.Filter{{Name: "age", Operator: "<", Value: "26"}}}
			twice(t, older, "_table/customer?fields=id&filter=active = true", 200, `{"resource":[{"id":1},{"id":4}]}`+"\n")
			twice(t, younger, "_table/customer?fields=id&filter=active = false", 200, `{"resource":[{"id":2}]}`+"\n")
			twice(t, younger, "_table/customer?fields=id&filter=active = true", 200, `{"resource":[]}`+"\n")
			// Another grant of the same content shares the compiled read.
			n := sqldb.CachedListReads(d.b)
			same := &caller.Grant{Filters: []caller.Filter{{Name: "age", Operator: ">", Value: "26"}}}
			twice(t, same, "_table/customer?fields=id&filter=active = true", 200, `{"resource":[{"id":1},{"id":4}]}`+"\n")
			if got := sqldb.CachedListReads(d.b); got != n {
				t.Errorf("an equal grant compiled its own read: %d reads, was %d", got, n)
			}
		})

		t.Run("one statement per shape", func(t *testing.T) {
			d.call(t, nil, "GET", "_table/orders?filter=total > 5&limit=1", nil)
			stmts, reads := sqldb.CachedStatements(d.b), sqldb.CachedListReads(d.b)
			for _, p := range []string{
				"_table/orders?filter=total > 5&limit=1&offset=1",
				"_table/orders?filter=total > 5&limit=2&offset=1",
				"_table/orders?filter=total > 8&limit=1",
			} {
				if status, body := d.call(t, nil, "GET", p, nil); status != 200 {
					t.Fatalf("%s: %d %s", p, status, body)
				}
			}
			if got := sqldb.CachedStatements(d.b); got != stmts {
				t.Errorf("pages and values of one shape prepared %d statements more", got-stmts)
			}
			if got := sqldb.CachedListReads(d.b); got != reads+1 {
				t.Errorf("compiled reads: %d, want %d (one more filter text)", got, reads+1)
			}
		})

		t.Run("schema change", func(t *testing.T) {
			path := "_table/tag?filter=id = 1"
			twice(t, nil, path, 200, `{"resource":[{"id":1,"label":"red"}]}`+"\n")
			if status, body := d.call(t, nil, "PATCH", "_schema/tag", obj("field", list(obj("name", "shade", "type", "string")))); status != 200 {
				t.Fatalf("add field: %d %s", status, body)
			}
			twice(t, nil, path, 200, `{"resource":[{"id":1,"label":"red","shade":null}]}`+"\n")
			twice(t, nil, "_table/tag?filter=shade is null&fields=id&limit=1", 200, `{"resource":[{"id":1}],"meta":{"next":1}}`+"\n")
		})
	})
}
