package oidc_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// roleNamed creates an active role and returns its id.
func roleNamed(t *testing.T, admin *proxytest.Client, name string) any {
	t.Helper()
	role := admin.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{"name": name, "is_active": true}}})
	if role.Status != 200 && role.Status != 201 {
		t.Fatalf("role: %d %s", role.Status, role.Body)
	}
	return role.Map(t)["resource"].([]any)[0].(map[string]any)["id"]
}

// createService posts one service and returns its id, failing the test
// unless it is created.
func createService(t *testing.T, admin *proxytest.Client, svc map[string]any) any {
	t.Helper()
	r := admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{svc}})
	if r.Status != 200 && r.Status != 201 {
		t.Fatalf("create %v: %d %s", svc["name"], r.Status, r.Body)
	}
	return r.Map(t)["resource"].([]any)[0].(map[string]any)["id"]
}

// signIn runs start → provider → callback and returns the callback's
// answer; tamper may change the callback URL first.
func signIn(t *testing.T, in *proxytest.Instance, start, providerPrefix string, tamper func(cb *url.URL)) answer {
	t.Helper()
	a := get(t, start, nil)
	if a.status != http.StatusFound || !strings.HasPrefix(a.loc, providerPrefix) {
		t.Fatalf("start: %d %q %v", a.status, a.loc, a.body)
	}
	b := get(t, a.loc, nil)
	if b.status != http.StatusFound || !strings.HasPrefix(b.loc, in.URL+"/api/v2/") {
		t.Fatalf("provider: %d %q", b.status, b.loc)
	}
	cb, _ := url.Parse(b.loc)
	if tamper != nil {
		tamper(cb)
	}
	return get(t, cb.String(), nil)
}

// sessionOf reads GET /user/session with the token of a sign-in.
func sessionOf(t *testing.T, in *proxytest.Instance, a answer) map[string]any {
	t.Helper()
	tok, _ := a.body["session_token"].(string)
	if tok == "" {
		t.Fatalf("no session token in %v", a.body)
	}
	c := in.API()
	c.Session = tok
	return c.Do(t, "GET", "/api/v2/user/session", nil).Map(t)
}

