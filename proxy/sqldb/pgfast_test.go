package sqldb_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

// TestPostgresNativeReadsMatchGeneral checks the read by key that runs on
// pgx itself (pgfast.go) against the general path, forced by naming every
// column, over PostgreSQL's types and their edge values: the same bytes.
// It then changes a column's type: the next read answers with the new
// type at once (the statement prepared before the change is not used).
func TestPostgresNativeReadsMatchGeneral(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.Postgres)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	cols := "id,s2,i4,i8,n,r,f,b,t,vc,ch,u,j,jb,d,tm,ttz,ts,tstz,iv,ip,by,x,m,ai,at,o"
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
		`INSERT INTO typed (s2, r, f, d, ts) VALUES (7, '-Infinity', -0.0, '0001-01-01', '1999-12-31 23:59:59')`,
		`INSERT INTO typed (id) VALUES (100)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d := newDirectOn(t, cfg)
	check := func(when string) {
		for _, id := range []string{"1", "2", "3", "100", "4", "0"} {
			target := "_table/typed/" + id
			fs, fb := d.call(t, nil, http.MethodGet, target, nil)
			gs, gb := d.call(t, nil, http.MethodGet, target+"?fields="+cols, nil)
			if fs != gs || fb != gb {
				t.Errorf("%s %s: fast path %d %s, general path %d %s", when, target, fs, fb, gs, gb)
			}
		}
	}
	check("before")
	for range 3 { // the statement is now prepared on the connections used
		check("again")
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE typed ALTER COLUMN i4 TYPE TEXT`); err != nil {
		t.Fatal(err)
	}
	d.b.(interface{ InvalidateSchema() }).InvalidateSchema()
	check("after a type change")
	if _, body := d.call(t, nil, http.MethodGet, "_table/typed/1", nil); !strings.Contains(body, `"i4":"2147483647"`) {
		t.Errorf("after a type change: %s", body)
	}
}
