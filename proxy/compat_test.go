package proxy_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/handlers/apikey"
	"github.com/portcullis-dev/portcullis/handlers/rbac"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// compatSetup is an instance with a data service "shop" on the system
// database's engine (table book), a role "members" (every verb on shop's
// tables) that open registration gives, and an app "web" whose default
// role is "readers" (GET on shop).
type compatSetup struct {
	in      *proxytest.Instance
	admin   *proxytest.Client
	webKey  string
	members int64
}

func startCompat(t *testing.T, sys dialects.Config, compat string) *compatSetup {
	t.Helper()
	// No polling to speak of: every change below must be in force on the
	// next request because the instance that made it reloaded at once
	// (read-your-writes), not because a poll came by.
	in := proxytest.Start(t, sys, func(c *proxy.Config) { c.Compat = compat; c.ReloadInterval = time.Hour })
	admin := in.Admin(t)
	must := func(what string, r *proxytest.Response) map[string]any {
		t.Helper()
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("%s: %d %s", what, r.Status, r.Body)
		}
		return r.Map(t)
	}
	first := func(m map[string]any) map[string]any {
		return m["resource"].([]any)[0].(map[string]any)
	}
	svc := first(must("create shop", admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "shop", "label": "Shop", "type": string(sys.Kind), "config": map[string]any{"dsn": serviceDSN(sys)}}}})))
	must("create book", admin.Do(t, "POST", "/api/v2/shop/_schema", map[string]any{"resource": []any{map[string]any{
		"name": "book", "field": []any{map[string]any{"name": "id", "type": "id"}, map[string]any{"name": "title", "type": "string"}}}}}))
	must("insert book", admin.Do(t, "POST", "/api/v2/shop/_table/book", map[string]any{"resource": []any{map[string]any{"title": "Dune"}}}))
	members := first(must("create members", admin.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{
		"name": "members", "is_active": true, "role_service_access_by_role_id": []any{
			map[string]any{"service_id": svc["id"], "component": "_table/*", "verb_mask": 31, "requestor_mask": 1}}}}})))
	readers := first(must("create readers", admin.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{
		"name": "readers", "is_active": true, "role_service_access_by_role_id": []any{
			map[string]any{"service_id": svc["id"], "component": "*", "verb_mask": 1, "requestor_mask": 1},
			map[string]any{"service_id": nil, "component": "*", "verb_mask": 1, "requestor_mask": 1}}}}})))
	web := first(must("create web", admin.Do(t, "POST", "/api/v2/system/app", map[string]any{"resource": []any{map[string]any{
		"name": "web", "is_active": true, "role_id": readers["id"]}}})))
	user := must("user service", admin.Do(t, "GET", "/api/v2/system/service?filter=name%3Duser&fields=id", nil))
	uid := user["resource"].([]any)[0].(map[string]any)["id"]
	must("open registration", admin.Do(t, "PATCH", "/api/v2/system/service/"+jsonNum(uid), map[string]any{
		"config": map[string]any{"allow_open_registration": true, "open_reg_role_id": members["id"]}}))
	return &compatSetup{in: in, admin: admin, webKey: web["api_key"].(string), members: int64(members["id"].(float64))}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// serviceNames is the names of a GET /api/v2 answer.
func serviceNames(t *testing.T, r *proxytest.Response) []string {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("GET /api/v2 = %d %s", r.Status, r.Body)
	}
	var out struct {
		Services []struct {
			Name  string `json:"name"`
			Label string `json:"label"`
			Type  string `json:"type"`
		} `json:"services"`
	}
	r.JSON(t, &out)
	if out.Services == nil {
		t.Fatalf("GET /api/v2 has no services list: %s", r.Body)
	}
	names := []string{}
	for _, s := range out.Services {
		names = append(names, s.Name)
	}
	return names
}

// errMessage is the message of an error envelope.
func compatMessage(t *testing.T, r *proxytest.Response) string {
	t.Helper()
	var env struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	r.JSON(t, &env)
	return env.Error.Message
}

func expect(t *testing.T, what string, r *proxytest.Response, status int, msg string) *proxytest.Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: %d %s, want %d", what, r.Status, r.Body, status)
	}
	if msg != "" && !strings.Contains(compatMessage(t, r), msg) {
		t.Fatalf("%s: message %q lacks %q", what, compatMessage(t, r), msg)
	}
	return r
}