func TestGitHubSignIn(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	gh := newGitHub(t, "gh-client", "gh-secret")
	admin := in.Admin(t)
	roleID := roleNamed(t, admin, "github-users")
	callback := in.URL + "/api/v2/user/session?oauth_callback=true&service=gh&api_key=" + in.AdminKey

	bad := admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "broken", "label": "Broken", "type": "oauth_github", "is_active": true, "config": map[string]any{
			"client_id": "x", "redirect_url": callback, "token_endpoint": "http://idp.example.com/token"}}}})
	if bad.Status != 400 || !strings.Contains(string(bad.Body), "client_secret is required") || !strings.Contains(string(bad.Body), "must be an https URL") {
		t.Fatalf("bad config: %d %s", bad.Status, bad.Body)
	}
	createService(t, admin, map[string]any{"name": "gh", "label": "GitHub", "type": "oauth_github", "is_active": true, "config": map[string]any{
		"client_id": "gh-client", "client_secret": "gh-secret", "redirect_url": callback, "default_role": roleID, "icon_class": "fa-github",
		"auth_endpoint": gh.URL + "/login/oauth/authorize", "token_endpoint": gh.URL + "/login/oauth/access_token", "user_endpoint": gh.URL + "/user"}})
	env := in.API().Do(t, "GET", "/api/v2/system/environment", nil).Map(t)
	oauth, _ := env["authentication"].(map[string]any)["oauth"].([]any)
	if len(oauth) != 1 {
		t.Fatalf("environment oauth: %v", env["authentication"])
	}
	if e := oauth[0].(map[string]any); e["path"] != "user/session?service=gh" || e["type"] != "oauth_github" || e["icon_class"] != "fa-github" ||
		e["label"] != "GitHub" || e["name"] != "gh" {
		t.Fatalf("environment entry: %v", e)
	}
	start := in.URL + "/api/v2/user/session?service=gh&api_key=" + in.AdminKey
	authorize := gh.URL + "/login/oauth/authorize?"
	if st := admin.Do(t, "GET", "/api/v2/system/service_type/oauth_github", nil); st.Status != 200 ||
		!strings.Contains(string(st.Body), `"config_schema"`) || !strings.Contains(string(st.Body), "https://api.github.com/user") {
		t.Fatalf("service_type: %d %s", st.Status, st.Body)
	}
	if doc := admin.Do(t, "GET", "/api/v2/api_docs/gh", nil); doc.Status != 200 || !strings.Contains(string(doc.Body), `"/sso"`) {
		t.Fatalf("api_docs: %d %s", doc.Status, doc.Body)
	}

	var annID any
	t.Run("first sign-in creates the user with the default role, the second links", func(t *testing.T) {
		a := signIn(t, in, start, authorize, nil)
		if a.status != 200 || a.body["email"] != "ann+gh@example.org" || a.body["name"] != "Ann Example" {
			t.Fatalf("callback: %d %v", a.status, a.body)
		}
		if s := sessionOf(t, in, a); s["email"] != "ann+gh@example.org" || s["role"] != "github-users" {
			t.Fatalf("session: %v", s)
		}
		annID = a.body["id"]
		again := signIn(t, in, start, authorize, nil)
		if again.status != 200 || again.body["id"] != annID {
			t.Fatalf("second sign-in: %d %v (first id %v)", again.status, again.body, annID)
		}
	})
	t.Run("scopes and PKCE are asked for", func(t *testing.T) {
		a := get(t, start, nil)
		u, _ := url.Parse(a.loc)
		if q := u.Query(); q.Get("scope") != "read:user user:email" || q.Get("code_challenge_method") != "S256" || q.Get("nonce") != "" {
			t.Fatalf("authorize URL: %s", a.loc)
		}
	})
	t.Run("an unverified primary e-mail is refused and links nothing", func(t *testing.T) {
		gh.set(func(g *github) {
			g.account = ghAccount{id: 666, login: "mallory", email: "ann@example.org", verified: false}
		})
		defer gh.set(func(g *github) {
			g.account = ghAccount{id: 4242, login: "ann", email: "ann@example.org", verified: true}
		})
		a := signIn(t, in, start, authorize, nil)
		if a.status != 401 || !strings.Contains(errMsg(a), "has not verified the e-mail address ann@example.org") {
			t.Fatalf("%d %v", a.status, a.body)
		}
	})
	t.Run("without the e-mail scope the user is keyed by its GitHub id", func(t *testing.T) {
		gh.set(func(g *github) {
			g.noEmailScope = true
			g.account = ghAccount{id: 777, login: "bob", email: "ann@example.org", verified: true}
		})
		defer gh.set(func(g *github) {
			g.noEmailScope = false
			g.account = ghAccount{id: 4242, login: "ann", email: "ann@example.org", verified: true}
		})
		a := signIn(t, in, start, authorize, nil)
		if a.status != 200 || a.body["email"] != "777+gh@gh.com" || a.body["id"] == annID || a.body["name"] != "Ann Example" {
			t.Fatalf("%d %v", a.status, a.body)
		}
	})
	t.Run("user API failing is 502", func(t *testing.T) {
		gh.set(func(g *github) { g.userStatus = http.StatusInternalServerError })
		defer gh.set(func(g *github) { g.userStatus = 0 })
		a := signIn(t, in, start, authorize, nil)
		if a.status != 502 || !strings.Contains(errMsg(a), "user-info endpoint failed") {
			t.Fatalf("%d %v", a.status, a.body)
		}
	})
	refused := []struct {
		name   string
		tamper func(cb *url.URL)
		want   string
	}{
		{"forged state", func(cb *url.URL) {
			q := cb.Query()
			q.Set("state", "AAAA"+q.Get("state")[4:])
			cb.RawQuery = q.Encode()
		}, "state"},
		{"state of another service", func(cb *url.URL) {
			q := cb.Query()
			q.Set("service", "gh2")
			cb.RawQuery = q.Encode()
		}, "state"},
		{"wrong code", func(cb *url.URL) { q := cb.Query(); q.Set("code", "made-up"); cb.RawQuery = q.Encode() }, "bad_verification_code"},
		{"provider error", func(cb *url.URL) {
			cb.RawQuery = "service=gh&api_key=" + in.AdminKey + "&error=access_denied&error_description=The+user+has+denied+your+application+access."
		}, "access_denied (The user has denied"},
	}
	createService(t, admin, map[string]any{"name": "gh2", "label": "GitHub 2", "type": "oauth_github", "is_active": true, "config": map[string]any{
		"client_id": "gh-client", "client_secret": "gh-secret", "redirect_url": callback,
		"auth_endpoint": gh.URL + "/login/oauth/authorize", "token_endpoint": gh.URL + "/login/oauth/access_token", "user_endpoint": gh.URL + "/user"}})
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			a := signIn(t, in, start, authorize, tc.tamper)
			if a.status != 401 || !strings.Contains(errMsg(a), tc.want) {
				t.Fatalf("%d %v, want 401 with %q", a.status, a.body, tc.want)
			}
		})
	}
	t.Run("wrong client secret is 502", func(t *testing.T) {
		createService(t, admin, map[string]any{"name": "ghbad", "label": "GitHub bad", "type": "oauth_github", "is_active": true, "config": map[string]any{
			"client_id": "gh-client", "client_secret": "wrong", "redirect_url": strings.Replace(callback, "service=gh", "service=ghbad", 1),
			"auth_endpoint": gh.URL + "/login/oauth/authorize", "token_endpoint": gh.URL + "/login/oauth/access_token", "user_endpoint": gh.URL + "/user"}})
		a := signIn(t, in, in.URL+"/api/v2/user/session?service=ghbad&api_key="+in.AdminKey, authorize, nil)
		if a.status != 502 || !strings.Contains(errMsg(a), "incorrect_client_credentials") {
			t.Fatalf("%d %v", a.status, a.body)
		}
	})
}

