package sqlite_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/sqlite"
)

func exec(t *testing.T, db bun.IConn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func scalar[T any](t *testing.T, db bun.IConn, q string) T {
	t.Helper()
	var v T
	if err := db.QueryRowContext(context.Background(), q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// TestRebuildKeepsEverything alters a table that SQLite cannot ALTER and
// checks that the rebuild keeps what the definition held: CHECK
// constraints, COLLATE, indexes, triggers, views, the AUTOINCREMENT
// counter, and above all the rows of tables that reference it with ON
// DELETE CASCADE.
func TestRebuildKeepsEverything(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.SQLite)
	cfg.MaxOpenConns = 1 // the rebuild's connection is the one checked after
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	d := sqlite.New()
	exec(t, db,
		`CREATE TABLE parent (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			name TEXT COLLATE NOCASE NOT NULL CHECK (length(name) > 0), -- a comment, with a comma
			qty INTEGER DEFAULT 1,
			extra "odd, type" NULL,
			CONSTRAINT qty_pos CHECK (qty >= 0)
		)`,
		`CREATE TABLE child (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES parent (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED)`,
		`CREATE INDEX parent_name ON parent (name)`,
		`CREATE INDEX parent_qty ON parent (qty, name)`,
		`CREATE TABLE audit (n INTEGER)`,
		`CREATE TRIGGER parent_ins AFTER INSERT ON parent BEGIN INSERT INTO audit VALUES (new.id); END`,
		`CREATE VIEW v AS SELECT name FROM parent`,
		`INSERT INTO parent (name, qty) VALUES ('a', 1), ('b', 2), ('c', 3)`,
		`DELETE FROM parent WHERE id = 3`,
		`INSERT INTO child (pid) VALUES (1), (2)`,
	)

	if err := d.AlterColumn(ctx, db, "parent", dialects.FieldSpec{Name: "qty", Type: "bigint", AllowNull: true, Default: str("5")}); err != nil {
		t.Fatalf("alter: %v", err)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM child`); n != 2 {
		t.Fatalf("children cascaded away by the rebuild: %d left", n)
	}
	if on := scalar[int](t, db, `PRAGMA foreign_keys`); on != 1 {
		t.Fatal("foreign keys left off")
	}
	if legacy := scalar[int](t, db, `PRAGMA legacy_alter_table`); legacy != 0 {
		t.Fatal("legacy_alter_table left on")
	}
	def := scalar[string](t, db, `SELECT sql FROM sqlite_master WHERE name = 'parent'`)
	for _, want := range []string{"qty BIGINT DEFAULT 5", "COLLATE NOCASE", "CHECK (length(name) > 0)", "CONSTRAINT qty_pos CHECK (qty >= 0)", `"odd, type"`, "AUTOINCREMENT", `CREATE TABLE "parent"`} {
		if !strings.Contains(def, want) {
			t.Errorf("definition lost %q:\n%s", want, def)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO parent (name) VALUES ('')`); err == nil {
		t.Error("column CHECK lost")
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO parent (name, qty) VALUES ('x', -1)`); err == nil {
		t.Error("table CHECK lost")
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM parent WHERE name = 'A'`); n != 1 {
		t.Error("COLLATE NOCASE lost")
	}
	exec(t, db, `INSERT INTO parent (name) VALUES ('d')`)
	if id := scalar[int](t, db, `SELECT max(id) FROM parent`); id != 4 {
		t.Errorf("AUTOINCREMENT reused a number: new id %d", id)
	}
	if q := scalar[int](t, db, `SELECT qty FROM parent WHERE name = 'd'`); q != 5 {
		t.Errorf("new default: %d", q)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM audit`); n != 4 {
		t.Errorf("trigger lost: %d audit rows", n)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('parent_name', 'parent_qty')`); n != 2 {
		t.Errorf("indexes lost: %d", n)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM v`); n != 3 {
		t.Errorf("view: %d", n)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM sqlite_master WHERE name LIKE '_portcullis%'`); n != 0 {
		t.Error("rebuild table left behind")
	}

	// Rebuilding the child keeps its deferrable key.
	if err := d.AlterColumn(ctx, db, "child", dialects.FieldSpec{Name: "pid", Type: "integer", AllowNull: true, IsIndex: true}); err != nil {
		t.Fatalf("alter child: %v", err)
	}
	if def := scalar[string](t, db, `SELECT sql FROM sqlite_master WHERE name = 'child'`); !strings.Contains(def, "DEFERRABLE INITIALLY DEFERRED") {
		t.Errorf("deferrable lost: %s", def)
	}

	// Dropping a column drops the CHECK and the index that use it.
	if err := d.DropColumn(ctx, db, "parent", "qty"); err != nil {
		t.Fatalf("drop: %v", err)
	}
	def = scalar[string](t, db, `SELECT sql FROM sqlite_master WHERE name = 'parent'`)
	if strings.Contains(def, "qty") || scalar[int](t, db, `SELECT count(*) FROM sqlite_master WHERE name = 'parent_qty'`) != 0 {
		t.Errorf("qty remains: %s", def)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM sqlite_master WHERE name = 'parent_name'`); n != 1 {
		t.Error("an index of another column was dropped")
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM child`); n != 2 {
		t.Fatalf("children lost: %d", n)
	}
}

func str(s string) *string { return &s }

// TestRebuildInCallersTransaction: inside a transaction foreign key
// enforcement cannot be turned off, so only tables nothing references can
// be rebuilt, and the rebuild rolls back with the caller.
func TestRebuildInCallersTransaction(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.SQLite)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	d := sqlite.New()
	exec(t, db,
		`CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT)`,
		`CREATE TABLE child (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES parent (id), note TEXT)`,
		`INSERT INTO parent VALUES (1, 'a')`, `INSERT INTO child VALUES (1, 1, 'x')`,
	)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.AlterColumn(ctx, tx, "child", dialects.FieldSpec{Name: "note", Type: "string", Length: 10, AllowNull: true}); err != nil {
		t.Fatalf("alter an unreferenced table in a transaction: %v", err)
	}
	err = d.AlterColumn(ctx, tx, "parent", dialects.FieldSpec{Name: "name", Type: "string", Length: 10, AllowNull: true})
	if !errors.Is(err, dialects.ErrInvalidSpec) || !strings.Contains(err.Error(), "outside a transaction") {
		t.Fatalf("alter a referenced table in a transaction: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if def := scalar[string](t, db, `SELECT sql FROM sqlite_master WHERE name = 'child'`); strings.Contains(def, "VARCHAR") {
		t.Errorf("rolled back change is visible: %s", def)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM child`); n != 1 {
		t.Errorf("child rows: %d", n)
	}
}

// TestRebuildFailureLeavesTable checks that a failed rebuild (a NOT NULL
// column over NULLs, a foreign key over orphans) changes nothing, also for
// the children of the table.
func TestRebuildFailureLeavesTable(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.SQLite)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	d := sqlite.New()
	exec(t, db,
		`CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT)`,
		`CREATE TABLE child (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES parent (id) ON DELETE CASCADE)`,
		`INSERT INTO parent VALUES (1, NULL), (2, 'b')`, `INSERT INTO child VALUES (1, 1), (2, 2)`,
	)
	before := scalar[string](t, db, `SELECT group_concat(sql, ';') FROM sqlite_master`)
	err := d.AlterColumn(ctx, db, "parent", dialects.FieldSpec{Name: "name", Type: "text"})
	var ce *dialects.ConstraintError
	if !errors.As(err, &ce) || ce.Kind != dialects.ConstraintNotNull {
		t.Fatalf("NOT NULL over NULL: %v", err)
	}
	// An id that no longer matches: change parent ids to text would break
	// the children; a foreign key check catches what the copy cannot.
	exec(t, db, `CREATE TABLE other (id INTEGER PRIMARY KEY, ref INTEGER)`, `INSERT INTO other VALUES (1, 7)`)
	err = d.AddForeignKey(ctx, db, "other", dialects.ForeignKey{Columns: []string{"ref"}, RefTable: "parent", RefColumns: []string{"id"}})
	if !errors.As(err, &ce) || ce.Kind != dialects.ConstraintForeignKey {
		t.Fatalf("foreign key over an orphan: %v", err)
	}
	after := scalar[string](t, db, `SELECT group_concat(sql, ';') FROM sqlite_master WHERE name != 'other'`)
	if before != after {
		t.Errorf("schema changed:\n%s\n%s", before, after)
	}
	if n := scalar[int](t, db, `SELECT count(*) FROM child`); n != 2 {
		t.Errorf("children: %d", n)
	}
	if on := scalar[int](t, db, `PRAGMA foreign_keys`); on != 1 {
		t.Error("foreign keys left off after a failure")
	}
}
