package saml_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/saml"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

// browser follows no redirects, like a test that looks at each hop.
func browser() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type answer struct {
	status int
	loc    string
	raw    []byte
	body   map[string]any
}

func do(t *testing.T, method, u string, h http.Header, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, body)
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
	a := answer{status: resp.StatusCode, loc: resp.Header.Get("Location"), raw: data}
	_ = json.Unmarshal(data, &a.body)
	return a
}

func get(t *testing.T, u string, h http.Header) answer { return do(t, http.MethodGet, u, h, nil) }

func errMsg(a answer) string {
	e, _ := a.body["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// form is the IdP's auto-posting answer.
type form struct {
	action, response, relayState string
}

var (
	actionRE   = regexp.MustCompile(`action="([^"]*)"`)
	responseRE = regexp.MustCompile(`name="SAMLResponse" value="([^"]*)"`)
	relayRE    = regexp.MustCompile(`name="RelayState" value="([^"]*)"`)
)

func parseForm(t *testing.T, page []byte) form {
	t.Helper()
	a, r, s := actionRE.FindSubmatch(page), responseRE.FindSubmatch(page), relayRE.FindSubmatch(page)
	if a == nil || r == nil || s == nil {
		t.Fatalf("no SAML form in the IdP's page: %s", page)
	}
	return form{action: html.UnescapeString(string(a[1])), response: html.UnescapeString(string(r[1])), relayState: html.UnescapeString(string(s[1]))}
}

// post sends f to its action as the browser does.
func (f form) post(t *testing.T) answer {
	t.Helper()
	v := url.Values{"SAMLResponse": {f.response}, "RelayState": {f.relayState}}
	return do(t, http.MethodPost, f.action, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, strings.NewReader(v.Encode()))
}

// toIdP follows the start URL to the IdP and returns its form.
func toIdP(t *testing.T, startURL string, idp *testIdP) form {
	t.Helper()
	a := get(t, startURL, nil)
	if a.status != http.StatusFound || !strings.HasPrefix(a.loc, idp.URL+"/sso?SAMLRequest=") {
		t.Fatalf("start: %d %q %s", a.status, a.loc, a.raw)
	}
	b := get(t, a.loc, nil)
	if b.status != http.StatusOK {
		t.Fatalf("IdP: %d %s", b.status, b.raw)
	}
	return parseForm(t, b.raw)
}

// stripSignatures removes every ds:Signature from the response.
func stripSignatures(t *testing.T, f *form) {
	t.Helper()
	editResponse(t, f, func(doc *etree.Document) {
		for _, sig := range doc.FindElements("//Signature") {
			sig.Parent().RemoveChild(sig)
		}
	})
}

func editResponse(t *testing.T, f *form, edit func(doc *etree.Document)) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(f.response)
	if err != nil {
		t.Fatal(err)
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(raw); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	f.response = base64.StdEncoding.EncodeToString(out)
}

// createRole makes a role and returns its id.
func createRole(t *testing.T, in *proxytest.Instance, name string) any {
	t.Helper()
	role := in.Admin(t).Do(t, "POST", "/api/v2/system/role", map[string]any{"resource": []any{map[string]any{"name": name, "is_active": true}}})
	if role.Status != 200 && role.Status != 201 {
		t.Fatalf("role: %d %s", role.Status, role.Body)
	}
	return role.Map(t)["resource"].([]any)[0].(map[string]any)["id"]
}

func createService(t *testing.T, in *proxytest.Instance, name string, config map[string]any) {
	t.Helper()
	r := in.Admin(t).Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": name, "label": "SSO " + name, "type": "saml", "is_active": true, "config": config}}})
	if r.Status != 200 && r.Status != 201 {
		t.Fatalf("create %s: %d %s", name, r.Status, r.Body)
	}
}

// manualConfig describes idp by hand.
func manualConfig(idp *testIdP, roleID any) map[string]any {
	return map[string]any{"idp_entityId": idp.URL + "/metadata", "idp_singleSignOnService_url": idp.URL + "/sso",
		"idp_x509cert": idp.signer.certPEM, "default_role": roleID}
}

// signIn runs a whole sign-in and checks the session it gives.
func signIn(t *testing.T, in *proxytest.Instance, idp *testIdP, svc string) answer {
	t.Helper()
	f := toIdP(t, in.URL+"/api/v2/user/session?service="+svc+"&api_key="+in.AdminKey, idp)
	a := f.post(t)
	if a.status != 200 || a.body["session_token"] == nil {
		t.Fatalf("acs: %d %s", a.status, a.raw)
	}
	return a
}

func TestSAMLSignIn(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	idp := newTestIdP(t, in.AdminKey)
	roleID := createRole(t, in, "sso-users")
	admin := in.Admin(t)

	// Configuration is checked with every problem in one 400.
	sp := newKeyPair(t, "sp")
	bad := admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "broken", "label": "Broken", "type": "saml", "is_active": true, "config": map[string]any{
			"idp_singleSignOnService_url": "ftp://x", "sp_x509cert": sp.certPEM, "relay_state": "javascript:alert(1)"}}}})
	for _, want := range []string{"idp_entityId is required", "idp_singleSignOnService_url", "idp_x509cert is required", "sp_privateKey is required", "relay_state"} {
		if bad.Status != 400 || !strings.Contains(string(bad.Body), want) {
			t.Errorf("bad config: %d %s, want 400 naming %q", bad.Status, bad.Body, want)
		}
	}
	other := newKeyPair(t, "other")
	mismatch := admin.Do(t, "POST", "/api/v2/system/service", map[string]any{"resource": []any{map[string]any{
		"name": "broken", "label": "Broken", "type": "saml", "is_active": true, "config": map[string]any{
			"idp_metadata_url": idp.URL + "/metadata", "sp_x509cert": sp.certPEM, "sp_privateKey": other.keyPEM, "idp_x509cert": "not a cert"}}}})
	if mismatch.Status != 400 || !strings.Contains(string(mismatch.Body), "does not belong") || !strings.Contains(string(mismatch.Body), "idp_x509cert") {
		t.Errorf("mismatched key: %d %s", mismatch.Status, mismatch.Body)
	}

	createService(t, in, "sso1", manualConfig(idp, roleID))
	env := in.API().Do(t, "GET", "/api/v2/system/environment", nil).Map(t)
	list, _ := env["authentication"].(map[string]any)["saml"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["path"] != "sso1/sso" || list[0].(map[string]any)["type"] != "saml" || list[0].(map[string]any)["verb"] != "GET" {
		t.Fatalf("environment saml: %v", env["authentication"])
	}

	t.Run("metadata", func(t *testing.T) {
		a := get(t, in.URL+"/api/v2/sso1/metadata?api_key="+in.AdminKey, nil)
		if a.status != 200 || !bytes.Contains(a.raw, []byte(`entityID="`+in.URL+`/api/v2/sso1/metadata"`)) ||
			!bytes.Contains(a.raw, []byte(`Location="`+in.URL+`/api/v2/sso1/acs?api_key=`+in.AdminKey+`"`)) ||
			!bytes.Contains(a.raw, []byte(`WantAssertionsSigned="true"`)) || bytes.Contains(a.raw, []byte("HTTP-Artifact")) {
			t.Fatalf("metadata: %d %s", a.status, a.raw)
		}
	})

	t.Run("sign-in creates the user with the default role, then links", func(t *testing.T) {
		a := signIn(t, in, idp, "sso1")
		if a.body["email"] != "ann+sso1@example.org" || a.body["first_name"] != "Ann" || a.body["last_name"] != "Example" {
			t.Fatalf("acs: %v", a.body)
		}
		c := in.API()
		c.Session = a.body["session_token"].(string)
		s := c.Do(t, "GET", "/api/v2/user/session", nil).Map(t)
		if s["email"] != "ann+sso1@example.org" || s["role"] != "sso-users" {
			t.Fatalf("session: %v", s)
		}
		again := signIn(t, in, idp, "sso1")
		if again.body["id"] != a.body["id"] {
			t.Fatalf("second sign-in made user %v, first %v", again.body["id"], a.body["id"])
		}
	})

	t.Run("the sso resource starts too, and XHR gets the URL", func(t *testing.T) {
		f := toIdP(t, in.URL+"/api/v2/sso1/sso?api_key="+in.AdminKey, idp)
		if a := f.post(t); a.status != 200 || a.body["email"] != "ann+sso1@example.org" {
			t.Fatalf("acs: %d %s", a.status, a.raw)
		}
		x := get(t, in.URL+"/api/v2/sso1/sso?api_key="+in.AdminKey, http.Header{"X-Requested-With": {"XMLHttpRequest"}})
		resp, _ := x.body["response"].(map[string]any)
		if u, _ := resp["url"].(string); x.status != 200 || resp["redirect"] != true || !strings.HasPrefix(u, idp.URL+"/sso?SAMLRequest=") {
			t.Fatalf("xhr: %d %s", x.status, x.raw)
		}
	})

	t.Run("relay state returns to the app with the token", func(t *testing.T) {
		f := toIdP(t, in.URL+"/api/v2/sso1/sso?api_key="+in.AdminKey+"&redirect="+url.QueryEscape("/app/index.html?jwt=_token_"), idp)
		a := f.post(t)
		if a.status != http.StatusFound || !strings.HasPrefix(a.loc, "/app/index.html?jwt=") || strings.Contains(a.loc, "_token_") {
			t.Fatalf("redirect: %d %q %s", a.status, a.loc, a.raw)
		}
		tok := strings.TrimPrefix(a.loc, "/app/index.html?jwt=")
		c := in.API()
		c.Session, _ = url.QueryUnescape(tok)
		if s := c.Do(t, "GET", "/api/v2/user/session", nil); s.Status != 200 {
			t.Fatalf("token from the redirect: %d %s", s.Status, s.Body)
		}
		if b := get(t, in.URL+"/api/v2/sso1/sso?api_key="+in.AdminKey+"&redirect="+url.QueryEscape("https://evil.example/x"), nil); b.status != 400 {
			t.Fatalf("foreign redirect: %d %s", b.status, b.raw)
		}
	})

	t.Run("configured relay_state", func(t *testing.T) {
		cfg := manualConfig(idp, roleID)
		cfg["relay_state"] = "https://app.example.com/signed-in"
		createService(t, in, "sso2", cfg)
		f := toIdP(t, in.URL+"/api/v2/sso2/sso?api_key="+in.AdminKey, idp)
		a := f.post(t)
		if a.status != http.StatusFound || !strings.HasPrefix(a.loc, "https://app.example.com/signed-in?session_token=") {
			t.Fatalf("redirect: %d %q %s", a.status, a.loc, a.raw)
		}
		// A URL on relay_state's host is a permitted redirect.
		b := get(t, in.URL+"/api/v2/sso2/sso?api_key="+in.AdminKey+"&redirect="+url.QueryEscape("https://app.example.com/other"), nil)
		if b.status != http.StatusFound {
			t.Fatalf("redirect on relay_state's host: %d %s", b.status, b.raw)
		}
	})

	refused := []struct {
		name   string
		knob   func(p *testIdP, on bool)
		tamper func(t *testing.T, f *form)
		want   string
	}{
		{"unsigned assertion and response", nil, stripSignatures, "neither the response nor its assertion is signed"},
		{"signed by another key", func(p *testIdP, on bool) { p.forge = on }, nil, "validate signature"},
		{"altered after signing", nil, func(t *testing.T, f *form) {
			editResponse(t, f, func(doc *etree.Document) {
				doc.FindElement("//NameID").SetText("mallory@example.org")
			})
		}, "signature"},
		{"expired", func(p *testIdP, on bool) { p.expired = on }, nil, "expired"},
		{"conditions expired", func(p *testIdP, on bool) { p.staleConditions = on }, nil, "expired"},
		{"wrong audience", func(p *testIdP, on bool) { p.badAudience = on }, nil, "audience"},
		{"no audience", func(p *testIdP, on bool) { p.noAudience = on }, nil, "AudienceRestriction"},
		{"wrong recipient", func(p *testIdP, on bool) { p.badRecipient = on }, nil, "Recipient"},
		{"forged relay state", nil, func(t *testing.T, f *form) { f.relayState = "AAAA" + f.relayState[4:] }, "RelayState"},
		{"unsolicited (no relay state)", nil, func(t *testing.T, f *form) { f.relayState = "" }, "RelayState"},
		{"answer to another sign-in", nil, func(t *testing.T, f *form) {
			other := toIdP(t, in.URL+"/api/v2/sso1/sso?api_key="+in.AdminKey, idp)
			f.relayState = other.relayState
		}, "InResponseTo"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if tc.knob != nil {
				idp.set(t, tc.knob)
			}
			f := toIdP(t, in.URL+"/api/v2/user/session?service=sso1&api_key="+in.AdminKey, idp)
			if tc.tamper != nil {
				tc.tamper(t, &f)
			}
			a := f.post(t)
			t.Logf("%d %s", a.status, errMsg(a))
			if a.status != 401 || !strings.Contains(errMsg(a), tc.want) {
				t.Fatalf("%d %s, want 401 with %q", a.status, a.raw, tc.want)
			}
		})
	}

	t.Run("replayed answer", func(t *testing.T) {
		f := toIdP(t, in.URL+"/api/v2/user/session?service=sso1&api_key="+in.AdminKey, idp)
		if a := f.post(t); a.status != 200 {
			t.Fatalf("first: %d %s", a.status, a.raw)
		}
		a := f.post(t)
		if a.status != 401 || !strings.Contains(errMsg(a), "already been used") {
			t.Fatalf("replay: %d %s", a.status, a.raw)
		}
	})

	t.Run("no SAMLResponse", func(t *testing.T) {
		a := do(t, http.MethodPost, in.URL+"/api/v2/sso1/acs?api_key="+in.AdminKey, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, strings.NewReader("RelayState=x"))
		if a.status != 400 || !strings.Contains(errMsg(a), "Invalid SAML Response provided") {
			t.Fatalf("%d %s", a.status, a.raw)
		}
	})

	t.Run("JSON body at the ACS", func(t *testing.T) {
		f := toIdP(t, in.URL+"/api/v2/user/session?service=sso1&api_key="+in.AdminKey, idp)
		body, _ := json.Marshal(map[string]string{"SAMLResponse": f.response, "RelayState": f.relayState})
		a := do(t, http.MethodPost, f.action, http.Header{"Content-Type": {"application/json"}}, bytes.NewReader(body))
		if a.status != 200 || a.body["session_token"] == nil {
			t.Fatalf("%d %s", a.status, a.raw)
		}
	})

	t.Run("IdP metadata URL, signed requests and encrypted assertions", func(t *testing.T) {
		createService(t, in, "sso3", map[string]any{"idp_metadata_url": idp.URL + "/metadata", "default_role": roleID,
			"sp_x509cert": sp.certPEM, "sp_privateKey": sp.keyPEM})
		idp.set(t, func(p *testIdP, on bool) { p.encrypt = on })
		// The private key reads masked.
		if r := in.Admin(t).Do(t, "GET", "/api/v2/system/service?filter=name%3Dsso3", nil); r.Status != 200 ||
			strings.Contains(string(r.Body), "PRIVATE KEY") || !strings.Contains(string(r.Body), `"sp_privateKey":"**********"`) {
			t.Errorf("service read: %d %s", r.Status, r.Body)
		}
		a := get(t, in.URL+"/api/v2/sso3/sso?api_key="+in.AdminKey, nil)
		if a.status != http.StatusFound || !strings.Contains(a.loc, "&Signature=") || !strings.Contains(a.loc, "&SigAlg=") {
			t.Fatalf("start: %d %q", a.status, a.loc)
		}
		f := toIdP(t, in.URL+"/api/v2/sso3/sso?api_key="+in.AdminKey, idp)
		raw, _ := base64.StdEncoding.DecodeString(f.response)
		if !bytes.Contains(raw, []byte("EncryptedAssertion")) {
			t.Fatalf("the IdP did not encrypt: %s", raw)
		}
		if r := f.post(t); r.status != 200 || r.body["email"] != "ann+sso3@example.org" {
			t.Fatalf("acs: %d %s", r.status, r.raw)
		}
	})

	t.Run("IdP metadata unreachable is 502", func(t *testing.T) {
		createService(t, in, "gone", map[string]any{"idp_metadata_url": "http://127.0.0.1:1/metadata"})
		a := get(t, in.URL+"/api/v2/user/session?service=gone&api_key="+in.AdminKey, nil)
		if a.status != 502 || !strings.Contains(errMsg(a), "metadata") {
			t.Fatalf("%d %s", a.status, a.raw)
		}
		// The SP metadata does not need the IdP.
		if m := get(t, in.URL+"/api/v2/gone/metadata?api_key="+in.AdminKey, nil); m.status != 200 {
			t.Fatalf("SP metadata: %d %s", m.status, m.raw)
		}
	})

	t.Run("new users refused when not allowed", func(t *testing.T) {
		cfg := manualConfig(idp, roleID)
		cfg["allow_new_users"] = false
		createService(t, in, "closed", cfg)
		f := toIdP(t, in.URL+"/api/v2/user/session?service=closed&api_key="+in.AdminKey, idp)
		if a := f.post(t); a.status != 401 || !strings.Contains(errMsg(a), "New user registration is not allowed") {
			t.Fatalf("%d %s", a.status, a.raw)
		}
	})
}

