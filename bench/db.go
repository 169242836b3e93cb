package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/engines"
	"github.com/portcullis-dev/portcullis/dialects/mysql"
)

// The environment variables that name the PostgreSQL and MySQL servers (the
// same as the test suite's); each engine runs only when its variable is set.
const (
	envPostgres = "PORTCULLIS_TEST_PG"
	envMySQL    = "PORTCULLIS_TEST_MYSQL"
)

// allKinds lists the engines in the order they are measured.
var allKinds = []dialects.Kind{dialects.SQLite, dialects.Postgres, dialects.MySQL}

// database is the data of one engine: a fresh database created for the run
// and dropped at the end, seeded with the item table.
type database struct {
	kind dialects.Kind
	cfg  dialects.Config
	// dsn is the contract form (sqlite:///…, postgres://…, mysql://…)
	// Portcullis's service is configured with.
	dsn string
	// drop removes the database (nil for SQLite, whose file goes with the
	// temporary folder).
	drop func()
}

// adminDSN returns the server DSN for kind from the environment, "" when
// unset (SQLite needs none).
func adminDSN(kind dialects.Kind) string {
	switch kind {
	case dialects.Postgres:
		return os.Getenv(envPostgres)
	case dialects.MySQL:
		return os.Getenv(envMySQL)
	}
	return ""
}

// createDatabase makes an empty database of kind: a file in dir for SQLite,
// a new uniquely named database on the server otherwise.
func createDatabase(ctx context.Context, kind dialects.Kind, dir string) (*database, error) {
	if kind == dialects.SQLite {
		path := filepath.Join(dir, "bench.sqlite")
		return &database{kind: kind, cfg: dialects.Config{Kind: kind, DSN: path, Database: path}, dsn: "sqlite://" + path}, nil
	}
	env := envPostgres
	if kind == dialects.MySQL {
		env = envMySQL
	}
	admin := adminDSN(kind)
	if admin == "" {
		return nil, fmt.Errorf("%s needs %s (a server DSN, e.g. %s)", kind, env, exampleDSN(kind))
	}
	base, err := dialects.ParseDSN(admin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", env, err)
	}
	if base.Kind != kind {
		return nil, fmt.Errorf("%s names a %s server, not %s", env, base.Kind, kind)
	}
	db, _, err := engines.Open(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("%s is set but the server does not answer: %w", env, err)
	}
	defer db.Close()
	name := randomName(benchDBPrefix)
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	d := &database{kind: kind, cfg: base}
	d.cfg.Database = name
	d.drop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, _, err := engines.Open(ctx, base)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: drop database %s: %v\n", name, err)
			return
		}
		defer db.Close()
		q := "DROP DATABASE IF EXISTS " + name
		if kind == dialects.Postgres {
			q += " WITH (FORCE)"
		}
		if _, err := db.ExecContext(ctx, q); err != nil {
			fmt.Fprintf(os.Stderr, "bench: drop database %s: %v\n", name, err)
		}
	}
	switch kind {
	case dialects.Postgres:
		u, err := url.Parse(admin)
		if err != nil {
			d.drop()
			return nil, fmt.Errorf("%s: %w", env, err)
		}
		u.Path = "/" + name
		d.dsn = u.String()
		d.cfg.DSN = d.dsn
	case dialects.MySQL:
		mc, err := driver.ParseDSN(base.DSN)
		if err != nil {
			d.drop()
			return nil, fmt.Errorf("%s: %w", env, err)
		}
		mc.DBName = name
		d.cfg.DSN = mc.FormatDSN()
		d.dsn = "mysql://" + d.cfg.DSN
	}
	return d, nil
}

