package pgsql

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/portcullis-dev/portcullis/dialects"
)

// StatementCacheCapacity bounds the statements pgx keeps prepared per
// connection for queries run in its cached mode
// (pgx.QueryExecModeCacheStatement).
const StatementCacheCapacity = 256

// Dialect is the PostgreSQL implementation of [dialects.Dialect].
type Dialect struct{}

// New returns the PostgreSQL dialect.
func New() Dialect { return Dialect{} }

// Kind returns [dialects.Postgres].
func (Dialect) Kind() dialects.Kind { return dialects.Postgres }

// Open connects to the database described by cfg.
func (Dialect) Open(ctx context.Context, cfg dialects.Config) (*bun.DB, error) {
	dsn := cfg.DSN
	if dsn == "" {
		c := cfg
		c.Kind = dialects.Postgres
		dsn = c.URL()
	}
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgsql: %w: %v", dialects.ErrDSN, err)
	}
	pc.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	// Statements run in pgx's cached mode (proxy/sqldb's reads by key)
	// are kept per connection up to this bound, least recently used out.
	pc.StatementCacheCapacity = StatementCacheCapacity
	if pc.ConnectTimeout == 0 {
		pc.ConnectTimeout = 5 * time.Second
	}
	sqldb := stdlib.OpenDB(*pc)
	n := cfg.MaxOpenConns
	if n <= 0 {
		n = 20
	}
	sqldb.SetMaxOpenConns(n)
	sqldb.SetMaxIdleConns(n)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	db := bun.NewDB(sqldb, pgdialect.New())
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("pgsql: connect %s: %w", dialects.Redact(dsn), err)
	}
	return db, nil
}
