package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// migrations lists every schema change in order. Append; never edit one that
// has shipped.
func migrations() *migrate.Migrations {
	m := migrate.NewMigrations()
	// bun names a Go migration after the file that registers it, so each
	// migration lives in its own NNNNNNNNNNNNNN_name.go file.
	register20261122000001(m)
	register20261125000001(m)
	register20261125103000(m)
	return m
}

func downNothing(context.Context, *bun.DB) error { return nil }

func isDuplicateIndex(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "duplicate key name") || strings.Contains(s, "already exists")
}

// Migrate brings the schema up to date. Several instances may call it at
// once: one runs the migrations while the others wait for its lock.
func (s *Store) Migrate(ctx context.Context) error {
	m := migrate.NewMigrator(s.DB, migrations(), migrate.WithTableName("platform_migrations"),
		migrate.WithLocksTableName("platform_migration_locks"), migrate.WithMarkAppliedOnSuccess(true))
	// Concurrent CREATE TABLE IF NOT EXISTS can still collide on PostgreSQL
	// (a unique violation in pg_class); the loser simply tries again.
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = m.Init(ctx); err == nil {
			break
		}
		time.Sleep(time.Duration(50*(attempt+1)) * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("store: init migrations: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := m.Lock(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("store: waiting for the migration lock (a crashed instance may have left it; delete the row in platform_migration_locks): %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer m.Unlock(context.WithoutCancel(ctx))
	if _, err := m.Migrate(ctx); err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// addColumnIfMissing adds column (with its DDL definition) to tbl unless it
// is already there; later migrations use it so that fresh databases, whose
// tables come from the current models, are left alone.
//
//lint:ignore U1000 the helper of the next column migration; no migration needs it today.
func addColumnIfMissing(ctx context.Context, db bun.IDB, tbl, column, definition string) error {
	rows, err := db.QueryContext(ctx, "SELECT ? FROM ? WHERE 1 = 0", bun.Ident(column), bun.Ident(tbl))
	if err == nil {
		return rows.Close()
	}
	_, err = db.ExecContext(ctx, "ALTER TABLE ? ADD COLUMN ? "+definition, bun.Ident(tbl), bun.Ident(column))
	if err != nil {
		return fmt.Errorf("add column %s.%s: %w", tbl, column, err)
	}
	return nil
}
