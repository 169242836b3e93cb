package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/handlers/apikey"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/user"
)

const (
	idUserEmail    = "jane@example.com"
	idUserPassword = "jane-password-1"
)

var idDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`)

// idAddUser creates an active non-administrator.
func idAddUser(t *testing.T, in *proxytest.Instance, email, password string) *store.User {
	t.Helper()
	hash, err := store.HashPassword(password)
	if err != nil {
		t.Fatal(err)
	}
	u := &store.User{Name: "Jane Doe", FirstName: "Jane", LastName: "Doe", Email: email, Password: hash, IsActive: true}
	if _, err := in.Store.DB.NewInsert().Model(u).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	return u
}

// idExpect checks a response's status and, when msg is set, that its error
// message contains msg.
func idExpect(t *testing.T, what string, r *proxytest.Response, status int, msg string) *proxytest.Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
	if msg != "" {
		var env struct {
			Error struct {
				Message string `json:"message"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.Body, &env); err != nil || !strings.Contains(env.Error.Message, msg) || env.Error.Code != status {
			t.Fatalf("%s: error %s, want a message containing %q", what, r.Body, msg)
		}
	}
	return r
}

// idLogin signs in at path and returns the token.
func idLogin(t *testing.T, in *proxytest.Instance, path, email, password string, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"email": email, "password": password}
	for k, v := range extra {
		body[k] = v
	}
	m := idExpect(t, "login", in.API().Do(t, "POST", path, body), 200, "").Map(t)
	tok, _ := m["session_token"].(string)
	if tok == "" || m["session_id"] != tok || !idDate.MatchString(m["token_expiry_date"].(string)) {
		t.Fatalf("login response %v", m)
	}
	return tok
}

// idWith returns a client with the admin app's key and tok.
func idWith(in *proxytest.Instance, tok string) *proxytest.Client {
	return &proxytest.Client{Inst: in, APIKey: in.AdminKey, Session: tok}
}

