package rbac_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/handlers/rbac"
	"github.com/portcullis-dev/portcullis/policy"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// Roles of the table tests.
const (
	roleStaff    = 1
	roleInactive = 2
	roleAll      = 3
	roleDocs     = 4
)

var services = map[string]*store.Service{
	"db":       {ID: 1, Name: "db", Type: "sqlite"},
	"system":   {ID: 2, Name: "system", Type: "system"},
	"user":     {ID: 3, Name: "user", Type: "user"},
	"api_docs": {ID: 4, Name: "api_docs", Type: "swagger"},
	"crm":      {ID: 5, Name: "crm", Type: "pgsql"},
	"hooks":    {ID: 6, Name: "hooks", Type: "rws"},
	"docsonly": {ID: 9, Name: "docsonly", Type: "sqlite"},
	"other":    {ID: 7, Name: "other", Type: "mysql"},
	"login":    {ID: 8, Name: "login", Type: "user"}, // a second user service, named otherwise
}

func testRoles() []policy.Role {
	const api, script, both = policy.RequestorAPI, policy.RequestorScript, policy.RequestorBoth
	return []policy.Role{
		{ID: roleStaff, Name: "staff", Active: true, Accesses: []policy.Access{
			{Service: "db", Component: "*", VerbMask: policy.VerbGet, RequestorMask: both},
			{Service: "db", Component: "_table/contact/*", VerbMask: policy.VerbGet | policy.VerbPatch, RequestorMask: api,
				Filters: []caller.Filter{{Name: "owner_id", Operator: "=", Value: "{user.id}"}},
				Fields:  []string{"id", "name"}},
			{Service: "db", Component: "_table/region/*", VerbMask: policy.VerbGet, RequestorMask: api,
				Filters: []caller.Filter{{Name: "region", Operator: "=", Value: "{region}"}, {Name: "app", Operator: "=", Value: "{app.id}"}}},
			{Service: "db", Component: "_table/plain", VerbMask: policy.VerbGet, RequestorMask: api,
				Filters: []caller.Filter{{Name: "active", Operator: "=", Value: "1"}}},
			{Service: "db", Component: "_table/secret", VerbMask: 0, RequestorMask: both},
			{Service: "db", Component: "_table/log", VerbMask: policy.VerbPost, RequestorMask: script},
			{Service: "system", Component: "user/*", VerbMask: policy.VerbGet | policy.VerbPost, RequestorMask: api},
			{Service: "crm", Component: "_table/deal", VerbMask: policy.VerbGet, RequestorMask: api},
			{Service: "hooks", Component: "*", VerbMask: policy.VerbPost, RequestorMask: api},
			{Service: "docsonly", Component: "_spec", VerbMask: policy.VerbGet, RequestorMask: api},
			{Service: "api_docs", Component: "*", VerbMask: policy.VerbGet, RequestorMask: api},
		}},
		{ID: roleInactive, Name: "retired", Active: false, Accesses: []policy.Access{
			{Service: "db", Component: "*", VerbMask: policy.VerbAll, RequestorMask: both},
		}},
		{ID: roleAll, Name: "everything", Active: true, Accesses: []policy.Access{
			{Component: "*", VerbMask: policy.VerbAll, RequestorMask: both},
		}},
		{ID: roleDocs, Name: "docs only", Active: true, Accesses: []policy.Access{
			{Service: "api_docs", Component: "*", VerbMask: policy.VerbGet, RequestorMask: api},
		}},
	}
}

// seen is what the next handler observed.
type seen struct {
	called  bool
	grant   *caller.Grant
	granted bool
}

