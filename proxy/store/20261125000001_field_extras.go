package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"
)

func register20261125000001(m *migrate.Migrations) {
	m.MustRegister(upFieldExtras, downNothing)
}

// upFieldExtras creates db_field_extras (see FieldExtra).
func upFieldExtras(ctx context.Context, db *bun.DB) error {
	if _, err := db.NewCreateTable().Model((*FieldExtra)(nil)).IfNotExists().
		ForeignKey("(service_id) REFERENCES service (id) ON DELETE CASCADE").Exec(ctx); err != nil {
		return fmt.Errorf("create db_field_extras: %w", err)
	}
	q := db.NewCreateIndex().Model((*FieldExtra)(nil)).Index("db_field_extras_field").Unique().
		Column("service_id", "table_name", "field_name")
	if db.Dialect().Name() != dialect.MySQL {
		q = q.IfNotExists()
	}
	if _, err := q.Exec(ctx); err != nil && !isDuplicateIndex(err) {
		return fmt.Errorf("create index db_field_extras_field: %w", err)
	}
	return nil
}