// idExpired signs in through an identity engine whose clock runs 25 hours
// behind, so the token it returns has expired an hour ago.
func idExpired(t *testing.T, in *proxytest.Instance, admin bool, email, password string) string {
	t.Helper()
	a, err := identity.New(in.Store, identity.Options{Now: func() time.Time { return time.Now().Add(-25 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := caller.WithIdentity(t.Context(), &caller.Identity{Requestor: caller.API})
	in2, err := a.Login(ctx, admin, identity.Fields{"email": email, "password": password}, "")
	if err != nil {
		t.Fatalf("expired login: %v", err)
	}
	return in2.Response.SessionToken
}

// TestSessionStates walks every row of the spec's session token state
// table, for the administrator and the user endpoints.
func TestSessionStates(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		in := proxytest.Start(t, sys, nil)
		idAddUser(t, in, idUserEmail, idUserPassword)
		for _, ep := range []struct {
			name, path, email, password string
			admin                       bool
		}{
			{"admin", "/api/v2/system/admin/session", proxytest.AdminEmail, proxytest.AdminPassword, true},
			{"user", "/api/v2/user/session", idUserEmail, idUserPassword, false},
		} {
			t.Run(ep.name, func(t *testing.T) {
				// none → POST login → active.
				r := idExpect(t, "login", in.API().Do(t, "POST", ep.path, map[string]any{"email": ep.email, "password": ep.password}), 200, "")
				m := r.Map(t)
				tok := m["session_token"].(string)
				for _, f := range []string{"session_token", "session_id", "id", "name", "first_name", "last_name", "email",
					"is_sys_admin", "role", "last_login_date", "token_expiry_date", "apps", "ticket", "ticket_expiry"} {
					if _, ok := m[f]; !ok {
						t.Errorf("session response lacks %s: %v", f, m)
					}
				}
				if m["email"] != ep.email || m["is_sys_admin"] != ep.admin || !idDate.MatchString(m["last_login_date"].(string)) {
					t.Errorf("session response %v", m)
				}
				exp, err := time.Parse(identity.DateFormat, m["token_expiry_date"].(string))
				if err != nil || exp.Sub(time.Now().UTC()) < 23*time.Hour+59*time.Minute || exp.Sub(time.Now().UTC()) > 24*time.Hour+time.Minute {
					t.Errorf("token_expiry_date %v is not 24 hours ahead", m["token_expiry_date"])
				}

				// active → GET → active: user info returned.
				c := idWith(in, tok)
				info := idExpect(t, "GET session", c.Do(t, "GET", ep.path, nil), 200, "").Map(t)
				if info["email"] != ep.email || info["session_token"] != tok {
					t.Errorf("GET session %v", info)
				}

				// active → PUT with ?session_token= → that token is refreshed.
				noTok := &proxytest.Client{Inst: in, APIKey: in.AdminKey}
				r = idExpect(t, "PUT session (query)", noTok.Do(t, "PUT", ep.path+"?session_token="+url.QueryEscape(tok), nil), 200, "")
				tok2 := r.Map(t)["session_token"].(string)
				if tok2 == tok {
					t.Fatal("refresh returned the same token")
				}
				idExpect(t, "old token after refresh", c.Do(t, "GET", ep.path, nil), 401, identity.MsgTokenRevoked)

				// … or in the header.
				r = idExpect(t, "PUT session (header)", idWith(in, tok2).Do(t, "PUT", ep.path, nil), 200, "")
				tok3 := r.Map(t)["session_token"].(string)
				c = idWith(in, tok3)
				idExpect(t, "GET with the refreshed token", c.Do(t, "GET", ep.path, nil), 200, "")

				// active → DELETE → ended; every later call is 401.
				r = idExpect(t, "DELETE session", c.Do(t, "DELETE", ep.path, nil), 200, "")
				if strings.TrimSpace(string(r.Body)) != `{"success":true}` {
					t.Errorf("logout body %s", r.Body)
				}
				idExpect(t, "GET after logout", c.Do(t, "GET", ep.path, nil), 401, identity.MsgTokenRevoked)
				idExpect(t, "another call after logout", c.Do(t, "GET", "/api/v2/system/environment", nil), 401, identity.MsgTokenRevoked)
				idExpect(t, "refresh after logout", c.Do(t, "PUT", ep.path, nil), 401, "Token refresh failed.")

				// active → time passes → expired: later calls are 401.
				old := idExpired(t, in, ep.admin, ep.email, ep.password)
				idExpect(t, "GET with an expired token", idWith(in, old).Do(t, "GET", ep.path, nil), 401, identity.MsgTokenExpired)
				idExpect(t, "data call with an expired token", idWith(in, old).Do(t, "GET", "/api/v2/db/_table", nil), 401, identity.MsgTokenExpired)

				// expired → POST login again → active: a new token.
				fresh := idLogin(t, in, ep.path, ep.email, ep.password, nil)
				idExpect(t, "GET with the new token", idWith(in, fresh).Do(t, "GET", ep.path, nil), 200, "")
				// A login sent with the expired token ignores it.
				idExpect(t, "login with a stale token", idWith(in, old).Do(t, "POST", ep.path, map[string]any{"email": ep.email, "password": ep.password}), 200, "")
			})
		}
	})
}

// TestEndpointNeeds checks the spec's Authentication item 5 table and the
// messages of items 4 and 7.
func TestEndpointNeeds(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		in := proxytest.Start(t, sys, nil)
		idAddUser(t, in, idUserEmail, idUserPassword)
		admin := idLogin(t, in, "/api/v2/system/admin/session", proxytest.AdminEmail, proxytest.AdminPassword, nil)
		userTok := idLogin(t, in, "/api/v2/user/session", idUserEmail, idUserPassword, nil)
		adminCreds := map[string]any{"email": proxytest.AdminEmail, "password": proxytest.AdminPassword}
		userCreds := map[string]any{"email": idUserEmail, "password": idUserPassword}
		none := &proxytest.Client{Inst: in}
		keyOnly := in.API()
		tokenOnly := &proxytest.Client{Inst: in, Session: admin}
		both := idWith(in, admin)
		cases := []struct {
			name   string
			c      *proxytest.Client
			method string
			path   string
			body   any
			status []int
			msg    string
		}{
			{"admin login with key", keyOnly, "POST", "/api/v2/system/admin/session", adminCreds, []int{200}, ""},
			{"admin login without key", none, "POST", "/api/v2/system/admin/session", adminCreds, []int{401}, apikey.MsgNoCredentials},
			{"user login with key", keyOnly, "POST", "/api/v2/user/session", userCreds, []int{200}, ""},
			{"user login without key", none, "POST", "/api/v2/user/session", userCreds, []int{401}, apikey.MsgNoCredentials},
			{"check with key and token", both, "GET", "/api/v2/system/admin/session", nil, []int{200}, ""},
			{"check with key only", keyOnly, "GET", "/api/v2/system/admin/session", nil, []int{401}, identity.MsgNoAdminSession},
			{"check with token only", tokenOnly, "GET", "/api/v2/system/admin/session", nil, []int{401}, apikey.MsgNoKey},
			{"user check with key only", keyOnly, "GET", "/api/v2/user/session", nil, []int{401}, identity.MsgNoSession},
			{"logout with key only", keyOnly, "DELETE", "/api/v2/system/admin/session", nil, []int{401}, ""},
			{"logout with token only", tokenOnly, "DELETE", "/api/v2/system/admin/session", nil, []int{401}, apikey.MsgNoKey},
			{"system operation with key and token", both, "GET", "/api/v2/system/app", nil, []int{200}, ""},
			{"system operation with key only", keyOnly, "GET", "/api/v2/system/app", nil, []int{401, 403}, ""},
			{"system operation with token only", tokenOnly, "GET", "/api/v2/system/app", nil, []int{401}, apikey.MsgNoKey},
			{"system operation with neither", none, "GET", "/api/v2/system/app", nil, []int{401}, apikey.MsgNoCredentials},
			{"system operation as a user", idWith(in, userTok), "GET", "/api/v2/system/app", nil, []int{403}, ""},
			{"data operation with key and token", both, "GET", "/api/v2/db/_table", nil, []int{200}, ""},
			{"data operation with key only", keyOnly, "GET", "/api/v2/db/_table", nil, []int{401, 403}, ""},
			{"data operation with token only", tokenOnly, "GET", "/api/v2/db/_table", nil, []int{401}, apikey.MsgNoKey},
			{"data operation with neither", none, "GET", "/api/v2/db/_table", nil, []int{401}, apikey.MsgNoCredentials},
			{"unknown key", &proxytest.Client{Inst: in, APIKey: strings.Repeat("ab", 32)}, "GET", "/api/v2/db/_table", nil, []int{401}, apikey.MsgUnknownKey},
			{"key in the query", &proxytest.Client{Inst: in}, "GET", "/api/v2/db/_table?api_key=" + in.AdminKey + "&session_token=" + admin, nil, []int{200}, ""},
			{"DreamFactory headers", &proxytest.Client{Inst: in, Header: http.Header{"X-Dreamfactory-Api-Key": {in.AdminKey}, "X-Dreamfactory-Session-Token": {admin}}}, "GET", "/api/v2/db/_table", nil, []int{200}, ""},
			{"bearer token", &proxytest.Client{Inst: in, APIKey: in.AdminKey, Header: http.Header{"Authorization": {"Bearer " + admin}}}, "GET", "/api/v2/db/_table", nil, []int{200}, ""},
			// Items 4 and 7.
			{"old admin login path", keyOnly, "POST", "/api/v2/admin/session", adminCreds, []int{404}, "session token (JWT) is required"},
			{"admin credentials at the user login", keyOnly, "POST", "/api/v2/user/session", adminCreds, []int{401}, "Login request is missing required email."},
			{"wrong password", keyOnly, "POST", "/api/v2/system/admin/session", map[string]any{"email": proxytest.AdminEmail, "password": "wrong-wrong-1"}, []int{401}, "Invalid credentials supplied."},
			{"user at the admin login", keyOnly, "POST", "/api/v2/system/admin/session", userCreds, []int{401}, "Invalid credentials supplied."},
			{"missing email", keyOnly, "POST", "/api/v2/user/session", map[string]any{"password": "x"}, []int{400}, identity.MsgMissingEmail},
			{"missing password", keyOnly, "POST", "/api/v2/system/admin/session", map[string]any{"email": proxytest.AdminEmail}, []int{400}, identity.MsgMissingPassword},
			{"form-encoded login", &proxytest.Client{Inst: in, APIKey: in.AdminKey, Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}}, "POST", "/api/v2/system/admin/session",
				url.Values{"email": {proxytest.AdminEmail}, "password": {proxytest.AdminPassword}}.Encode(), []int{200}, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := tc.c.Do(t, tc.method, tc.path, tc.body)
				ok := false
				for _, s := range tc.status {
					ok = ok || r.Status == s
				}
				if !ok {
					t.Fatalf("status %d, want %v: %s", r.Status, tc.status, r.Body)
				}
				if tc.msg != "" {
					idExpect(t, tc.name, r, r.Status, tc.msg)
				}
			})
		}
	})
}