// TestSAMLCreateAndLink runs the first and second sign-in on every system
// database (the used-once marks and the users live there).
func TestSAMLCreateAndLink(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		in := proxytest.Start(t, sys, nil)
		idp := newTestIdP(t, in.AdminKey)
		roleID := createRole(t, in, "sso-users")
		createService(t, in, "sso1", manualConfig(idp, roleID))
		first := signIn(t, in, idp, "sso1")
		c := in.API()
		c.Session = first.body["session_token"].(string)
		if s := c.Do(t, "GET", "/api/v2/user/session", nil).Map(t); s["role"] != "sso-users" || s["email"] != "ann+sso1@example.org" {
			t.Fatalf("session: %v", s)
		}
		f := toIdP(t, in.URL+"/api/v2/user/session?service=sso1&api_key="+in.AdminKey, idp)
		second := f.post(t)
		if second.status != 200 || second.body["id"] != first.body["id"] {
			t.Fatalf("second sign-in: %d %s (first id %v)", second.status, second.raw, first.body["id"])
		}
		if again := f.post(t); again.status != 401 {
			t.Fatalf("replay: %d %s", again.status, again.raw)
		}
	})
}

// TestServiceType checks the type's listing and its document.
func TestServiceType(t *testing.T) {
	t.Parallel()
	if err := (saml.Type{}).ValidateConfig(json.RawMessage(`{"idp_metadata_url":"https://idp.example/md"}`)); err != nil {
		t.Fatalf("minimal config: %v", err)
	}
	data, err := json.Marshal(saml.Document())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	for _, p := range []string{"/metadata", "/sso", "/acs"} {
		if doc.Paths.Find(p) == nil {
			t.Errorf("no path %s", p)
		}
	}
	// config_schema names exactly the keys the configuration reads.
	typ := configKeys()
	for _, f := range (saml.Type{}).ConfigSchema() {
		if !typ[f.Name] {
			t.Errorf("config_schema names %q, which Config does not read", f.Name)
		}
		delete(typ, f.Name)
	}
	for k := range typ {
		t.Errorf("Config reads %q, which config_schema does not name", k)
	}
	var _ service.ConfigSchemer = saml.Type{}
}

