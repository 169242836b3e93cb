package rowjson_test

import (
	"context"
	"encoding/json"
	"io"
	"runtime"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/rowjson"
)

const benchRows = 1000

// BenchmarkSQLiteRows streams 1000 rows × 8 columns (integer, text,
// varchar, boolean, decimal, double, date, datetime) from SQLite to
// io.Discard: query, scan and encode. ns/row and allocs/row include the
// driver's own work.
func BenchmarkSQLiteRows(b *testing.B) {
	cfg := dbtest.Fresh(b, dialects.SQLite)
	db := dbtest.Open(b, cfg)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT, code VARCHAR(20), active BOOLEAN,
			price DECIMAL(10,2), ratio DOUBLE, day DATE, updated DATETIME)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
		 INSERT INTO items SELECT i, 'Item number ' || i || ' with "quotes"', printf('C-%05d', i), i % 2,
			i * 1.25, i / 7.0, date('2024-01-01', '+' || (i % 365) || ' days'),
			datetime('2024-01-01 08:00:00', '+' || i || ' minutes') FROM n`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for b.Loop() {
		rows, err := db.QueryContext(ctx, "SELECT * FROM items")
		if err != nil {
			b.Fatal(err)
		}
		r, err := rowjson.New(dialects.SQLite, rows, rowjson.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if n, err := r.WriteArray(io.Discard, 0); err != nil || n != benchRows {
			b.Fatal(n, err)
		}
		rows.Close()
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRows), "ns/row")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N*benchRows), "allocs/row")
}

// BenchmarkSQLiteMapScan is the baseline rowjson replaces: bun's map
// scanning, then encoding/json.
func BenchmarkSQLiteMapScan(b *testing.B) {
	cfg := dbtest.Fresh(b, dialects.SQLite)
	db := dbtest.Open(b, cfg)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT, code VARCHAR(20), active BOOLEAN,
			price DECIMAL(10,2), ratio DOUBLE, day DATE, updated DATETIME)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
		 INSERT INTO items SELECT i, 'Item number ' || i, printf('C-%05d', i), i % 2, i * 1.25, i / 7.0,
			date('2024-01-01'), datetime('2024-01-01 08:00:00') FROM n`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var out []map[string]any
		if err := db.NewRaw("SELECT * FROM items").Scan(ctx, &out); err != nil {
			b.Fatal(err)
		}
		if err := json.NewEncoder(io.Discard).Encode(out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRows), "ns/row")
}
