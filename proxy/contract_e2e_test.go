package proxy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/uptrace/bun"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// contractEnv is an instance whose system database and data service
// ("data") are on the same engine, with two related tables.
type contractEnv struct {
	kind dialects.Kind
	in   *proxytest.Instance
	c    *proxytest.Client
	db   *bun.DB
}

func newContractEnv(t testing.TB, sys dialects.Config, adjust func(*proxy.Config)) *contractEnv {
	t.Helper()
	data := dbtest.Fresh(t, sys.Kind)
	db := dbtest.Open(t, data)
	autoinc := map[dialects.Kind]string{
		dialects.SQLite:   "INTEGER PRIMARY KEY AUTOINCREMENT",
		dialects.Postgres: "SERIAL PRIMARY KEY",
		dialects.MySQL:    "INT AUTO_INCREMENT PRIMARY KEY",
	}[sys.Kind]
	for _, s := range []string{
		`CREATE TABLE customer (id ` + autoinc + `, name VARCHAR(64) NOT NULL, email VARCHAR(128))`,
		`CREATE TABLE orders (id ` + autoinc + `, customer_id INTEGER, total DECIMAL(10,2) NOT NULL DEFAULT 0,
			FOREIGN KEY (customer_id) REFERENCES customer(id))`,
		`CREATE TABLE free (id INTEGER PRIMARY KEY, note VARCHAR(20))`,
		`INSERT INTO customer (name, email) VALUES ('Alice', 'a@example.com'), ('Bob', NULL)`,
		`INSERT INTO orders (customer_id, total) VALUES (1, 10.50), (1, 2.00), (2, 7.25)`,
	} {
		if _, err := db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	in := proxytest.Start(t, sys, adjust)
	cfg := map[string]any{}
	if data.Kind == dialects.SQLite {
		cfg["database"] = data.Database
	} else {
		cfg["dsn"] = data.URL()
	}
	raw, _ := json.Marshal(cfg)
	svc := &store.Service{Name: "data", Label: "Data", Type: string(data.Kind), IsActive: true, Mutable: true, Deletable: true, Config: string(raw)}
	ctx := t.Context()
	if _, err := in.Store.DB.NewInsert().Model(svc).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.Touch(ctx, in.Store.DB); err != nil {
		t.Fatal(err)
	}
	if err := in.Proxy.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	return &contractEnv{kind: sys.Kind, in: in, c: in.Admin(t), db: db}
}

// call sends a request below /api/v2/ and checks the status.
func (e *contractEnv) call(t testing.TB, want int, method, path string, body any) map[string]any {
	t.Helper()
	r := e.c.Do(t, method, "/api/v2/"+path, body)
	if r.Status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	var m map[string]any
	if len(r.Body) > 0 && r.Body[0] == '{' {
		r.JSON(t, &m)
	}
	return m
}

func (e *contractEnv) exec(t testing.TB, stmt string) {
	t.Helper()
	if _, err := e.db.ExecContext(t.Context(), stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func kinds(m map[string]any) []string {
	var out []string
	changes, _ := m["changes"].([]any)
	for _, c := range changes {
		c := c.(map[string]any)
		out = append(out, c["severity"].(string)+" "+c["kind"].(string)+" "+c["path"].(string))
	}
	return out
}

const sc = "system/schema_contract/"

func TestSchemaContractLifecycle(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		e := newContractEnv(t, sys, nil)

		// Before anything: mode none, enforcement off, nothing locked.
		ov := e.call(t, 200, "GET", "system/schema_contract", nil)
		if s := ov["summary"].(map[string]any); s["services_total"].(float64) != 2 || s["snapshots_total"].(float64) != 0 {
			t.Errorf("overview: %v", ov)
		}
		st := e.call(t, 200, "GET", sc+"data", nil)
		if st["mode"] != "none" || st["runtime_enforcement"] != "off" || st["drift"].(map[string]any)["has_drift"] != false {
			t.Errorf("status: %v", st)
		}
		tables := e.call(t, 200, "GET", sc+"data/tables", nil)
		if n := tables["summary"].(map[string]any)["tables_total"].(float64); n != 3 {
			t.Errorf("tables: %v", tables)
		}
		if m := errMessage(e.call(t, 404, "GET", sc+"data/tables/customer/diff", nil)); m != "No active snapshot for 'data/customer' — lock the table before requesting drift." {
			t.Errorf("diff unlocked: %q", m)
		}
		e.call(t, 404, "GET", sc+"data/tables/customer/snapshot", nil)
		e.call(t, 404, "GET", sc+"data/tables/customer/snapshots", nil)

		// no contract → locked (version 1).
		lock := e.call(t, 200, "POST", sc+"data/tables/customer/lock", nil)
		if lock["lock_result"] != "locked" || lock["contract_version"].(float64) != 1 || lock["status"] != "active" ||
			len(lock["schema_hash"].(string)) != 64 || lock["schema"].(map[string]any)["name"] != "customer" {
			t.Fatalf("lock: %v", lock)
		}
		// Same shape: nothing written; force writes a new version.
		if r := e.call(t, 200, "POST", sc+"data/tables/customer/lock", nil); r["lock_result"] != "no_change" || r["contract_version"].(float64) != 1 {
			t.Errorf("relock: %v", r)
		}
		if r := e.call(t, 200, "POST", sc+"data/tables/customer/lock?force=1", nil); r["lock_result"] != "promoted" || r["contract_version"].(float64) != 2 {
			t.Errorf("forced relock: %v", r)
		}
		hist := e.call(t, 200, "GET", sc+"data/tables/customer/snapshots", nil)
		vs := hist["versions"].([]any)
		if len(vs) != 2 || vs[0].(map[string]any)["contract_version"].(float64) != 2 || vs[0].(map[string]any)["status"] != "active" ||
			vs[1].(map[string]any)["status"] != "archived" {
			t.Errorf("history: %v", hist)
		}
		if r := e.call(t, 200, "GET", sc+"data/tables/customer/snapshots/1", nil); r["status"] != "archived" || r["schema"] == nil {
			t.Errorf("version 1: %v", r)
		}
		if m := errMessage(e.call(t, 404, "GET", sc+"data/tables/customer/snapshots/9", nil)); m != "Version 9 of 'data/customer' not found." {
			t.Errorf("version 9: %q", m)
		}
		if r := e.call(t, 200, "GET", sc+"data/tables/customer/snapshot", nil); r["contract_version"].(float64) != 2 || r["lock_result"] != nil {
			t.Errorf("snapshot: %v", r)
		}
		if r := e.call(t, 200, "GET", sc+"data/tables/customer/diff", nil); r["has_drift"] != false || len(kinds(r)) != 0 {
			t.Errorf("diff without change: %v", r)
		}

		// Drift made in the database itself shows at once.
		e.exec(t, "ALTER TABLE customer ADD COLUMN nickname VARCHAR(10)")
		d := e.call(t, 200, "GET", sc+"data/tables/customer/diff", nil)
		if got := strings.Join(kinds(d), "|"); got != "additive field.added customer.nickname" || d["has_breaking"] != false {
			t.Errorf("additive drift: %s", got)
		}
		tr := e.call(t, 200, "POST", sc+"data/tables/customer/test", nil)
		if tr["would_be_action"] != "promoted" || tr["would_be_version"].(float64) != 3 || tr["has_drift"] != true {
			t.Errorf("test: %v", tr)
		}
		e.exec(t, "ALTER TABLE customer DROP COLUMN email")
		d = e.call(t, 200, "GET", sc+"data/tables/customer/diff", nil)
		if got := strings.Join(kinds(d), "|"); got != "additive field.added customer.nickname|breaking field.removed customer.email" || d["has_breaking"] != true {
			t.Errorf("breaking drift: %s", got)
		}
		sd := e.call(t, 200, "GET", sc+"data/diff?include=candidate", nil)
		if s := sd["summary"].(map[string]any); s["tables_with_breaking"].(float64) != 1 || s["total_changes"].(float64) != 2 ||
			sd["tables"].([]any)[0].(map[string]any)["candidate"] == nil {
			t.Errorf("service diff: %v", sd)
		}

		// promote: mode none refuses; auto keeps breaking drift for review;
		// strict accepts the current shape.
		if m := errMessage(e.call(t, 400, "POST", sc+"data/promote", nil)); m != "Service mode is 'none'. Promotion is not applicable — set mode='auto' or 'strict' via PATCH /data first." {
			t.Errorf("promote in mode none: %q", m)
		}
		if m := errMessage(e.call(t, 400, "PATCH", sc+"data", map[string]any{"runtime_enforcement": "strict"})); !strings.HasPrefix(m, "Cannot configure a service without first setting mode.") {
			t.Errorf("settings without mode: %q", m)
		}
		for _, bad := range []map[string]any{{"mode": "lax"}, {"mode": "auto", "runtime_enforcement": "on"},
			{"mode": "auto", "archive_retention_count": -1}, {"mode": "auto", "colour": "red"}} {
			e.call(t, 400, "PATCH", sc+"data", bad)
		}
		st = e.call(t, 200, "PATCH", sc+"data", map[string]any{"mode": "auto", "archive_retention_count": 1})
		if st["mode"] != "auto" || st["archive_retention_count"].(float64) != 1 || st["drift"].(map[string]any)["tables_with_breaking"].(float64) != 1 {
			t.Errorf("patched: %v", st)
		}
		pr := e.call(t, 200, "POST", sc+"data/promote", nil)
		if nr := pr["needs_review"].([]any); len(nr) != 1 || nr[0].(map[string]any)["reason"] != "breaking_drift" || len(pr["promoted"].([]any)) != 0 {
			t.Errorf("auto promote: %v", pr)
		}
		e.call(t, 200, "PATCH", sc+"data", map[string]any{"mode": "strict"})
		pr = e.call(t, 200, "POST", sc+"data/promote", nil)
		if p := pr["promoted"].([]any); len(p) != 1 || p[0].(map[string]any)["to_version"].(float64) != 3 {
			t.Errorf("strict promote: %v", pr)
		}
		// archive_retention_count 1: of the archived versions 1 and 2 only 2 is left.
		hist = e.call(t, 200, "GET", sc+"data/tables/customer/snapshots", nil)
		if vs := hist["versions"].([]any); len(vs) != 2 || vs[1].(map[string]any)["contract_version"].(float64) != 2 {
			t.Errorf("retention: %v", hist)
		}
		if r := e.call(t, 200, "GET", sc+"data/tables/customer/diff", nil); r["has_drift"] != false {
			t.Errorf("after promote: %v", r)
		}

		// An additive change is promoted in mode auto.
		e.call(t, 200, "POST", sc+"data/tables/orders/lock", nil)
		e.exec(t, "ALTER TABLE orders ADD COLUMN note VARCHAR(20)")
		e.call(t, 200, "PATCH", sc+"data", map[string]any{"mode": "auto"})
		pr = e.call(t, 200, "POST", sc+"data/promote", nil)
		if p := pr["promoted"].([]any); len(p) != 1 || p[0].(map[string]any)["table"] != "orders" ||
			len(pr["skipped_no_drift"].([]any)) != 1 {
			t.Errorf("auto promote additive: %v", pr)
		}

		// OpenAPI from the contract, valid for kin-openapi.
		oa := e.call(t, 200, "GET", sc+"data/tables/customer/openapi", nil)
		if oa["source"] != "snapshot" || oa["snapshot_version"].(float64) != 3 {
			t.Errorf("openapi: %v", oa)
		}
		so := e.call(t, 200, "GET", sc+"data/openapi", nil)
		comps, _ := json.Marshal(so["components"])
		doc := fmt.Sprintf(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":%s}`, comps)
		loaded, err := openapi3.NewLoader().LoadFromData([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := loaded.Validate(t.Context()); err != nil {
			t.Errorf("service openapi: %v", err)
		}
		if _, ok := loaded.Components.Schemas["free"]; !ok || so["sources"].(map[string]any)["free"].(map[string]any)["source"] != "live" {
			t.Errorf("unlocked table missing: %v", so["sources"])
		}

		// Unlock one table, then the whole service; versions keep growing.
		un := e.call(t, 200, "DELETE", sc+"data/tables/customer", nil)
		if un["result"] != "unlocked" || un["archived_snapshot_version"].(float64) != 3 {
			t.Errorf("unlock: %v", un)
		}
		if r := e.call(t, 200, "DELETE", sc+"data/tables/customer", nil); r["result"] != "no_active_snapshot" {
			t.Errorf("unlock again: %v", r)
		}
		if r := e.call(t, 200, "POST", sc+"data/tables/customer/lock", nil); r["lock_result"] != "locked" || r["contract_version"].(float64) != 4 {
			t.Errorf("relock after unlock: %v", r)
		}
		del := e.call(t, 200, "DELETE", sc+"data", nil)
		if del["snapshots_archived"].(float64) != 2 || del["service_config_removed"] != true {
			t.Errorf("delete service: %v", del)
		}
		if st := e.call(t, 200, "GET", sc+"data", nil); st["mode"] != "none" || st["snapshot_counts"].(map[string]any)["active"].(float64) != 0 {
			t.Errorf("after delete: %v", st)
		}

		// A table gone from the database is a breaking table.removed.
		e.call(t, 200, "POST", sc+"data/tables/free/lock", nil)
		e.exec(t, "DROP TABLE free")
		d = e.call(t, 200, "GET", sc+"data/tables/free/diff", nil)
		if got := strings.Join(kinds(d), "|"); got != "breaking table.removed free" || d["candidate"] != nil {
			t.Errorf("table removed: %v", d)
		}

		// Errors.
		if m := errMessage(e.call(t, 404, "GET", sc+"nosuch", nil)); m != "Service 'nosuch' not found." {
			t.Errorf("unknown service: %q", m)
		}
		if m := errMessage(e.call(t, 400, "GET", sc+"system/tables", nil)); m != "Service 'system' is not a SQL database service; schema contracts are SQL-only." {
			t.Errorf("non-SQL service: %q", m)
		}
		if m := errMessage(e.call(t, 404, "POST", sc+"data/tables/nosuch/lock", nil)); m != "Table 'nosuch' not found in service 'data'." {
			t.Errorf("unknown table: %q", m)
		}
		e.call(t, 400, "PATCH", sc+"data", "{bad")
		if r := e.c.Do(t, http.MethodGet, "/api/v2/"+sc+"data", nil); r.Status != 200 {
			t.Errorf("status after errors: %d", r.Status)
		}
		if r := e.in.API().Do(t, http.MethodGet, "/api/v2/"+sc+"data", nil); r.Status == 200 {
			t.Errorf("a caller without a session read contracts: %d", r.Status)
		}
	})
}

func records(t *testing.T, m map[string]any) []map[string]any {
	t.Helper()
	list, ok := m["resource"].([]any)
	if !ok {
		t.Fatalf("no resource list: %v", m)
	}
	out := make([]map[string]any, len(list))
	for i, r := range list {
		out[i] = r.(map[string]any)
	}
	return out
}

func TestSchemaContractEnforcement(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		// Strict writes check a schema read anew each time, so that a
		// change made in the database is refused at once.
		e := newContractEnv(t, sys, func(c *proxy.Config) { c.ContractMaxAge = time.Nanosecond })
		e.call(t, 200, "POST", sc+"data/tables/customer/lock", nil)
		e.call(t, 200, "POST", sc+"data/tables/orders/lock", nil)
		e.exec(t, "ALTER TABLE customer ADD COLUMN secret VARCHAR(10) DEFAULT 'hush'")
		e.call(t, 200, "GET", sc+"data/tables/customer/diff", nil) // the backend reads the schema anew

		// off: the new column shows.
		if r := records(t, e.call(t, 200, "GET", "data/_table/customer", nil)); r[0]["secret"] != "hush" {
			t.Fatalf("enforcement off: %v", r)
		}
		e.call(t, 200, "PATCH", sc+"data", map[string]any{"mode": "auto", "runtime_enforcement": "shape_response"})

		// shape_response: fields outside the contract are dropped, from
		// lists, single records and embedded related records.
		for _, path := range []string{"data/_table/customer", "data/_table/customer?ids=1", "data/_table/customer?filter=id%3D1"} {
			for _, rec := range records(t, e.call(t, 200, "GET", path, nil)) {
				if _, ok := rec["secret"]; ok || rec["name"] == nil {
					t.Errorf("%s: %v", path, rec)
				}
			}
		}
		if rec := e.call(t, 200, "GET", "data/_table/customer/1", nil); rec["secret"] != nil || rec["name"] != "Alice" {
			t.Errorf("by id: %v", rec)
		}
		for _, rec := range records(t, e.call(t, 200, "GET", "data/_table/orders?related=customer_by_customer_id", nil)) {
			cust, _ := rec["customer_by_customer_id"].(map[string]any)
			if cust == nil || cust["name"] == nil {
				t.Fatalf("related: %v", rec)
			}
			if _, ok := cust["secret"]; ok {
				t.Errorf("related record not shaped: %v", cust)
			}
		}
		// Writes pass; their answers are shaped too.
		created := records(t, e.call(t, 200, "POST", "data/_table/customer?fields=*", map[string]any{"resource": []any{map[string]any{"name": "Cy"}}}))
		if _, ok := created[0]["secret"]; ok || created[0]["name"] != "Cy" {
			t.Errorf("create answer: %v", created)
		}

		// strict: a write to the drifted table is refused with the drift
		// in context; other tables are not affected.
		e.call(t, 200, "PATCH", sc+"data", map[string]any{"runtime_enforcement": "strict"})
		r := e.call(t, 400, "POST", "data/_table/customer", map[string]any{"resource": []any{map[string]any{"name": "Di"}}})
		ctx := r["error"].(map[string]any)["context"].(map[string]any)
		if got := strings.Join(kinds(ctx), "|"); got != "additive field.added customer.secret" || ctx["table"] != "customer" {
			t.Errorf("strict refusal: %v", r)
		}
		e.call(t, 400, "PATCH", "data/_table/customer/1", map[string]any{"name": "Al"})
		e.call(t, 400, "DELETE", "data/_table/customer/2", nil)
		if rec := e.call(t, 200, "GET", "data/_table/customer/1", nil); rec["secret"] != nil {
			t.Errorf("strict read: %v", rec)
		}
		e.call(t, 200, "POST", "data/_table/orders", map[string]any{"resource": []any{map[string]any{"customer_id": 1, "total": 3}}})
		e.call(t, 200, "POST", "data/_table/free", map[string]any{"resource": []any{map[string]any{"id": 1, "note": "n"}}})

		// A change made in the database, with no other call in between.
		e.exec(t, "ALTER TABLE orders ADD COLUMN flag INTEGER")
		r = e.call(t, 400, "POST", "data/_table/orders", map[string]any{"resource": []any{map[string]any{"customer_id": 1, "total": 3}}})
		if got := strings.Join(kinds(r["error"].(map[string]any)["context"].(map[string]any)), "|"); got != "additive field.added orders.flag" {
			t.Errorf("outside change: %v", r)
		}

		// Promoting accepts the shapes; writes pass and the field shows.
		e.call(t, 200, "POST", sc+"data/promote", nil)
		e.call(t, 200, "POST", "data/_table/customer", map[string]any{"resource": []any{map[string]any{"name": "Di"}}})
		if rec := e.call(t, 200, "GET", "data/_table/customer/1", nil); rec["secret"] != "hush" {
			t.Errorf("after promote: %v", rec)
		}

		// enabled false and off turn enforcement off.
		e.exec(t, "ALTER TABLE customer ADD COLUMN extra INTEGER")
		e.call(t, 200, "GET", sc+"data/tables/customer/diff", nil)
		e.call(t, 200, "PATCH", sc+"data", map[string]any{"enabled": false})
		e.call(t, 200, "PATCH", "data/_table/customer/1", map[string]any{"name": "Al"})
		e.call(t, 200, "PATCH", sc+"data", map[string]any{"enabled": true, "runtime_enforcement": "off"})
		e.call(t, 200, "PATCH", "data/_table/customer/1", map[string]any{"name": "Alice"})
		if rec := e.call(t, 200, "GET", "data/_table/customer/1", nil); rec["extra"] != nil || !hasKey(rec, "extra") {
			t.Errorf("off: %v", rec)
		}
	})
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// BenchmarkContractEnforcement compares a table read on a table without a
// contract with the same read under shape_response and strict when the
// table has not drifted (one lookup), and under shape_response when it has
// (the response is buffered and shaped).
func BenchmarkContractEnforcement(b *testing.B) {
	e := newContractEnv(b, dbtest.Fresh(b, dialects.SQLite), nil)
	get := func(b *testing.B, path string) {
		for b.Loop() {
			r := e.c.Do(b, "GET", "/api/v2/"+path, nil)
			if r.Status != 200 {
				b.Fatalf("%d %s", r.Status, r.Body)
			}
		}
	}
	b.Run("no contract", func(b *testing.B) { get(b, "data/_table/customer") })
	e.call(b, 200, "POST", sc+"data/tables/customer/lock", nil)
	e.call(b, 200, "PATCH", sc+"data", map[string]any{"mode": "auto", "runtime_enforcement": "shape_response"})
	b.Run("shape_response, no drift", func(b *testing.B) { get(b, "data/_table/customer") })
	e.call(b, 200, "PATCH", sc+"data", map[string]any{"runtime_enforcement": "strict"})
	b.Run("strict, no drift", func(b *testing.B) { get(b, "data/_table/customer") })
	e.exec(b, "ALTER TABLE customer ADD COLUMN secret VARCHAR(10)")
	e.call(b, 200, "GET", sc+"data/tables/customer/diff", nil)
	e.call(b, 200, "PATCH", sc+"data", map[string]any{"runtime_enforcement": "shape_response"})
	b.Run("shape_response, drifted", func(b *testing.B) { get(b, "data/_table/customer") })
}

// TestSchemaContractTools runs the command-line tools' code on the system
// database of a running instance, named by its DSN.
func TestSchemaContractTools(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		e := newContractEnv(t, sys, nil)
		dsn := sys.URL()
		if sys.Kind == dialects.SQLite {
			dsn = "sqlite://" + sys.Database
		}
		cfg := proxy.Config{SystemDB: dsn, DataDir: e.in.Config.DataDir}
		ctx := t.Context()

		var out strings.Builder
		if err := proxy.DescribeSchema(ctx, cfg, proxy.DescribeOptions{Service: "data", Table: "customer"}, &out); err != nil {
			t.Fatal(err)
		}
		lock := e.call(t, 200, "POST", sc+"data/tables/customer/lock", nil)
		want, _ := json.Marshal(lock["schema"])
		var got any
		json.Unmarshal([]byte(out.String()), &got)
		gotJSON, _ := json.Marshal(got)
		if string(gotJSON) != string(want) {
			t.Errorf("describe --table:\n%s\nlocked:\n%s", gotJSON, want)
		}
		out.Reset()
		if err := proxy.DescribeSchema(ctx, cfg, proxy.DescribeOptions{Service: "data", Pretty: true}, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "{\n    \"version\": \"1.0\",\n    \"service\": {") {
			t.Errorf("describe: %.200s", out.String())
		}
		var env struct {
			Tables []struct{ Name string } `json:"tables"`
		}
		json.Unmarshal([]byte(out.String()), &env)
		if len(env.Tables) != 3 || env.Tables[0].Name != "customer" {
			t.Errorf("tables: %+v", env.Tables)
		}
		if err := proxy.DescribeSchema(ctx, cfg, proxy.DescribeOptions{Service: "nosuch"}, &out); err == nil || err.Error() != "Service 'nosuch' was not found." {
			t.Errorf("unknown service: %v", err)
		}
		if err := proxy.DescribeSchema(ctx, cfg, proxy.DescribeOptions{Service: "system"}, &out); err == nil || !strings.Contains(err.Error(), "SQL-only") {
			t.Errorf("system: %v", err)
		}
		if err := proxy.DescribeSchema(ctx, cfg, proxy.DescribeOptions{Service: "data", Table: "nosuch"}, &out); err == nil {
			t.Errorf("unknown table described")
		}

		// Versions 1 and 2 archived, 3 active; retention 1 set afterwards.
		e.call(t, 200, "POST", sc+"data/tables/customer/lock?force=1", nil)
		e.call(t, 200, "POST", sc+"data/tables/customer/lock?force=1", nil)
		prune := func(o proxy.PruneOptions) string {
			var b strings.Builder
			if err := proxy.PruneSnapshots(ctx, cfg, o, &b); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		if got := prune(proxy.PruneOptions{}); got != "No services have archive_retention_count set; nothing to prune.\n" {
			t.Errorf("nothing configured: %q", got)
		}
		e.call(t, 200, "PATCH", sc+"data", map[string]any{"mode": "auto", "archive_retention_count": 1})
		if got := prune(proxy.PruneOptions{DryRun: true}); got != "  data / customer: keeping 1, would delete 1 archived version(s) (v1)\nWould delete 1 archived snapshot(s) across 1 service(s).\n" {
			t.Errorf("dry run: %q", got)
		}
		if vs := e.call(t, 200, "GET", sc+"data/tables/customer/snapshots", nil)["versions"].([]any); len(vs) != 3 {
			t.Errorf("dry run deleted: %v", vs)
		}
		if got := prune(proxy.PruneOptions{Service: "data"}); got != "  data / customer: keeping 1, deleting 1 archived version(s) (v1)\nDeleted 1 archived snapshot(s) across 1 service(s).\n" {
			t.Errorf("prune: %q", got)
		}
		if vs := e.call(t, 200, "GET", sc+"data/tables/customer/snapshots", nil)["versions"].([]any); len(vs) != 2 {
			t.Errorf("after prune: %v", vs)
		}
		if err := proxy.PruneSnapshots(ctx, cfg, proxy.PruneOptions{Service: "nosuch"}, &out); err == nil {
			t.Errorf("unknown service pruned")
		}
		if err := proxy.PruneSnapshots(ctx, proxy.Config{DataDir: t.TempDir()}, proxy.PruneOptions{}, &out); err == nil ||
			!strings.Contains(err.Error(), "no system database") {
			t.Errorf("empty data dir: %v", err)
		}
	})
}
