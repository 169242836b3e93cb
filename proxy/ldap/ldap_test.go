package ldap_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/ldap"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// syncBuffer collects the instance's log for the password check.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// env is one instance with roles and LDAP services over one slapd.
type env struct {
	in                       *proxytest.Instance
	dir                      *slapd
	admin                    *proxytest.Client
	staff, admins, devs, def float64
	adminApp                 float64
	log                      *syncBuffer
}

func newEnv(t *testing.T, dir *slapd, sys dialects.Config, upstreamAllow ...string) *env {
	t.Helper()
	log := &syncBuffer{}
	in := proxytest.Start(t, sys, func(c *proxy.Config) {
		c.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.UpstreamAllow = upstreamAllow
	})
	e := &env{in: in, dir: dir, admin: in.Admin(t), log: log}
	role := func(name string) float64 {
		r := e.admin.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{"name": name, "is_active": true}}})
		if r.Status != 200 && r.Status != 201 {
			t.Fatalf("role %s: %d %s", name, r.Status, r.Body)
		}
		return r.Map(t)["resource"].([]any)[0].(map[string]any)["id"].(float64)
	}
	e.staff, e.admins, e.devs, e.def = role("ldap-staff"), role("ldap-admins"), role("ldap-devs"), role("ldap-default")
	apps := e.admin.Do(t, "GET", "/api/v2/system/app?filter="+strings.ReplaceAll("api_key='"+in.AdminKey+"'", " ", "%20"), nil).Map(t)
	list, _ := apps["resource"].([]any)
	if len(list) != 1 {
		t.Fatalf("admin app: %v", apps)
	}
	e.adminApp = list[0].(map[string]any)["id"].(float64)
	return e
}

// create makes a service and fails the test unless it is accepted.
func (e *env) create(t *testing.T, name, typ string, cfg map[string]any) {
	t.Helper()
	r := e.admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": name, "label": strings.ToUpper(name), "type": typ, "is_active": true, "config": cfg}}})
	if r.Status != 200 && r.Status != 201 {
		t.Fatalf("create %s: %d %s", name, r.Status, r.Body)
	}
}