func newStage(t testing.TB, lookups func(*caller.Identity) map[string]string) func(http.Handler) http.Handler {
	t.Helper()
	src, err := rbac.Static(testRoles())
	if err != nil {
		t.Fatal(err)
	}
	st, err := rbac.New(rbac.Options{Policy: src, Lookups: lookups})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// run sends verb on svc/resource through stage as id and returns the
// response and what the backend saw. prior, when set, is a grant an
// enclosing call left in the context.
func run(t *testing.T, stage func(http.Handler) http.Handler, id *caller.Identity, svc, resource, verb string, prior *caller.Grant) (*httptest.ResponseRecorder, seen) {
	t.Helper()
	var s seen
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.called = true
		s.grant = caller.GrantFrom(r.Context())
		s.granted = caller.RoleGranted(r.Context())
		w.WriteHeader(http.StatusNoContent)
	}))
	req := httptest.NewRequestWithContext(t.Context(), verb, "/api/v2/"+svc+"/"+resource, nil)
	ctx := req.Context()
	if svc != "" {
		ctx = service.WithTarget(ctx, &service.Target{Service: services[svc], Resource: resource, Verb: verb})
	}
	if id != nil {
		ctx = caller.WithIdentity(ctx, id)
	}
	if prior != nil {
		ctx = caller.WithRoleGranted(caller.WithGrant(ctx, prior), true)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.WithContext(ctx))
	return rec, s
}

func message(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var env struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatalf("not an error envelope: %s", rec.Body)
	}
	if env.Error.Code != rec.Code {
		t.Fatalf("envelope code %d, status %d", env.Error.Code, rec.Code)
	}
	return env.Error.Message
}

