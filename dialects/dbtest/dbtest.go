package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/engines"
)

// The environment variables that name the shared test servers.
const (
	EnvPostgres = "PORTCULLIS_TEST_PG"
	EnvMySQL    = "PORTCULLIS_TEST_MYSQL"
	EnvRedis    = "PORTCULLIS_TEST_REDIS"
)

// Kinds lists the engines in the order tests run them.
var Kinds = []dialects.Kind{dialects.SQLite, dialects.Postgres, dialects.MySQL}

// Each runs fn as a subtest per engine (named sqlite, pgsql, mysql), each with
// a fresh empty database. Engines whose variable is unset are skipped with a
// message saying which variable to set.
func Each(t *testing.T, fn func(t *testing.T, cfg dialects.Config)) {
	t.Helper()
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			cfg := Fresh(t, k)
			fn(t, cfg)
		})
	}
}

// Fresh creates an empty database of kind for t, dropped at cleanup, and
// returns its configuration. It skips t when the engine is not configured.
func Fresh(t testing.TB, kind dialects.Kind) dialects.Config {
	t.Helper()
	switch kind {
	case dialects.SQLite:
		path := filepath.Join(t.TempDir(), "test.db")
		return dialects.Config{Kind: dialects.SQLite, DSN: path, Database: path}
	case dialects.Postgres:
		return freshServer(t, EnvPostgres, kind)
	case dialects.MySQL:
		return freshServer(t, EnvMySQL, kind)
	}
	t.Fatalf("dbtest: unknown kind %q", kind)
	return dialects.Config{}
}

// Open returns a pool on cfg, closed at cleanup.
func Open(t testing.TB, cfg dialects.Config) *bun.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, _, err := engines.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("dbtest: open %s: %v", cfg.Kind, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// RedisURL returns PORTCULLIS_TEST_REDIS or skips t.
func RedisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvRedis)
	if u == "" {
		t.Skipf("Redis test skipped: set %s (e.g. redis://127.0.0.1:6379/0)", EnvRedis)
	}
	return u
}

// Name returns a random lowercase identifier with prefix, for databases,
// schemas, tables or key prefixes that must not collide across test runs.
func Name(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func freshServer(t testing.TB, env string, kind dialects.Kind) dialects.Config {
	t.Helper()
	admin := os.Getenv(env)
	if admin == "" {
		t.Skipf("%s test skipped: set %s to run it", kind, env)
	}
	base, err := dialects.ParseDSN(admin)
	if err != nil {
		t.Fatalf("dbtest: %s: %v", env, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, _, err := engines.Open(ctx, base)
	if err != nil {
		t.Fatalf("dbtest: %s is set but the server does not answer: %v", env, err)
	}
	defer db.Close()
	name := Name("pc_test_")
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("dbtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, _, err := engines.Open(ctx, base)
		if err != nil {
			t.Logf("dbtest: drop %s: %v", name, err)
			return
		}
		defer db.Close()
		q := "DROP DATABASE IF EXISTS " + name
		if kind == dialects.Postgres {
			q += " WITH (FORCE)"
		}
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Logf("dbtest: drop %s: %v", name, err)
		}
	})
	cfg := base
	cfg.Database = name
	switch kind {
	case dialects.Postgres:
		cfg.DSN = replacePath(base.DSN, name)
	case dialects.MySQL:
		cfg.DSN = replaceMySQLDB(base.DSN, name)
	}
	return cfg
}

// replacePath swaps the database in a postgres:// URL.
func replacePath(dsn, db string) string {
	scheme, rest, _ := strings.Cut(dsn, "://")
	hostEnd := strings.IndexAny(rest, "/?")
	if hostEnd < 0 {
		return scheme + "://" + rest + "/" + db
	}
	host := rest[:hostEnd]
	query := ""
	if q := strings.Index(rest, "?"); q >= 0 {
		query = rest[q:]
	}
	return fmt.Sprintf("%s://%s/%s%s", scheme, host, db, query)
}

// replaceMySQLDB swaps the database in user:pass@tcp(h:p)/db?params.
func replaceMySQLDB(dsn, db string) string {
	i := strings.LastIndex(dsn, "/")
	query := ""
	if q := strings.Index(dsn[i:], "?"); q >= 0 {
		query = dsn[i+q:]
	}
	return dsn[:i+1] + db + query
}
