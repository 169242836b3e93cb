package mysql_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/mysql"
)

func TestMySQLLimits(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.MySQL)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	d := mysql.New()
	err := d.CreateTable(ctx, db, dialects.TableSpec{Name: "t", Fields: []dialects.FieldSpec{
		{Name: "id", Type: "id"}, {Name: "body", Type: "text", IsUnique: true}, {Name: "r", Type: "integer", AllowNull: true, RefTable: "t", RefField: "id", RefOnDelete: "SET DEFAULT"},
	}})
	var se *dialects.SpecError
	if !errors.As(err, &se) || len(se.Problems) != 2 {
		t.Fatalf("text unique / SET DEFAULT: %v", err)
	}
	if err := d.CreateTable(ctx, db, dialects.TableSpec{Name: "t", Fields: []dialects.FieldSpec{
		{Name: "id", Type: "id"}, {Name: "name", Type: "string", Length: 20, AllowNull: true},
		{Name: "doc", Type: "json", AllowNull: true, Default: str(`{"a": "it's"}`)},
		{Name: "changed", Type: "timestamp_on_update", AllowNull: true},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO t (name) VALUES ('😀 émoji')"); err != nil {
		t.Fatalf("utf8mb4: %v", err)
	}
	var name, doc string
	if err := db.QueryRowContext(ctx, "SELECT name, doc FROM t").Scan(&name, &doc); err != nil || name != "😀 émoji" || !strings.Contains(doc, "it's") {
		t.Fatalf("read back %q %q %v", name, doc, err)
	}
	var extra string
	if err := db.QueryRowContext(ctx, "SELECT EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 't' AND COLUMN_NAME = 'changed'").Scan(&extra); err != nil || !strings.Contains(strings.ToLower(extra), "on update") {
		t.Errorf("timestamp_on_update: %q %v", extra, err)
	}
	if err := d.CreateIndex(ctx, db, "t", dialects.Index{Columns: []string{"doc"}}); !errors.Is(err, dialects.ErrInvalidSpec) {
		t.Errorf("index on json: %v", err)
	}
}

func str(s string) *string { return &s }
