package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/portcullis-dev/portcullis/dialects"
)

// Dialect is the SQLite implementation of [dialects.Dialect].
type Dialect struct{}

// New returns the SQLite dialect.
func New() Dialect { return Dialect{} }

// Kind returns [dialects.SQLite].
func (Dialect) Kind() dialects.Kind { return dialects.SQLite }

// DriverDSN turns a file path (or a file: URI) into the driver's DSN with
// foreign keys on, a busy timeout, WAL journaling and immediate write
// transactions, keeping any pragmas the caller already gave.
func DriverDSN(path string) string {
	base, query, _ := strings.Cut(path, "?")
	if !strings.HasPrefix(base, "file:") {
		base = "file:" + base
	}
	q, _ := url.ParseQuery(query)
	pragmas := strings.Join(q["_pragma"], ",")
	add := func(name, value string) {
		if !strings.Contains(pragmas, name) {
			q.Add("_pragma", name+"("+value+")")
		}
	}
	add("foreign_keys", "1")
	add("busy_timeout", "10000")
	if !strings.Contains(base, ":memory:") && q.Get("mode") != "memory" {
		add("journal_mode", "WAL")
	}
	if q.Get("_txlock") == "" {
		q.Set("_txlock", "immediate")
	}
	return base + "?" + q.Encode()
}

// Open opens the SQLite file named by cfg.DSN (or cfg.Database).
func (Dialect) Open(ctx context.Context, cfg dialects.Config) (*bun.DB, error) {
	path := cfg.DSN
	if path == "" {
		path = cfg.Database
	}
	if path == "" {
		return nil, fmt.Errorf("sqlite: %w: no database file", dialects.ErrDSN)
	}
	sqldb, err := sql.Open("sqlite", DriverDSN(path))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	n := cfg.MaxOpenConns
	if n <= 0 {
		n = 4
	}
	sqldb.SetMaxOpenConns(n)
	sqldb.SetMaxIdleConns(n)
	db := bun.NewDB(sqldb, sqlitedialect.New())
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: ping %s: %w", path, err)
	}
	return db, nil
}
