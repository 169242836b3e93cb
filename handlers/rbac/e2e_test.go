package rbac_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// world is one engine's instance with a data service on a fresh database
// of the same engine, roles, an app and users, all made through the
// system API.
type world struct {
	in       *proxytest.Instance
	admin    *proxytest.Client
	key      string // the crm app's key; its default role is "readers"
	appID    int64
	agents   int64 // role of ann for the crm app
	readers  int64 // the app's default role
	noteID   int64 // agents' entry for _table/note/*
	ann, ben int64 // user ids
	annC     *proxytest.Client
	benC     *proxytest.Client
	keyC     *proxytest.Client // API key alone
	contacts map[string]int64  // contact name → id
}

func decode(t *testing.T, r *proxytest.Response, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// must sends a request and fails unless it answers want.
func must(t *testing.T, c *proxytest.Client, want int, method, path string, body any) *proxytest.Response {
	t.Helper()
	r := c.Do(t, method, path, body)
	if r.Status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// create posts one system record and returns it whole.
func create(t *testing.T, c *proxytest.Client, resource string, rec map[string]any) map[string]any {
	t.Helper()
	sep := "?"
	if strings.Contains(resource, "?") {
		sep = "&"
	}
	r := must(t, c, http.StatusCreated, "POST", "/api/v2/system/"+resource+sep+"fields=*", map[string]any{"resource": []any{rec}})
	var out struct {
		Resource []map[string]any `json:"resource"`
	}
	decode(t, r, &out)
	if len(out.Resource) != 1 {
		t.Fatalf("create %s: %s", resource, r.Body)
	}
	return out.Resource[0]
}

func idOf(t *testing.T, m map[string]any) int64 {
	t.Helper()
	id, ok := m["id"].(float64)
	if !ok || id <= 0 {
		t.Fatalf("no id in %v", m)
	}
	return int64(id)
}

// serviceID returns the id of a service by name.
func serviceID(t *testing.T, c *proxytest.Client, name string) int64 {
	t.Helper()
	r := must(t, c, 200, "GET", "/api/v2/system/service?filter="+url.QueryEscape("name = '"+name+"'"), nil)
	var out struct {
		Resource []map[string]any `json:"resource"`
	}
	decode(t, r, &out)
	if len(out.Resource) != 1 {
		t.Fatalf("service %s: %s", name, r.Body)
	}
	return idOf(t, out.Resource[0])
}

// dataTables creates the data tables on a fresh database of sys's engine
// and returns the service configuration pointing at it.
func dataTables(t *testing.T, kind dialects.Kind) map[string]any {
	t.Helper()
	cfg := dbtest.Fresh(t, kind)
	db := dbtest.Open(t, cfg)
	autoinc := map[dialects.Kind]string{
		dialects.SQLite:   "INTEGER PRIMARY KEY AUTOINCREMENT",
		dialects.Postgres: "SERIAL PRIMARY KEY",
		dialects.MySQL:    "INT AUTO_INCREMENT PRIMARY KEY",
	}[kind]
	engine := ""
	if kind == dialects.MySQL {
		engine = " ENGINE=InnoDB"
	}
	for _, s := range []string{
		`CREATE TABLE contact (id ` + autoinc + `, name VARCHAR(64) NOT NULL, email VARCHAR(128), phone VARCHAR(32), owner_id INTEGER)` + engine,
		`CREATE TABLE note (id ` + autoinc + `, contact_id INTEGER NOT NULL, body VARCHAR(200), secret VARCHAR(64),
			FOREIGN KEY (contact_id) REFERENCES contact(id))` + engine,
		`CREATE TABLE audit (id ` + autoinc + `, msg VARCHAR(200))` + engine,
	} {
		if _, err := db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if kind == dialects.SQLite {
		return map[string]any{"database": cfg.Database}
	}
	return map[string]any{"dsn": cfg.URL()}
}

func newWorld(t *testing.T, sys dialects.Config) *world {
	t.Helper()
	w := &world{in: proxytest.Start(t, sys, nil), contacts: map[string]int64{}}
	w.admin = w.in.Admin(t)
	a := w.admin

	data := idOf(t, create(t, a, "service", map[string]any{"name": "data", "label": "Data", "type": string(sys.Kind), "config": dataTables(t, sys.Kind)}))
	// A second data service no role reaches.
	create(t, a, "service", map[string]any{"name": "hidden", "label": "Hidden", "type": string(sys.Kind), "config": dataTables(t, sys.Kind)})
	docs := serviceID(t, a, "api_docs")

	const api, script = policy.RequestorAPI, policy.RequestorScript
	agents := create(t, a, "role?related=role_service_access_by_role_id", map[string]any{
		"name": "agents", "is_active": true,
		"role_service_access_by_role_id": []any{
			map[string]any{"service_id": data, "component": "_table/contact/*", "verb_mask": policy.VerbAll, "requestor_mask": api,
				"filters":   []any{map[string]any{"name": "owner_id", "operator": "=", "value": "{user.id}"}},
				"filter_op": "AND",
				"fields":    []string{"id", "name", "email", "owner_id", "note_by_contact_id", "contact_id", "body"}},
			map[string]any{"service_id": data, "component": "_table/note/*", "verb_mask": policy.VerbGet, "requestor_mask": api},
			map[string]any{"service_id": data, "component": "_table/audit", "verb_mask": policy.VerbPost, "requestor_mask": script},
			map[string]any{"service_id": docs, "component": "*", "verb_mask": policy.VerbGet, "requestor_mask": api},
		},
	})
	w.agents = idOf(t, agents)
	for _, e := range agents["role_service_access_by_role_id"].([]any) {
		if m := e.(map[string]any); m["component"] == "_table/note/*" {
			w.noteID = idOf(t, m)
		}
	}
	if w.noteID == 0 {
		t.Fatalf("no note entry in %v", agents)
	}
	w.readers = idOf(t, create(t, a, "role", map[string]any{
		"name": "readers", "is_active": true,
		"role_service_access_by_role_id": []any{
			map[string]any{"service_id": data, "component": "_table/note", "verb_mask": policy.VerbGet, "requestor_mask": api},
		},
	}))
	app := create(t, a, "app", map[string]any{"name": "crm", "is_active": true, "role_id": w.readers})
	w.appID, w.key = idOf(t, app), app["api_key"].(string)
	w.ann = idOf(t, create(t, a, "user", map[string]any{"name": "Ann", "email": "ann@example.com", "password": "ann-password-1", "is_active": true,
		"user_to_app_to_role_by_user_id": []any{map[string]any{"app_id": w.appID, "role_id": w.agents}}}))
	w.ben = idOf(t, create(t, a, "user", map[string]any{"name": "Ben", "email": "ben@example.com", "password": "ben-password-1", "is_active": true}))

	signIn := func(email, password string) *proxytest.Client {
		c := &proxytest.Client{Inst: w.in, APIKey: w.key}
		r := must(t, c, 200, "POST", "/api/v2/user/session", map[string]string{"email": email, "password": password})
		c.Session, _ = r.Map(t)["session_token"].(string)
		return c
	}
	w.annC, w.benC = signIn("ann@example.com", "ann-password-1"), signIn("ben@example.com", "ben-password-1")
	w.keyC = &proxytest.Client{Inst: w.in, APIKey: w.key}

	// Rows, written by the administrator (no grant).
	for _, c := range []struct {
		name  string
		owner int64
	}{{"Ann One", w.ann}, {"Ann Two", w.ann}, {"Ben One", w.ben}} {
		r := must(t, a, 200, "POST", "/api/v2/data/_table/contact", map[string]any{"resource": []any{
			map[string]any{"name": c.name, "email": strings.ToLower(strings.ReplaceAll(c.name, " ", ".")) + "@example.com", "phone": "555-0100", "owner_id": c.owner}}})
		var out struct {
			Resource []map[string]any `json:"resource"`
		}
		decode(t, r, &out)
		w.contacts[c.name] = idOf(t, out.Resource[0])
	}
	must(t, a, 200, "POST", "/api/v2/data/_table/note", map[string]any{"resource": []any{
		map[string]any{"contact_id": w.contacts["Ann One"], "body": "called", "secret": "s1"},
		map[string]any{"contact_id": w.contacts["Ben One"], "body": "mailed", "secret": "s2"},
	}})
	return w
}

// one wraps a record for a table POST.
func one(rec map[string]any) map[string]any { return map[string]any{"resource": []any{rec}} }

type resources struct {
	Resource []map[string]any `json:"resource"`
}

func names(t *testing.T, r *proxytest.Response) []string {
	t.Helper()
	var out resources
	decode(t, r, &out)
	var ns []string
	for _, m := range out.Resource {
		ns = append(ns, fmt.Sprint(m["name"]))
	}
	return ns
}

func errMessage(t *testing.T, r *proxytest.Response) string {
	t.Helper()
	var env struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	decode(t, r, &env)
	return env.Error.Message
}

// TestEndToEnd runs a non-admin app and signed-in users against a data
// service through whole instances, with the system and the data database
// on each engine.
func TestEndToEnd(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		w := newWorld(t, sys)
		id := func(name string) string { return fmt.Sprint(w.contacts[name]) }

		t.Run("allowed and refused calls", func(t *testing.T) {
			for _, s := range []struct {
				name         string
				c            *proxytest.Client
				method, path string
				body         any
				status       int
				msg          string
			}{
				{"key alone: default role reads notes", w.keyC, "GET", "/api/v2/data/_table/note", nil, 200, ""},
				{"key alone: default role has no contacts", w.keyC, "GET", "/api/v2/data/_table/contact", nil, 403,
					"Access Forbidden. GET access to component '_table/contact' of service 'data' is not allowed by this user's role."},
				{"key alone: no deletes", w.keyC, "DELETE", "/api/v2/data/_table/note/1", nil, 403,
					"DELETE access to component '_table/note/1' of service 'data'"},
				{"ben has the app's default role", w.benC, "GET", "/api/v2/data/_table/contact", nil, 403, "'_table/contact'"},
				{"ben reads notes", w.benC, "GET", "/api/v2/data/_table/note", nil, 200, ""},
				{"ann's role reads contacts", w.annC, "GET", "/api/v2/data/_table/contact", nil, 200, ""},
				{"ann's role does not reach another service", w.annC, "GET", "/api/v2/hidden/_table/contact", nil, 403,
					"GET access to component '_table/contact' of service 'hidden'"},
				{"ann cannot list hidden's schema", w.annC, "GET", "/api/v2/hidden/_schema", nil, 403, "'_schema'"},
				{"ann lists data's schema (GET somewhere in data)", w.annC, "GET", "/api/v2/data/_schema", nil, 200, ""},
				{"no _spec of an unreachable service", w.annC, "GET", "/api/v2/hidden/_spec", nil, 403, "'_spec' of service 'hidden'"},
				{"no api_docs of an unreachable service", w.annC, "GET", "/api/v2/api_docs/hidden", nil, 403, "no access to service 'hidden'"},
				{"ann writes audit only from scripts", w.annC, "POST", "/api/v2/data/_table/audit", one(map[string]any{"msg": "x"}), 403,
					"POST access to component '_table/audit'"},
				{"ann is no administrator", w.annC, "GET", "/api/v2/system/user", nil, 403, "'user' of service 'system'"},
				{"the environment is an exception", w.keyC, "GET", "/api/v2/system/environment", nil, 200, ""},
				{"the profile is an exception", w.benC, "GET", "/api/v2/user/profile", nil, 200, ""},
				{"the profile without a session", w.keyC, "GET", "/api/v2/user/profile", nil, 401, ""},
				{"administrators are unrestricted", w.admin, "GET", "/api/v2/hidden/_table/contact", nil, 200, ""},
			} {
				t.Run(s.name, func(t *testing.T) {
					r := must(t, s.c, s.status, s.method, s.path, s.body)
					if s.msg != "" && !strings.Contains(errMessage(t, r), s.msg) {
						t.Fatalf("message %q does not contain %q", errMessage(t, r), s.msg)
					}
				})
			}
		})

		t.Run("row filter with user.id on reads", func(t *testing.T) {
			got := names(t, must(t, w.annC, 200, "GET", "/api/v2/data/_table/contact?order=id", nil))
			if diff := cmp.Diff([]string{"Ann One", "Ann Two"}, got); diff != "" {
				t.Fatalf("ann's contacts (-want +got):\n%s", diff)
			}
			// A client filter is AND-ed with the role's, never replaces it.
			got = names(t, must(t, w.annC, 200, "GET", "/api/v2/data/_table/contact?filter="+url.QueryEscape("(name like 'Ben%') or (owner_id > 0)"), nil))
			if diff := cmp.Diff([]string{"Ann One", "Ann Two"}, got); diff != "" {
				t.Fatalf("ann's contacts with an OR filter (-want +got):\n%s", diff)
			}
			must(t, w.annC, 404, "GET", "/api/v2/data/_table/contact/"+id("Ben One"), nil)
		})

		t.Run("fields dropped, also in related records", func(t *testing.T) {
			r := must(t, w.annC, 200, "GET", "/api/v2/data/_table/contact/"+id("Ann One")+"?related=note_by_contact_id", nil)
			var got map[string]any
			decode(t, r, &got)
			want := map[string]any{
				"id": float64(w.contacts["Ann One"]), "name": "Ann One", "email": "ann.one@example.com", "owner_id": float64(w.ann),
				"note_by_contact_id": []any{map[string]any{"id": got["note_by_contact_id"].([]any)[0].(map[string]any)["id"],
					"contact_id": float64(w.contacts["Ann One"]), "body": "called"}},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("contact (-want +got):\n%s", diff)
			}
			// The administrator still sees everything.
			r = must(t, w.admin, 200, "GET", "/api/v2/data/_table/contact/"+id("Ann One"), nil)
			if !strings.Contains(string(r.Body), `"phone":"555-0100"`) {
				t.Fatalf("admin read %s", r.Body)
			}
		})

		t.Run("writes: fields and row filters checked", func(t *testing.T) {
			r := must(t, w.annC, 403, "POST", "/api/v2/data/_table/contact", one(map[string]any{"name": "Sneaky", "phone": "1", "owner_id": w.ann}))
			if !strings.Contains(errMessage(t, r), "'phone'") {
				t.Fatalf("message %q does not name the field", errMessage(t, r))
			}
			must(t, w.annC, 403, "POST", "/api/v2/data/_table/contact", one(map[string]any{"name": "For Ben", "owner_id": w.ben}))
			r = must(t, w.annC, 200, "POST", "/api/v2/data/_table/contact?fields=*", one(map[string]any{"name": "Ann Three", "owner_id": w.ann}))
			var made resources
			decode(t, r, &made)
			if len(made.Resource) != 1 || made.Resource[0]["phone"] != nil {
				t.Fatalf("created %s", r.Body)
			}
			// Ben's row can be neither changed nor deleted (for ann it does
			// not exist), and is still there.
			must(t, w.annC, 404, "PATCH", "/api/v2/data/_table/contact/"+id("Ben One"), map[string]any{"name": "Taken"})
			must(t, w.annC, 404, "DELETE", "/api/v2/data/_table/contact/"+id("Ben One"), nil)
			// Nor handed over to him.
			must(t, w.annC, 403, "PATCH", "/api/v2/data/_table/contact/"+id("Ann Two"), map[string]any{"owner_id": w.ben})
			must(t, w.annC, 200, "DELETE", "/api/v2/data/_table/contact?filter="+url.QueryEscape("name = 'Ben One' or name = 'Ann Three'"), nil)
			r = must(t, w.admin, 200, "GET", "/api/v2/data/_table/contact?order=id&fields=name,owner_id", nil)
			var rows resources
			decode(t, r, &rows)
			want := []map[string]any{
				{"name": "Ann One", "owner_id": float64(w.ann)}, {"name": "Ann Two", "owner_id": float64(w.ann)}, {"name": "Ben One", "owner_id": float64(w.ben)},
			}
			if diff := cmp.Diff(want, rows.Resource); diff != "" {
				t.Fatalf("rows after ann's writes (-want +got):\n%s", diff)
			}
		})

		t.Run("script requestor bit", func(t *testing.T) {
			// An event script's inner call: the pipeline with a script
			// identity in the context, as platform.api makes it.
			call := func(requestor caller.Requestor, method, path, body string) *httptest.ResponseRecorder {
				req := httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				id := &caller.Identity{AppID: w.appID, AppName: "crm", RoleID: w.agents, RoleName: "agents",
					UserID: w.ann, UserEmail: "ann@example.com", UserName: "Ann", Requestor: requestor}
				req = req.WithContext(caller.WithIdentity(req.Context(), id))
				rec := httptest.NewRecorder()
				w.in.Proxy.Handler().ServeHTTP(rec, req)
				return rec
			}
			if rec := call(caller.Script, "POST", "/api/v2/data/_table/audit", `{"resource":[{"msg":"from a script"}]}`); rec.Code != 200 {
				t.Fatalf("script POST audit = %d %s", rec.Code, rec.Body)
			}
			// The API-only contact entry does not serve scripts.
			if rec := call(caller.Script, "GET", "/api/v2/data/_table/contact", ""); rec.Code != 403 {
				t.Fatalf("script GET contact = %d %s", rec.Code, rec.Body)
			}
			r := must(t, w.admin, 200, "GET", "/api/v2/data/_table/audit", nil)
			if !strings.Contains(string(r.Body), "from a script") {
				t.Fatalf("audit %s", r.Body)
			}
		})

		t.Run("inactive default role", func(t *testing.T) {
			must(t, w.admin, 200, "PATCH", fmt.Sprintf("/api/v2/system/role/%d", w.readers), map[string]any{"is_active": false})
			r := must(t, w.keyC, 403, "GET", "/api/v2/data/_table/note", nil)
			if errMessage(t, r) != policy.MsgRoleInactive {
				t.Fatalf("message %q", errMessage(t, r))
			}
			must(t, w.admin, 200, "PATCH", fmt.Sprintf("/api/v2/system/role/%d", w.readers), map[string]any{"is_active": true})
			must(t, w.keyC, 200, "GET", "/api/v2/data/_table/note", nil)
		})

		t.Run("a change reaches a second instance within a second", func(t *testing.T) {
			other := proxytest.Start(t, sys, nil)
			annB := &proxytest.Client{Inst: other, APIKey: w.key, Session: w.annC.Session}
			must(t, annB, 200, "GET", "/api/v2/data/_table/note", nil)
			must(t, annB, 403, "POST", "/api/v2/data/_table/audit", one(map[string]any{"msg": "api"}))

			// Remove the note entry and add an API entry for audit.
			must(t, w.admin, 200, "PATCH", fmt.Sprintf("/api/v2/system/role/%d", w.agents), map[string]any{
				"role_service_access_by_role_id": []any{
					map[string]any{"id": w.noteID, "role_id": nil},
					map[string]any{"service_id": serviceID(t, w.admin, "data"), "component": "_table/audit", "verb_mask": policy.VerbPost, "requestor_mask": policy.RequestorAPI},
				}})
			changed := time.Now()
			// The writer's own instance applies it at once.
			must(t, w.annC, 403, "GET", "/api/v2/data/_table/note", nil)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				note := annB.Do(t, "GET", "/api/v2/data/_table/note", nil).Status
				audit := annB.Do(t, "POST", "/api/v2/data/_table/audit", one(map[string]any{"msg": "api"})).Status
				if note == 403 && audit == 200 {
					t.Logf("second instance applied the change after %v", time.Since(changed).Round(time.Millisecond))
					break
				}
				if time.Since(changed) > time.Second {
					t.Fatalf("one second after the change the second instance answers GET note %d, POST audit %d", note, audit)
				}
				<-tick.C
			}
		})
	})
}
