package proxy_test

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

func basicHeader(user, password string) http.Header {
	return http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}}
}

// TestBasicSignIn checks HTTP Basic credentials on the session endpoints
// (always) and per request (with Config.BasicAuth only).
func TestBasicSignIn(t *testing.T) {
	t.Parallel()
	for _, enabled := range []bool{false, true} {
		in := proxytest.Start(t, dbtest.Fresh(t, dialects.SQLite), func(c *proxy.Config) { c.BasicAuth = enabled })
		idAddUser(t, in, idUserEmail, idUserPassword)
		with := func(h http.Header) *proxytest.Client { c := in.API(); c.Header = h; return c }

		// Session endpoints: Basic stands for the body's email and password.
		for _, ep := range []struct{ path, email, password string }{
			{"/api/v2/system/admin/session", proxytest.AdminEmail, proxytest.AdminPassword},
			{"/api/v2/user/session", idUserEmail, idUserPassword},
		} {
			m := idExpect(t, "basic login", with(basicHeader(ep.email, ep.password)).Do(t, "POST", ep.path, nil), 200, "").Map(t)
			if m["email"] != ep.email || m["session_token"] == "" {
				t.Fatalf("basic login %s: %v", ep.path, m)
			}
			idExpect(t, "basic login, wrong password", with(basicHeader(ep.email, "nope")).Do(t, "POST", ep.path, nil), 401, "Invalid credentials")
		}
		// The body wins over Basic.
		idExpect(t, "body over basic", with(basicHeader(idUserEmail, idUserPassword)).Do(t, "POST", "/api/v2/user/session",
			map[string]any{"email": idUserEmail, "password": "wrong"}), 401, "")

		// Per request.
		r := with(basicHeader(proxytest.AdminEmail, proxytest.AdminPassword)).Do(t, "GET", "/api/v2/system/user", nil)
		bad := with(basicHeader(proxytest.AdminEmail, "wrong")).Do(t, "GET", "/api/v2/system/user", nil)
		userOnAdmin := with(basicHeader(idUserEmail, idUserPassword)).Do(t, "GET", "/api/v2/system/user", nil)
		if !enabled {
			idExpect(t, "per request, disabled", r, 401, "")
			continue
		}
		idExpect(t, "per request as admin", r, 200, "")
		idExpect(t, "per request, wrong password", bad, 401, "Invalid credentials")
		if userOnAdmin.Status != 401 && userOnAdmin.Status != 403 {
			t.Fatalf("user on system resources: %d %s", userOnAdmin.Status, userOnAdmin.Body)
		}
		// A session token wins over Basic credentials.
		tok := idLogin(t, in, "/api/v2/user/session", idUserEmail, idUserPassword, nil)
		c := with(basicHeader(proxytest.AdminEmail, proxytest.AdminPassword))
		c.Session = tok
		if r := c.Do(t, "GET", "/api/v2/system/user", nil); r.Status == 200 {
			t.Fatalf("token ignored in favour of Basic: %s", r.Body)
		}
	}
}
