package oidc_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/proxytest"
)

// browser follows no redirects, like a test that looks at each hop.
func browser() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type answer struct {
	status int
	loc    string
	body   map[string]any
}

func get(t *testing.T, u string, h http.Header) answer {
	t.Helper()
	return do(t, http.MethodGet, u, h)
}

// post sends an empty POST to u, following no redirect.
func post(t *testing.T, u string) answer {
	t.Helper()
	return do(t, http.MethodPost, u, nil)
}

func do(t *testing.T, method, u string, h http.Header) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := browser().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, loc: resp.Header.Get("Location")}
	_ = json.Unmarshal(data, &a.body)
	return a
}

func errMsg(a answer) string {
	e, _ := a.body["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	p := newProvider(t, "portcullis-client")
	admin := in.Admin(t)
	role := admin.Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{"name": "sso-users", "is_active": true}}})
	if role.Status != 200 && role.Status != 201 {
		t.Fatalf("role: %d %s", role.Status, role.Body)
	}
	roleID := role.Map(t)["resource"].([]any)[0].(map[string]any)["id"]
	callback := in.URL + "/api/v2/user/session?oauth_callback=true&service=idp&api_key=" + in.AdminKey

	// Configuration is checked with every problem in one 400.
	bad := admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "broken", "label": "Broken", "type": "oidc", "is_active": true, "config": map[string]any{"redirect_url": "ftp://x"}}}})
	if bad.Status != 400 || !strings.Contains(string(bad.Body), "client_id is required") || !strings.Contains(string(bad.Body), "redirect_url") ||
		!strings.Contains(string(bad.Body), "issuer is required without discovery_document") {
		t.Fatalf("bad config: %d %s", bad.Status, bad.Body)
	}
	r := admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "idp", "label": "Our IdP", "type": "oidc", "is_active": true, "config": map[string]any{
			"discovery_document": p.URL + "/.well-known/openid-configuration", "client_id": "portcullis-client",
			"client_secret": "s3cret", "redirect_url": callback, "default_role": roleID, "icon_class": "fa-key"}}}})
	if r.Status != 200 && r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	env := in.API().Do(t, "GET", "/api/v2/system/environment", nil).Map(t)
	oauth, _ := env["authentication"].(map[string]any)["oauth"].([]any)
	if len(oauth) != 1 || oauth[0].(map[string]any)["path"] != "user/session?service=idp" || oauth[0].(map[string]any)["type"] != "oidc" {
		t.Fatalf("environment oauth: %v", env["authentication"])
	}

	start := in.URL + "/api/v2/user/session?service=idp&api_key=" + in.AdminKey
	// flow runs the redirect to the provider and its answer, and returns
	// the callback's answer.
	flow := func(t *testing.T, startURL string, tamper func(cb *url.URL)) answer {
		t.Helper()
		a := get(t, startURL, nil)
		if a.status != http.StatusFound || !strings.HasPrefix(a.loc, p.URL+"/authorize?") {
			t.Fatalf("start: %d %q %v", a.status, a.loc, a.body)
		}
		b := get(t, a.loc, nil)
		if b.status != http.StatusFound || !strings.HasPrefix(b.loc, in.URL+"/api/v2/user/session?") {
			t.Fatalf("provider: %d %q", b.status, b.loc)
		}
		cb, _ := url.Parse(b.loc)
		if tamper != nil {
			tamper(cb)
		}
		return get(t, cb.String(), nil)
	}

	t.Run("sign-in creates the user with the default role", func(t *testing.T) {
		a := flow(t, start, nil)
		if a.status != 200 || a.body["email"] != "ann+idp@example.org" || a.body["session_token"] == nil || a.body["first_name"] != "Ann" {
			t.Fatalf("callback: %d %v", a.status, a.body)
		}
		c := in.API()
		c.Session = a.body["session_token"].(string)
		s := c.Do(t, "GET", "/api/v2/user/session", nil).Map(t)
		if s["email"] != "ann+idp@example.org" || s["role"] != "sso-users" {
			t.Fatalf("session: %v", s)
		}
		// A second sign-in links the same user.
		again := flow(t, start, nil)
		if again.status != 200 || again.body["id"] != a.body["id"] {
			t.Fatalf("second sign-in: %d %v (first id %v)", again.status, again.body, a.body["id"])
		}
	})
	t.Run("XHR start answers the URL", func(t *testing.T) {
		a := get(t, start, http.Header{"X-Requested-With": {"XMLHttpRequest"}})
		resp, _ := a.body["response"].(map[string]any)
		if a.status != 200 || resp["redirect"] != true || !strings.HasPrefix(resp["url"].(string), p.URL+"/authorize?") {
			t.Fatalf("xhr: %d %v", a.status, a.body)
		}
	})
	t.Run("redirect gets the token", func(t *testing.T) {
		a := flow(t, start+"&redirect="+url.QueryEscape("/app/index.html"), nil)
		if a.status != http.StatusFound || !strings.HasPrefix(a.loc, "/app/index.html?session_token=") {
			t.Fatalf("redirect: %d %q %v", a.status, a.loc, a.body)
		}
		if b := get(t, start+"&redirect="+url.QueryEscape("https://evil.example/x"), nil); b.status != 400 {
			t.Fatalf("foreign redirect: %d %v", b.status, b.body)
		}
	})
	refused := []struct {
		name   string
		knob   func(on bool)
		tamper func(cb *url.URL)
		want   string
	}{
		{"forged ID token", func(on bool) { p.forge = on }, nil, "ID token is not valid"},
		{"expired ID token", func(on bool) { p.expired = on }, nil, "ID token is not valid"},
		{"wrong audience", func(on bool) { p.badAud = on }, nil, "ID token is not valid"},
		{"wrong nonce", func(on bool) { p.badNonce = on }, nil, "nonce"},
		{"forged state", nil, func(cb *url.URL) {
			q := cb.Query()
			q.Set("state", "AAAA"+q.Get("state")[4:])
			cb.RawQuery = q.Encode()
		}, "state"},
		{"missing state", nil, func(cb *url.URL) { q := cb.Query(); q.Del("state"); cb.RawQuery = q.Encode() }, "state"},
		{"code replayed or forged", nil, func(cb *url.URL) { q := cb.Query(); q.Set("code", "made-up"); cb.RawQuery = q.Encode() }, "invalid_grant"},
		{"provider error", nil, func(cb *url.URL) { cb.RawQuery = "service=idp&api_key=" + in.AdminKey + "&error=access_denied" }, "access_denied"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if tc.knob != nil {
				p.mu.Lock()
				tc.knob(true)
				p.mu.Unlock()
				defer func() { p.mu.Lock(); tc.knob(false); p.mu.Unlock() }()
			}
			a := flow(t, start, tc.tamper)
			if a.status != 401 || !strings.Contains(errMsg(a), tc.want) {
				t.Fatalf("%d %v, want 401 with %q", a.status, a.body, tc.want)
			}
		})
	}
	t.Run("provider down is 502", func(t *testing.T) {
		r := admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
			"name": "gone", "label": "Gone", "type": "oidc", "is_active": true, "config": map[string]any{
				"discovery_document": "http://127.0.0.1:1/.well-known/openid-configuration", "client_id": "c", "redirect_url": callback}}}})
		if r.Status != 200 && r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		a := get(t, in.URL+"/api/v2/user/session?service=gone&api_key="+in.AdminKey, nil)
		if a.status != 502 {
			t.Fatalf("%d %v", a.status, a.body)
		}
	})
	t.Run("not a sign-in service", func(t *testing.T) {
		a := get(t, in.URL+"/api/v2/user/session?service=system&api_key="+in.AdminKey, nil)
		if a.status != 400 {
			t.Fatalf("%d %v", a.status, a.body)
		}
	})
}