func TestGenericOAuthSignIn(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	gh := newGitHub(t, "gen-client", "gen-secret")
	admin := in.Admin(t)
	roleID := roleNamed(t, admin, "generic-users")
	callback := in.URL + "/api/v2/gen/sso?api_key=" + in.AdminKey

	bad := admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "broken", "label": "Broken", "type": "oauth_generic", "is_active": true, "config": map[string]any{
			"client_id": "x", "client_secret": "y", "redirect_url": callback}}}})
	if bad.Status != 400 || !strings.Contains(string(bad.Body), "auth_endpoint is required") || !strings.Contains(string(bad.Body), "user_endpoint is required") {
		t.Fatalf("bad config: %d %s", bad.Status, bad.Body)
	}
	cfg := map[string]any{"client_id": "gen-client", "client_secret": "gen-secret", "redirect_url": callback, "default_role": roleID,
		"auth_endpoint": gh.URL + "/login/oauth/authorize", "token_endpoint": gh.URL + "/login/oauth/access_token", "user_endpoint": gh.URL + "/userinfo",
		"scopes": "profile", "id_field": "data.uid", "email_field": "data.mail", "email_verified_field": "data.confirmed", "name_field": "data.profile.display"}
	id := createService(t, admin, map[string]any{"name": "gen", "label": "Our SSO", "type": "oauth_generic", "is_active": true, "config": cfg})
	start := in.URL + "/api/v2/gen/sso?api_key=" + in.AdminKey
	authorize := gh.URL + "/login/oauth/authorize?"

	a := signIn(t, in, start, authorize, nil)
	if a.status != 200 || a.body["email"] != "ann+gen@example.org" || a.body["name"] != "Ann Example" {
		t.Fatalf("callback: %d %v", a.status, a.body)
	}
	if s := sessionOf(t, in, a); s["role"] != "generic-users" {
		t.Fatalf("session: %v", s)
	}
	if again := signIn(t, in, start, authorize, nil); again.status != 200 || again.body["id"] != a.body["id"] {
		t.Fatalf("second sign-in: %d %v", again.status, again.body)
	}
	gh.set(func(g *github) { g.account.verified = false })
	if u := signIn(t, in, start, authorize, nil); u.status != 401 || !strings.Contains(errMsg(u), "not verified") {
		t.Fatalf("unverified: %d %v", u.status, u.body)
	}
	gh.set(func(g *github) { g.account.verified = true; g.userStatus = http.StatusInternalServerError })
	if u := signIn(t, in, start, authorize, nil); u.status != 502 {
		t.Fatalf("userinfo 500: %d %v", u.status, u.body)
	}
	gh.set(func(g *github) { g.userStatus = 0 })

	// A mapping without a verification field says nothing of the e-mail:
	// the user is keyed by its id and links to nobody.
	cfg["email_verified_field"] = "data.nothing"
	r := admin.Do(t, "PATCH", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{"id": id, "config": cfg}}})
	if r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if k := signIn(t, in, start, authorize, nil); k.status != 200 || k.body["email"] != "ann+gen@gen.com" || k.body["id"] == a.body["id"] {
		t.Fatalf("unsaid: %d %v", k.status, k.body)
	}
}

