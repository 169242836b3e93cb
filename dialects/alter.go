package dialects

import (
	"context"

	"github.com/uptrace/bun"
)

// TableChanges are several changes of one table to be made together: the
// columns to drop, the existing columns to alter (as [Dialect.AlterColumn]
// takes them) and the columns to add (as [Dialect.AddColumn] takes them).
// A column may appear in one list only.
type TableChanges struct {
	Drop  []string
	Alter []FieldSpec
	Add   []FieldSpec
}

// Empty reports whether there is nothing to change.
func (c TableChanges) Empty() bool { return len(c.Drop)+len(c.Alter)+len(c.Add) == 0 }

// TableAlterer is implemented by dialects whose schema changes are not
// transactional (MySQL commits every DDL statement), so that several
// changes of one table still either all happen or none does: they are
// checked first and made in one statement.
type TableAlterer interface {
	// CheckAlterTable checks changes against s, as AlterTable would,
	// without changing anything.
	CheckAlterTable(s *Schema, table string, changes TableChanges) error
	// AlterTable checks changes against the database and makes them in
	// one statement, which completes or leaves the table as it was.
	AlterTable(ctx context.Context, db bun.IDB, table string, changes TableChanges) error
	// CheckCreateTable checks a new table against s, as CreateTable
	// would, without changing anything.
	CheckCreateTable(s *Schema, spec TableSpec) error
}