// TestSSOResource checks GET /{svc}/sso, which needs no role.
func TestSSOResource(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	p := newProvider(t, "c1")
	r := in.Admin(t).Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "idp", "label": "IdP", "type": "oidc", "is_active": true, "config": map[string]any{
			"discovery_document": p.URL, "client_id": "c1",
			"redirect_url": in.URL + "/api/v2/idp/sso?api_key=" + in.AdminKey}}}})
	if r.Status != 200 && r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	a := get(t, in.URL+"/api/v2/idp/sso?api_key="+in.AdminKey, nil)
	if a.status != http.StatusFound {
		t.Fatalf("start: %d %v", a.status, a.body)
	}
	b := get(t, a.loc, nil)
	c := get(t, b.loc, nil)
	if c.status != 200 || c.body["email"] != "ann+idp@example.org" {
		t.Fatalf("callback: %d %v", c.status, c.body)
	}
}

// TestMicrosoftMultiTenant: with tenant_id common the discovery document
// names the issuer https://…/{tenantid}/v2.0; a token is accepted only
// when its issuer is that template filled with its own tid, and its
// e-mail only when email_verified or xms_edov vouches for it.
func TestMicrosoftMultiTenant(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	p := newProvider(t, "ms-client")
	p.msTemplate, p.tid, p.issTenant = true, "tenant-a", "tenant-a"
	callback := in.URL + "/api/v2/ms/sso?api_key=" + in.AdminKey
	createService(t, in.Admin(t), map[string]any{"name": "ms", "label": "Microsoft", "type": "oauth_azure_ad", "is_active": true, "config": map[string]any{
		"client_id": "ms-client", "client_secret": "s", "redirect_url": callback, "tenant_id": "common", "discovery_document": p.URL}})
	start := in.URL + "/api/v2/ms/sso?api_key=" + in.AdminKey
	knobs := func(f func()) {
		p.mu.Lock()
		defer p.mu.Unlock()
		f()
	}
	a := signIn(t, in, start, p.URL+"/authorize?", nil)
	if a.status != 200 || a.body["email"] != "ann+ms@example.org" {
		t.Fatalf("sign-in: %d %v", a.status, a.body)
	}
	knobs(func() { p.issTenant = "tenant-b" })
	if b := signIn(t, in, start, p.URL+"/authorize?", nil); b.status != 401 || !strings.Contains(errMsg(b), `not the one of its tenant "tenant-a"`) {
		t.Fatalf("issuer of another tenant: %d %v", b.status, b.body)
	}
	knobs(func() { p.issTenant = "tenant-a"; p.noEmailVerified = true })
	if c := signIn(t, in, start, p.URL+"/authorize?", nil); c.status != 200 || c.body["email"] != "u-123+ms@ms.com" || c.body["id"] == a.body["id"] {
		t.Fatalf("unvouched e-mail: %d %v", c.status, c.body)
	}
	knobs(func() { p.extra = map[string]any{"xms_edov": true} })
	if d := signIn(t, in, start, p.URL+"/authorize?", nil); d.status != 200 || d.body["id"] != a.body["id"] {
		t.Fatalf("xms_edov: %d %v (want id %v)", d.status, d.body, a.body["id"])
	}
}