// TestTokensAcrossInstances: a token issued by one instance is accepted by
// a second sharing the system database, and refused by both after logout.
func TestTokensAcrossInstances(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		a := proxytest.Start(t, sys, nil)
		b := proxytest.Start(t, sys, nil) // its own store on the same database
		if a.Store == b.Store || a.AdminKey != b.AdminKey {
			t.Fatal("the instances must share the database, not the store")
		}
		idAddUser(t, a, idUserEmail, idUserPassword)
		for _, ep := range []struct{ path, email, password string }{
			{"/api/v2/system/admin/session", proxytest.AdminEmail, proxytest.AdminPassword},
			{"/api/v2/user/session", idUserEmail, idUserPassword},
		} {
			tok := idLogin(t, a, ep.path, ep.email, ep.password, nil)
			idExpect(t, "B accepts A's token", idWith(b, tok).Do(t, "GET", ep.path, nil), 200, "")
			// Warm B's cache so that the logout must expire it.
			idExpect(t, "B again", idWith(b, tok).Do(t, "GET", ep.path, nil), 200, "")
			idExpect(t, "logout on A", idWith(a, tok).Do(t, "DELETE", ep.path, nil), 200, "")
			idExpect(t, "A after logout", idWith(a, tok).Do(t, "GET", ep.path, nil), 401, identity.MsgTokenRevoked)
			start := time.Now()
			for {
				r := idWith(b, tok).Do(t, "GET", ep.path, nil)
				if r.Status == 401 {
					idExpect(t, "B after logout", r, 401, identity.MsgTokenRevoked)
					break
				}
				if time.Since(start) > 3*time.Second {
					t.Fatalf("B still accepts the token %v after the logout", time.Since(start))
				}
				time.Sleep(25 * time.Millisecond)
			}
			if took := time.Since(start); took > identity.DefaultCacheTTL+time.Second {
				t.Errorf("the logout took %v to reach B", took)
			}
		}
		// A password change on B ends A's sessions too.
		tok := idLogin(t, a, "/api/v2/user/session", idUserEmail, idUserPassword, nil)
		idExpect(t, "change on B", idWith(b, tok).Do(t, "POST", "/api/v2/user/password",
			map[string]any{"old_password": idUserPassword, "new_password": "changed-pass-1"}), 200, "")
		deadline := time.Now().Add(3 * time.Second)
		for idWith(a, tok).Do(t, "GET", "/api/v2/user/session", nil).Status != 401 {
			if time.Now().After(deadline) {
				t.Fatal("A accepts a token revoked by a password change on B")
			}
			time.Sleep(25 * time.Millisecond)
		}
		idLogin(t, a, "/api/v2/user/session", idUserEmail, "changed-pass-1", nil)
	})
}

