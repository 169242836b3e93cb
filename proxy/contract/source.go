package contract

import (
	"context"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
)

// Source is a backend whose tables can be put under contract: the SQL
// database backends implement it.
type Source interface {
	// ContractSchema returns the database's introspected schema, read
	// again when the one the backend holds is older than maxAge (0: read
	// now, so that changes made in the database itself show; negative:
	// any schema the backend holds will do). A schema read anew also
	// replaces the one the backend serves requests with.
	ContractSchema(ctx context.Context, maxAge time.Duration) (*dialects.Schema, error)
}
