package dialects_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/engines"
)

func str(s string) *string { return &s }

// everything is a table with a field of every type.
func everything() dialects.TableSpec {
	return dialects.TableSpec{Name: "everything", Fields: []dialects.FieldSpec{
		{Name: "id", Type: "id"},
		{Name: "s", Type: "string", Length: 40, AllowNull: true, Default: str("it's ?")},
		{Name: "tx", Type: "text", AllowNull: true},
		{Name: "i", Type: "integer", Default: str("0")},
		{Name: "bi", Type: "bigint", AllowNull: true},
		{Name: "si", Type: "smallint", AllowNull: true},
		{Name: "b", Type: "boolean", Default: str("true")},
		{Name: "f", Type: "float", AllowNull: true},
		{Name: "dbl", Type: "double", AllowNull: true},
		{Name: "dec", Type: "decimal", Precision: 10, Scale: 2, AllowNull: true, Default: str("1.5")},
		{Name: "d", Type: "date", AllowNull: true, Default: str("2024-01-01")},
		{Name: "t", Type: "time", AllowNull: true},
		{Name: "dt", Type: "datetime", AllowNull: true},
		{Name: "ts", Type: "timestamp", AllowNull: true},
		{Name: "toc", Type: "timestamp_on_create", AllowNull: true},
		{Name: "tou", Type: "timestamp_on_update", AllowNull: true},
		{Name: "j", Type: "json", AllowNull: true},
		{Name: "bin", Type: "binary", AllowNull: true},
		{Name: "u", Type: "uuid", AllowNull: true},
		{Name: "ref", Type: "reference", RefTable: "PARENT", RefField: "ID", RefOnDelete: "cascade", AllowNull: true},
		{Name: "uq", Type: "string", Length: 10, IsUnique: true, AllowNull: true},
		{Name: "ix", Type: "integer", IsIndex: true, AllowNull: true},
		{Name: `weird "name"`, Type: "string", Length: 5, AllowNull: true},
	}}
}

type ddlEnv struct {
	t   *testing.T
	cfg dialects.Config
	db  *bun.DB
	d   dialects.Dialect
	ctx context.Context
}

func newDDLEnv(t *testing.T, cfg dialects.Config) *ddlEnv {
	d, err := engines.Get(cfg.Kind)
	if err != nil {
		t.Fatal(err)
	}
	return &ddlEnv{t: t, cfg: cfg, db: dbtest.Open(t, cfg), d: d, ctx: t.Context()}
}

func (e *ddlEnv) schema() *dialects.Schema {
	e.t.Helper()
	s, err := e.d.Introspect(e.ctx, e.db)
	if err != nil {
		e.t.Fatalf("introspect: %v", err)
	}
	return s
}

func (e *ddlEnv) must(what string, err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

func (e *ddlEnv) count(q string) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRowContext(e.ctx, q).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return n
}

func (e *ddlEnv) str(q string) string {
	e.t.Helper()
	var s string
	if err := e.db.QueryRowContext(e.ctx, q).Scan(&s); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return s
}