// TestUserService covers the user service's own resources end to end.
func TestUserService(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		in := proxytest.Start(t, sys, nil)
		ctx := t.Context()
		jane := idAddUser(t, in, idUserEmail, idUserPassword)
		admin := in.Admin(t)

		list := idExpect(t, "GET /user", admin.Do(t, "GET", "/api/v2/user", nil), 200, "")
		if strings.TrimSpace(string(list.Body)) != `{"resource":[{"name":"password"},{"name":"profile"},{"name":"register"},{"name":"session"}]}` {
			t.Errorf("GET /user = %s", list.Body)
		}
		list = idExpect(t, "GET /user?as_list", admin.Do(t, "GET", "/api/v2/user?as_list=true", nil), 200, "")
		if strings.TrimSpace(string(list.Body)) != `{"resource":["password","profile","register","session"]}` {
			t.Errorf("as_list = %s", list.Body)
		}
		idExpect(t, "unknown resource", admin.Do(t, "GET", "/api/v2/user/nosuch", nil), 404, "nosuch")
		idExpect(t, "PATCH session", idWith(in, idLogin(t, in, "/api/v2/user/session", idUserEmail, idUserPassword, nil)).Do(t, "PATCH", "/api/v2/user/session", nil), 400, "")

		// Registration is closed by default…
		reg := map[string]any{"email": "new@example.com", "password": "new-password-1", "first_name": "New", "last_name": "Comer"}
		idExpect(t, "register while closed", in.API().Do(t, "POST", "/api/v2/user/register", reg), 403, "Open registration is not enabled")

		// … and opens with the service's configuration, giving its role.
		role := &store.Role{Name: "members", IsActive: true}
		if _, err := in.Store.DB.NewInsert().Model(role).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		cfg, _ := json.Marshal(map[string]any{"allow_open_registration": true, "open_reg_role_id": role.ID,
			"open_reg_email_service_id": nil, "custom_key": "kept"})
		if _, err := in.Store.DB.NewUpdate().Model((*store.Service)(nil)).Set("config = ?", string(cfg)).Where("name = ?", "user").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := in.Store.Touch(ctx); err != nil {
			t.Fatal(err)
		}
		if err := in.Proxy.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		r := idExpect(t, "register", in.API().Do(t, "POST", "/api/v2/user/register?login=true", reg), 200, "")
		newTok, _ := r.Map(t)["session_token"].(string)
		if newTok == "" {
			t.Fatalf("register with login: %s", r.Body)
		}
		// The role mapping is configuration, in force on the very next
		// request (no reload, no wait).
		m := idExpect(t, "registered user's session", idWith(in, newTok).Do(t, "GET", "/api/v2/user/session", nil), 200, "").Map(t)
		if m["role"] != "members" || m["first_name"] != "New" {
			t.Errorf("registered session %v", m)
		}
		idExpect(t, "register twice", in.API().Do(t, "POST", "/api/v2/user/register", reg), 409, "")
		idExpect(t, "register with a weak password", in.API().Do(t, "POST", "/api/v2/user/register",
			map[string]any{"email": "weak@example.com", "password": "1234567"}), 400, "Validation failed")

		// Profile.
		tok := idLogin(t, in, "/api/v2/user/session", idUserEmail, idUserPassword, nil)
		c := idWith(in, tok)
		p := idExpect(t, "GET profile", c.Do(t, "GET", "/api/v2/user/profile", nil), 200, "").Map(t)
		if p["email"] != idUserEmail || p["first_name"] != "Jane" {
			t.Errorf("profile %v", p)
		}
		idExpect(t, "profile without session", in.API().Do(t, "GET", "/api/v2/user/profile", nil), 401, identity.MsgNoSession)
		idExpect(t, "update profile", c.Do(t, "POST", "/api/v2/user/profile", map[string]any{"phone": "+44 20"}), 200, "")
		var got store.User
		if err := in.Store.DB.NewSelect().Model(&got).Where("id = ?", jane.ID).Scan(ctx); err != nil || got.Phone != "+44 20" {
			t.Errorf("phone not updated: %+v %v", got.Phone, err)
		}

		// Password change: every earlier token is refused afterwards.
		idExpect(t, "wrong old password", c.Do(t, "POST", "/api/v2/user/password",
			map[string]any{"old_password": "not-it-at-all", "new_password": "changed-pass-1"}), 400, identity.MsgOldPasswordMismatch)
		idExpect(t, "weak new password", c.Do(t, "POST", "/api/v2/user/password",
			map[string]any{"old_password": idUserPassword, "new_password": "short"}), 400, "at least 8 characters")
		idExpect(t, "change", c.Do(t, "POST", "/api/v2/user/password",
			map[string]any{"old_password": idUserPassword, "new_password": "changed-pass-1"}), 200, "")
		idExpect(t, "token after change", c.Do(t, "GET", "/api/v2/user/profile", nil), 401, identity.MsgTokenRevoked)
		idLogin(t, in, "/api/v2/user/session", idUserEmail, "changed-pass-1", nil)

		// An inactive role for the app: 403 on every call with the token.
		tok = idLogin(t, in, "/api/v2/user/session", "new@example.com", "new-password-1", nil)
		if _, err := in.Store.DB.NewUpdate().Model((*store.Role)(nil)).Set("is_active = ?", false).Where("id = ?", role.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := in.Store.Touch(ctx); err != nil {
			t.Fatal(err)
		}
		if err := in.Proxy.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		idExpect(t, "inactive role", idWith(in, tok).Do(t, "GET", "/api/v2/user/session", nil), 403, identity.MsgRoleInactive)
		idExpect(t, "login with an inactive role", in.API().Do(t, "POST", "/api/v2/user/session",
			map[string]any{"email": "new@example.com", "password": "new-password-1"}), 403, identity.MsgRoleInactive)
	})
}

