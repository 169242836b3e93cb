package dbtest_test

import (
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

func TestEachGivesAFreshWritableDatabase(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		db := dbtest.Open(t, cfg)
		ctx := t.Context()
		if _, err := db.ExecContext(ctx, "CREATE TABLE probe (id INTEGER PRIMARY KEY, name VARCHAR(20))"); err != nil {
			t.Fatalf("create: %v", err)
		}
		if _, err := db.NewInsert().Model(&map[string]any{"id": 1, "name": "O'Brien"}).TableExpr("probe").Exec(ctx); err != nil {
			t.Fatalf("insert: %v", err)
		}
		var name string
		if err := db.NewSelect().TableExpr("probe").Column("name").Where("id = ?", 1).Scan(ctx, &name); err != nil {
			t.Fatalf("select: %v", err)
		}
		if name != "O'Brien" {
			t.Fatalf("name = %q", name)
		}
	})
}

func TestParseDSNRoundTrip(t *testing.T) {
	tests := []struct {
		name, in string
		kind     dialects.Kind
		db       string
	}{
		{"sqlite abs", "sqlite:///tmp/x.db", dialects.SQLite, "/tmp/x.db"},
		{"sqlite rel", "sqlite://data/x.db", dialects.SQLite, "data/x.db"},
		{"postgres", "postgres://u:p@h:5432/db?sslmode=disable", dialects.Postgres, "db"},
		{"mysql tcp", "mysql://root@tcp(127.0.0.1:3306)/test", dialects.MySQL, "test"},
		{"mysql url", "mysql://u:p@h:3307/shop", dialects.MySQL, "shop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := dialects.ParseDSN(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if c.Kind != tt.kind || c.Database != tt.db {
				t.Fatalf("got %s %q, want %s %q", c.Kind, c.Database, tt.kind, tt.db)
			}
			again, err := dialects.ParseDSN(c.URL())
			if err != nil || again.Kind != c.Kind || again.Database != c.Database {
				t.Fatalf("round trip %q: %+v %v", c.URL(), again, err)
			}
		})
	}
	for _, bad := range []string{"", "redis://x", "mysql://nohost", "sqlite://"} {
		if _, err := dialects.ParseDSN(bad); err == nil {
			t.Errorf("ParseDSN(%q) accepted", bad)
		}
	}
}
