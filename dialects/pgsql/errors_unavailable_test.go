package pgsql_test

import (
	"errors"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/engines"
	"github.com/portcullis-dev/portcullis/dialects/pgsql"
)

// Issue 16 soak: a service database that refuses connections (stopped,
// starting up) answered 500, because the connect error wraps the server's
// FATAL error; it is unavailability (503).
func TestConnectRefusedByServerIsUnavailable(t *testing.T) {
	cfg := dbtest.Fresh(t, dialects.Postgres)
	base, err := dialects.ParseDSN(os.Getenv("PORTCULLIS_TEST_PG"))
	if err != nil {
		t.Fatal(err)
	}
	admin, _, err := engines.Open(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(t.Context(), "ALTER DATABASE "+cfg.Database+" ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	_, err = pgx.Connect(t.Context(), cfg.DSN)
	if err == nil {
		t.Fatal("connected to a database that allows no connections")
	}
	if got := pgsql.New().ClassifyError(err); !errors.Is(got, dialects.ErrUnavailable) {
		t.Fatalf("ClassifyError(%v) = %v, want unavailable", err, got)
	}
}