func TestDDLEveryType(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newDDLEnv(t, cfg)
		e.must("create parent", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "parent", Fields: []dialects.FieldSpec{
			{Name: "id", Type: "id"}, {Name: "code", Type: "string", Length: 20, IsUnique: true},
		}}))
		e.must("create everything", e.d.CreateTable(e.ctx, e.db, everything()))
		s := e.schema()
		tb := s.Table("everything")
		if tb == nil {
			t.Fatalf("table missing: %v", s.Names())
		}
		uuidType, dtType := dialects.TypeUUID, dialects.TypeDatetime
		if cfg.Kind == dialects.MySQL {
			uuidType = dialects.TypeString // CHAR(36)
		}
		if cfg.Kind == dialects.Postgres {
			dtType = dialects.TypeTimestamp // PostgreSQL has no datetime
		}
		uuidLen := 0
		if cfg.Kind == dialects.MySQL {
			uuidLen = 36
		}
		want := []colView{
			{Name: "id", Type: "id", AutoIncrement: true, PK: true, Default: "<nil>"},
			{Name: "s", Type: "string", AllowNull: true, Default: "it's ?", Length: 40},
			{Name: "tx", Type: "text", AllowNull: true, Default: "<nil>"},
			{Name: "i", Type: "integer", Default: "0"},
			{Name: "bi", Type: "bigint", AllowNull: true, Default: "<nil>"},
			{Name: "si", Type: "smallint", AllowNull: true, Default: "<nil>"},
			{Name: "b", Type: "boolean", Default: "true"},
			{Name: "f", Type: "float", AllowNull: true, Default: "<nil>"},
			{Name: "dbl", Type: "double", AllowNull: true, Default: "<nil>"},
			{Name: "dec", Type: "decimal", AllowNull: true, Default: "1.50", Precision: 10, Scale: 2},
			{Name: "d", Type: "date", AllowNull: true, Default: "2024-01-01"},
			{Name: "t", Type: "time", AllowNull: true, Default: "<nil>"},
			{Name: "dt", Type: dtType, AllowNull: true, Default: "<nil>"},
			{Name: "ts", Type: "timestamp", AllowNull: true, Default: "<nil>"},
			{Name: "toc", Type: "timestamp", AllowNull: true, Default: "CURRENT_TIMESTAMP", DefaultIsExpr: true},
			{Name: "tou", Type: "timestamp", AllowNull: true, Default: "CURRENT_TIMESTAMP", DefaultIsExpr: true},
			{Name: "j", Type: "json", AllowNull: true, Default: "<nil>"},
			{Name: "bin", Type: "binary", AllowNull: true, Default: "<nil>"},
			{Name: "u", Type: uuidType, AllowNull: true, Default: "<nil>", Length: uuidLen},
			{Name: "ref", Type: "reference", AllowNull: true, FK: true, RefTable: "parent", RefField: "id", RefOnDelete: "CASCADE", Default: "<nil>",
				Index: cfg.Kind == dialects.MySQL}, // InnoDB indexes foreign keys itself
			{Name: "uq", Type: "string", AllowNull: true, Unique: true, Index: true, Default: "<nil>", Length: 10},
			{Name: "ix", Type: "integer", AllowNull: true, Index: true, Default: "<nil>"},
			{Name: `weird "name"`, Type: "string", AllowNull: true, Default: "<nil>", Length: 5},
		}
		if diff := cmp.Diff(want, viewColumns(tb)); diff != "" {
			t.Errorf("columns read back (-want +got):\n%s", diff)
		}
		if fk := tb.ForeignKeys; len(fk) != 1 || fk[0].Name != "everything_ref_fkey" {
			t.Errorf("foreign keys: %+v", fk)
		}
		if r := s.Table("parent").Relation("everything_by_ref"); r == nil || r.Type != dialects.HasMany {
			t.Errorf("relation: %+v", s.Table("parent").Relations)
		}

		// Rows survive every change below.
		if _, err := e.db.ExecContext(e.ctx, "INSERT INTO parent (code) VALUES ('p1'), ('p2')"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.NewRaw(`INSERT INTO everything (s, tx, i, bi, ref, uq, ix) VALUES
			('one', 'abc', 1, NULL, 1, 'u1', 10), ('two', '42', 2, 7, 2, 'u2', 20)`).Exec(e.ctx); err != nil {
			t.Fatal(err)
		}
		trueLit := "1"
		if cfg.Kind == dialects.Postgres {
			trueLit = "TRUE"
		}
		if n := e.count("SELECT count(*) FROM everything WHERE b = " + trueLit); n != 2 {
			t.Errorf("boolean default: %d rows true", n)
		}
	})
}

