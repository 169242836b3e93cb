package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"
)

func register20261125103000(m *migrate.Migrations) {
	m.MustRegister(upUsedOnce, downNothing)
}

// upUsedOnce creates sign_in_used_once (see UsedOnce).
func upUsedOnce(ctx context.Context, db *bun.DB) error {
	if _, err := db.NewCreateTable().Model((*UsedOnce)(nil)).IfNotExists().Exec(ctx); err != nil {
		return fmt.Errorf("create sign_in_used_once: %w", err)
	}
	q := db.NewCreateIndex().Model((*UsedOnce)(nil)).Index("sign_in_used_once_expires").Column("expires_at")
	if db.Dialect().Name() != dialect.MySQL {
		q = q.IfNotExists()
	}
	if _, err := q.Exec(ctx); err != nil && !isDuplicateIndex(err) {
		return fmt.Errorf("create index sign_in_used_once_expires: %w", err)
	}
	return nil
}