func TestDecisions(t *testing.T) {
	keyOnly := func(role int64) *caller.Identity {
		return &caller.Identity{AppID: 10, AppName: "web", RoleID: role, Requestor: caller.API}
	}
	user := func(role int64) *caller.Identity {
		return &caller.Identity{AppID: 10, AppName: "web", RoleID: role, UserID: 42, UserEmail: "ann@example.com", UserName: "Ann", Requestor: caller.API}
	}
	script := func(role int64) *caller.Identity {
		id := user(role)
		id.Requestor = caller.Script
		return id
	}
	admin := &caller.Identity{AppID: 10, UserID: 1, Admin: true, Requestor: caller.API}
	contactGrant := &caller.Grant{Fields: []string{"id", "name"}, FilterOp: "AND",
		Filters: []caller.Filter{{Name: "owner_id", Operator: "=", Value: "42"}}}

	tests := []struct {
		name          string
		id            *caller.Identity
		svc, res, vrb string
		prior         *caller.Grant
		status        int
		grant         *caller.Grant
		granted       bool
		msg           string // substring of the refusal
	}{
		// Administrators and exceptions.
		{name: "admin unrestricted", id: admin, svc: "db", res: "_table/secret", vrb: "DELETE", status: 204},
		{name: "admin loses an inherited grant", id: admin, svc: "db", res: "_table/contact", vrb: "GET", prior: contactGrant, status: 204},
		{name: "admin on system", id: admin, svc: "system", res: "admin", vrb: "POST", status: 204},
		{name: "admin login without role", id: keyOnly(0), svc: "system", res: "admin/session", vrb: "POST", status: 204},
		{name: "admin session info", id: user(0), svc: "system", res: "admin/session", vrb: "GET", status: 204},
		{name: "admin session refresh", id: user(0), svc: "system", res: "admin/session", vrb: "PUT", status: 204},
		{name: "admin logout", id: user(0), svc: "system", res: "admin/session", vrb: "DELETE", status: 204},
		{name: "admin password reset", id: keyOnly(0), svc: "system", res: "admin/password", vrb: "POST", status: 204},
		{name: "admin password GET is no exception", id: keyOnly(0), svc: "system", res: "admin/password", vrb: "GET", status: 401, msg: rbac.MsgNoSession},
		{name: "environment", id: keyOnly(0), svc: "system", res: "environment", vrb: "GET", status: 204},
		{name: "environment write is no exception", id: keyOnly(roleStaff), svc: "system", res: "environment", vrb: "POST", status: 403,
			msg: "POST access to component 'environment' of service 'system'"},
		{name: "admin profile is no exception", id: user(roleStaff), svc: "system", res: "admin/profile", vrb: "GET", status: 403},
		{name: "user login", id: keyOnly(0), svc: "user", res: "session", vrb: "POST", status: 204},
		{name: "user logout", id: user(0), svc: "user", res: "session", vrb: "DELETE", status: 204},
		{name: "user register", id: keyOnly(0), svc: "user", res: "register", vrb: "POST", status: 204},
		{name: "user password", id: keyOnly(0), svc: "user", res: "password", vrb: "POST", status: 204},
		{name: "user profile", id: user(0), svc: "user", res: "profile", vrb: "PATCH", status: 204},
		{name: "user profile DELETE is no exception", id: user(0), svc: "user", res: "profile", vrb: "DELETE", status: 403},
		{name: "exception by type, not name", id: keyOnly(0), svc: "login", res: "session", vrb: "POST", status: 204},
		{name: "exception path must be exact", id: keyOnly(0), svc: "user", res: "Session", vrb: "POST", status: 401},
		{name: "exception clears an inherited grant", id: user(roleStaff), svc: "user", res: "profile", vrb: "GET", prior: contactGrant, status: 204},
		{name: "exceptions need no identity", id: nil, svc: "user", res: "session", vrb: "POST", status: 204},

		// Missing caller, role.
		{name: "no identity", id: nil, svc: "db", res: "_table/contact", vrb: "GET", status: 401, msg: rbac.MsgNoCaller},
		{name: "key without role and session: a session token is needed", id: keyOnly(0), svc: "db", res: "_table/contact", vrb: "GET", status: 401, msg: rbac.MsgNoSession},
		{name: "script without role", id: script(0), svc: "db", res: "_table/contact", vrb: "GET", status: 403, msg: policy.MsgRoleNotFound},
		{name: "user without role", id: user(0), svc: "db", res: "", vrb: "GET", status: 403, msg: policy.MsgRoleNotFound},
		{name: "unknown role", id: user(99), svc: "db", res: "_table/contact", vrb: "GET", status: 403, msg: policy.MsgRoleNotFound},
		{name: "inactive role", id: user(roleInactive), svc: "db", res: "_table/contact", vrb: "GET", status: 403, msg: policy.MsgRoleInactive},

		// Matching and grants.
		{name: "service-wide read", id: keyOnly(roleStaff), svc: "db", res: "_table/other", vrb: "GET", status: 204, granted: true},
		{name: "service-wide has no write", id: keyOnly(roleStaff), svc: "db", res: "_table/other", vrb: "POST", status: 403,
			msg: "Access Forbidden. POST access to component '_table/other' of service 'db' is not allowed by this user's role."},
		{name: "root", id: keyOnly(roleStaff), svc: "db", res: "", vrb: "DELETE", status: 403,
			msg: "Access Forbidden. DELETE access to service 'db' is not allowed by this user's role."},
		{name: "fenced component", id: keyOnly(roleStaff), svc: "db", res: "_table/secret", vrb: "GET", status: 403, msg: "'_table/secret'"},
		{name: "fence not stepped around", id: keyOnly(roleStaff), svc: "db", res: "_table/x/../secret", vrb: "GET", status: 403, msg: "'_table/secret'"},
		{name: "grant with user lookup", id: user(roleStaff), svc: "db", res: "_table/contact/7", vrb: "PATCH", status: 204, granted: true, grant: contactGrant},
		{name: "grant replaces an inherited one", id: user(roleStaff), svc: "db", res: "_table/contact", vrb: "GET",
			prior: &caller.Grant{Fields: []string{"x"}}, status: 204, granted: true, grant: contactGrant},
		{name: "no grant clears an inherited one", id: user(roleStaff), svc: "db", res: "_table/other", vrb: "GET",
			prior: contactGrant, status: 204, granted: true},
		{name: "grant without lookups", id: keyOnly(roleStaff), svc: "db", res: "_table/plain", vrb: "GET", status: 204, granted: true,
			grant: &caller.Grant{FilterOp: "AND", Filters: []caller.Filter{{Name: "active", Operator: "=", Value: "1"}}}},
		{name: "user lookup without a user", id: keyOnly(roleStaff), svc: "db", res: "_table/contact", vrb: "GET", status: 403,
			msg: "record filter for GET access to component '_table/contact' of service 'db' cannot be applied to this caller: filter 0 on \"owner_id\": unknown lookup {user.id}"},
		{name: "named and app lookups", id: user(roleStaff), svc: "db", res: "_table/region", vrb: "GET", status: 204, granted: true,
			grant: &caller.Grant{FilterOp: "AND", Filters: []caller.Filter{{Name: "region", Operator: "=", Value: "emea"}, {Name: "app", Operator: "=", Value: "10"}}}},
		{name: "HEAD where GET is allowed", id: keyOnly(roleStaff), svc: "db", res: "_table/other", vrb: "HEAD", status: 204, granted: true},
		{name: "HEAD under GET's grant", id: user(roleStaff), svc: "db", res: "_table/contact/7", vrb: "HEAD", status: 204, granted: true, grant: contactGrant},
		{name: "HEAD where GET is not", id: keyOnly(roleStaff), svc: "hooks", res: "x", vrb: "HEAD", status: 403,
			msg: "HEAD access to component 'x' of service 'hooks'"},
		{name: "OPTIONS needs its bit", id: keyOnly(roleAll), svc: "db", res: "_table/other", vrb: "OPTIONS", status: 403},

		// Requestors.
		{name: "script bit allows", id: script(roleStaff), svc: "db", res: "_table/log", vrb: "POST", status: 204, granted: true},
		{name: "api bit refused where only scripts may", id: user(roleStaff), svc: "db", res: "_table/log", vrb: "POST", status: 403},
		{name: "script skips API-only entry", id: script(roleStaff), svc: "db", res: "_table/contact", vrb: "PATCH", status: 403},
		{name: "script uses broader entry", id: script(roleStaff), svc: "db", res: "_table/contact", vrb: "GET", status: 204, granted: true},

		// Fallbacks and documents.
		{name: "schema fallback", id: keyOnly(roleStaff), svc: "crm", res: "_schema", vrb: "GET", status: 204, granted: true},
		{name: "schema of a table is no fallback", id: keyOnly(roleStaff), svc: "crm", res: "_schema/deal", vrb: "GET", status: 403},
		{name: "schema fallback needs GET somewhere", id: keyOnly(roleStaff), svc: "hooks", res: "_schema", vrb: "GET", status: 403},
		{name: "schema of an unreachable service", id: keyOnly(roleStaff), svc: "other", res: "_schema", vrb: "GET", status: 403},
		{name: "spec of a reached service without a _spec grant", id: keyOnly(roleStaff), svc: "hooks", res: "_spec", vrb: "GET", status: 403,
			msg: rbac.MsgSpecNotGranted + " GET access to component '_spec' of service 'hooks'"},
		{name: "spec of an unreachable service", id: keyOnly(roleStaff), svc: "other", res: "_spec", vrb: "GET", status: 403,
			msg: "spec endpoint not granted"},
		{name: "spec granted by '*'", id: keyOnly(roleStaff), svc: "db", res: "_spec", vrb: "GET", status: 204, granted: true},
		{name: "spec granted by '_spec'", id: keyOnly(roleStaff), svc: "docsonly", res: "_spec", vrb: "GET", status: 204, granted: true},
		{name: "api_docs of a reached service", id: keyOnly(roleStaff), svc: "api_docs", res: "crm", vrb: "GET", status: 204, granted: true},
		{name: "api_docs of an unreachable service", id: keyOnly(roleStaff), svc: "api_docs", res: "other", vrb: "GET", status: 403,
			msg: "no access to service 'other'"},
		{name: "api_docs list", id: keyOnly(roleDocs), svc: "api_docs", res: "", vrb: "GET", status: 204, granted: true},
		{name: "api_docs through an all-services entry", id: keyOnly(roleAll), svc: "api_docs", res: "db", vrb: "GET", status: 204, granted: true},
		{name: "api_docs of db for a docs-only role", id: keyOnly(roleDocs), svc: "api_docs", res: "db", vrb: "GET", status: 403},

		// System resources.
		{name: "system component granted", id: user(roleStaff), svc: "system", res: "user/5", vrb: "GET", status: 204, granted: true},
		{name: "system component write granted", id: user(roleStaff), svc: "system", res: "user", vrb: "POST", status: 204, granted: true},
		{name: "system component not granted", id: user(roleStaff), svc: "system", res: "app", vrb: "GET", status: 403,
			msg: "GET access to component 'app' of service 'system'"},
		{name: "all-services entry does not reach system", id: user(roleAll), svc: "system", res: "app", vrb: "GET", status: 403,
			msg: "never by an entry for all services"},
		{name: "no _spec fallback on system through all services", id: user(roleAll), svc: "system", res: "_spec", vrb: "GET", status: 403},
		{name: "no _spec fallback on system", id: user(roleStaff), svc: "system", res: "_spec", vrb: "GET", status: 403},
		{name: "all-services entry reaches data", id: user(roleAll), svc: "other", res: "_table/x", vrb: "DELETE", status: 204, granted: true},
	}
	lookups := func(id *caller.Identity) map[string]string {
		return map[string]string{"region": "emea", "user.id": "forged"} // built-ins win
	}
	stage := newStage(t, lookups)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, s := run(t, stage, tc.id, tc.svc, tc.res, tc.vrb, tc.prior)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status != 204 {
				if s.called {
					t.Fatal("a refused request reached the backend")
				}
				if msg := message(t, rec); !strings.Contains(msg, tc.msg) {
					t.Fatalf("message %q does not contain %q", msg, tc.msg)
				}
				return
			}
			if diff := cmp.Diff(tc.grant, s.grant); diff != "" {
				t.Errorf("grant (-want +got):\n%s", diff)
			}
			if s.granted != tc.granted {
				t.Errorf("role granted = %v, want %v", s.granted, tc.granted)
			}
		})
	}
}

