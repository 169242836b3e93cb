package mysql_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/mysql"
)

// TestAlterTable makes several changes of one table in one statement, and
// checks that a change MySQL refuses for the data leaves the table whole.
func TestAlterTable(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.MySQL)
	db := dbtest.Open(t, cfg)
	ctx := t.Context()
	d := mysql.New()
	if err := d.CreateTable(ctx, db, dialects.TableSpec{Name: "p", Fields: []dialects.FieldSpec{
		{Name: "id", Type: "id"}, {Name: "name", Type: "string", Length: 20}, {Name: "old", Type: "integer", AllowNull: true},
		{Name: "n", Type: "string", Length: 10, AllowNull: true},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO p (name, old, n) VALUES ('a', 1, '12'), ('b', 2, 'x')"); err != nil {
		t.Fatal(err)
	}
	columns := func() string {
		s, err := d.Introspect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range s.Table("p").Columns {
			out = append(out, c.Name+" "+string(c.Type))
		}
		return strings.Join(out, ", ")
	}
	before := columns()

	// Checks without a database.
	s, err := d.Introspect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var se *dialects.SpecError
	err = d.CheckAlterTable(s, "p", dialects.TableChanges{Drop: []string{"old"}, Alter: []dialects.FieldSpec{{Name: "OLD", Type: "bigint"}}, Add: []dialects.FieldSpec{{Name: "x", Type: "nope"}}})
	if !errors.As(err, &se) || len(se.Problems) != 2 {
		t.Fatalf("twice and unknown type: %v", err)
	}
	if err := d.CheckAlterTable(s, "p", dialects.TableChanges{Drop: []string{"id", "name", "old", "n"}}); err == nil || !strings.Contains(err.Error(), "no fields left") {
		t.Fatalf("dropping every field: %v", err)
	}
	if err := d.CheckAlterTable(s, "nosuch", dialects.TableChanges{Drop: []string{"a"}}); !errors.Is(err, dialects.ErrNotFound) {
		t.Fatalf("unknown table: %v", err)
	}

	// A value that does not convert: nothing of the statement happens.
	err = d.AlterTable(ctx, db, "p", dialects.TableChanges{
		Add:   []dialects.FieldSpec{{Name: "extra", Type: "string", AllowNull: true}},
		Drop:  []string{"old"},
		Alter: []dialects.FieldSpec{{Name: "n", Type: "integer", AllowNull: true}},
	})
	if err == nil {
		t.Fatal("'x' became an integer")
	}
	if got := columns(); got != before {
		t.Fatalf("a failed change changed the table:\n%s\n%s", before, got)
	}

	// The same with convertible values: all at once.
	if _, err := db.ExecContext(ctx, "UPDATE p SET n = '7' WHERE n = 'x'"); err != nil {
		t.Fatal(err)
	}
	if err := d.AlterTable(ctx, db, "p", dialects.TableChanges{
		Add:   []dialects.FieldSpec{{Name: "extra", Type: "string", AllowNull: true, Default: str("e"), IsIndex: true}},
		Drop:  []string{"old"},
		Alter: []dialects.FieldSpec{{Name: "n", Type: "integer", AllowNull: true}},
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := columns(), "id id, name string, n integer, extra string"; got != want {
		t.Fatalf("columns %q, want %q", got, want)
	}
	var n int
	var extra string
	if err := db.QueryRowContext(ctx, "SELECT n, extra FROM p WHERE name = 'b'").Scan(&n, &extra); err != nil || n != 7 || extra != "e" {
		t.Fatalf("row: %d %q %v", n, extra, err)
	}
}
