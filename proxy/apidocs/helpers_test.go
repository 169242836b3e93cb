package apidocs_test

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/apidocs"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

var update = flag.Bool("update", false, "rewrite the golden documents in testdata/")

// fixture creates tables that exercise the document: every common type,
// defaults, nullability, a unique column, a foreign key, a composite key,
// a table without a key, a view and a name that needs escaping.
func fixture(t testing.TB, kind dialects.Kind, db *bun.DB) {
	t.Helper()
	autoinc := map[dialects.Kind]string{
		dialects.SQLite:   "INTEGER PRIMARY KEY AUTOINCREMENT",
		dialects.Postgres: "SERIAL PRIMARY KEY",
		dialects.MySQL:    "INT AUTO_INCREMENT PRIMARY KEY",
	}[kind]
	double := map[dialects.Kind]string{dialects.SQLite: "DOUBLE", dialects.Postgres: "DOUBLE PRECISION", dialects.MySQL: "DOUBLE"}[kind]
	ts := map[dialects.Kind]string{dialects.SQLite: "DATETIME", dialects.Postgres: "TIMESTAMP", dialects.MySQL: "DATETIME"}[kind]
	q := func(s string) string {
		if kind == dialects.MySQL {
			return "`" + s + "`"
		}
		return `"` + s + `"`
	}
	engine := ""
	if kind == dialects.MySQL {
		engine = " ENGINE=InnoDB"
	}
	stmts := []string{
		`CREATE TABLE customer (id ` + autoinc + `, name VARCHAR(64) NOT NULL, email VARCHAR(128) UNIQUE, age INTEGER,
			active BOOLEAN NOT NULL DEFAULT TRUE, balance DECIMAL(10,2), rating ` + double + `, born DATE, created ` + ts + `,
			notes TEXT, status VARCHAR(16) NOT NULL DEFAULT 'new')` + engine,
		`CREATE TABLE orders (id ` + autoinc + `, customer_id INTEGER NOT NULL, total DECIMAL(10,2) NOT NULL DEFAULT 0,
			placed DATE, FOREIGN KEY (customer_id) REFERENCES customer(id))` + engine,
		`CREATE TABLE tag (id INTEGER PRIMARY KEY, label VARCHAR(32) NOT NULL)` + engine,
		`CREATE TABLE order_tag (order_id INTEGER NOT NULL, tag_id INTEGER NOT NULL, PRIMARY KEY (order_id, tag_id),
			FOREIGN KEY (order_id) REFERENCES orders(id), FOREIGN KEY (tag_id) REFERENCES tag(id))` + engine,
		`CREATE TABLE nokey (a INTEGER, b VARCHAR(10))` + engine,
		`CREATE TABLE ` + q("line item") + ` (id INTEGER PRIMARY KEY, qty INTEGER NOT NULL)` + engine,
		`CREATE VIEW big_spender AS SELECT id, name FROM customer WHERE balance > 100`,
		`INSERT INTO customer (name, email, age, active, balance, rating, born, created, notes) VALUES
			('Alice', 'alice@example.com', 30, TRUE, 120.50, 4.5, '1994-03-01', '2024-01-15 10:30:00', 'likes tea'),
			('Bob', 'bob@example.com', 25, FALSE, 0.00, 3.25, '1999-12-31', '2024-02-01 08:00:00', NULL)`,
	}
	switch kind {
	case dialects.Postgres:
		stmts = append(stmts,
			`CREATE FUNCTION add_nums(a integer, b integer) RETURNS integer LANGUAGE sql AS $$ SELECT a + b $$`,
			`CREATE FUNCTION rich(min_balance numeric) RETURNS TABLE(id integer, name varchar) LANGUAGE sql AS $$
SELECT id, name FROM customer WHERE balance > min_balance ORDER BY id $$`,
			`CREATE FUNCTION over(a integer) RETURNS text LANGUAGE sql AS $$ SELECT 'one' $$`,
			`CREATE FUNCTION over(a varchar, b varchar) RETURNS text LANGUAGE sql AS $$ SELECT 'two' $$`,
			`CREATE PROCEDURE add_tax(IN amount numeric, INOUT total numeric, OUT tax numeric) LANGUAGE plpgsql AS $$
BEGIN tax := amount * 0.1; total := total + amount + tax; END $$`)
	case dialects.MySQL:
		stmts = append(stmts,
			`CREATE FUNCTION add_nums(a INT, b INT) RETURNS INT DETERMINISTIC RETURN a + b`,
			`CREATE PROCEDURE add_tax(IN amount DECIMAL(10,2), INOUT total DECIMAL(10,2), OUT tax DECIMAL(10,2))
BEGIN SET tax = amount * 0.1; SET total = total + amount + tax; END`,
			`CREATE PROCEDURE rich(IN min_balance DECIMAL(10,2)) BEGIN SELECT id, name FROM customer WHERE balance > min_balance ORDER BY id; END`)
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("fixture %s: %v\n%s", kind, err, s)
		}
	}
}

