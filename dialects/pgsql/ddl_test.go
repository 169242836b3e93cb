package pgsql_test

import (
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/pgsql"
)

// TestAutoIncrementToggle turns a plain integer key into an identity that
// continues after the existing rows, and back.
func TestAutoIncrementToggle(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.Postgres)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	d := pgsql.New()
	if err := d.CreateTable(ctx, db, dialects.TableSpec{Name: `Odd "Name"`, Fields: []dialects.FieldSpec{
		{Name: "Key", Type: "integer", IsPrimaryKey: true}, {Name: "v", Type: "string", AllowNull: true},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO "Odd ""Name""" ("Key", v) VALUES (1, 'a'), (7, 'b')`); err != nil {
		t.Fatal(err)
	}
	if err := d.AlterColumn(ctx, db, `odd "name"`, dialects.FieldSpec{Name: "key", Type: "id"}); err != nil {
		t.Fatalf("to identity: %v", err)
	}
	var id int
	if err := db.QueryRowContext(ctx, `INSERT INTO "Odd ""Name""" (v) VALUES ('c') RETURNING "Key"`).Scan(&id); err != nil || id != 8 {
		t.Fatalf("next id = %d, %v", id, err)
	}
	s, _ := d.Introspect(ctx, db)
	if c := s.Table(`Odd "Name"`).Column("Key"); c.Type != dialects.TypeID || !c.AutoIncrement {
		t.Fatalf("after: %+v", c)
	}
	if err := d.AlterColumn(ctx, db, `Odd "Name"`, dialects.FieldSpec{Name: "Key", Type: "bigint"}); err != nil {
		t.Fatalf("back to plain: %v", err)
	}
	s, _ = d.Introspect(ctx, db)
	if c := s.Table(`Odd "Name"`).Column("Key"); c.AutoIncrement || c.Type != dialects.TypeBigInt || !c.IsPrimaryKey {
		t.Fatalf("after: %+v", c)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO "Odd ""Name""" (v) VALUES ('d')`); err == nil {
		t.Fatal("insert without a key succeeded after the identity was dropped")
	}
}

// TestChangesInCallersTransaction: inside the caller's transaction a
// change is a savepoint and rolls back with it.
func TestChangesInCallersTransaction(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.Postgres)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	d := pgsql.New()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CreateTable(ctx, tx, dialects.TableSpec{Name: "t", Fields: []dialects.FieldSpec{{Name: "id", Type: "id"}}}); err != nil {
		t.Fatal(err)
	}
	// A failing change inside does not abort the caller's transaction.
	if _, err := tx.ExecContext(ctx, `INSERT INTO t DEFAULT VALUES`); err != nil {
		t.Fatal(err)
	}
	if err := d.AddColumn(ctx, tx, "t", dialects.FieldSpec{Name: "m", Type: "integer"}); err == nil {
		t.Fatal("NOT NULL column without default added to a table with rows")
	}
	if err := d.AddColumn(ctx, tx, "t", dialects.FieldSpec{Name: "n", Type: "integer", AllowNull: true}); err != nil {
		t.Fatalf("after a failed change: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	s, _ := d.Introspect(ctx, db)
	if len(s.Tables) != 0 {
		t.Fatalf("rolled back table exists: %v", s.Names())
	}
}