func TestDDLChangesKeepRows(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newDDLEnv(t, cfg)
		e.must("create", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "Items", Fields: []dialects.FieldSpec{
			{Name: "id", Type: "id"},
			{Name: "title", Type: "string", Length: 20},
			{Name: "qty", Type: "integer", AllowNull: true},
			{Name: "note", Type: "text", AllowNull: true},
			{Name: "tag", Type: "string", Length: 10, AllowNull: true, IsIndex: true},
		}}))
		if _, err := e.db.ExecContext(e.ctx, `INSERT INTO `+quoteFor(cfg, "Items")+` (title, qty, note, tag) VALUES ('a', 1, 'abc', 'x'), ('b', NULL, '12', 'y'), ('c', 3, NULL, 'x')`); err != nil {
			t.Fatal(err)
		}
		items := quoteFor(cfg, "Items")

		// Add a nullable column with a default, and a NOT NULL one (refused: rows exist).
		e.must("add column", e.d.AddColumn(e.ctx, e.db, "items", dialects.FieldSpec{Name: "color", Type: "string", Length: 10, AllowNull: true, Default: str("red"), IsUnique: false}))
		if got := e.str("SELECT color FROM " + items + " WHERE title = 'a'"); got != "red" {
			t.Errorf("new column default on an old row: %q", got)
		}
		err := e.d.AddColumn(e.ctx, e.db, "Items", dialects.FieldSpec{Name: "must", Type: "integer"})
		var ce *dialects.ConstraintError
		if !errors.As(err, &ce) || ce.Kind != dialects.ConstraintNotNull {
			t.Errorf("NOT NULL column without default on a table with rows: %v", err)
		}
		if e.schema().Table("Items").Column("must") != nil {
			t.Error("the refused column exists")
		}
		e.must("add unique column", e.d.AddColumn(e.ctx, e.db, "Items", dialects.FieldSpec{Name: "sku", Type: "string", Length: 10, AllowNull: true, IsUnique: true}))
		if c := e.schema().Table("Items").Column("sku"); c == nil || !c.IsUnique {
			t.Errorf("unique column: %+v", c)
		}

		// Alter: longer, not null, with a default.
		e.must("alter title", e.d.AlterColumn(e.ctx, e.db, "Items", dialects.FieldSpec{Name: "TITLE", Type: "string", Length: 100, Default: str("none")}))
		c := e.schema().Table("Items").Column("title")
		if c.Length != 100 || c.AllowNull || c.Default == nil || *c.Default != "none" {
			t.Errorf("altered title: %+v", c)
		}
		// Alter: integer to bigint keeps values; text to integer converts '12'.
		e.must("alter qty", e.d.AlterColumn(e.ctx, e.db, "Items", dialects.FieldSpec{Name: "qty", Type: "bigint", AllowNull: true}))
		if n := e.count("SELECT sum(qty) FROM " + items); n != 4 {
			t.Errorf("qty sum after alter = %d", n)
		}
		// A change that does not convert fails and leaves the table as it was.
		before := e.schema().Table("Items")
		err = e.d.AlterColumn(e.ctx, e.db, "Items", dialects.FieldSpec{Name: "note", Type: "integer", AllowNull: true})
		if !errors.Is(err, dialects.ErrInvalidValue) {
			t.Errorf("text 'abc' to integer: %v", err)
		}
		err = e.d.AlterColumn(e.ctx, e.db, "Items", dialects.FieldSpec{Name: "qty", Type: "bigint"})
		if !errors.As(err, &ce) || ce.Kind != dialects.ConstraintNotNull {
			t.Errorf("NOT NULL over a NULL: %v", err)
		}
		after := e.schema().Table("Items")
		if diff := cmp.Diff(viewColumns(before), viewColumns(after)); diff != "" {
			t.Errorf("failed changes altered the table (-before +after):\n%s", diff)
		}
		if got := e.str("SELECT note FROM " + items + " WHERE title = 'a'"); got != "abc" {
			t.Errorf("row changed by a failed alter: %q", got)
		}
		// Now convertible: drop the bad value first.
		if _, err := e.db.ExecContext(e.ctx, "UPDATE "+items+" SET note = NULL WHERE note = 'abc'"); err != nil {
			t.Fatal(err)
		}
		e.must("alter note to integer", e.d.AlterColumn(e.ctx, e.db, "Items", dialects.FieldSpec{Name: "note", Type: "integer", AllowNull: true, IsIndex: true}))
		if c := e.schema().Table("Items").Column("note"); c.Type != dialects.TypeInteger || !c.IsIndex {
			t.Errorf("note: %+v", c)
		}
		if n := e.count("SELECT sum(note) FROM " + items); n != 12 {
			t.Errorf("converted note sum = %d", n)
		}

		// Drop a column with its index; rows stay.
		e.must("drop tag", e.d.DropColumn(e.ctx, e.db, "Items", "TAG"))
		tb := e.schema().Table("Items")
		if tb.Column("tag") != nil || len(tb.Indexes) == 0 {
			t.Errorf("after drop: %v %+v", tb.ColumnNames(), tb.Indexes)
		}
		for _, ix := range tb.Indexes {
			if containsFold(ix.Columns, "tag") {
				t.Errorf("index on dropped column remains: %+v", ix)
			}
		}
		if n := e.count("SELECT count(*) FROM " + items); n != 3 {
			t.Errorf("rows after drop: %d", n)
		}
		if err := e.d.DropColumn(e.ctx, e.db, "Items", "id"); !errors.Is(err, dialects.ErrInvalidSpec) {
			t.Errorf("dropping the key: %v", err)
		}

		// Unique index over duplicates fails; over distinct values works.
		err = e.d.CreateIndex(e.ctx, e.db, "Items", dialects.Index{Columns: []string{"color"}, Unique: true})
		if !errors.As(err, &ce) || ce.Kind != dialects.ConstraintUnique {
			t.Errorf("unique index over duplicates: %v", err)
		}
		e.must("unique index", e.d.CreateIndex(e.ctx, e.db, "Items", dialects.Index{Columns: []string{"title"}, Unique: true}))
		if c := e.schema().Table("Items").Column("title"); !c.IsUnique {
			t.Errorf("title not unique: %+v", c)
		}
		if err := e.d.CreateIndex(e.ctx, e.db, "Items", dialects.Index{Columns: []string{"title"}, Unique: true}); !errors.Is(err, dialects.ErrExists) {
			t.Errorf("same index twice: %v", err)
		}
	})
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func quoteFor(cfg dialects.Config, name string) string {
	if cfg.Kind == dialects.MySQL {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}

func TestDDLForeignKeysAndDrops(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newDDLEnv(t, cfg)
		e.must("parent", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "parent", Fields: []dialects.FieldSpec{{Name: "id", Type: "id"}, {Name: "name", Type: "string", AllowNull: true}}}))
		e.must("child", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "child", Fields: []dialects.FieldSpec{{Name: "id", Type: "id"}, {Name: "pid", Type: "integer", AllowNull: true}}}))
		if _, err := e.db.ExecContext(e.ctx, `INSERT INTO parent (name) VALUES ('a')`); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.ExecContext(e.ctx, `INSERT INTO child (pid) VALUES (1), (99)`); err != nil {
			t.Fatal(err)
		}
		fk := dialects.ForeignKey{Columns: []string{"PID"}, RefTable: "Parent", RefColumns: []string{"id"}, OnDelete: "set_null"}
		err := e.d.AddForeignKey(e.ctx, e.db, "child", fk)
		var ce *dialects.ConstraintError
		if !errors.As(err, &ce) || ce.Kind != dialects.ConstraintForeignKey {
			t.Fatalf("foreign key over an orphan: %v", err)
		}
		if len(e.schema().Table("child").ForeignKeys) != 0 {
			t.Fatal("the refused foreign key exists")
		}
		if n := e.count("SELECT count(*) FROM child"); n != 2 {
			t.Fatalf("rows after a failed change: %d", n)
		}
		if _, err := e.db.ExecContext(e.ctx, `DELETE FROM child WHERE pid = 99`); err != nil {
			t.Fatal(err)
		}
		e.must("add foreign key", e.d.AddForeignKey(e.ctx, e.db, "child", fk))
		s := e.schema()
		got := s.Table("child").ForeignKeys
		want := []dialects.ForeignKey{{Name: "child_pid_fkey", Columns: []string{"pid"}, RefTable: "parent", RefColumns: []string{"id"}, OnDelete: "SET NULL", OnUpdate: "NO ACTION"}}
		if cfg.Kind == dialects.MySQL && len(got) == 1 && got[0].OnUpdate == "RESTRICT" {
			want[0].OnUpdate = "RESTRICT" // MariaDB reports NO ACTION as RESTRICT
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("foreign key (-want +got):\n%s", diff)
		}
		if c := s.Table("child").Column("pid"); c.Type != dialects.TypeReference {
			t.Errorf("pid: %+v", c)
		}
		// The key works: an orphan is refused, a delete sets null.
		if _, err := e.db.ExecContext(e.ctx, `INSERT INTO child (pid) VALUES (42)`); err == nil {
			t.Error("orphan accepted after AddForeignKey")
		}
		// Referenced things cannot go.
		if err := e.d.DropTable(e.ctx, e.db, "parent"); !errors.As(err, &ce) || ce.Kind != dialects.ConstraintForeignKey || !strings.Contains(ce.Message, "child") {
			t.Errorf("drop a referenced table: %v", err)
		}
		if err := e.d.DropColumn(e.ctx, e.db, "child", "pid"); err != nil {
			t.Errorf("drop a referencing column: %v", err)
		} else if fks := e.schema().Table("child").ForeignKeys; len(fks) != 0 {
			t.Errorf("foreign key of a dropped column remains: %+v", fks)
		}
		e.must("drop child", e.d.DropTable(e.ctx, e.db, "CHILD"))
		e.must("drop parent", e.d.DropTable(e.ctx, e.db, "parent"))
		if names := e.schema().Names(); len(names) != 0 {
			t.Errorf("tables left: %v", names)
		}
	})
}

func TestDDLRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newDDLEnv(t, cfg)
		e.must("create", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "t1", Fields: []dialects.FieldSpec{{Name: "id", Type: "id"}, {Name: "a", Type: "string", AllowNull: true}}}))
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"create existing", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "T1", Fields: []dialects.FieldSpec{{Name: "x", Type: "integer"}}}), dialects.ErrExists},
			{"unknown type", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "t2", Fields: []dialects.FieldSpec{{Name: "x", Type: "varchar(10); DROP TABLE t1"}}}), dialects.ErrInvalidSpec},
			{"no fields", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "t2"}), dialects.ErrInvalidSpec},
			{"bad name", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "a/b", Fields: []dialects.FieldSpec{{Name: "x", Type: "integer"}}}), dialects.ErrInvalidSpec},
			{"missing ref", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "t2", Fields: []dialects.FieldSpec{{Name: "r", Type: "reference", RefTable: "nope", RefField: "id"}}}), dialects.ErrInvalidSpec},
			{"ref not a key", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "t2", Fields: []dialects.FieldSpec{{Name: "r", Type: "string", AllowNull: true, RefTable: "t1", RefField: "a"}}}), dialects.ErrInvalidSpec},
			{"bad default", e.d.AddColumn(e.ctx, e.db, "t1", dialects.FieldSpec{Name: "n", Type: "integer", Default: str("1; DROP TABLE t1")}), dialects.ErrInvalidSpec},
			{"bad date default", e.d.AddColumn(e.ctx, e.db, "t1", dialects.FieldSpec{Name: "n", Type: "date", Default: str("yesterday")}), dialects.ErrInvalidSpec},
			{"add existing", e.d.AddColumn(e.ctx, e.db, "t1", dialects.FieldSpec{Name: "A", Type: "integer", AllowNull: true}), dialects.ErrExists},
			{"add to missing", e.d.AddColumn(e.ctx, e.db, "nope", dialects.FieldSpec{Name: "a", Type: "integer", AllowNull: true}), dialects.ErrNotFound},
			{"alter missing", e.d.AlterColumn(e.ctx, e.db, "t1", dialects.FieldSpec{Name: "zz", Type: "integer"}), dialects.ErrNotFound},
			{"drop missing column", e.d.DropColumn(e.ctx, e.db, "t1", "zz"), dialects.ErrNotFound},
			{"drop missing table", e.d.DropTable(e.ctx, e.db, "zz"), dialects.ErrNotFound},
			{"index missing column", e.d.CreateIndex(e.ctx, e.db, "t1", dialects.Index{Columns: []string{"zz"}}), dialects.ErrInvalidSpec},
			{"auto increment on text", e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "t3", Fields: []dialects.FieldSpec{{Name: "x", Type: "string", IsPrimaryKey: true, AutoIncrement: true}}}), dialects.ErrInvalidSpec},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: got %v, want %v", tt.name, tt.err, tt.want)
			}
		}
		if names := e.schema().Names(); len(names) != 1 || e.schema().Table("t1").Column("n") != nil {
			t.Errorf("a refused change left traces: %v", names)
		}
		// Every problem is reported at once.
		err := e.d.CreateTable(e.ctx, e.db, dialects.TableSpec{Name: "t4", Fields: []dialects.FieldSpec{
			{Name: "a", Type: "nope"}, {Name: "b", Type: "string", Length: -1}, {Name: "b", Type: "integer"}}})
		var se *dialects.SpecError
		if !errors.As(err, &se) || len(se.Problems) != 3 {
			t.Errorf("problems: %v", err)
		}
	})
}