// signIn posts body to /user/session with the admin app's key.
func (e *env) signIn(t *testing.T, body map[string]any) (int, map[string]any) {
	t.Helper()
	r := e.in.API().Do(t, "POST", "/api/v2/user/session", body)
	var m map[string]any
	if len(r.Body) > 0 {
		m = r.Map(t)
	}
	return r.Status, m
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// ldapConfig is the corp service's configuration.
func (e *env) ldapConfig(host string) map[string]any {
	return map[string]any{"host": host, "base_dn": suffix, "ca_cert": e.dir.CAPEM, "default_role": e.def,
		"group_roles": []any{
			map[string]any{"dn": "cn=admins," + groups, "role_id": e.admins},
			map[string]any{"dn": "CN=Staff," + strings.ToUpper(groups), "role_id": e.staff},
			map[string]any{"dn": "cn=devs," + groups, "role_id": e.devs, "app_id": e.adminApp},
		}}
}

func TestLDAPSignIn(t *testing.T) {
	dir := startSlapd(t)
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		e := newEnv(t, dir, sys)
		e.create(t, "corp", "ldap", e.ldapConfig(dir.StartTLS))

		t.Run("environment lists the service", func(t *testing.T) {
			env := e.in.API().Do(t, "GET", "/api/v2/system/environment", nil).Map(t)
			list, _ := env["authentication"].(map[string]any)["adldap"].([]any)
			if len(list) != 1 {
				t.Fatalf("adldap: %v", env["authentication"])
			}
			got := list[0].(map[string]any)
			payload, _ := got["payload"].(map[string]any)
			if got["path"] != "user/session?service=corp" || got["verb"] != "POST" || payload["service"] != "corp" || payload["username"] != "string" {
				t.Fatalf("adldap entry: %v", got)
			}
		})

		var aliceID any
		t.Run("first sign-in creates the user with the mapped role", func(t *testing.T) {
			st, m := e.signIn(t, map[string]any{"service": "corp", "username": "alice", "password": "wonderland"})
			if st != 200 || m["email"] != "alice+corp@example.org" || m["first_name"] != "Alice" || m["last_name"] != "Liddell" ||
				m["name"] != "Alice Liddell" || m["role"] != "ldap-staff" || m["session_token"] == nil {
				t.Fatalf("%d %v", st, m)
			}
			gm, _ := m["groupMembership"].([]any)
			if len(gm) != 1 || !strings.EqualFold(gm[0].(string), "cn=staff,"+groups) {
				t.Fatalf("groupMembership: %v", m["groupMembership"])
			}
			aliceID = m["id"]
			c := e.in.API()
			c.Session = m["session_token"].(string)
			s := c.Do(t, "GET", "/api/v2/user/session", nil).Map(t)
			if s["id"] != aliceID || s["role"] != "ldap-staff" {
				t.Fatalf("session: %v", s)
			}
		})
		t.Run("second sign-in links the same user (email field, service in the query)", func(t *testing.T) {
			r := e.in.API().Do(t, "POST", "/api/v2/user/session?service=corp", map[string]any{"email": "alice", "password": "wonderland"})
			m := r.Map(t)
			if r.Status != 200 || m["id"] != aliceID {
				t.Fatalf("%d %v (first id %v)", r.Status, m, aliceID)
			}
			users := e.admin.Do(t, "GET", "/api/v2/system/user?filter=email%20like%20%27alice%25%27", nil).Map(t)
			if n := len(users["resource"].([]any)); n != 1 {
				t.Fatalf("users named alice: %d", n)
			}
		})
		t.Run("duration sets the session's lifetime", func(t *testing.T) {
			for _, tc := range []struct {
				duration any
				status   int
				lifetime string
			}{{90, 200, "90"}, {0, 200, "browser"}, {-1, 400, ""}} {
				r := e.in.API().Do(t, "POST", "/api/v2/user/session", map[string]any{"service": "corp", "username": "alice", "password": "wonderland", "duration": tc.duration})
				if r.Status != tc.status || r.Header.Get("X-Platform-Session-Lifetime") != tc.lifetime {
					t.Fatalf("duration %v: %d %q %s", tc.duration, r.Status, r.Header.Get("X-Platform-Session-Lifetime"), r.Body)
				}
			}
		})
		t.Run("a group change changes the role", func(t *testing.T) {
			alice := "uid=alice," + people
			dir.modify(t, "cn=admins,"+groups, func(r *goldap.ModifyRequest) { r.Add("member", []string{alice}) })
			st, m := e.signIn(t, map[string]any{"service": "corp", "username": "alice", "password": "wonderland"})
			if st != 200 || m["id"] != aliceID || m["role"] != "ldap-admins" {
				t.Fatalf("in admins: %d %v", st, m)
			}
			dir.modify(t, "cn=admins,"+groups, func(r *goldap.ModifyRequest) { r.Delete("member", []string{alice}) })
			dir.modify(t, "cn=staff,"+groups, func(r *goldap.ModifyRequest) { r.Delete("member", []string{alice}) })
			st, m = e.signIn(t, map[string]any{"service": "corp", "username": "alice", "password": "wonderland"})
			if st != 200 || m["role"] != "ldap-default" {
				t.Fatalf("in no group: %d %v", st, m)
			}
			dir.modify(t, "cn=staff,"+groups, func(r *goldap.ModifyRequest) { r.Add("member", []string{alice}) })
		})
		t.Run("memberUid groups map per app", func(t *testing.T) {
			st, m := e.signIn(t, map[string]any{"service": "corp", "username": "bob", "password": "can-we-fix-it"})
			if st != 200 || m["role"] != "ldap-devs" {
				t.Fatalf("admin app: %d %v", st, m)
			}
			r := e.admin.Do(t, "POST", "/api/v2/system/app", map[string]any{"resource": []any{map[string]any{"name": "other", "is_active": true, "type": 0}}})
			if r.Status != 200 && r.Status != 201 {
				t.Fatalf("app: %d %s", r.Status, r.Body)
			}
			apps := e.admin.Do(t, "GET", "/api/v2/system/app?filter=name%3D%27other%27&fields=api_key", nil).Map(t)
			key := apps["resource"].([]any)[0].(map[string]any)["api_key"].(string)
			c := e.in.API()
			c.APIKey = key
			r = c.Do(t, "POST", "/api/v2/user/session", map[string]any{"service": "corp", "username": "bob", "password": "can-we-fix-it"})
			if m := r.Map(t); r.Status != 200 || m["role"] != "ldap-default" {
				t.Fatalf("other app: %d %v", r.Status, m)
			}
		})

		refused := []struct {
			name   string
			body   map[string]any
			status int
			want   string
		}{
			{"wrong password", map[string]any{"service": "corp", "username": "alice", "password": "looking-glass"}, 401, ldap.MsgInvalidCredentials},
			{"unknown user", map[string]any{"service": "corp", "username": "mallory", "password": "wonderland"}, 401, ldap.MsgInvalidCredentials},
			{"filter injection", map[string]any{"service": "corp", "username": "*", "password": "wonderland"}, 401, ldap.MsgInvalidCredentials},
			{"no password", map[string]any{"service": "corp", "username": "alice"}, 400, ldap.MsgMissingCredentials},
			{"empty password", map[string]any{"service": "corp", "username": "alice", "password": ""}, 400, ldap.MsgMissingCredentials},
			{"unknown service", map[string]any{"service": "nope", "username": "alice", "password": "wonderland"}, 400, "not a sign-in service"},
		}
		for _, tc := range refused {
			t.Run(tc.name, func(t *testing.T) {
				st, m := e.signIn(t, tc.body)
				if st != tc.status || !strings.Contains(errMessage(m), tc.want) {
					t.Fatalf("%d %v, want %d with %q", st, m, tc.status, tc.want)
				}
			})
		}
		t.Run("the admin session ignores the service", func(t *testing.T) {
			r := e.in.API().Do(t, "POST", "/api/v2/system/admin/session", map[string]any{"service": "corp", "username": "alice", "password": "wonderland"})
			if r.Status == 200 {
				t.Fatalf("admin sign-in through LDAP: %s", r.Body)
			}
		})
		t.Run("the password is never logged", func(t *testing.T) {
			if strings.Contains(e.log.String(), "wonderland") || strings.Contains(e.log.String(), "looking-glass") {
				t.Fatal("a password is in the log")
			}
			if !strings.Contains(e.log.String(), "ldap sign-in refused") {
				t.Fatal("refusals are not logged")
			}
		})
		// Throttling last: it blocks dave for the rest of the test.
		t.Run("throttled after repeated failures", func(t *testing.T) {
			var st int
			var m map[string]any
			for i := 0; i < 6; i++ {
				if st, m = e.signIn(t, map[string]any{"service": "corp", "username": "dave", "password": "wrong"}); st != 401 {
					t.Fatalf("failure %d: %d %v", i+1, st, m)
				}
			}
			st, m = e.signIn(t, map[string]any{"service": "corp", "username": "dave", "password": "open-the-pod-bay-doors"})
			if st != 429 || !strings.Contains(errMessage(m), "Too many failed login attempts") {
				t.Fatalf("after 6 failures: %d %v", st, m)
			}
		})
	})
}

