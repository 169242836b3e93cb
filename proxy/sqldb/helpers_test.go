package sqldb_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// serviceConfig is the config object of a service on the data database cfg.
func serviceConfig(cfg dialects.Config, extra map[string]any) string {
	m := map[string]any{}
	if cfg.Kind == dialects.SQLite {
		m["database"] = cfg.Database
	} else {
		m["dsn"] = cfg.URL()
	}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// addService creates a service and reloads the instance.
func addService(t testing.TB, in *proxytest.Instance, name, typ, config string) {
	t.Helper()
	ctx := t.Context()
	svc := &store.Service{Name: name, Label: name, Type: typ, IsActive: true, Mutable: true, Deletable: true, Config: config}
	if _, err := in.Store.DB.NewInsert().Model(svc).Exec(ctx); err != nil {
		t.Fatalf("insert service: %v", err)
	}
	if err := store.Touch(ctx, in.Store.DB); err != nil {
		t.Fatal(err)
	}
	if err := in.Proxy.Reload(ctx); err != nil {
		t.Fatal(err)
	}
}

// fixture creates the test tables on db and fills them.
func fixture(t testing.TB, kind dialects.Kind, db *bun.DB) {
	t.Helper()
	ctx := t.Context()
	autoinc := map[dialects.Kind]string{
		dialects.SQLite:   "INTEGER PRIMARY KEY AUTOINCREMENT",
		dialects.Postgres: "SERIAL PRIMARY KEY",
		dialects.MySQL:    "INT AUTO_INCREMENT PRIMARY KEY",
	}[kind]
	double := map[dialects.Kind]string{dialects.SQLite: "DOUBLE", dialects.Postgres: "DOUBLE PRECISION", dialects.MySQL: "DOUBLE"}[kind]
	ts := map[dialects.Kind]string{dialects.SQLite: "DATETIME", dialects.Postgres: "TIMESTAMP", dialects.MySQL: "DATETIME"}[kind]
	engine := ""
	if kind == dialects.MySQL {
		engine = " ENGINE=InnoDB"
	}
	stmts := []string{
		`CREATE TABLE customer (id ` + autoinc + `, name VARCHAR(64) NOT NULL, email VARCHAR(128) UNIQUE, age INTEGER,
			active BOOLEAN NOT NULL DEFAULT TRUE, balance DECIMAL(10,2), rating ` + double + `, born DATE, created ` + ts + `,
			notes TEXT)` + engine,
		`CREATE TABLE orders (id ` + autoinc + `, customer_id INTEGER, total DECIMAL(10,2) NOT NULL DEFAULT 0,
			placed DATE` + fk(kind, "customer_id", "customer") + `)` + engine,
		`CREATE TABLE tag (id INTEGER PRIMARY KEY, label VARCHAR(32) NOT NULL)` + engine,
		`CREATE TABLE order_tag (order_id INTEGER NOT NULL, tag_id INTEGER NOT NULL,
			PRIMARY KEY (order_id, tag_id)` + fk(kind, "order_id", "orders") + fk(kind, "tag_id", "tag") + `)` + engine,
		`CREATE TABLE nokey (a INTEGER, b VARCHAR(10))` + engine,
		`INSERT INTO customer (name, email, age, active, balance, rating, born, created, notes) VALUES
			('Alice', 'alice@example.com', 30, TRUE, 120.50, 4.5, '1994-03-01', '2024-01-15 10:30:00', 'likes tea'),
			('Bob', 'bob@example.com', 25, FALSE, 0.00, 3.25, '1999-12-31', '2024-02-01 08:00:00', NULL),
			('Carol', 'carol@example.com', NULL, TRUE, 99.99, NULL, NULL, NULL, 'it''s "quoted"'),
			('Dave', NULL, 41, TRUE, NULL, 5, '1983-07-04', '2023-12-31 23:59:59', '100% sure')`,
		`INSERT INTO orders (customer_id, total, placed) VALUES (1, 10.00, '2024-03-01'), (1, 25.50, '2024-03-02'), (2, 7.25, '2024-03-03'), (NULL, 1.00, NULL)`,
		`INSERT INTO tag (id, label) VALUES (1, 'red'), (2, 'green'), (3, 'blue')`,
		`INSERT INTO order_tag (order_id, tag_id) VALUES (1, 1), (1, 2), (2, 2), (3, 3)`,
		`INSERT INTO nokey (a, b) VALUES (1, 'one'), (2, 'two')`,
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("fixture %s: %v\n%s", kind, err, s)
		}
	}
}

// fk is a table-level foreign key (MySQL ignores inline REFERENCES).
func fk(_ dialects.Kind, col, ref string) string {
	return ", FOREIGN KEY (" + col + ") REFERENCES " + ref + "(id)"
}

// env is one engine's instance with a "data" service on a fresh database
// holding the fixture.
type env struct {
	kind dialects.Kind
	in   *proxytest.Instance
	c    *proxytest.Client
	db   *bun.DB
}

func newEnv(t *testing.T, cfg dialects.Config, extra map[string]any) *env {
	t.Helper()
	db := dbtest.Open(t, cfg)
	fixture(t, cfg.Kind, db)
	in := proxytest.StartSQLite(t)
	addService(t, in, "data", string(cfg.Kind), serviceConfig(cfg, extra))
	return &env{kind: cfg.Kind, in: in, c: in.Admin(t), db: db}
}

// do calls the API and returns status and body.
func (e *env) do(t *testing.T, method, path string, body any) (int, string) {
	t.Helper()
	r := e.c.Do(t, method, "/api/v2/data/"+strings.TrimPrefix(path, "/"), body)
	return r.Status, string(r.Body)
}
