package contract_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/engines"
	"github.com/portcullis-dev/portcullis/proxy/contract"
)

func sp(s string) *string { return &s }

// sampleTables are created through the dialects' DDL on every engine.
var sampleTables = []dialects.TableSpec{
	{Name: "customer", Fields: []dialects.FieldSpec{
		{Name: "id", Type: dialects.TypeID},
		{Name: "email", Type: dialects.TypeString, Length: 120, IsUnique: true},
		{Name: "name", Type: dialects.TypeString, Length: 64, AllowNull: true, Default: sp("anon")},
	}},
	{Name: "orders", Fields: []dialects.FieldSpec{
		{Name: "id", Type: dialects.TypeID},
		{Name: "customer_id", Type: dialects.TypeReference, RefTable: "customer", RefField: "id", AllowNull: true},
		{Name: "total", Type: dialects.TypeDecimal, Precision: 10, Scale: 2, Default: sp("0")},
		{Name: "paid", Type: dialects.TypeBoolean, Default: sp("false")},
		{Name: "qty", Type: dialects.TypeInteger, AllowNull: true, IsIndex: true},
		{Name: "big", Type: dialects.TypeBigInt, AllowNull: true},
		{Name: "ratio", Type: dialects.TypeDouble, AllowNull: true},
		{Name: "note", Type: dialects.TypeText, AllowNull: true},
		{Name: "placed", Type: dialects.TypeDatetime, AllowNull: true},
		{Name: "day", Type: dialects.TypeDate, AllowNull: true},
		{Name: "at", Type: dialects.TypeTime, AllowNull: true},
		{Name: "blob", Type: dialects.TypeBinary, AllowNull: true},
		{Name: "meta", Type: dialects.TypeJSON, AllowNull: true},
		{Name: "created", Type: dialects.TypeTimestampOnCreate},
	}},
}

// TestCanonicalShapeIsTheSameOnEveryEngine creates the same tables on
// SQLite, PostgreSQL and MySQL and compares their canonical JSON.
func TestCanonicalShapeIsTheSameOnEveryEngine(t *testing.T) {
	got := map[dialects.Kind]string{}
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		ctx := t.Context()
		db, d, err := engines.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, spec := range sampleTables {
			if err := d.CreateTable(ctx, db, spec); err != nil {
				t.Fatalf("create %s: %v", spec.Name, err)
			}
		}
		s, err := d.Introspect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		for _, name := range []string{"customer", "orders"} {
			tb := contract.FromTable(s.Table(name))
			all = append(all, string(tb.JSON()))
			back, err := contract.Parse(tb.JSON())
			if err != nil {
				t.Fatal(err)
			}
			if back.Hash() != tb.Hash() {
				t.Errorf("%s: hash changes through JSON", name)
			}
			if rep := contract.Diff(back, tb); rep.HasDrift {
				t.Errorf("%s: a shape drifts from itself: %+v", name, rep.Changes)
			}
		}
		got[cfg.Kind] = strings.Join(all, "\n")
	})
	sqlite := got[dialects.SQLite]
	for kind, j := range got {
		if j != sqlite {
			t.Errorf("%s differs from sqlite:\n%s", kind, cmp.Diff(pretty(t, sqlite), pretty(t, j)))
		}
	}
	if t.Failed() || len(got) == 0 {
		return
	}
	var orders map[string]any
	json.Unmarshal([]byte(strings.Split(sqlite, "\n")[1]), &orders)
	types := map[string]string{}
	for _, f := range orders["fields"].([]any) {
		f := f.(map[string]any)
		types[f["name"].(string)] = f["type"].(string)
	}
	want := map[string]string{"id": "id", "customer_id": "id", "total": "number", "paid": "boolean", "qty": "integer",
		"big": "integer", "ratio": "number", "note": "text", "placed": "datetime", "day": "date", "at": "time",
		"blob": "binary", "meta": "json", "created": "datetime"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}
}

func pretty(t *testing.T, s string) []any {
	var out []any
	for _, line := range strings.Split(s, "\n") {
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func TestFromTable(t *testing.T) {
	tb := &dialects.Table{Name: "item", Comment: "Things we sell", Columns: []*dialects.Column{
		{Name: "id", Type: dialects.TypeID, AutoIncrement: true, IsPrimaryKey: true},
		{Name: "size", Type: dialects.TypeString, DBType: "enum('s','m','it''s')", Length: 0},
		{Name: "total", Type: dialects.TypeDecimal, Precision: 8, Scale: 2, Generated: true, AllowNull: true},
		{Name: "tags", Type: dialects.TypeArray, DBType: "text[]", AllowNull: true},
		{Name: "qty", Type: dialects.TypeInteger, Length: 11, Default: sp("3")},
	}, PrimaryKey: []string{"id"}}
	c := contract.FromTable(tb)
	if c.Label != "Item" || c.Description == nil || *c.Description != "Things we sell" || c.Type != "table" {
		t.Errorf("table: %+v", c)
	}
	if e := c.Field("size").Enum; e == nil || !cmp.Equal(e.Values, []string{"s", "m", "it's"}) {
		t.Errorf("enum: %+v", e)
	}
	if f := c.Field("total"); !f.ReadOnly || f.Generated == nil || f.Required || *f.Precision != 8 || *f.Scale != 2 {
		t.Errorf("generated: %+v", f)
	}
	if f := c.Field("tags"); f.Type != "array" || f.ElementType == nil || *f.ElementType != "text" {
		t.Errorf("array: %+v", f)
	}
	if f := c.Field("qty"); f.Length != nil || f.Default != json.Number("3") || f.Required {
		t.Errorf("integer: %+v", f)
	}
	if len(c.Indexes) != 1 || c.Indexes[0].Type != "primary" {
		t.Errorf("indexes: %+v", c.Indexes)
	}
}