// form posts a form-encoded body with the given headers.
func form(t *testing.T, in *proxytest.Instance, path string, vals url.Values, header http.Header) *proxytest.Response {
	t.Helper()
	c := &proxytest.Client{Inst: in, Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}}
	for k, v := range header {
		c.Header[k] = v
	}
	return c.Do(t, http.MethodPost, path, vals.Encode())
}

func token(t *testing.T, r *proxytest.Response) string {
	t.Helper()
	tok, _ := r.Map(t)["session_token"].(string)
	if tok == "" {
		t.Fatalf("no session_token in %s", r.Body)
	}
	return tok
}

// TestCompatBothModes checks what is the same with and without
// --compat dreamfactory: GET /api/v2 with a key lists what the caller's
// role reaches, and a key whose app has no role, without a session, is a
// 401 asking for a session token.
func TestCompatBothModes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"", proxy.CompatDreamFactory} {
		t.Run("mode="+mode, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
				s := startCompat(t, sys, mode)
				in := s.in
				web := &proxytest.Client{Inst: in, APIKey: s.webKey}

				// The admin app has no role: with its key alone nothing is reached.
				if got := serviceNames(t, in.API().Do(t, "GET", "/api/v2", nil)); len(got) != 0 {
					t.Errorf("admin key alone lists %v", got)
				}
				// A role: the services it grants a verb on; an entry for
				// all services never reaches system.
				got := serviceNames(t, web.Do(t, "GET", "/api/v2/", nil))
				if !slices.Contains(got, "shop") || !slices.Contains(got, "db") || slices.Contains(got, "system") {
					t.Errorf("readers list %v", got)
				}
				// An administrator: every active service.
				got = serviceNames(t, s.admin.Do(t, "GET", "/api/v2", nil))
				for _, want := range []string{"system", "user", "shop", "api_docs", "db"} {
					if !slices.Contains(got, want) {
						t.Errorf("admin list %v lacks %s", got, want)
					}
				}
				// A bad key is a 401 here too.
				expect(t, "unknown key", (&proxytest.Client{Inst: in, APIKey: strings.Repeat("0", 64)}).Do(t, "GET", "/api/v2", nil), 401, "")

				// Point 2: key of a role-less app, no session → 401 asking for one.
				for _, path := range []string{"/api/v2/shop/_table/book", "/api/v2/system/app", "/api/v2/system/admin/profile"} {
					expect(t, "role-less key on "+path, in.API().Do(t, "GET", path, nil), 401, rbac.MsgNoSession)
				}
				// A signed-in user without a role is refused (403), not asked to sign in.
				expect(t, "readers on a write", web.Do(t, "POST", "/api/v2/shop/_table/book", map[string]any{"title": "x"}), 403, "")
			})
		})
	}
}

// TestCompatSpecMode checks that without the switch the spec's rules hold:
// every call needs the key.
func TestCompatSpecMode(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		s := startCompat(t, sys, "")
		in := s.in
		none := &proxytest.Client{Inst: in}
		login := map[string]any{"email": proxytest.AdminEmail, "password": proxytest.AdminPassword}
		expect(t, "admin login without key", none.Do(t, "POST", "/api/v2/system/admin/session", login), 401, apikey.MsgNoCredentials)
		expect(t, "user login without key", none.Do(t, "POST", "/api/v2/user/session", login), 401, apikey.MsgNoCredentials)
		expect(t, "register without key", none.Do(t, "POST", "/api/v2/user/register", map[string]any{"email": "a@example.com", "password": "password-1"}), 401, apikey.MsgNoCredentials)
		expect(t, "reset without key", none.Do(t, "POST", "/api/v2/user/password?reset=true", map[string]any{"email": proxytest.AdminEmail}), 401, "")
		expect(t, "listing without credentials", none.Do(t, "GET", "/api/v2", nil), 401, apikey.MsgNoCredentials)
		tok := s.admin.Session
		expect(t, "token alone", (&proxytest.Client{Inst: in, Session: tok}).Do(t, "GET", "/api/v2/system/app", nil), 401, apikey.MsgNoKey)
		expect(t, "token alone on the listing", (&proxytest.Client{Inst: in, Session: tok}).Do(t, "GET", "/api/v2", nil), 401, apikey.MsgNoKey)
	})
}

