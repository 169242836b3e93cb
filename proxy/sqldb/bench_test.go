package sqldb_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

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

// postItemDDL is the bench harness's item table (bench/db.go).
var postItemDDL = map[dialects.Kind]string{
	dialects.SQLite: `CREATE TABLE item (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(64) NOT NULL,
		category VARCHAR(32) NOT NULL, price DECIMAL(10,2) NOT NULL, qty INTEGER NOT NULL, active BOOLEAN NOT NULL,
		created DATETIME NOT NULL, notes TEXT)`,
	dialects.Postgres: `CREATE TABLE item (id BIGSERIAL PRIMARY KEY, name VARCHAR(64) NOT NULL,
		category VARCHAR(32) NOT NULL, price NUMERIC(10,2) NOT NULL, qty INTEGER NOT NULL, active BOOLEAN NOT NULL,
		created TIMESTAMP NOT NULL, notes TEXT)`,
	dialects.MySQL: `CREATE TABLE item (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL,
		category VARCHAR(32) NOT NULL, price DECIMAL(10,2) NOT NULL, qty INT NOT NULL, active TINYINT(1) NOT NULL,
		created DATETIME NOT NULL, notes TEXT) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
}

// postItemBody is the bench harness's POST body (bench/scenario.go).
const postItemBody = `{"resource":[{"active":true,"category":"posted","created":"2024-06-01 12:00:00","name":"posted 7","notes":"posted by the bench","price":12.07,"qty":7}]}`

// BenchmarkPost is the bench harness's POST of one record on every
// engine: through the backend, and as a hand-written handler would do it
// (a struct decoded, one prepared INSERT) on the same pool, so that the
// two can be compared in one run.
func BenchmarkPost(b *testing.B) {
	for _, kind := range dbtest.Kinds {
		b.Run(string(kind), func(b *testing.B) {
			cfg := dbtest.Fresh(b, kind)
			db := dbtest.Open(b, cfg)
			if _, err := db.ExecContext(b.Context(), postItemDDL[kind]); err != nil {
				b.Fatal(err)
			}
			b.Run("portcullis", func(b *testing.B) {
				d := newDirectOn(b, cfg)
				svc := d.svc
				b.ReportAllocs()
				for b.Loop() {
					req := httptest.NewRequest("POST", "/api/v2/data/_table/item", strings.NewReader(postItemBody))
					req = req.WithContext(service.WithTarget(req.Context(), &service.Target{Service: svc, Resource: "_table/item", Verb: "POST"}))
					rec := httptest.NewRecorder()
					d.b.ServeHTTP(rec, req)
					if rec.Code != 200 {
						b.Fatalf("%d %s", rec.Code, rec.Body)
					}
				}
			})
			b.Run("handwritten", func(b *testing.B) {
				text := "INSERT INTO item (name, category, price, qty, active, created, notes) VALUES (?, ?, ?, ?, ?, ?, ?)"
				if kind == dialects.Postgres {
					text = "INSERT INTO item (name, category, price, qty, active, created, notes) VALUES ($1, $2, $3, $4, $5, $6, $7)"
				}
				if kind != dialects.MySQL {
					text += " RETURNING id"
				}
				stmt, err := db.DB.PrepareContext(b.Context(), text)
				if err != nil {
					b.Fatal(err)
				}
				defer stmt.Close()
				b.ReportAllocs()
				for b.Loop() {
					req := httptest.NewRequest("POST", "/item", strings.NewReader(postItemBody))
					rec := httptest.NewRecorder()
					handwrittenPost(rec, req, kind, stmt)
					if rec.Code != 200 {
						b.Fatalf("%d %s", rec.Code, rec.Body)
					}
				}
			})
		})
	}
}

// handwrittenPost is bench/baseline.go's create.
func handwrittenPost(w http.ResponseWriter, r *http.Request, kind dialects.Kind, stmt *sql.Stmt) {
	var body struct {
		Resource []struct {
			Name     string      `json:"name"`
			Category string      `json:"category"`
			Price    json.Number `json:"price"`
			Qty      int64       `json:"qty"`
			Active   bool        `json:"active"`
			Created  string      `json:"created"`
			Notes    *string     `json:"notes"`
		} `json:"resource"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil || len(body.Resource) != 1 {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	in := body.Resource[0]
	if _, err := in.Price.Float64(); err != nil {
		http.Error(w, "price", http.StatusBadRequest)
		return
	}
	if _, err := time.Parse(time.DateTime, in.Created); err != nil {
		http.Error(w, "created", http.StatusBadRequest)
		return
	}
	var notes any
	if in.Notes != nil {
		notes = *in.Notes
	}
	args := []any{in.Name, in.Category, in.Price.String(), in.Qty, in.Active, in.Created, notes}
	var id int64
	if kind == dialects.MySQL {
		res, err := stmt.ExecContext(r.Context(), args...)
		if err == nil {
			id, err = res.LastInsertId()
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	} else if err := stmt.QueryRowContext(r.Context(), args...).Scan(&id); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out := strconv.AppendInt([]byte(`{"resource":[{"id":`), id, 10)
	out = append(out, "}]}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}