func TestLDAPTransport(t *testing.T) {
	dir := startSlapd(t)
	e := newEnv(t, dir, dbtest.Fresh(t, dialects.SQLite))
	alice := map[string]any{"username": "alice", "password": "wonderland"}
	with := func(svc string) map[string]any {
		m := map[string]any{"service": svc}
		for k, v := range alice {
			m[k] = v
		}
		return m
	}
	t.Run("LDAPS", func(t *testing.T) {
		e.create(t, "secure", "ldap", e.ldapConfig(dir.LDAPS))
		if st, m := e.signIn(t, with("secure")); st != 200 || m["email"] != "alice+secure@example.org" {
			t.Fatalf("%d %v", st, m)
		}
	})
	other, _ := selfSigned(t)
	cases := []struct {
		name, host, ca string
		status         int
		want           string
	}{
		{"StartTLS with an untrusted certificate", dir.StartTLS, "", 502, "not signed by a trusted CA"},
		{"StartTLS with another CA", dir.StartTLS, other, 502, "not signed by a trusted CA"},
		{"LDAPS with an untrusted certificate", dir.LDAPS, "", 502, "not signed by a trusted CA"},
		{"certificate for another name", strings.Replace(dir.LDAPS, "127.0.0.1", "localhost", 1), dir.CAPEM, 502, "does not name the host"},
		{"LDAPS to the plain port", "ldaps://" + strings.TrimPrefix(dir.StartTLS, "ldap://"), dir.CAPEM, 502, "TLS with the LDAP server"},
		{"server down", "ldap://127.0.0.1:" + freePort(t), dir.CAPEM, 503, "cannot be reached"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("tr%d", i)
			cfg := e.ldapConfig(tc.host)
			cfg["ca_cert"] = tc.ca
			cfg["timeout"] = 3
			e.create(t, name, "ldap", cfg)
			st, m := e.signIn(t, with(name))
			if st != tc.status || !strings.Contains(errMessage(m), tc.want) {
				t.Fatalf("%d %v, want %d with %q", st, m, tc.status, tc.want)
			}
		})
	}
}

