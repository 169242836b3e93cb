package proxytest

import (
	"net/http"
	"sync"
	"testing"
)

// adminSessions caches one administrator session per Instance, so a test
// that asks for Admin often signs in (a bcrypt check) only once.
var adminSessions sync.Map // *Instance → string

// Admin returns a client of the seeded administrator: the admin app's key
// and a session signed in through POST /api/v2/system/admin/session.
// Administrators are not restricted by roles, so this is the client for
// calls that set up a test or that need full access; API gives the key
// alone, which reaches only what the admin app's role (none by default)
// and the access exceptions allow.
func (in *Instance) Admin(t testing.TB) *Client {
	t.Helper()
	if tok, ok := adminSessions.Load(in); ok {
		return &Client{Inst: in, APIKey: in.AdminKey, Session: tok.(string)}
	}
	r := in.API().Do(t, http.MethodPost, "/api/v2/system/admin/session", map[string]string{"email": AdminEmail, "password": AdminPassword})
	if r.Status != http.StatusOK {
		t.Fatalf("proxytest: admin sign-in = %d %s", r.Status, r.Body)
	}
	tok, _ := r.Map(t)["session_token"].(string)
	if tok == "" {
		t.Fatalf("proxytest: admin sign-in returned no session_token: %s", r.Body)
	}
	adminSessions.Store(in, tok)
	t.Cleanup(func() { adminSessions.Delete(in) })
	return &Client{Inst: in, APIKey: in.AdminKey, Session: tok}
}