// serviceConfig is the config object of a service on the database cfg.
func serviceConfig(cfg dialects.Config) string {
	m := map[string]any{}
	if cfg.Kind == dialects.SQLite {
		m["database"] = cfg.Database
	} else {
		m["dsn"] = cfg.URL()
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// addService creates a service and reloads the instance.
func addService(t testing.TB, in *proxytest.Instance, name, label, typ, config string) {
	t.Helper()
	ctx := t.Context()
	svc := &store.Service{Name: name, Label: label, Type: typ, IsActive: true, Mutable: true, Deletable: true, Config: config}
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

// dbInstance is an instance with a "shop" service of cfg's engine holding
// the fixture.
func dbInstance(t *testing.T, cfg dialects.Config) *proxytest.Instance {
	t.Helper()
	db := dbtest.Open(t, cfg)
	fixture(t, cfg.Kind, db)
	in := proxytest.StartSQLite(t)
	addService(t, in, "shop", "Shop database", string(cfg.Kind), serviceConfig(cfg))
	return in
}

// getDoc fetches a document, checks that it is 200 and valid, and returns
// it decoded.
func getDoc(t *testing.T, c *proxytest.Client, path string) map[string]any {
	t.Helper()
	r := c.Do(t, http.MethodGet, path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s = %d %s", path, r.Status, r.Body)
	}
	if err := apidocs.Validate(t.Context(), r.Body); err != nil {
		t.Fatalf("GET %s: invalid document: %v", path, err)
	}
	return r.Map(t)
}

// golden compares doc with testdata/name.json as JSON structure, or
// rewrites the file with -update.
func golden(t *testing.T, name string, doc map[string]any) {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to write it)", err, t.Name())
	}
	if err := apidocs.Validate(t.Context(), data); err != nil {
		t.Fatalf("golden %s is not a valid document: %v", path, err)
	}
	var want map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("golden %s: %v", path, err)
	}
	var norm map[string]any
	_ = json.Unmarshal(got, &norm)
	if diff := cmp.Diff(want, norm); diff != "" {
		t.Errorf("document differs from %s (-want +got; run with -update after checking):\n%s", path, diff)
	}
}

// paths lists "VERB /path" of every operation in doc.
func operations(doc map[string]any) map[string]bool {
	out := map[string]bool{}
	paths, _ := doc["paths"].(map[string]any)
	for p, v := range paths {
		item, _ := v.(map[string]any)
		for m := range item {
			switch m {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				out[m+" "+p] = true
			}
		}
	}
	return out
}

// schemas lists the component schema names of doc.
func schemas(doc map[string]any) map[string]bool {
	out := map[string]bool{}
	comps, _ := doc["components"].(map[string]any)
	s, _ := comps["schemas"].(map[string]any)
	for k := range s {
		out[k] = true
	}
	return out
}

// serviceID returns the id of the service called name.
func serviceID(t *testing.T, admin *proxytest.Client, name string) int64 {
	t.Helper()
	var svcs struct {
		Resource []struct {
			ID int64 `json:"id"`
		} `json:"resource"`
	}
	r := admin.Do(t, http.MethodGet, "/api/v2/system/service?filter=name%3D'"+name+"'", nil)
	r.JSON(t, &svcs)
	if len(svcs.Resource) != 1 {
		t.Fatalf("service %s: %s", name, r.Body)
	}
	return svcs.Resource[0].ID
}

// appWithRole creates a role with the access entries given and an app
// with that default role, and returns the app's API key.
func appWithRole(t *testing.T, admin *proxytest.Client, name string, access []map[string]any) string {
	t.Helper()
	entries := make([]any, len(access))
	for i, a := range access {
		if _, ok := a["requestor_mask"]; !ok {
			a["requestor_mask"] = 1
		}
		entries[i] = a
	}
	r := admin.Do(t, http.MethodPost, "/api/v2/system/role", map[string]any{"resource": []any{
		map[string]any{"name": name, "role_service_access_by_role_id": entries}}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create role: %d %s", r.Status, r.Body)
	}
	var ids struct {
		Resource []struct {
			ID int64 `json:"id"`
		} `json:"resource"`
	}
	r.JSON(t, &ids)
	r = admin.Do(t, http.MethodPost, "/api/v2/system/app?fields=api_key", map[string]any{"resource": []any{
		map[string]any{"name": name, "role_id": ids.Resource[0].ID}}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create app: %d %s", r.Status, r.Body)
	}
	var keys struct {
		Resource []struct {
			APIKey string `json:"api_key"`
		} `json:"resource"`
	}
	r.JSON(t, &keys)
	return keys.Resource[0].APIKey
}