func TestLDAPUpstreamAllowList(t *testing.T) {
	dir := startSlapd(t)
	e := newEnv(t, dir, dbtest.Fresh(t, dialects.SQLite), "10.0.0.0/8")
	e.create(t, "corp", "ldap", e.ldapConfig(dir.LDAPS))
	st, m := e.signIn(t, map[string]any{"service": "corp", "username": "alice", "password": "wonderland"})
	if st != 502 || !strings.Contains(errMessage(m), "upstream allow list") {
		t.Fatalf("%d %v", st, m)
	}
}

func TestADSignIn(t *testing.T) {
	dir := startSlapd(t)
	e := newEnv(t, dir, dbtest.Fresh(t, dialects.SQLite))
	// OpenLDAP binds DNs only, so the user's own UPN bind cannot be
	// exercised here; the service account finds the entry by
	// sAMAccountName or userPrincipalName, and the user binds as its DN.
	e.create(t, "ad", "adldap", map[string]any{"host": dir.LDAPS, "base_dn": corp, "account_suffix": "corp.example.org",
		"username": readerDN, "password": readerPW, "ca_cert": dir.CAPEM, "default_role": e.def,
		"group_roles": []any{map[string]any{"dn": "cn=ad-admins," + groups, "role_id": e.admins}}})
	var id any
	for _, name := range []string{"carol", "carol@corp.example.org", `CORP\carol`} {
		t.Run(name, func(t *testing.T) {
			st, m := e.signIn(t, map[string]any{"service": "ad", "username": name, "password": "higher-further-faster"})
			if st != 200 || m["email"] != "carol+ad@corp.example.org" || m["role"] != "ldap-admins" || m["first_name"] != "Carol" {
				t.Fatalf("%d %v", st, m)
			}
			if id == nil {
				id = m["id"]
			} else if m["id"] != id {
				t.Fatalf("another user: %v, first %v", m["id"], id)
			}
		})
	}
	t.Run("memberOf change changes the role", func(t *testing.T) {
		dir.modify(t, "cn=Carol Danvers,"+corp, func(r *goldap.ModifyRequest) { r.Replace("memberOf", []string{"cn=staff," + groups}) })
		st, m := e.signIn(t, map[string]any{"service": "ad", "username": "carol", "password": "higher-further-faster"})
		if st != 200 || m["role"] != "ldap-default" {
			t.Fatalf("%d %v", st, m)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		st, m := e.signIn(t, map[string]any{"service": "ad", "username": "carol", "password": "lower"})
		if st != 401 || errMessage(m) != ldap.MsgInvalidCredentials {
			t.Fatalf("%d %v", st, m)
		}
	})
	t.Run("the name's forms share one throttle count", func(t *testing.T) {
		names := []string{"carol", `CORP\carol`, "Carol@corp.example.org", "carol", `corp\CAROL`}
		for _, name := range names { // with the failure above: 6
			if st, m := e.signIn(t, map[string]any{"service": "ad", "username": name, "password": "lower"}); st != 401 {
				t.Fatalf("%s: %d %v", name, st, m)
			}
		}
		st, m := e.signIn(t, map[string]any{"service": "ad", "username": "carol@corp.example.org", "password": "higher-further-faster"})
		if st != 429 {
			t.Fatalf("after 6 failures: %d %v", st, m)
		}
	})
	t.Run("wrong service account", func(t *testing.T) {
		e.create(t, "ad2", "adldap", map[string]any{"host": dir.LDAPS, "base_dn": corp, "username": readerDN, "password": "nope", "ca_cert": dir.CAPEM})
		st, m := e.signIn(t, map[string]any{"service": "ad2", "username": "carol", "password": "higher-further-faster"})
		if st != 502 || !strings.Contains(errMessage(m), "service's own account") {
			t.Fatalf("%d %v", st, m)
		}
	})
	t.Run("user's own bind without a UPN-aware server", func(t *testing.T) {
		e.create(t, "ad3", "adldap", map[string]any{"host": dir.LDAPS, "base_dn": corp, "account_suffix": "corp.example.org", "ca_cert": dir.CAPEM})
		st, m := e.signIn(t, map[string]any{"service": "ad3", "username": "carol", "password": "higher-further-faster"})
		if st != 401 {
			t.Fatalf("%d %v", st, m)
		}
	})
}

func TestConfigRefusedOnSave(t *testing.T) {
	in := proxytest.StartSQLite(t)
	admin := in.Admin(t)
	cases := []struct {
		name string
		cfg  map[string]any
		want []string
	}{
		{"empty", map[string]any{}, []string{"host is required", "base_dn is required"}},
		{"plain LDAP", map[string]any{"host": "ldap://dir.example.org", "base_dn": "dc=x", "tls": "none"}, []string{"in clear"}},
		{"verification off", map[string]any{"host": "ldaps://dir.example.org", "base_dn": "dc=x", "insecure_skip_verify": true}, []string{"cannot be turned off"}},
		{"bad values", map[string]any{"host": "http://x", "base_dn": "not a dn", "ca_cert": "junk", "timeout": 9999,
			"group_roles": []any{map[string]any{"dn": "", "role_id": 0}}, "attribute_map": map[string]any{"phone": "tel"}},
			[]string{"scheme", "base_dn", "ca_cert", "timeout", "group_roles[0].dn", "group_roles[0].role_id", "attribute_map"}},
		{"half a service account", map[string]any{"host": "ldaps://x", "base_dn": "dc=x", "username": "cn=r"}, []string{"go together"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
				"name": "bad", "label": "Bad", "type": "ldap", "is_active": true, "config": tc.cfg}}})
			if r.Status != http.StatusBadRequest {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(r.Body), w) {
					t.Errorf("no %q in %s", w, r.Body)
				}
			}
		})
	}
	t.Run("service_type lists both with a config_schema", func(t *testing.T) {
		for _, typ := range []string{"ldap", "adldap"} {
			m := admin.Do(t, "GET", "/api/v2/system/service_type/"+typ, nil).Map(t)
			if m["group"] != "LDAP" || len(m["config_schema"].([]any)) < 5 {
				t.Fatalf("%s: %v", typ, m)
			}
		}
	})
}
