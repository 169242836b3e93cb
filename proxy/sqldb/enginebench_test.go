package sqldb_test

import (
	"net/http/httptest"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// BenchmarkGetByIDEngines reads one record of the bench harness's item
// table by its key on every engine, through the backend alone, for
// -benchmem and callgrind (go test -run X -bench GetByIDEngines).
func BenchmarkGetByIDEngines(b *testing.B) {
	for _, kind := range dbtest.Kinds {
		b.Run(string(kind), func(b *testing.B) {
			cfg := dbtest.Fresh(b, kind)
			db := dbtest.Open(b, cfg)
			if _, err := db.ExecContext(b.Context(), postItemDDL[kind]); err != nil {
				b.Fatal(err)
			}
			d := newDirectOn(b, cfg)
			for range 3 {
				if status, out := d.call(b, nil, "POST", "_table/item", rawBody(postItemBody)); status != 200 {
					b.Fatalf("%d %s", status, out)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("GET", "/api/v2/data/_table/item/2", nil)
				req = req.WithContext(service.WithTarget(req.Context(), &service.Target{Service: d.svc, Resource: "_table/item/2", Verb: "GET"}))
				rec := httptest.NewRecorder()
				d.b.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
