package engines

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/mysql"
	"github.com/portcullis-dev/portcullis/dialects/pgsql"
	"github.com/portcullis-dev/portcullis/dialects/sqlite"
)

// Get returns the dialect for kind.
func Get(kind dialects.Kind) (dialects.Dialect, error) {
	switch kind {
	case dialects.SQLite:
		return sqlite.New(), nil
	case dialects.Postgres:
		return pgsql.New(), nil
	case dialects.MySQL:
		return mysql.New(), nil
	}
	return nil, fmt.Errorf("unknown database kind %q", kind)
}

// Open opens cfg with its kind's dialect.
func Open(ctx context.Context, cfg dialects.Config) (*bun.DB, dialects.Dialect, error) {
	d, err := Get(cfg.Kind)
	if err != nil {
		return nil, nil, err
	}
	db, err := d.Open(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return db, d, nil
}

// OpenDSN parses dsn (a contract form) and opens it.
func OpenDSN(ctx context.Context, dsn string) (*bun.DB, dialects.Dialect, error) {
	cfg, err := dialects.ParseDSN(dsn)
	if err != nil {
		return nil, nil, err
	}
	return Open(ctx, cfg)
}
