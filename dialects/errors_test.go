package dialects_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/dialects/engines"
)

func TestClassifyConstraintErrors(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		db := dbtest.Open(t, cfg)
		d, _ := engines.Get(cfg.Kind)
		ctx := t.Context()
		exec(t, db,
			`CREATE TABLE parent (id INTEGER PRIMARY KEY, code VARCHAR(10) UNIQUE, qty INTEGER NOT NULL, CONSTRAINT qty_positive CHECK (qty > 0))`,
			`CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER, CONSTRAINT child_parent_fkey FOREIGN KEY (parent_id) REFERENCES parent (id))`,
			`INSERT INTO parent VALUES (1, 'a', 1)`,
			`INSERT INTO parent VALUES (2, 'z', 1)`,
			`INSERT INTO child VALUES (1, 1)`,
		)
		tests := []struct {
			name       string
			stmt       string
			kind       dialects.ConstraintKind
			column     string // "" when the engine does not tell
			constraint string
			message    string // a part of the message
		}{
			{"primary key", `INSERT INTO parent VALUES (1, 'b', 1)`, dialects.ConstraintPrimaryKey, "id", "", "duplicate primary key"},
			{"unique", `INSERT INTO parent VALUES (6, 'a', 1)`, dialects.ConstraintUnique, "code", "", "duplicate value"},
			{"unique on update", `UPDATE parent SET code = 'a' WHERE id = 2`, dialects.ConstraintUnique, "code", "", "duplicate value"},
			{"missing parent", `INSERT INTO child VALUES (2, 99)`, dialects.ConstraintForeignKey, "parent_id", "child_parent_fkey", ""},
			{"still referenced", `DELETE FROM parent WHERE id = 1`, dialects.ConstraintForeignKey, "", "child_parent_fkey", ""},
			{"explicit null", `INSERT INTO parent VALUES (3, 'c', NULL)`, dialects.ConstraintNotNull, "qty", "", `field "qty" can not be null`},
			{"missing value", `INSERT INTO parent (id, code) VALUES (4, 'd')`, dialects.ConstraintNotNull, "qty", "", `field "qty" can not be null`},
			{"check", `INSERT INTO parent VALUES (5, 'e', 0)`, dialects.ConstraintCheck, "", "qty_positive", `check constraint "qty_positive" failed`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := db.ExecContext(ctx, tt.stmt)
				if err == nil {
					t.Fatalf("%s succeeded", tt.stmt)
				}
				got := d.ClassifyError(err)
				var ce *dialects.ConstraintError
				if !errors.As(got, &ce) {
					t.Fatalf("not a ConstraintError: %T %v", got, got)
				}
				if ce.Kind != tt.kind {
					t.Errorf("kind = %q, want %q (%v)", ce.Kind, tt.kind, err)
				}
				if !errors.Is(got, err) {
					t.Error("the driver error is not wrapped")
				}
				if errors.Is(got, dialects.ErrUnavailable) {
					t.Error("a constraint error reads as unavailable")
				}
				engineTells := cfg.Kind != dialects.MySQL || tt.kind == dialects.ConstraintNotNull || tt.kind == dialects.ConstraintForeignKey && tt.column != ""
				if cfg.Kind == dialects.SQLite && tt.kind == dialects.ConstraintForeignKey {
					engineTells = false // SQLite names neither column nor constraint
				}
				if engineTells && ce.Column != tt.column {
					t.Errorf("column = %q, want %q (%v)", ce.Column, tt.column, err)
				}
				if tt.constraint != "" && cfg.Kind != dialects.SQLite && ce.Constraint != tt.constraint {
					t.Errorf("constraint = %q, want %q (%v)", ce.Constraint, tt.constraint, err)
				}
				if tt.kind == dialects.ConstraintCheck && ce.Constraint != tt.constraint {
					t.Errorf("check constraint = %q (%v)", ce.Constraint, err)
				}
				if !strings.Contains(ce.Message, tt.message) {
					t.Errorf("message %q does not contain %q", ce.Message, tt.message)
				}
				for _, leak := range []string{"INSERT", "DELETE", "'a'", "99", "parent VALUES"} {
					if strings.Contains(ce.Error(), leak) {
						t.Errorf("message %q leaks %q", ce.Error(), leak)
					}
				}
				if again := d.ClassifyError(got); again != got {
					t.Error("classifying twice changes the error")
				}
				t.Logf("%s: %s", cfg.Kind, ce.Message)
			})
		}
		if d.ClassifyError(nil) != nil {
			t.Error("nil is not nil")
		}
		_, err := db.ExecContext(ctx, `SELEC 1`)
		if got := d.ClassifyError(err); got != err {
			t.Errorf("syntax error changed: %v", got)
		}
		if _, err := db.ExecContext(ctx, `DELETE FROM parent WHERE id = 1`); err != nil {
			var ce *dialects.ConstraintError
			if errors.As(d.ClassifyError(err), &ce) && cfg.Kind != dialects.SQLite && !strings.Contains(ce.Message, `"child"`) {
				t.Errorf("referenced message does not name the child table: %q", ce.Message)
			}
		}
	})
}

