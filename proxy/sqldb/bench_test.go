package sqldb_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// benchService is a SQLite service with 2000 rows of seven columns.
func benchService(b *testing.B) *direct {
	b.Helper()
	cfg := dbtest.Fresh(b, dialects.SQLite)
	db := dbtest.Open(b, cfg)
	ctx := b.Context()
	if _, err := db.ExecContext(ctx, `CREATE TABLE item (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(64) NOT NULL,
		price DECIMAL(10,2), qty INTEGER, active BOOLEAN, created DATETIME, notes TEXT)`); err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO item (name, price, qty, active, created, notes) VALUES ")
	for i := range 2000 {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "('item %d', %d.%02d, %d, %d, '2024-01-%02d 10:%02d:00', 'some notes about item %d')", i, i, i%100, i*3, i%2, i%28+1, i%60, i)
	}
	if _, err := db.ExecContext(ctx, sb.String()); err != nil {
		b.Fatal(err)
	}
	return newDirectOn(b, cfg)
}

func benchGET(b *testing.B, d *direct, target string) {
	path, _, _ := strings.Cut(target, "?")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("GET", "/api/v2/data/"+target, nil)
		req = req.WithContext(service.WithTarget(req.Context(), &service.Target{Service: d.svc, Resource: path, Verb: "GET"}))
		rec := httptest.NewRecorder()
		d.b.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}

func BenchmarkGetByID(b *testing.B) {
	benchGET(b, benchService(b), "_table/item/1234")
}

func BenchmarkGetPage25(b *testing.B) {
	benchGET(b, benchService(b), "_table/item?limit=25&offset=100")
}

func BenchmarkGetPage1000(b *testing.B) {
	benchGET(b, benchService(b), "_table/item?limit=1000")
}

func BenchmarkGetPage25Filtered(b *testing.B) {
	benchGET(b, benchService(b), "_table/item?limit=25&filter=qty+%3E+300+and+active+%3D+true&order=price+desc")
}

func BenchmarkCreate100(b *testing.B) {
	d := benchService(b)
	recs := make([]any, 100)
	for i := range recs {
		recs[i] = rec("name", fmt.Sprintf("new %d", i), "price", "12.50", "qty", i, "active", true, "created", "2024-01-02 03:04:05")
	}
	body := res()
	body["resource"] = recs
	b.ReportAllocs()
	for b.Loop() {
		if status, out := d.call(b, nil, "POST", "_table/item", body); status != 200 {
			b.Fatalf("%d %s", status, out)
		}
	}
}

func BenchmarkCreate1(b *testing.B) {
	d := benchService(b)
	body := res(rec("name", "new", "price", "12.50", "qty", 3, "active", true, "created", "2024-01-02 03:04:05", "notes", nil))
	b.ReportAllocs()
	for b.Loop() {
		if status, out := d.call(b, nil, "POST", "_table/item", body); status != 200 {
			b.Fatalf("%d %s", status, out)
		}
	}
}

func BenchmarkPatchByID(b *testing.B) {
	d := benchService(b)
	body := rec("qty", 7, "notes", "patched")
	b.ReportAllocs()
	for b.Loop() {
		if status, out := d.call(b, nil, "PATCH", "_table/item/1234", body); status != 200 {
			b.Fatalf("%d %s", status, out)
		}
	}
}
