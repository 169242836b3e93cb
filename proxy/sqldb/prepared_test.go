package sqldb_test

import (
	"net/http"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
)

// TestReadsArePrepared: reads of the same shape with other values share
// one prepared statement on every engine; a schema change drops them, and
// reads still answer the same afterwards.
func TestReadsArePrepared(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		d := newDirect(t, cfg)
		shapes := []string{
			"_table/customer/1", "_table/customer/2", "_table/customer/3",
			"_table/customer?filter=id=1", "_table/customer?filter=id=2",
		}
		bodies := map[string]string{}
		for _, target := range shapes {
			code, body := d.call(t, nil, http.MethodGet, target, nil)
			if code != http.StatusOK {
				t.Fatalf("%s: %d %s", target, code, body)
			}
			bodies[target] = body
		}
		want := 2
		switch cfg.Kind {
		case dialects.Postgres:
			want = 0 // reads by key and lists are pgx's cached statements (pgfast.go, pglist.go)
		case dialects.SQLite:
			want = 0 // reads by key and lists are the driver's own statements (litefast.go)
		case dialects.MySQL:
			want = 1 // the read by key is the driver's own statement (litefast.go, myfast.go)
		}
		if n := sqldb.CachedStatements(d.b); n != want {
			t.Errorf("%d prepared statements for two shapes, want %d", n, want)
		}
		if code, body := d.call(t, nil, http.MethodGet, "_table/customer/999999", nil); code != http.StatusNotFound {
			t.Errorf("missing record: %d %s", code, body)
		}
		d.b.(interface{ InvalidateSchema() }).InvalidateSchema()
		if n := sqldb.CachedStatements(d.b); n != 0 {
			t.Errorf("%d prepared statements after a schema change", n)
		}
		for _, target := range shapes {
			if code, body := d.call(t, nil, http.MethodGet, target, nil); code != http.StatusOK || body != bodies[target] {
				t.Errorf("%s after the schema change: %d %s, want %s", target, code, body, bodies[target])
			}
		}
	})
}