// TestIssuerWithTrailingSlash: an issuer ending in "/" (zitadel, Auth0)
// is found from its discovery document's address, which is the same with
// or without the slash.
func TestIssuerWithTrailingSlash(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	p := newProvider(t, "c")
	p.slash = true
	for i, doc := range []string{p.URL + "/.well-known/openid-configuration", p.URL + "/", p.URL} {
		name := fmt.Sprintf("idp%d", i)
		createService(t, in.Admin(t), map[string]any{"name": name, "label": name, "type": "oidc", "is_active": true, "config": map[string]any{
			"discovery_document": doc, "client_id": "c", "redirect_url": in.URL + "/api/v2/" + name + "/sso?api_key=" + in.AdminKey}})
		a := signIn(t, in, in.URL+"/api/v2/"+name+"/sso?api_key="+in.AdminKey, p.URL+"/authorize?", nil)
		if a.status != 200 || a.body["email"] != "ann+"+name+"@example.org" {
			t.Fatalf("%s: %d %v", doc, a.status, a.body)
		}
	}
}

// TestCallbackToLaunchURL: a browser's callback that asked for no
// redirect goes where DreamFactory sends it (its default redirect URL;
// here the launch URL of the app the callback came through) with the
// session token, and a failed one with ?error=; an API client (XHR, or a
// POST of the provider's answer) still gets JSON.
func TestCallbackToLaunchURL(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	p := newProvider(t, "c1")
	admin := in.Admin(t)
	roleID := roleNamed(t, admin, "web-users")
	r := admin.Do(t, "POST", "/api/v2/system/app", map[string]any{"resource": []any{map[string]any{
		"name": "web", "is_active": true, "type": 2, "url": "https://app.example.com/welcome?lang=en", "role_id": roleID}}})
	if r.Status != 201 {
		t.Fatalf("app: %d %s", r.Status, r.Body)
	}
	apps := admin.Do(t, "GET", "/api/v2/system/app?filter=name%3Dweb&fields=api_key", nil).Map(t)["resource"].([]any)
	key := apps[0].(map[string]any)["api_key"].(string)
	createService(t, admin, map[string]any{"name": "idp", "label": "IdP", "type": "oidc", "is_active": true, "config": map[string]any{
		"discovery_document": p.URL, "client_id": "c1", "default_role": roleID,
		"redirect_url": in.URL + "/api/v2/user/session?oauth_callback=true&service=idp&api_key=" + key}})
	start := in.URL + "/api/v2/user/session?service=idp&api_key=" + key

	t.Run("a browser goes to the app's launch URL with the token", func(t *testing.T) {
		a := signIn(t, in, start, p.URL+"/authorize?", nil)
		u, err := url.Parse(a.loc)
		if a.status != http.StatusFound || err != nil || u.Host != "app.example.com" || u.Path != "/welcome" || u.Query().Get("lang") != "en" {
			t.Fatalf("callback: %d %q %v", a.status, a.loc, a.body)
		}
		c := in.API()
		c.APIKey, c.Session = key, u.Query().Get("session_token")
		if s := c.Do(t, "GET", "/api/v2/user/session", nil).Map(t); s["email"] != "ann+idp@example.org" {
			t.Fatalf("session of the token: %v", s)
		}
	})
	t.Run("a redirect asked for wins", func(t *testing.T) {
		a := signIn(t, in, start+"&redirect="+url.QueryEscape("/app/index.html"), p.URL+"/authorize?", nil)
		if a.status != http.StatusFound || !strings.HasPrefix(a.loc, "/app/index.html?session_token=") {
			t.Fatalf("callback: %d %q %v", a.status, a.loc, a.body)
		}
	})
	t.Run("a failed sign-in goes there with the error", func(t *testing.T) {
		a := signIn(t, in, start, p.URL+"/authorize?", func(cb *url.URL) {
			q := cb.Query()
			q.Del("code")
			q.Set("error", "access_denied")
			cb.RawQuery = q.Encode()
		})
		u, _ := url.Parse(a.loc)
		if a.status != http.StatusFound || u == nil || u.Host != "app.example.com" || !strings.Contains(u.Query().Get("error"), "access_denied") ||
			u.Query().Get("session_token") != "" {
			t.Fatalf("callback: %d %q %v", a.status, a.loc, a.body)
		}
	})
	t.Run("an API client gets JSON", func(t *testing.T) {
		// The provider's answer handled by a script: its callback asked
		// with XMLHttpRequest, or posted.
		for _, tc := range []struct {
			name string
			call func(cb string) answer
		}{
			{"XHR", func(cb string) answer { return get(t, cb, http.Header{"X-Requested-With": {"XMLHttpRequest"}}) }},
			{"POST", func(cb string) answer { return post(t, cb) }},
		} {
			s := get(t, start, nil)
			b := get(t, s.loc, nil)
			got := tc.call(b.loc)
			if got.status != http.StatusOK || got.body["email"] != "ann+idp@example.org" || got.body["session_token"] == nil {
				t.Errorf("%s callback: %d %q %v", tc.name, got.status, got.loc, got.body)
			}
		}
	})
}