// configKeys are the JSON keys of saml.Config.
func configKeys() map[string]bool {
	out := map[string]bool{}
	rt := reflect.TypeOf(saml.Config{})
	for i := 0; i < rt.NumField(); i++ {
		if name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}

// TestSAMLAcrossInstances starts a sign-in on one instance, finishes it on
// another (one system database, one public URL, as behind a load
// balancer) and replays the answer to the first.
func TestSAMLAcrossInstances(t *testing.T) {
	t.Parallel()
	sys := dbtest.Fresh(t, dialects.SQLite)
	const public = "https://sso.example.com"
	adjust := func(c *proxy.Config) { c.PublicURL = public }
	a := proxytest.Start(t, sys, adjust)
	b := proxytest.Start(t, sys, adjust)
	if a.AdminKey != b.AdminKey {
		t.Fatalf("instances disagree on the admin key")
	}
	idp := newTestIdP(t, a.AdminKey)
	idp.spPublic, idp.spReal = public, a.URL
	createService(t, a, "sso1", manualConfig(idp, createRole(t, a, "sso-users")))
	deadline := time.Now().Add(5 * time.Second)
	for get(t, b.URL+"/api/v2/sso1/metadata?api_key="+b.AdminKey, nil).status != 200 {
		if time.Now().After(deadline) {
			t.Fatal("the second instance never saw the service")
		}
		time.Sleep(50 * time.Millisecond)
	}
	f := toIdP(t, a.URL+"/api/v2/sso1/sso?api_key="+a.AdminKey, idp)
	if !strings.HasPrefix(f.action, public+"/api/v2/sso1/acs?") {
		t.Fatalf("ACS %q is not on the public URL", f.action)
	}
	onB, onA := f, f
	onB.action = b.URL + strings.TrimPrefix(f.action, public)
	onA.action = a.URL + strings.TrimPrefix(f.action, public)
	if r := onB.post(t); r.status != 200 || r.body["email"] != "ann+sso1@example.org" {
		t.Fatalf("ACS on the second instance: %d %s", r.status, r.raw)
	}
	if r := onA.post(t); r.status != 401 || !strings.Contains(errMsg(r), "already been used") {
		t.Fatalf("replay on the first instance: %d %s", r.status, r.raw)
	}
}

// TestSAMLToLaunchURL: the browser's form post at the ACS with no
// redirect asked for and no relay_state goes to the launch URL of the
// app it came through, with the session token; a JSON post (a script)
// still gets the session response.
func TestSAMLToLaunchURL(t *testing.T) {
	t.Parallel()
	in := proxytest.StartSQLite(t)
	roleID := createRole(t, in, "web-users")
	admin := in.Admin(t)
	r := admin.Do(t, "POST", "/api/v2/system/app", map[string]any{"resource": []any{map[string]any{
		"name": "web", "is_active": true, "type": 2, "url": "https://app.example.com/welcome", "role_id": roleID}}})
	if r.Status != 201 {
		t.Fatalf("app: %d %s", r.Status, r.Body)
	}
	key := admin.Do(t, "GET", "/api/v2/system/app?filter=name%3Dweb&fields=api_key", nil).Map(t)["resource"].([]any)[0].(map[string]any)["api_key"].(string)
	idp := newTestIdP(t, key)
	createService(t, in, "sso1", manualConfig(idp, roleID))
	start := in.URL + "/api/v2/sso1/sso?api_key=" + key

	a := toIdP(t, start, idp).post(t)
	u, err := url.Parse(a.loc)
	if a.status != http.StatusFound || err != nil || u.Host != "app.example.com" || u.Path != "/welcome" || u.Query().Get("session_token") == "" {
		t.Fatalf("acs: %d %q %s", a.status, a.loc, a.raw)
	}
	c := in.API()
	c.APIKey, c.Session = key, u.Query().Get("session_token")
	if s := c.Do(t, "GET", "/api/v2/user/session", nil).Map(t); s["email"] != "ann+sso1@example.org" {
		t.Fatalf("session of the token: %v", s)
	}

	f := toIdP(t, start, idp)
	body, _ := json.Marshal(map[string]string{"SAMLResponse": f.response, "RelayState": f.relayState})
	b := do(t, http.MethodPost, f.action, http.Header{"Content-Type": {"application/json"}}, bytes.NewReader(body))
	if b.status != http.StatusOK || b.body["session_token"] == nil {
		t.Fatalf("JSON post: %d %q %s", b.status, b.loc, b.raw)
	}
}
