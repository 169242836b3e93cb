package dialects

import (
	"context"

	"github.com/uptrace/bun"
)

// Dialect is what Portcullis needs from one engine. The engine packages
// implement it; [engines] picks one by kind.
type Dialect interface {
	// Kind names the engine.
	Kind() Kind
	// Open opens a connection pool for cfg and checks that the database
	// answers. The caller closes the returned DB.
	Open(ctx context.Context, cfg Config) (*bun.DB, error)
	// Introspect reads the tables and views of the database (PostgreSQL:
	// of the current schema), without the engine's internal tables.
	Introspect(ctx context.Context, db bun.IDB) (*Schema, error)
	// ClassifyError turns the driver's error for a failed statement into
	// a *[ConstraintError] when a constraint refused a write, wraps
	// [ErrUnavailable] around it when the database could not be reached or
	// dropped the connection, and returns any other error unchanged (nil
	// stays nil; an error already classified is returned as it is).
	ClassifyError(err error) error

	// The schema changes below take a bun.IDB: a pool, a connection or a
	// transaction. They check the change against the database first (a
	// *[SpecError], [ErrExists] or [ErrNotFound] when it cannot be made,
	// with nothing changed), quote every identifier and take native type
	// names from a fixed table, never from the request. A change that
	// fails leaves the table as it was: SQLite and PostgreSQL run each in a
	// transaction (a savepoint inside the caller's), MySQL as one
	// statement (MySQL commits any open transaction on DDL). Errors from
	// the database go through ClassifyError.

	// CreateTable creates a table with its primary key, unique
	// constraints, indexes and foreign keys. A table whose name matches an
	// existing one case-insensitively is refused.
	CreateTable(ctx context.Context, db bun.IDB, spec TableSpec) error
	// DropTable drops a table; it is refused while another table's foreign
	// key references it.
	DropTable(ctx context.Context, db bun.IDB, table string) error
	// AddColumn adds a column (and its unique constraint, index and
	// foreign key) keeping the rows. A NOT NULL column without a default
	// can only be added to an empty table.
	AddColumn(ctx context.Context, db bun.IDB, table string, field FieldSpec) error
	// AlterColumn gives the existing column field.Name the type, size,
	// nullability, default and auto increment of field, converting the
	// stored values (it fails, changing nothing, when one does not
	// convert). It adds the unique constraint, index or foreign key the
	// field asks for when the column lacks it; it does not remove any.
	AlterColumn(ctx context.Context, db bun.IDB, table string, field FieldSpec) error
	// DropColumn drops a column with the indexes and constraints of its
	// table that use it. Primary key columns, columns other tables
	// reference and a table's last column are refused.
	DropColumn(ctx context.Context, db bun.IDB, table, column string) error
	// AddForeignKey adds a foreign key (named [ForeignKeyName] when
	// fk.Name is empty); existing rows must satisfy it.
	AddForeignKey(ctx context.Context, db bun.IDB, table string, fk ForeignKey) error
	// CreateIndex creates an index (named [IndexName] when ix.Name is
	// empty); a unique one fails on existing duplicates.
	CreateIndex(ctx context.Context, db bun.IDB, table string, ix Index) error
}
