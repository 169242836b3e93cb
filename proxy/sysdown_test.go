package proxy_test

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	dbengines "github.com/portcullis-dev/portcullis/dialects/engines"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// Issue 16, faults: with the system database down, the running
// configuration keeps serving (API keys, roles, services) and changes are
// refused cleanly; when it returns, changes resume by themselves.
func TestSystemDatabaseDown(t *testing.T) {
	sys := dbtest.Fresh(t, dialects.Postgres)
	base, err := dialects.ParseDSN(os.Getenv("PORTCULLIS_TEST_PG"))
	if err != nil {
		t.Fatal(err)
	}
	pg, _, err := dbengines.Open(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	setAllowed := func(allow bool) {
		t.Helper()
		q := "ALTER DATABASE " + sys.Database + " ALLOW_CONNECTIONS false"
		if allow {
			q = "ALTER DATABASE " + sys.Database + " ALLOW_CONNECTIONS true"
		}
		if _, err := pg.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		if !allow {
			if _, err := pg.ExecContext(t.Context(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ?", sys.Database); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() { pg.ExecContext(t.Context(), "ALTER DATABASE "+sys.Database+" ALLOW_CONNECTIONS true") })

	in := proxytest.Start(t, sys, nil)
	admin := in.Admin(t)
	must := func(r *proxytest.Response, want int, what string) *proxytest.Response {
		t.Helper()
		if r.Status != want {
			t.Fatalf("%s: %d %s, want %d", what, r.Status, r.Body, want)
		}
		return r
	}
	first := func(r *proxytest.Response) map[string]any {
		return r.Map(t)["resource"].([]any)[0].(map[string]any)
	}
	svc := first(must(admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "notes", "label": "Notes", "type": "sqlite", "config": map[string]any{"database": t.TempDir() + "/notes.db"}}}}), 201, "create service"))
	must(admin.Do(t, "POST", "/api/v2/notes/_schema", map[string]any{"resource": []any{map[string]any{
		"name": "note", "field": []any{map[string]any{"name": "id", "type": "id"}, map[string]any{"name": "body", "type": "string"}}}}}), 200, "create table")
	role := first(must(admin.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{
		"name": "notes", "is_active": true, "role_service_access_by_role_id": []any{
			map[string]any{"service_id": svc["id"], "component": "*", "verb_mask": 31, "requestor_mask": 1}}}}}), 201, "create role"))
	app := first(must(admin.Do(t, "POST", "/api/v2/system/app", map[string]any{"resource": []any{map[string]any{
		"name": "notes", "is_active": true, "role_id": role["id"]}}}), 201, "create app"))
	user := &proxytest.Client{Inst: in, APIKey: app["api_key"].(string)}
	must(user.Do(t, "POST", "/api/v2/notes/_table/note", map[string]any{"resource": []any{map[string]any{"body": "before"}}}), 200, "write before")

	setAllowed(false)
	// Several reload intervals pass with the system database gone.
	end := time.Now().Add(1500 * time.Millisecond)
	for i := 0; time.Now().Before(end); i++ {
		must(user.Do(t, "GET", "/api/v2/notes/_table/note", nil), 200, "read while the system database is down")
		must(user.Do(t, "POST", "/api/v2/notes/_table/note", map[string]any{"resource": []any{map[string]any{"body": "during"}}}), 200, "write while the system database is down")
		time.Sleep(100 * time.Millisecond)
	}
	r := admin.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{"name": "later", "is_active": true}}})
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("a change while the system database is down: %d %s, want 503", r.Status, r.Body)
	}

	setAllowed(true)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := admin.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{"name": "later", "is_active": true}}})
		if r.Status == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("changes did not resume after the system database came back: %d %s", r.Status, r.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	must(user.Do(t, "GET", "/api/v2/notes/_table/note", nil), 200, "read after")
}