// closedAddr returns an address on which nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestClassifyUnavailable(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		d, _ := engines.Get(cfg.Kind)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()

		t.Run("cannot connect", func(t *testing.T) {
			bad := dialects.Config{Kind: cfg.Kind}
			host, port, _ := net.SplitHostPort(closedAddr(t))
			switch cfg.Kind {
			case dialects.SQLite:
				bad.DSN = t.TempDir() + "/missing/dir/x.db"
			case dialects.Postgres:
				bad.DSN = "postgres://postgres@" + host + ":" + port + "/x?sslmode=disable"
			case dialects.MySQL:
				bad.Host, bad.Username, bad.Database = host, "root", "x"
				bad.Port, _ = strconv.Atoi(port)
			}
			_, err := d.Open(ctx, bad)
			if err == nil {
				t.Fatal("open succeeded")
			}
			if got := d.ClassifyError(err); !errors.Is(got, dialects.ErrUnavailable) || !errors.Is(got, err) {
				t.Fatalf("not unavailable: %v", got)
			}
		})

		t.Run("connection dropped", func(t *testing.T) {
			db := dbtest.Open(t, cfg)
			var err error
			switch cfg.Kind {
			case dialects.SQLite:
				// A writer holds the lock; another pool that will not wait is busy.
				exec(t, db, `CREATE TABLE w (x INTEGER)`)
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback()
				if _, err := tx.ExecContext(ctx, `INSERT INTO w VALUES (1)`); err != nil {
					t.Fatal(err)
				}
				impatient := dbtest.Open(t, dialects.Config{Kind: dialects.SQLite, DSN: cfg.DSN + "?_pragma=busy_timeout(0)"})
				_, err = impatient.ExecContext(ctx, `INSERT INTO w VALUES (2)`)
				if got := d.ClassifyError(err); err == nil || !errors.Is(got, dialects.ErrUnavailable) {
					t.Fatalf("busy: %v", err)
				}
				return
			case dialects.Postgres:
				conn, cerr := db.Conn(ctx)
				if cerr != nil {
					t.Fatal(cerr)
				}
				defer conn.Close()
				_, err = conn.ExecContext(ctx, `SELECT pg_terminate_backend(pg_backend_pid())`)
			case dialects.MySQL:
				conn, cerr := db.Conn(ctx)
				if cerr != nil {
					t.Fatal(cerr)
				}
				defer conn.Close()
				_, _ = conn.ExecContext(ctx, `KILL CONNECTION_ID()`)
				_, err = conn.ExecContext(ctx, `SELECT 1`)
			}
			if err == nil {
				t.Fatal("the statement on a dropped connection succeeded")
			}
			if got := d.ClassifyError(err); !errors.Is(got, dialects.ErrUnavailable) {
				t.Fatalf("not unavailable: %T %v", err, err)
			}
		})
	})
}
