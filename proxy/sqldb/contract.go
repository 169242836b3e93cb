package sqldb

import (
	"context"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
)

// ContractSchema returns the introspected schema for schema contracts
// (proxy/contract.Source): the cached one when it is younger than maxAge
// (any cached one when maxAge is negative), else read now and cached for
// requests too.
func (b *Backend) ContractSchema(ctx context.Context, maxAge time.Duration) (*dialects.Schema, error) {
	db, err := b.pool(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case maxAge < 0:
		maxAge = anyAge
	case maxAge == 0:
		maxAge = time.Nanosecond
	}
	return b.loadSchema(ctx, db, maxAge)
}