func TestNoTarget(t *testing.T) {
	stage := newStage(t, nil)
	rec, s := run(t, stage, &caller.Identity{RoleID: roleStaff}, "", "", "GET", nil)
	if rec.Code != 500 || s.called {
		t.Fatalf("status %d, called %v", rec.Code, s.called)
	}
}

func TestFixedService(t *testing.T) {
	src, err := rbac.Static(testRoles())
	if err != nil {
		t.Fatal(err)
	}
	stage, err := rbac.New(rbac.Options{Policy: src, Target: rbac.FixedService("db", "sqlite")})
	if err != nil {
		t.Fatal(err)
	}
	var got *service.Target
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = service.TargetFrom(r.Context())
	}))
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/_table/other/", 200},
		{"POST", "/_table/other", 403},
		{"GET", "/_table/secret", 403},
	} {
		got = nil
		req := httptest.NewRequest(tc.method, tc.path, nil)
		req = req.WithContext(caller.WithIdentity(req.Context(), &caller.Identity{RoleID: roleStaff, Requestor: caller.API}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Fatalf("%s %s = %d %s", tc.method, tc.path, rec.Code, rec.Body)
		}
		if tc.status == 200 && (got == nil || got.Service.Name != "db" || got.Resource != "_table/other") {
			t.Fatalf("target %+v", got)
		}
	}
}

