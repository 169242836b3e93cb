package sqldb_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
)

// listTargets are pages (fastPage) and compiled list reads (runList) of
// the fixture's customer table, errors included.
var listTargets = []string{
	"_table/customer?limit=2",
	"_table/customer?limit=2&offset=1",
	"_table/customer?limit=100&offset=0",
	"_table/customer?limit=1&offset=99",
	"_table/customer?filter=(age > 20) and (active = true)&order=age desc, id asc",
	"_table/customer?filter=age > 20&limit=1&offset=1&include_count=true",
	"_table/customer?fields=id,name,born,created&filter=name like '%a%'",
	"_table/customer?fields=name as who,balance&order=balance desc",
	"_table/customer?filter=notes is null",
	"_table/customer?filter=age = 'abc'",
	"_table/customer?filter=nope = 1",
}

// TestNativeListsMatchGeneral reads pages and filtered lists with the pgx
// path of PostgreSQL on and off (database/sql's rows) on every engine,
// with and without a grant: the same status and bytes, the first time
// and once the statements are prepared.
func TestNativeListsMatchGeneral(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		d := newDirect(t, cfg)
		grant := &caller.Grant{Fields: []string{"id", "name", "age"}, FilterOp: "AND",
			Filters: []caller.Filter{{Name: "active", Operator: "=", Value: "true"}}}
		for round := range 3 {
			for _, g := range []*caller.Grant{nil, grant} {
				for _, target := range listTargets {
					ns, nb := d.call(t, g, http.MethodGet, target, nil)
					restore := sqldb.SetNativePG(false)
					gs, gb := d.call(t, g, http.MethodGet, target, nil)
					restore()
					if ns != gs || nb != gb {
						t.Errorf("round %d, grant %v, %s: native %d %s, general %d %s", round, g != nil, target, ns, nb, gs, gb)
					}
				}
			}
		}
	})
}

// TestPostgresNativeListsMatchGeneral reads pages and lists of a table of
// PostgreSQL's types and their edge values through pgx and through
// database/sql: the same bytes. It then changes a column's type: the next
// page answers with the new type at once.
func TestPostgresNativeListsMatchGeneral(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.Postgres)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	for _, q := range []string{
		`CREATE TABLE typed (id SERIAL PRIMARY KEY, s2 SMALLINT, i4 INTEGER, i8 BIGINT, n NUMERIC(12,3), r REAL,
			f DOUBLE PRECISION, b BOOLEAN, t TEXT, vc VARCHAR(20), ch CHAR(5), u UUID, j JSON, jb JSONB, d DATE,
			tm TIME, ttz TIMETZ, ts TIMESTAMP, tstz TIMESTAMPTZ, iv INTERVAL, ip INET, by BYTEA, x XML, m MONEY,
			ai INTEGER[], at TEXT[], o OID)`,
		`INSERT INTO typed (s2, i4, i8, n, r, f, b, t, vc, ch, u, j, jb, d, tm, ttz, ts, tstz, iv, ip, by, x, m, ai, at, o) VALUES
			(-32768, 2147483647, -9223372036854775808, 123456789.125, 1.5, 0.1, true, E'quote " back \\\\ tab \t nl \n é 😀 <b>&',
			 'vc', 'ab', '6f1c2b9e-1d2a-4c4e-9a47-0c9f1d9a7b11', '{"b": 1, "a": [1, 2]}', '{"b": 1, "a": [1, 2]}',
			 '2024-02-29', '10:11:12.5', '10:11:12+02', '2024-02-29 10:11:12.123456', '2024-02-29 10:11:12.5+02',
			 '1 day 02:03:04', '10.1.2.3/32', '\xdeadbeef', '<a>x</a>', 12.34, '{1,NULL,3}', '{"a","b c"}', 42)`,
		`INSERT INTO typed (s2, i4, i8, n, r, f, b, t, d, ts, tstz) VALUES
			(0, -1, 9007199254740993, -0.5, 'NaN', 'Infinity', false, '', 'infinity', '-infinity', 'infinity')`,
		`INSERT INTO typed (s2, r, f, d, ts, tstz, t) VALUES (7, '-Infinity', -0.0, '0001-01-01', '1999-12-31 23:59:59',
			'1970-01-01 00:00:00.000001+00', E'\u2028 invalid? no')`,
		`INSERT INTO typed (s2, i4, n, r, f, d, ts, tstz) VALUES (255, 256, 'NaN', 3.4028235e38, 1e-7, '-infinity', 'infinity', '-infinity')`,
		`INSERT INTO typed (id) VALUES (100)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d := newDirectOn(t, cfg)
	targets := []string{
		"_table/typed?limit=3",
		"_table/typed?limit=1000&offset=1",
		"_table/typed?filter=s2 > 0&order=id desc",
		"_table/typed?filter=i8 is not null&include_count=true&limit=2",
		"_table/typed?fields=id,ts,tstz,d,n,t&filter=id < 100",
	}
	check := func(when string) {
		t.Helper()
		for _, target := range targets {
			ns, nb := d.call(t, nil, http.MethodGet, target, nil)
			restore := sqldb.SetNativePG(false)
			gs, gb := d.call(t, nil, http.MethodGet, target, nil)
			restore()
			if ns != gs || nb != gb {
				t.Errorf("%s %s: native %d %s\ngeneral %d %s", when, target, ns, nb, gs, gb)
			}
		}
	}
	check("before")
	for range 3 { // the statements are now prepared on the connections used
		check("again")
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE typed ALTER COLUMN i4 TYPE TEXT`); err != nil {
		t.Fatal(err)
	}
	d.b.(interface{ InvalidateSchema() }).InvalidateSchema()
	check("after a type change")
	if _, body := d.call(t, nil, http.MethodGet, "_table/typed?limit=1", nil); !strings.Contains(body, `"i4":"2147483647"`) {
		t.Errorf("page after a type change: %s", body)
	}
	if _, body := d.call(t, nil, http.MethodGet, "_table/typed?filter=s2 > 0&order=id desc", nil); !strings.Contains(body, `"i4":"256"`) {
		t.Errorf("list after a type change: %s", body)
	}
}
