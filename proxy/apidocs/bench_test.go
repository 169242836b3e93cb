package apidocs_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// BenchmarkServiceDocument measures the document of a SQLite database with
// 200 tables of 12 columns, as an administrator fetches it (introspection
// cached): build, filter and encode; the same document is validated once
// (the first fetch, before the loop, pays for that).
func BenchmarkServiceDocument(b *testing.B) {
	cfg := dbtest.Fresh(b, dialects.SQLite)
	db := dbtest.Open(b, cfg)
	for i := range 200 {
		stmt := fmt.Sprintf(`CREATE TABLE t%03d (id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(64) NOT NULL, a INTEGER, b TEXT,
			c DECIMAL(10,2), d DATE, e DATETIME, f BOOLEAN DEFAULT FALSE, g DOUBLE, h VARCHAR(255), i BLOB, ref INTEGER REFERENCES t000(id))`, i)
		if _, err := db.ExecContext(b.Context(), stmt); err != nil {
			b.Fatal(err)
		}
	}
	in := proxytest.StartSQLite(b)
	addService(b, in, "big", "Big", "sqlite", serviceConfig(cfg))
	admin := in.Admin(b)
	r := admin.Do(b, http.MethodGet, "/api/v2/api_docs/big", nil)
	if r.Status != http.StatusOK {
		b.Fatalf("%d %s", r.Status, r.Body)
	}
	size := len(r.Body)
	for b.Loop() {
		if r := admin.Do(b, http.MethodGet, "/api/v2/api_docs/big", nil); r.Status != http.StatusOK {
			b.Fatalf("%d", r.Status)
		}
	}
	b.ReportMetric(float64(size), "bytes/doc")
}