// TestCompatDreamFactory checks the switch: keyless login, registration
// and reset, a session token alone on later calls, GET /api/v2 without
// credentials; and that registration is in force on the very next call.
func TestCompatDreamFactory(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		s := startCompat(t, sys, proxy.CompatDreamFactory)
		in := s.in
		none := &proxytest.Client{Inst: in}
		dfTok := func(tok string) *proxytest.Client {
			return &proxytest.Client{Inst: in, Header: http.Header{"X-DreamFactory-Session-Token": {tok}}}
		}

		// GET /api/v2 without credentials: what such a caller reaches (nothing).
		if got := serviceNames(t, none.Do(t, "GET", "/api/v2", nil)); len(got) != 0 {
			t.Errorf("anonymous list %v", got)
		}

		// Admin login, form-encoded, no key; then the token alone.
		admTok := token(t, expect(t, "admin login", form(t, in, "/api/v2/system/admin/session",
			url.Values{"email": {proxytest.AdminEmail}, "password": {proxytest.AdminPassword}}, nil), 200, ""))
		adm := dfTok(admTok)
		expect(t, "system call with the token alone", adm.Do(t, "GET", "/api/v2/system/app", nil), 200, "")
		if got := serviceNames(t, adm.Do(t, "GET", "/api/v2", nil)); !slices.Contains(got, "system") || !slices.Contains(got, "shop") {
			t.Errorf("admin token list %v", got)
		}
		expect(t, "admin session with the token alone", adm.Do(t, "GET", "/api/v2/system/admin/session", nil), 200, "")

		// Still refused: nothing at all, a bad token, a bad key.
		expect(t, "data without credentials", none.Do(t, "GET", "/api/v2/shop/_table/book", nil), 401, apikey.MsgNoCredentials)
		expect(t, "system without credentials", none.Do(t, "GET", "/api/v2/system/app", nil), 401, apikey.MsgNoCredentials)
		expect(t, "bad token alone", dfTok("not.a.token").Do(t, "GET", "/api/v2/system/app", nil), 401, "")
		expect(t, "bad key with a login", (&proxytest.Client{Inst: in, APIKey: strings.Repeat("1", 64)}).Do(t, "POST", "/api/v2/user/session",
			map[string]any{"email": proxytest.AdminEmail, "password": proxytest.AdminPassword}), 401, apikey.MsgUnknownKey)
		expect(t, "keyless profile without a token", none.Do(t, "GET", "/api/v2/user/profile", nil), 401, "")

		// Registration without a key, signed in at once, and the new role
		// in force on the very next request, with the token alone or
		// with any app's key.
		r := expect(t, "register", none.Do(t, "POST", "/api/v2/user/register?login=true",
			map[string]any{"email": "reader@example.com", "password": "reader-password-1", "first_name": "Rea"}), 200, "")
		userTok := token(t, r)
		u := dfTok(userTok)
		if m := expect(t, "user session", u.Do(t, "GET", "/api/v2/user/session", nil), 200, "").Map(t); m["role"] != "members" {
			t.Errorf("registered user's session %v", m)
		}
		expect(t, "registered user reads at once", u.Do(t, "GET", "/api/v2/shop/_table/book", nil), 200, "")
		expect(t, "registered user writes at once", u.Do(t, "POST", "/api/v2/shop/_table/book", map[string]any{"resource": []any{map[string]any{"title": "Emma"}}}), 200, "")
		withKey := &proxytest.Client{Inst: in, APIKey: s.webKey, Session: userTok}
		expect(t, "registered user through the web app", withKey.Do(t, "POST", "/api/v2/shop/_table/book", map[string]any{"resource": []any{map[string]any{"title": "Ulysses"}}}), 200, "")
		expect(t, "registered user is no administrator", u.Do(t, "GET", "/api/v2/system/app", nil), 403, "")
		if got := serviceNames(t, u.Do(t, "GET", "/api/v2", nil)); !slices.Equal(got, []string{"shop"}) {
			t.Errorf("registered user's list %v, want [shop]", got)
		}

		// User login without a key, and the password reset calls.
		expect(t, "user login", none.Do(t, "POST", "/api/v2/user/session",
			map[string]any{"email": "reader@example.com", "password": "reader-password-1"}), 200, "")
		expect(t, "reset request", none.Do(t, "POST", "/api/v2/user/password?reset=true", map[string]any{"email": "reader@example.com"}), 200, "")
		expect(t, "admin reset request", none.Do(t, "POST", "/api/v2/system/admin/password?reset=true", map[string]any{"email": proxytest.AdminEmail}), 200, "")
		// A password change with the token alone ends the old session on the next call.
		expect(t, "password change", u.Do(t, "POST", "/api/v2/user/password",
			map[string]any{"old_password": "reader-password-1", "new_password": "reader-password-2"}), 200, "")
		expect(t, "old token after the change", u.Do(t, "GET", "/api/v2/shop/_table/book", nil), 401, "")
	})
}
