package user

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func TestLoginResponseAndClaims(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		r := e.do(e.svc.Login(true), req{body: map[string]any{"email": adminEmail, "password": adminPassword}})
		if r.status != http.StatusOK {
			t.Fatalf("login = %d %s", r.status, r.body)
		}
		m := r.m(t)
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		want := []string{"apps", "email", "first_name", "id", "is_sys_admin", "last_login_date", "last_name", "name",
			"role", "session_id", "session_token", "ticket", "ticket_expiry", "token_expiry_date"}
		if diff := cmp.Diff(want, sortStrings(keys)); diff != "" {
			t.Errorf("session response fields (-want +got):\n%s", diff)
		}
		tok := m["session_token"].(string)
		if m["session_id"] != tok || m["email"] != adminEmail || m["is_sys_admin"] != true || m["first_name"] != "Ada" ||
			m["last_name"] != "Admin" || m["id"].(float64) != float64(e.admin.ID) {
			t.Errorf("response = %v", m)
		}
		dateRE := regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`)
		now := e.clock.Now()
		if got := m["token_expiry_date"]; got != now.Add(24*time.Hour).Format(identity.DateFormat) || !dateRE.MatchString(got.(string)) {
			t.Errorf("token_expiry_date = %v, want %s", got, now.Add(24*time.Hour).Format(identity.DateFormat))
		}
		if got := m["last_login_date"]; got != now.Format(identity.DateFormat) {
			t.Errorf("last_login_date = %v, want %s", got, now.Format(identity.DateFormat))
		}
		apps := m["apps"].([]any)
		if len(apps) != 3 {
			t.Errorf("an administrator sees every active app, got %v", apps)
		}
		if r.header.Get("Cache-Control") != "no-store" || r.header.Get(HeaderSessionLifetime) != "1440" {
			t.Errorf("headers = %v", r.header)
		}

		// The claims are DreamFactory's, signed HS256.
		c := &identity.Claims{}
		parsed, _, err := jwt.NewParser().ParseUnverified(tok, c)
		if err != nil {
			t.Fatal(err)
		}
		if parsed.Method.Alg() != "HS256" {
			t.Errorf("alg = %s", parsed.Method.Alg())
		}
		if c.UserID != e.admin.ID || len(c.ID) != 40 || c.Subject != subject(adminEmail) || c.Forever ||
			!c.IssuedAt.Equal(now) || !c.NotBefore.Equal(now) || !c.ExpiresAt.Equal(now.Add(24*time.Hour)) {
			t.Errorf("claims = %+v", c)
		}
		var raw map[string]any
		if _, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims(raw)); err != nil {
			t.Fatal(err)
		}
		// The session is recorded.
		var row store.Session
		if err := e.st.DB.NewSelect().Model(&row).Where("id = ?", c.ID).Scan(t.Context()); err != nil {
			t.Fatalf("session row: %v", err)
		}
		if row.UserID != e.admin.ID || row.Revoked || row.AppID == nil || *row.AppID != e.appID || !row.ExpiresAt.Equal(now.Add(24*time.Hour)) {
			t.Errorf("row = %+v", row)
		}
		sess, err := e.svc.Verify(t.Context(), tok)
		if err != nil {
			t.Fatalf("verify: %v", err)
		}
		if sess.User.ID != e.admin.ID || sess.ID != c.ID || sess.AppID != e.appID {
			t.Errorf("session = %+v", sess)
		}
	})
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestLoginFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), nil)
	// bun writes DEFAULT (true) for a false is_active on insert: update it.
	if _, err := e.st.DB.NewInsert().Model(&store.User{Name: "Off", Email: "off@example.com",
		Password: e.user.Password, IsActive: true}).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.DB.NewUpdate().Model((*store.User)(nil)).Set("is_active = ?", false).
		Where("email = ?", "off@example.com").Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		admin  bool
		q      req
		status int
		msg    string
	}{
		{"missing email", true, req{body: map[string]any{"password": "x"}}, 400, identity.MsgMissingEmail},
		{"blank email", false, req{body: map[string]any{"email": "  ", "password": "x"}}, 400, identity.MsgMissingEmail},
		{"empty body", true, req{}, 400, identity.MsgMissingEmail},
		{"missing password", true, req{body: map[string]any{"email": adminEmail}}, 400, identity.MsgMissingPassword},
		{"wrong password", true, req{body: map[string]any{"email": adminEmail, "password": "nope-nope-nope"}}, 401, identity.MsgInvalidCredentials},
		{"unknown user", false, req{body: map[string]any{"email": "who@example.com", "password": "whatever1"}}, 401, identity.MsgInvalidCredentials},
		{"inactive user", false, req{body: map[string]any{"email": "off@example.com", "password": userPassword}}, 401, identity.MsgInvalidCredentials},
		{"user on the admin endpoint", true, req{body: map[string]any{"email": userEmail, "password": userPassword}}, 401, identity.MsgInvalidCredentials},
		{"admin on the user endpoint", false, req{body: map[string]any{"email": adminEmail, "password": adminPassword}}, 401, identity.MsgAdminOnUserLogin},
		{"email not a string", true, req{body: map[string]any{"email": 5, "password": "x"}}, 400, "Invalid value for field 'email': expected string."},
		{"not an object", true, req{body: `[1,2]`}, 400, "The request body must be a JSON object."},
		{"malformed JSON", true, req{body: `{"email":`}, 400, ""},
		{"negative duration", true, req{body: map[string]any{"email": adminEmail, "password": adminPassword, "duration": -1}}, 400, ""},
		{"duration too long", true, req{body: map[string]any{"email": adminEmail, "password": adminPassword, "duration": 43201}}, 400, ""},
		{"fractional duration", true, req{body: map[string]any{"email": adminEmail, "password": adminPassword, "duration": 1.5}}, 400, ""},
		{"GET is not login", true, req{method: "GET", body: map[string]any{"email": adminEmail, "password": adminPassword}}, 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.addr = "192.0.2.1:1000" // keep these failures away from the throttle of other tests
			r := e.do(e.svc.Login(tc.admin), tc.q)
			if r.status != tc.status {
				t.Fatalf("status = %d %s, want %d", r.status, r.body, tc.status)
			}
			if tc.msg != "" && r.msg(t) != tc.msg {
				t.Errorf("message = %q, want %q", r.msg(t), tc.msg)
			}
		})
	}
	t.Run("form-encoded body and string duration", func(t *testing.T) {
		r := e.do(e.svc.Login(false), req{form: url.Values{"email": {userEmail}, "password": {userPassword}, "duration": {"90"}}})
		if r.status != 200 || r.header.Get(HeaderSessionLifetime) != "90" {
			t.Fatalf("form login = %d %s %v", r.status, r.body, r.header)
		}
	})
	t.Run("e-mail matched case-insensitively", func(t *testing.T) {
		e.login(false, strings.ToUpper(userEmail), userPassword, nil)
	})
}

func TestRoleOfTheSession(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		ctx := t.Context()
		sales := &store.Role{Name: "sales", IsActive: true}
		off := &store.Role{Name: "off", IsActive: false}
		for _, r := range []*store.Role{sales, off} {
			if _, err := e.st.DB.NewInsert().Model(r).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.st.DB.NewUpdate().Model((*store.Role)(nil)).Set("is_active = ?", false).Where("id = ?", off.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.DB.NewInsert().Model(&store.UserAppRole{UserID: e.user.ID, AppID: e.appID, RoleID: sales.ID}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		e.reload()
		r := e.do(e.svc.Login(false), req{body: map[string]any{"email": userEmail, "password": userPassword}})
		m := r.m(t)
		if r.status != 200 || m["role"] != "sales" || m["is_sys_admin"] != false {
			t.Fatalf("login = %d %v", r.status, m)
		}
		if apps := m["apps"].([]any); len(apps) != 1 || apps[0].(map[string]any)["name"] != "admin" ||
			apps[0].(map[string]any)["launch_url"] != "/dreamfactory/dist/index.html" {
			t.Errorf("apps = %v", apps)
		}
		acc := e.svc.Resolve(e.user.ID, false, e.appID)
		if diff := cmp.Diff(identity.Access{RoleID: sales.ID, RoleName: "sales", RoleActive: true}, acc); diff != "" {
			t.Errorf("Resolve (-want +got):\n%s", diff)
		}
		// An inactive role refuses the login.
		if _, err := e.st.DB.NewUpdate().Model((*store.UserAppRole)(nil)).Set("role_id = ?", off.ID).Where("user_id = ?", e.user.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		e.reload()
		r = e.do(e.svc.Login(false), req{body: map[string]any{"email": userEmail, "password": userPassword}})
		if r.status != 403 || r.msg(t) != identity.MsgRoleInactive {
			t.Errorf("inactive role login = %d %s", r.status, r.body)
		}
		// An administrator with a role mapping is a restricted admin: a user
		// with that role.
		if _, err := e.st.DB.NewInsert().Model(&store.UserAppRole{UserID: e.admin.ID, AppID: e.appID, RoleID: sales.ID}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		e.reload()
		if acc := e.svc.Resolve(e.admin.ID, true, e.appID); acc.Admin || acc.RoleID != sales.ID {
			t.Errorf("restricted admin = %+v", acc)
		}
		tok := e.login(true, adminEmail, adminPassword, nil)
		if r := e.do(e.svc.SessionInfo(true), req{method: "GET", token: tok}); r.status != 403 || r.msg(t) != identity.MsgNotAuthorized {
			t.Errorf("restricted admin on admin/session = %d %s", r.status, r.body)
		}
	})
}

func TestSessionInfo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite), nil)
	admin := e.login(true, adminEmail, adminPassword, nil)
	user := e.login(false, userEmail, userPassword, nil)
	cases := []struct {
		name   string
		admin  bool
		q      req
		status int
		msg    string
	}{
		{"admin", true, req{method: "GET", token: admin}, 200, ""},
		{"admin by bearer", true, req{method: "GET", header: map[string]string{"Authorization": "Bearer " + admin}}, 200, ""},
		{"admin by query", true, req{method: "GET", target: "/?session_token=" + admin}, 200, ""},
		{"admin by DreamFactory header", true, req{method: "GET", header: map[string]string{service.HeaderDFSessionToken: admin}}, 200, ""},
		{"user on the admin endpoint", true, req{method: "GET", token: user}, 403, identity.MsgNotAuthorized},
		{"user", false, req{method: "GET", token: user}, 200, ""},
		{"admin on the user endpoint", false, req{method: "GET", token: admin}, 200, ""},
		{"no session (admin)", true, req{method: "GET"}, 401, identity.MsgNoAdminSession},
		{"no session (user)", false, req{method: "GET"}, 401, identity.MsgNoSession},
		{"garbage token", false, req{method: "GET", token: "abc"}, 401, ""},
		{"PATCH", false, req{method: "PATCH", token: user}, 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(e.svc.Session(tc.admin), tc.q)
			if r.status != tc.status {
				t.Fatalf("status = %d %s, want %d", r.status, r.body, tc.status)
			}
			if tc.msg != "" && r.msg(t) != tc.msg {
				t.Errorf("message = %q, want %q", r.msg(t), tc.msg)
			}
		})
	}
	// GET returns the token in force, unchanged, and its real expiry.
	e.clock.Advance(time.Hour)
	r := e.do(e.svc.SessionInfo(false), req{method: "GET", token: user})
	m := r.m(t)
	if m["session_token"] != user || m["token_expiry_date"] != e.clock.Now().Add(23*time.Hour).Format(identity.DateFormat) {
		t.Errorf("info = %v", m)
	}
}

func TestTokenExpiresWithTheClock(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		short := e.login(false, userEmail, userPassword, map[string]any{"duration": 5})
		long := e.login(false, userEmail, userPassword, nil)
		e.clock.Advance(4*time.Minute + 59*time.Second)
		if msg := e.verifyMsg(short); msg != "" {
			t.Fatalf("5-minute token before expiry: %s", msg)
		}
		e.clock.Advance(time.Second + identity.DefaultLeeway)
		if msg := e.verifyMsg(short); msg != identity.MsgTokenExpired {
			t.Errorf("5-minute token after expiry: %q", msg)
		}
		if msg := e.verifyMsg(long); msg != "" {
			t.Errorf("24-hour token after 5 minutes: %s", msg)
		}
		e.clock.Advance(24*time.Hour - 5*time.Minute - identity.DefaultLeeway - time.Second)
		if msg := e.verifyMsg(long); msg != "" {
			t.Errorf("24-hour token a second before expiry: %s", msg)
		}
		e.clock.Advance(time.Second + identity.DefaultLeeway)
		if msg := e.verifyMsg(long); msg != identity.MsgTokenExpired {
			t.Errorf("24-hour token after expiry: %q", msg)
		}
		// Expired → log in again → active.
		if msg := e.verifyMsg(e.login(false, userEmail, userPassword, nil)); msg != "" {
			t.Errorf("new token after expiry: %s", msg)
		}
	})
}

func TestBrowserSession(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		r := e.do(e.svc.Login(false), req{body: map[string]any{"email": userEmail, "password": userPassword, "duration": 0}})
		if r.status != 200 || r.header.Get(HeaderSessionLifetime) != "browser" {
			t.Fatalf("login = %d %v", r.status, r.header)
		}
		tok := r.m(t)["session_token"].(string)
		c := &identity.Claims{}
		if _, _, err := jwt.NewParser().ParseUnverified(tok, c); err != nil || !c.BrowserSession ||
			c.ExpiresAt.Sub(c.IssuedAt.Time) != identity.DefaultTokenTTL {
			t.Fatalf("claims = %+v %v", c, err)
		}
		// Used every hour, it lives on.
		for range 5 {
			e.clock.Advance(time.Hour)
			if msg := e.verifyMsg(tok); msg != "" {
				t.Fatalf("browser session in use: %s", msg)
			}
		}
		// Left alone past the idle limit, it ends, and cannot be refreshed.
		e.clock.Advance(identity.DefaultBrowserIdle + time.Second)
		if msg := e.verifyMsg(tok); msg != identity.MsgTokenExpired {
			t.Errorf("idle browser session: %q", msg)
		}
		if r := e.do(e.svc.Refresh(false), req{method: "PUT", token: tok}); r.status != 401 ||
			!strings.HasPrefix(r.msg(t), "Token refresh failed.") {
			t.Errorf("refresh of an ended browser session = %d %s", r.status, r.body)
		}
		// Never past the token's own expiry, even in use.
		tok = e.login(false, userEmail, userPassword, map[string]any{"duration": 0})
		for range 24 {
			e.clock.Advance(time.Hour)
			_ = e.verifyMsg(tok)
		}
		e.clock.Advance(identity.DefaultLeeway + time.Second)
		if msg := e.verifyMsg(tok); msg != identity.MsgTokenExpired {
			t.Errorf("browser session past 24 h: %q", msg)
		}
	})
}

func TestRefresh(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, nil)
		old := e.login(false, userEmail, userPassword, map[string]any{"duration": 60})
		e.clock.Advance(10 * time.Minute)
		r := e.do(e.svc.Refresh(false), req{method: "PUT", target: "/?session_token=" + old})
		if r.status != 200 {
			t.Fatalf("refresh = %d %s", r.status, r.body)
		}
		m := r.m(t)
		fresh := m["session_token"].(string)
		if fresh == old || m["token_expiry_date"] != e.clock.Now().Add(time.Hour).Format(identity.DateFormat) || m["email"] != userEmail {
			t.Errorf("refreshed = %v", m)
		}
		if msg := e.verifyMsg(old); msg != identity.MsgTokenRevoked {
			t.Errorf("old token after refresh: %q", msg)
		}
		if msg := e.verifyMsg(fresh); msg != "" {
			t.Errorf("new token: %s", msg)
		}
		// The old token cannot be refreshed twice.
		if r := e.do(e.svc.Refresh(false), req{method: "PUT", token: old}); r.status != 401 ||
			r.msg(t) != "Token refresh failed. "+identity.MsgTokenRevoked {
			t.Errorf("second refresh = %d %s", r.status, r.body)
		}
		// An expired token is refreshed within the refresh window.
		e.clock.Advance(3 * time.Hour)
		if msg := e.verifyMsg(fresh); msg != identity.MsgTokenExpired {
			t.Fatalf("expected expiry, got %q", msg)
		}
		r = e.do(e.svc.Refresh(false), req{method: "PUT", header: map[string]string{"Authorization": "Bearer " + fresh}})
		if r.status != 200 {
			t.Fatalf("refresh of an expired token = %d %s", r.status, r.body)
		}
		third := r.m(t)["session_token"].(string)
		// … but not past it.
		e.clock.Advance(identity.DefaultRefreshWindow + time.Minute)
		if r := e.do(e.svc.Refresh(false), req{method: "PUT", token: third}); r.status != 401 ||
			r.msg(t) != "Token refresh failed. "+identity.MsgTokenExpired {
			t.Errorf("refresh past the window = %d %s", r.status, r.body)
		}
		// Nothing to refresh; a forged token; a user token on the admin
		// endpoint.
		if r := e.do(e.svc.Refresh(false), req{method: "PUT"}); r.status != 401 {
			t.Errorf("refresh without token = %d", r.status)
		}
		if r := e.do(e.svc.Refresh(false), req{method: "PUT", token: third[:len(third)-2] + "xx"}); r.status != 401 {
			t.Errorf("refresh of a forged token = %d", r.status)
		}
		user := e.login(false, userEmail, userPassword, nil)
		if r := e.do(e.svc.Refresh(true), req{method: "PUT", token: user}); r.status != 403 {
			t.Errorf("user refresh on the admin endpoint = %d %s", r.status, r.body)
		}
		if r := e.do(e.svc.Refresh(true), req{method: "PUT", token: e.login(true, adminEmail, adminPassword, map[string]any{"duration": 0})}); r.status != 200 ||
			r.header.Get(HeaderSessionLifetime) != "browser" {
			t.Errorf("admin refresh of a browser session = %d %v", r.status, r.header)
		}
	})
}

func TestLogout(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg, func(o *identity.Options) { o.CacheTTL = 0 }) // with the cache on
		tok := e.login(true, adminEmail, adminPassword, nil)
		other := e.login(true, adminEmail, adminPassword, nil)
		if msg := e.verifyMsg(tok); msg != "" {
			t.Fatal(msg)
		}
		r := e.do(e.svc.Logout(true), req{method: "DELETE", token: tok})
		if r.status != 200 || string(r.body) != "{\"success\":true}\n" {
			t.Fatalf("logout = %d %s", r.status, r.body)
		}
		if msg := e.verifyMsg(tok); msg != identity.MsgTokenRevoked {
			t.Errorf("after logout: %q", msg)
		}
		if msg := e.verifyMsg(other); msg != "" {
			t.Errorf("another session of the same user ended too: %s", msg)
		}
		if r := e.do(e.svc.Logout(true), req{method: "DELETE", token: tok}); r.status != 401 {
			t.Errorf("second logout = %d", r.status)
		}
		if r := e.do(e.svc.Logout(false), req{method: "DELETE"}); r.status != 401 || r.msg(t) != identity.MsgNoSession {
			t.Errorf("logout without a session = %d %s", r.status, r.body)
		}
	})
}

func TestRevocationAcrossInstances(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		a := newEnv(t, cfg, func(o *identity.Options) { o.CacheTTL = 0 })
		// A second instance: its own store on the same database.
		st2, err := store.OpenConfig(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st2.Close() })
		b, err := identity.New(st2, identity.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tok := a.login(false, userEmail, userPassword, nil)
		if _, err := b.Verify(t.Context(), tok); err != nil {
			t.Fatalf("the other instance refuses the token: %v", err)
		}
		r := a.do(a.svc.Logout(false), req{method: "DELETE", token: tok})
		if r.status != 200 {
			t.Fatalf("logout = %d", r.status)
		}
		start := time.Now()
		for {
			_, err := b.Verify(t.Context(), tok)
			if err != nil {
				if msg := err.Error(); msg != identity.MsgTokenRevoked {
					t.Fatalf("refused with %q", msg)
				}
				break
			}
			if time.Since(start) > 3*identity.DefaultCacheTTL {
				t.Fatalf("the other instance still accepts the token %v after logout", time.Since(start))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if el := time.Since(start); el > identity.DefaultCacheTTL+time.Second {
			t.Errorf("revocation took %v to reach the other instance", el)
		}
	})
}