func TestNilPolicyRefuses(t *testing.T) {
	stage, err := rbac.New(rbac.Options{Policy: func() *policy.Authorizer { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := run(t, stage, &caller.Identity{RoleID: roleStaff}, "db", "_table/x", "GET", nil)
	if rec.Code != 403 || message(t, rec) != policy.MsgRoleNotFound {
		t.Fatalf("nil policy = %d %s", rec.Code, rec.Body)
	}
	rec, _ = run(t, stage, nil, "system", "environment", "GET", nil)
	if rec.Code != 204 {
		t.Fatalf("exception under a nil policy = %d", rec.Code)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := rbac.New(rbac.Options{}); err == nil {
		t.Fatal("New without Policy succeeded")
	}
	if _, err := rbac.Static([]policy.Role{{ID: 1, Accesses: []policy.Access{{Service: "db", Component: "a*b"}}}}); err == nil {
		t.Fatal("Static with an invalid entry succeeded")
	}
}

func TestCustomException(t *testing.T) {
	src, _ := rbac.Static(testRoles())
	stage, err := rbac.New(rbac.Options{Policy: src, Exception: func(t *service.Target) bool {
		return t.Service.Name == "other" && t.Resource == "health"
	}})
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := run(t, stage, &caller.Identity{}, "other", "health", "GET", nil); rec.Code != 204 {
		t.Fatalf("custom exception = %d", rec.Code)
	}
	// The custom list replaces the default one.
	if rec, _ := run(t, stage, &caller.Identity{}, "system", "environment", "GET", nil); rec.Code != 401 {
		t.Fatalf("default exception under a custom list = %d", rec.Code)
	}
}