// TestCallbackThrottled: failed callbacks count against the address as
// failed password sign-ins do, and a blocked address gets 429 without
// the provider being asked.
func TestCallbackThrottled(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	gh := newGitHub(t, "c", "s")
	createService(t, in.Admin(t), map[string]any{"name": "gh", "label": "GitHub", "type": "oauth_github", "is_active": true, "config": map[string]any{
		"client_id": "c", "client_secret": "s", "redirect_url": in.URL + "/api/v2/gh/sso?api_key=" + in.AdminKey,
		"auth_endpoint": gh.URL + "/login/oauth/authorize", "token_endpoint": gh.URL + "/login/oauth/access_token", "user_endpoint": gh.URL + "/user"}})
	forged := in.URL + "/api/v2/gh/sso?api_key=" + in.AdminKey + "&code=x&state=forged"
	var last answer
	for i := range 30 {
		last = get(t, forged, nil)
		if last.status == http.StatusTooManyRequests {
			if i < 20 {
				t.Fatalf("throttled after %d failures", i)
			}
			break
		}
		if last.status != 401 {
			t.Fatalf("attempt %d: %d %v", i, last.status, last.body)
		}
	}
	if last.status != http.StatusTooManyRequests || !strings.Contains(errMsg(last), "Too many failed login attempts") {
		t.Fatalf("never throttled: %d %v", last.status, last.body)
	}
	// A password sign-in from the same address waits too.
	r := in.API().Do(t, "POST", "/api/v2/user/session", map[string]any{"email": "x@example.org", "password": "whatever"})
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("password sign-in: %d %s", r.Status, r.Body)
	}
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
}

// TestBitbucketAndFacebook: the REST shapes of Bitbucket Cloud (user and
// confirmed primary e-mail) and Facebook's Graph API (no verification
// flag: keyed by id).
func TestBitbucketAndFacebook(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	srv := newGitHub(t, "c", "s")
	admin := in.Admin(t)
	for _, tc := range []struct{ name, typ, user, email string }{
		{"bb", "oauth_bitbucket", "/2.0/user", "ann+bb@example.org"},
		{"fb", "oauth_facebook", "/me?fields=id,name,first_name,last_name,email", "4242+fb@fb.com"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			createService(t, admin, map[string]any{"name": tc.name, "label": tc.name, "type": tc.typ, "is_active": true, "config": map[string]any{
				"client_id": "c", "client_secret": "s", "redirect_url": in.URL + "/api/v2/" + tc.name + "/sso?api_key=" + in.AdminKey,
				"auth_endpoint": srv.URL + "/login/oauth/authorize", "token_endpoint": srv.URL + "/login/oauth/access_token", "user_endpoint": srv.URL + tc.user}})
			start := in.URL + "/api/v2/" + tc.name + "/sso?api_key=" + in.AdminKey
			a := signIn(t, in, start, srv.URL+"/login/oauth/authorize?", nil)
			if a.status != 200 || a.body["email"] != tc.email || a.body["name"] != "Ann Example" {
				t.Fatalf("sign-in: %d %v", a.status, a.body)
			}
			if b := signIn(t, in, start, srv.URL+"/login/oauth/authorize?", nil); b.status != 200 || b.body["id"] != a.body["id"] {
				t.Fatalf("second sign-in: %d %v", b.status, b.body)
			}
		})
	}
	srv.set(func(g *github) { g.account.verified = false })
	a := signIn(t, in, in.URL+"/api/v2/bb/sso?api_key="+in.AdminKey, srv.URL+"/login/oauth/authorize?", nil)
	if a.status != 401 || !strings.Contains(errMsg(a), "not verified") {
		t.Fatalf("unconfirmed Bitbucket e-mail: %d %v", a.status, a.body)
	}
}
