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
}
