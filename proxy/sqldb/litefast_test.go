package sqldb_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/sqldb"
)

// TestSQLiteDriverReadsMatchGeneral checks the reads by key and pages that
// SQLite runs on the driver itself (litefast.go), dates and times read as
// stored and turned into times by liteTime, against the general path,
// forced by naming every column, over SQLite's declared types and values
// of other storage classes than declared (dates in several text forms and
// as numbers, text that is not a date, decimals as text, invalid JSON,
// blobs): the same bytes; also for list reads with a filter and an order
// (runList). It then adds a column: the next reads answer with
// it at once; and closing the backend finalizes the statements.
func TestSQLiteDriverReadsMatchGeneral(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.SQLite)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	cols := "id,i,r,n,dec,b,t,vc,u,j,d,tm,dt,ts,bl,nt"
	for _, q := range []string{
		`CREATE TABLE typed (id INTEGER PRIMARY KEY, i INTEGER, r REAL, n NUMERIC, dec DECIMAL(10,2), b BOOLEAN,
			t TEXT, vc VARCHAR(20), u UUID, j JSON, d date, tm TIME, dt DateTime, ts TIMESTAMP, bl BLOB, nt)`,
		`INSERT INTO typed VALUES (1, -9223372036854775808, 1.5, 12, 12.5, 1, 'quote " back \ tab 	 é 😀 <b>&', 'vc',
			'6f1c2b9e-1d2a-4c4e-9a47-0c9f1d9a7b11', '{"b": 1, "a": [1, 2]}', '2024-02-29', '10:11:12.5',
			'2024-02-29 10:11:12', '2024-02-29 10:11:12.123456', x'00ff10', 'any')`,
		`INSERT INTO typed VALUES (2, 9223372036854775807, -0.0, 1.25, '12.345', 0, '', NULL, NULL, '{bad', '2024-02-29T01:02:03Z',
			'x', '2024-02-29T10:11:12+02:00', '2024-02-29 10:11', '', 3.5)`,
		`INSERT INTO typed VALUES (3, 'text', 'abc', 'n', 'abc', 'yes', 42, 7, 8, 9, 1700000000, 12, 1700000000000,
			'not a date', 'text', x'')`,
		`INSERT INTO typed VALUES (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
		`INSERT INTO typed (id, dt, ts) VALUES (5, '2024-02-29 10:11:12.5 +0000 UTC', '2024-01-01 00:00:00 +0100 +0100 m=+0.5')`,
		`INSERT INTO typed (id, dt, ts, d) VALUES (6, '2024-13-40 25:61:61', '0001-01-01 00:00:00', '2024-02-30')`,
		`INSERT INTO typed (id, dt, ts, d, tm) VALUES (7, '2024-02-29 10:11:61', '2024-02-29 24:00:00', ' 2024-02-29', '2024-02-29 10:11:12Z')`,
		`INSERT INTO typed (id, dt, ts, d) VALUES (8, 'X024-02-29 10:11:12', '2024-02-29 10:11:12Z', '2024-02-29 10:11:12')`,
		`INSERT INTO typed (id, dt, ts, d) VALUES (9, 1700000000.5, x'3230', '2024-02-29T10:11')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d := newDirectOn(t, cfg)
	check := func(when, cols string) {
		t.Helper()
		for _, target := range []string{
			"_table/typed/1", "_table/typed/2", "_table/typed/3", "_table/typed/4", "_table/typed/5",
			"_table/typed/6", "_table/typed/7", "_table/typed/8", "_table/typed/9", "_table/typed/10",
			"_table/typed/0", "_table/typed/x",
			"_table/typed?limit=2", "_table/typed?limit=3&offset=2", "_table/typed?limit=10", "_table/typed?offset=9",
			// Compiled list reads (runList on the driver when every column is selected).
			"_table/typed?filter=id > 2&order=id desc&limit=3", "_table/typed?filter=id != 4&order=dt desc, id&limit=2&offset=1",
			"_table/typed?order=ts&include_count=true", "_table/typed?filter=i is null&order=id",
		} {
			sep := "?"
			if strings.Contains(target, "?") {
				sep = "&"
			}
			fs, fb := d.call(t, nil, http.MethodGet, target, nil)
			gs, gb := d.call(t, nil, http.MethodGet, target+sep+"fields="+cols, nil)
			if strings.Contains(target, "order=") && fs != http.StatusOK {
				t.Errorf("%s %s: %d %s", when, target, fs, fb)
			}
			if fs != gs || fb != gb {
				t.Errorf("%s %s: fast path %d %s, general path %d %s", when, target, fs, fb, gs, gb)
			}
		}
	}
	check("before", cols)
	for range 3 { // the statements are now prepared on the connections used
		check("again", cols)
	}
	if n := sqldb.LiteStatements(d.b); n < 2 {
		t.Errorf("%d statements kept on the driver's connections, want the read by key and the page", n)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE typed ADD COLUMN extra TEXT DEFAULT 'new'`); err != nil {
		t.Fatal(err)
	}
	d.b.(interface{ InvalidateSchema() }).InvalidateSchema()
	check("after a new column", cols+",extra")
	if _, body := d.call(t, nil, http.MethodGet, "_table/typed/1", nil); !strings.Contains(body, `"extra":"new"`) {
		t.Errorf("after a new column: %s", body)
	}
	if _, body := d.call(t, nil, http.MethodGet, "_table/typed?limit=1", nil); !strings.Contains(body, `"extra":"new"`) {
		t.Errorf("page after a new column: %s", body)
	}
	if err := d.b.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	if n := sqldb.LiteStatements(d.b); n != 0 {
		t.Errorf("%d statements left after Close", n)
	}
}