// mailbox captures the mail the user service sends.
type mailbox struct {
	mu   sync.Mutex
	sent []identity.Mail
}

func (m *mailbox) SendMail(_ context.Context, msg identity.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, msg)
	return nil
}

func (m *mailbox) code(t *testing.T) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sent) == 0 {
		t.Fatal("no mail sent")
	}
	return m.sent[len(m.sent)-1].Data["confirm_code"]
}

// lockedBuffer collects log output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPasswordResetAndSecretsInLogs resets a password with an e-mailed code,
// throttles guessing, and checks that no credential reaches the log.
func TestPasswordResetAndSecretsInLogs(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		box := &mailbox{}
		logs := &lockedBuffer{}
		in := proxytest.Start(t, sys, func(c *proxy.Config) {
			c.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}, proxy.WithTypes(user.NewType(user.Options{Mailer: box})))
		idAddUser(t, in, idUserEmail, idUserPassword)
		secrets := []string{in.AdminKey, proxytest.AdminPassword, idUserPassword, "reset-pass-1", "guess-guess-1"}

		admin := idLogin(t, in, "/api/v2/system/admin/session", proxytest.AdminEmail, proxytest.AdminPassword, map[string]any{"duration": 0})
		tok := idLogin(t, in, "/api/v2/user/session", idUserEmail, idUserPassword, nil)
		secrets = append(secrets, admin, tok)
		// Credentials in the query string too.
		idExpect(t, "query credentials", (&proxytest.Client{Inst: in}).Do(t, "GET",
			"/api/v2/user/session?api_key="+in.AdminKey+"&session_token="+tok, nil), 200, "")

		idExpect(t, "reset request", in.API().Do(t, "POST", "/api/v2/user/password?reset=true", map[string]any{"email": idUserEmail}), 200, "")
		code := box.code(t)
		secrets = append(secrets, code)
		idExpect(t, "wrong code", in.API().Do(t, "POST", "/api/v2/user/password",
			map[string]any{"email": idUserEmail, "code": strings.Repeat("Q", identity.CodeLength), "new_password": "reset-pass-1"}), 404, "")
		r := idExpect(t, "reset", in.API().Do(t, "POST", "/api/v2/user/password?login=true",
			map[string]any{"email": idUserEmail, "code": code, "new_password": "reset-pass-1"}), 200, "")
		secrets = append(secrets, r.Map(t)["session_token"].(string))
		idExpect(t, "token from before the reset", idWith(in, tok).Do(t, "GET", "/api/v2/user/session", nil), 401, identity.MsgTokenRevoked)

		// Guessing is slowed down: after five failures the account waits.
		for range 6 {
			idExpect(t, "guess", in.API().Do(t, "POST", "/api/v2/user/session",
				map[string]any{"email": idUserEmail, "password": "guess-guess-1"}), 401, identity.MsgInvalidCredentials)
		}
		r = in.API().Do(t, "POST", "/api/v2/user/session", map[string]any{"email": idUserEmail, "password": "reset-pass-1"})
		idExpect(t, "throttled", r, 429, "Too many failed login attempts")
		if r.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}

		idExpect(t, "admin logout", idWith(in, admin).Do(t, "DELETE", "/api/v2/system/admin/session", nil), 200, "")
		out := logs.String()
		if !strings.Contains(out, "login failed") || !strings.Contains(out, `"user":"`) {
			t.Fatalf("the log lacks the expected events:\n%s", out)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("a secret of %d characters is in the log", len(s))
			}
		}
	})
}

// TestResetWithoutEmailService: with no e-mail service able to send (the
// built-in one switched off), a reset is refused as DreamFactory does and
// logged without a code.
func TestResetWithoutEmailService(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	in := proxytest.Start(t, dbtest.Fresh(t, dialects.SQLite), func(c *proxy.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	idAddUser(t, in, idUserEmail, idUserPassword)
	idExpect(t, "switch the email service off", in.Admin(t).Do(t, "PATCH", "/api/v2/system/service?filter=name%3Demail",
		map[string]any{"is_active": false}), 200, "")
	for _, email := range []string{idUserEmail, "nobody@example.com"} {
		idExpect(t, "reset "+email, in.API().Do(t, "POST", "/api/v2/user/password?reset=true", map[string]any{"email": email}),
			500, identity.MsgNoResetChannel)
	}
	if !strings.Contains(logs.String(), "password reset requested but no e-mail service is configured") {
		t.Errorf("reset not logged:\n%s", logs)
	}
	var u store.User
	if err := in.Store.DB.NewSelect().Model(&u).Where("email = ?", idUserEmail).Scan(t.Context()); err != nil || u.ConfirmCode != "" {
		t.Errorf("a code was stored: %q %v", u.ConfirmCode, err)
	}
}
