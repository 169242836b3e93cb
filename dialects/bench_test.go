package dialects_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/engines"
)

// BenchmarkIntrospect reads a schema of 20 tables (8 columns each, a
// primary key, a unique column, an index and a foreign key to the previous
// table) on every available engine.
func BenchmarkIntrospect(b *testing.B) {
	for _, kind := range dbtest.Kinds {
		b.Run(string(kind), func(b *testing.B) {
			cfg := dbtest.Fresh(b, kind)
			db := dbtest.Open(b, cfg)
			d, _ := engines.Get(kind)
			ctx := context.Background()
			for i := range 20 {
				fields := []dialects.FieldSpec{
					{Name: "id", Type: "id"},
					{Name: "code", Type: "string", Length: 20, IsUnique: true},
					{Name: "name", Type: "string", Length: 100, AllowNull: true, Default: str("x")},
					{Name: "qty", Type: "integer", AllowNull: true, IsIndex: true},
					{Name: "price", Type: "decimal", Precision: 10, Scale: 2, AllowNull: true},
					{Name: "active", Type: "boolean", Default: str("true")},
					{Name: "created", Type: "timestamp_on_create", AllowNull: true},
				}
				if i > 0 {
					fields = append(fields, dialects.FieldSpec{Name: "parent_id", Type: "reference", AllowNull: true, RefTable: fmt.Sprintf("t%02d", i-1), RefField: "id"})
				} else {
					fields = append(fields, dialects.FieldSpec{Name: "note", Type: "text", AllowNull: true})
				}
				if err := d.CreateTable(ctx, db, dialects.TableSpec{Name: fmt.Sprintf("t%02d", i), Fields: fields}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s, err := d.Introspect(ctx, db)
				if err != nil || len(s.Tables) != 20 {
					b.Fatal(err)
				}
			}
		})
	}
}