func exampleDSN(kind dialects.Kind) string {
	if kind == dialects.MySQL {
		return "mysql://root@tcp(127.0.0.1:3306)/test"
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// randomName returns prefix followed by 12 random hex digits.
func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// createTableSQL is the item table on each engine: the same columns, types
// and nullability everywhere, so every engine gives the same JSON.
func createTableSQL(kind dialects.Kind) []string {
	switch kind {
	case dialects.Postgres:
		return []string{`CREATE TABLE item (
			id BIGSERIAL PRIMARY KEY,
			name VARCHAR(64) NOT NULL,
			category VARCHAR(32) NOT NULL,
			price NUMERIC(10,2) NOT NULL,
			qty INTEGER NOT NULL,
			active BOOLEAN NOT NULL,
			created TIMESTAMP NOT NULL,
			notes TEXT)`,
			`CREATE INDEX item_category ON item (category)`}
	case dialects.MySQL:
		return []string{`CREATE TABLE item (
			id BIGINT AUTO_INCREMENT PRIMARY KEY,
			name VARCHAR(64) NOT NULL,
			category VARCHAR(32) NOT NULL,
			price DECIMAL(10,2) NOT NULL,
			qty INT NOT NULL,
			active TINYINT(1) NOT NULL,
			created DATETIME NOT NULL,
			notes TEXT,
			INDEX item_category (category)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`}
	}
	return []string{`CREATE TABLE item (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		name VARCHAR(64) NOT NULL,
		category VARCHAR(32) NOT NULL,
		price DECIMAL(10,2) NOT NULL,
		qty INTEGER NOT NULL,
		active BOOLEAN NOT NULL,
		created DATETIME NOT NULL,
		notes TEXT)`,
		`CREATE INDEX item_category ON item (category)`}
}

// categories are the values of item.category; filteredCategory is the one
// the filtered scenario asks for and postedCategory the one new records get
// (so that writes never change what the read scenarios return).
var categories = []string{"books", "tools", "garden", "toys", "music", "food", "sports", "office"}

const (
	filteredCategory = "books"
	filteredMinPrice = 20
	postedCategory   = "posted"
)

// seed creates the item table and fills it with n rows, in batches inside
// one transaction. The rows are deterministic; some notes are NULL and some
// hold characters JSON must escape.
func seed(ctx context.Context, d *database, n int) error {
	db, _, err := engines.Open(ctx, d.cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range createTableSQL(d.kind) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create item table: %w", err)
		}
	}
	tx, err := db.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	const batch = 500
	base := time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)
	for start := 1; start <= n; start += batch {
		end := min(start+batch-1, n)
		var sb strings.Builder
		sb.WriteString("INSERT INTO item (name, category, price, qty, active, created, notes) VALUES ")
		args := make([]any, 0, 7*(end-start+1))
		for i := start; i <= end; i++ {
			if i > start {
				sb.WriteString(", ")
			}
			sb.WriteString(placeholders(d.kind, len(args), 7))
			price := fmt.Sprintf("%d.%02d", 1+i*37%250, i*13%100)
			var notes any
			switch {
			case i%5 == 0:
				notes = nil
			case i%7 == 0:
				notes = fmt.Sprintf(`Größe "M" & <b>bold</b> — item %d`, i)
			default:
				notes = fmt.Sprintf("Notes about item %d: ships in %d days.", i, 1+i%9)
			}
			args = append(args,
				fmt.Sprintf("item %05d", i),
				categories[i%len(categories)],
				price,
				i*7%500,
				i%3 != 0,
				base.Add(time.Duration(i)*time.Minute).Format(time.DateTime),
				notes)
		}
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("seed items: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if d.kind == dialects.Postgres {
		_, err = db.ExecContext(ctx, "ANALYZE item")
	} else if d.kind == dialects.SQLite {
		_, err = db.ExecContext(ctx, "ANALYZE")
	}
	return err
}

// placeholders returns "(?, ?, …)" or "($k+1, $k+2, …)" for count values
// after k already used.
func placeholders(kind dialects.Kind, k, count int) string {
	var sb strings.Builder
	sb.WriteByte('(')
	for i := range count {
		if i > 0 {
			sb.WriteString(", ")
		}
		if kind == dialects.Postgres {
			fmt.Fprintf(&sb, "$%d", k+i+1)
		} else {
			sb.WriteByte('?')
		}
	}
	sb.WriteByte(')')
	return sb.String()
}

// openBaselineDB opens the baseline's pool as a careful Go programmer
// would, sharing no settings with Portcullis: on PostgreSQL pgx with its
// defaults (extended protocol, a per-connection statement cache), on
// MySQL go-sql-driver with server-side prepared statements, on SQLite the
// same driver and file. The baseline prepares its four queries on it
// (baseDB.prepare).
func openBaselineDB(ctx context.Context, d *database) (*sql.DB, error) {
	var db *sql.DB
	switch d.kind {
	case dialects.MySQL:
		mc, err := mysql.DriverConfig(d.cfg)
		if err != nil {
			return nil, err
		}
		mc.InterpolateParams = false
		conn, err := driver.NewConnector(mc)
		if err != nil {
			return nil, err
		}
		db = sql.OpenDB(conn)
	case dialects.Postgres:
		pc, err := pgx.ParseConfig(d.cfg.URL())
		if err != nil {
			return nil, err
		}
		db = stdlib.OpenDB(*pc)
	default:
		bdb, _, err := engines.Open(ctx, d.cfg)
		if err != nil {
			return nil, err
		}
		return bdb.DB, nil
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(20)
	db.SetConnMaxLifetime(time.Hour)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}
