package proxy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// withoutIDs drops the members named id (they differ between instances)
// and checked_at (the time of the call), at any depth.
func withoutIDs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "id" && k != "checked_at" {
				out[k] = withoutIDs(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutIDs(e)
		}
		return out
	}
	return v
}

// TestSchemaContractPackage exports an instance with locked tables, an
// archived version, contract settings and drift made in the database, and
// imports the package into a fresh instance (on a system database of the
// same engine): status, diff, history and enforcement answer the same
// there, and importing again changes nothing.
func TestSchemaContractPackage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		fresh := func(c *proxy.Config) { c.ContractMaxAge = time.Nanosecond }
		a := newContractEnv(t, sys, fresh)
		a.call(t, 200, "PATCH", sc+"data", map[string]any{"mode": "strict", "runtime_enforcement": "strict", "archive_retention_count": 1})
		a.call(t, 200, "POST", sc+"data/tables/customer/lock", nil)
		a.call(t, 200, "POST", sc+"data/tables/customer/lock?force=1", nil)
		a.call(t, 200, "POST", sc+"data/tables/customer/lock?force=1", nil) // v3 active, v2 archived, v1 pruned
		a.call(t, 200, "POST", sc+"data/tables/orders/lock", nil)
		a.exec(t, "ALTER TABLE customer ADD COLUMN drift1 INTEGER")

		// The package goes over as the exporter wrote it (numbers such as
		// a default of 0.00 keep their spelling).
		raw := a.c.Do(t, http.MethodPost, "/api/v2/system/package?secrets=true", nil)
		if raw.Status != 200 {
			t.Fatalf("export: %d %s", raw.Status, raw.Body)
		}
		pkg := json.RawMessage(raw.Body)
		var doc map[string]any
		raw.JSON(t, &doc)
		sections := doc["system"].(map[string]any)
		contracts, _ := sections["schema_contract"].([]any)
		if len(contracts) != 1 {
			t.Fatalf("schema_contract section: %v", sections["schema_contract"])
		}
		c := contracts[0].(map[string]any)
		if c["service"] != "data" || c["mode"] != "strict" || c["runtime_enforcement"] != "strict" || c["archive_retention_count"].(float64) != 1 ||
			len(c["snapshots"].([]any)) != 3 {
			t.Fatalf("exported contract: %v", c)
		}
		man := a.call(t, 200, "GET", "system/package", nil)
		if s, _ := json.Marshal(man); !strings.Contains(string(s), `"schema_contract":["data"]`) {
			t.Errorf("manifest: %s", s)
		}

		in := proxytest.Start(t, dbtest.Fresh(t, sys.Kind), fresh)
		b := &contractEnv{kind: sys.Kind, in: in, c: in.Admin(t), db: a.db}
		r := b.call(t, 201, "POST", "system/package", pkg)
		if log, _ := json.Marshal(r["log"]); !strings.Contains(string(log), "schema contract of data.customer: 2 snapshot(s) imported") {
			t.Errorf("import log: %s", log)
		}

		same := func(what, path string, method string, status int, body any) {
			t.Helper()
			x := withoutIDs(a.call(t, status, method, path, body))
			y := withoutIDs(b.call(t, status, method, path, body))
			if d := cmp.Diff(x, y); d != "" {
				t.Errorf("%s differs after the import (-exporter +importer):\n%s", what, d)
			}
		}
		check := func() {
			t.Helper()
			same("service status", sc+"data", "GET", 200, nil)
			same("service diff", sc+"data/diff?include=candidate", "GET", 200, nil)
			same("table diff", sc+"data/tables/customer/diff", "GET", 200, nil)
			same("history", sc+"data/tables/customer/snapshots", "GET", 200, nil)
			same("archived version", sc+"data/tables/customer/snapshots/2", "GET", 200, nil)
			same("orders contract", sc+"data/tables/orders/snapshot", "GET", 200, nil)
			same("tables", sc+"data/tables", "GET", 200, nil)
			// strict enforcement: the drifted table refuses writes, the
			// other does not.
			same("strict refusal", "data/_table/customer", "POST", 400, map[string]any{"resource": []any{map[string]any{"name": "Di"}}})
			b.call(t, 200, "PATCH", "data/_table/orders/1", map[string]any{"total": 11})
		}
		check()
		if d := b.call(t, 200, "GET", sc+"data/tables/customer/diff", nil); !strings.Contains(strings.Join(kinds(d), "|"), "customer.drift1") {
			t.Errorf("the drift made in the database is not seen after the import: %v", d)
		}

		// Importing again changes nothing.
		r = b.call(t, 200, "POST", "system/package", pkg)
		if log, _ := json.Marshal(r["log"]); !strings.Contains(string(log), "schema contract of data.customer: already present; skipped") {
			t.Errorf("re-import log: %s", log)
		}
		check()
		again := b.call(t, 200, "POST", "system/package?secrets=true", nil)["system"].(map[string]any)["schema_contract"]
		if d := cmp.Diff(sections["schema_contract"], again); d != "" {
			t.Errorf("export after the import differs (-first +second):\n%s", d)
		}

		// shape_response on both: the field outside the contract is dropped.
		for _, e := range []*contractEnv{a, b} {
			e.call(t, 200, "PATCH", sc+"data", map[string]any{"runtime_enforcement": "shape_response"})
			for _, rec := range records(t, e.call(t, 200, "GET", "data/_table/customer", nil)) {
				if hasKey(rec, "drift1") {
					t.Errorf("shape_response kept drift1: %v", rec)
				}
			}
		}

		// A package whose contract is not valid fails the whole import.
		bad := map[string]any{"system": map[string]any{
			"lookup":          []any{map[string]any{"name": "never", "value": "x"}},
			"schema_contract": []any{map[string]any{"service": "data", "mode": "lax"}}}}
		if m := errMessage(b.call(t, 400, "POST", "system/package", bad)); !strings.Contains(m, "Invalid mode 'lax'") {
			t.Errorf("bad contract: %q", m)
		}
		if r := b.c.Do(t, http.MethodGet, "/api/v2/system/lookup?filter=name%3D'never'", nil); strings.Contains(string(r.Body), "never") {
			t.Errorf("a failed import left a record: %s", r.Body)
		}
	})
}
