package soap_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/soap"
)

// backend builds a soap backend from a configuration object.
func backend(t *testing.T, config map[string]any, set soap.Settings) *soap.Backend {
	t.Helper()
	raw, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	cfg, opts, err := soap.ParseConfig(raw)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if set.Name == "" {
		set.Name = "calc"
	}
	b, err := soap.New(cfg, opts, set)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

type answer struct {
	status int
	body   string
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatalf("answer %d is not JSON: %s", a.status, a.body)
	}
	return m
}

// message returns the error envelope's message.
func (a answer) message(t *testing.T) string {
	t.Helper()
	e, _ := a.json(t)["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// call sends a request to the backend as the router would.
func call(t testing.TB, b http.Handler, method, resource, body string, ctxs ...func(context.Context) context.Context) answer {
	t.Helper()
	path, query, _ := strings.Cut(resource, "?")
	r := httptest.NewRequest(method, "/api/v2/calc/"+path+"?"+query, strings.NewReader(body))
	ctx := service.WithTarget(r.Context(), &service.Target{Resource: path, Verb: method})
	for _, f := range ctxs {
		ctx = f(ctx)
	}
	w := httptest.NewRecorder()
	b.ServeHTTP(w, r.WithContext(ctx))
	return answer{status: w.Code, body: strings.TrimSpace(w.Body.String())}
}

func want(t *testing.T, got answer, status int, body string) {
	t.Helper()
	if got.status != status || (body != "" && got.body != body) {
		t.Fatalf("got %d %s, want %d %s", got.status, got.body, status, body)
	}
}

func TestOperationsAndDocumentLiteral(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl"}, soap.Settings{})
	if srv.wsdlHits != 0 {
		t.Fatalf("the WSDL was fetched on build (%d)", srv.wsdlHits)
	}
	want(t, call(t, b, "GET", "", ""), 200, `{"resource":[{"name":"Add"},{"name":"Divide"},{"name":"EchoPerson"},{"name":"Slow"}]}`)
	call(t, b, "GET", "", "")
	if srv.wsdlHits != 2 { // calc.wsdl and its imported types.xsd, once
		t.Fatalf("WSDL fetched %d times, want 2 (cached)", srv.wsdlHits)
	}
	call(t, b, "GET", "?refresh=true", "")
	if srv.wsdlHits != 4 {
		t.Fatalf("refresh=true: WSDL fetched %d times, want 4", srv.wsdlHits)
	}

	want(t, call(t, b, "POST", "add", `{"b":3,"a":2}`), 200, `{"AddResult":5}`)
	last := srv.last()
	if got := last.Header.Get("SOAPAction"); got != `"http://example.org/calc/Add"` {
		t.Errorf("SOAPAction %q", got)
	}
	if got := last.Header.Get("Content-Type"); !strings.HasPrefix(got, "text/xml") {
		t.Errorf("Content-Type %q", got)
	}
	if !strings.Contains(last.Body, `<Add xmlns="http://example.org/calc"><a>2</a><b>3</b></Add>`) {
		t.Errorf("body in WSDL order and namespace expected, got %s", last.Body)
	}
	want(t, call(t, b, "GET", "ADD?a=40&b=2", ""), 200, `{"AddResult":42}`)

	got := call(t, b, "POST", "Subtract", `{}`)
	want(t, got, 404, "")
	if msg := got.message(t); msg != "Function 'Subtract' does not exist on this service." {
		t.Errorf("404 message %q", msg)
	}
	want(t, call(t, b, "PUT", "Add", `{}`), 405, "")
}

func TestTypes(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl"}, soap.Settings{})
	in := `{"person":{"age":41,"name":"Ada","tags":["x","y"],"score":"1.5","active":true,"id":9007199254740993,
		"nickname":null,"address":{"zip":"75001","street":"Rue"},"friends":[{"name":"Bob","age":7},{"name":"Cy","age":8,"tags":{"string":["z"]}}]},
		"note":null}`
	got := call(t, b, "POST", "EchoPerson", in)
	want(t, got, 200, `{"EchoPersonResult":{"name":"Ada","age":41,"score":1.5,"active":true,"id":9007199254740993,"nickname":null,`+
		`"address":{"street":"Rue","zip":75001},"tags":{"string":["x","y"]},"friends":[{"name":"Bob","age":7},{"name":"Cy","age":8,"tags":{"string":["z"]}}]},"note":null}`)
	body := srv.last().Body
	for _, frag := range []string{
		`<EchoPerson xmlns="http://example.org/calc"><person><name xmlns="http://example.org/people">Ada</name><age xmlns="http://example.org/people">41</age>`,
		`<nickname xmlns="http://example.org/people" xsi:nil="true"/>`,
		`<tags xmlns="http://example.org/people"><string>x</string><string>y</string></tags>`,
		`<note xsi:nil="true"/>`,
	} {
		if !strings.Contains(body, frag) {
			t.Errorf("request lacks %s:\n%s", frag, body)
		}
	}

	for _, tc := range []struct{ body, msg string }{
		{`{"a":"two","b":3}`, `Field 'a': "two" is not an integer.`},
		{`{"a":2}`, `Field 'b' is required.`},
		{`{"a":2,"b":3,"c":4}`, `'Add' has no field c.`},
		{`[1,2]`, `The request body must be a JSON object of the operation's parameters.`},
	} {
		got := call(t, b, "POST", "Add", tc.body)
		if got.status != 400 || got.message(t) != tc.msg {
			t.Errorf("%s: got %d %q, want 400 %q", tc.body, got.status, got.message(t), tc.msg)
		}
	}
	got = call(t, b, "POST", "EchoPerson", `{"person":{"name":"A","age":-1}}`)
	if got.status != 400 || !strings.Contains(got.message(t), "person.age") {
		t.Errorf("negative unsigned: %d %s", got.status, got.body)
	}
}

func TestStorageFile(t *testing.T) {
	srv := newTestServer(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "storage", "wsdl")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"calc.wsdl", "types.xsd"} {
		data, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.ReplaceAll(string(data), "{{URL}}", srv.URL))
		if err := os.WriteFile(filepath.Join(store, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := backend(t, map[string]any{"wsdl": "calc.wsdl"}, soap.Settings{DataDir: dir})
	want(t, call(t, b, "POST", "Add", `{"a":1,"b":1}`), 200, `{"AddResult":2}`)
	if srv.wsdlHits != 0 {
		t.Errorf("a stored WSDL was fetched over HTTP")
	}
	missing := backend(t, map[string]any{"wsdl": "nope.wsdl"}, soap.Settings{DataDir: dir})
	got := call(t, missing, "GET", "", "")
	if got.status != 500 || !strings.Contains(got.message(t), "nope.wsdl does not exist") {
		t.Errorf("missing file: %d %s", got.status, got.body)
	}
}

func TestSOAP12AndFaults(t *testing.T) {
	srv := newTestServer(t)
	b11 := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl"}, soap.Settings{})
	got := call(t, b11, "POST", "Divide", `{"dividend":1,"divisor":0}`)
	want(t, got, 500, "")
	if msg := got.message(t); msg != "Division by zero [Fault code:Server]" {
		t.Errorf("1.1 fault message %q", msg)
	}
	if !strings.Contains(got.body, `"detail":{"why":"Division by zero"}`) {
		t.Errorf("1.1 fault detail missing: %s", got.body)
	}

	for name, config := range map[string]map[string]any{
		"option":    {"wsdl": srv.URL + "/calc.wsdl", "options": map[string]any{"soap_version": "SOAP_1_2"}},
		"only-1.2":  {"wsdl": srv.URL + "/calc12.wsdl"},
		"numeric-2": {"wsdl": srv.URL + "/calc.wsdl", "options": map[string]any{"soap_version": 2}},
	} {
		t.Run(name, func(t *testing.T) {
			b := backend(t, config, soap.Settings{})
			want(t, call(t, b, "POST", "Divide", `{"dividend":3,"divisor":2}`), 200, `{"DivideResult":1.5}`)
			last := srv.last()
			if ct := last.Header.Get("Content-Type"); ct != `application/soap+xml; charset=utf-8; action="http://example.org/calc/Divide"` {
				t.Errorf("Content-Type %q", ct)
			}
			if !strings.Contains(last.Body, `xmlns:soap="http://www.w3.org/2003/05/soap-envelope"`) {
				t.Errorf("not a 1.2 envelope: %s", last.Body)
			}
			got := call(t, b, "POST", "Divide", `{"dividend":1,"divisor":0}`)
			if got.status != 500 || got.message(t) != "Division by zero [Fault code:Server]" {
				t.Errorf("1.2 fault: %d %s", got.status, got.body)
			}
		})
	}
}

func TestRPCEncoded(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/rpc.wsdl"}, soap.Settings{})
	want(t, call(t, b, "GET", "", ""), 200, `{"resource":[{"name":"multiply"},{"name":"stats"}]}`)
	want(t, call(t, b, "POST", "Multiply", `{"x":3,"y":1.5}`), 200, `{"multiplyResult":4.5}`)
	body := srv.last().Body
	for _, frag := range []string{
		`<m:multiply xmlns:m="urn:math" soap:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/">`,
		`<x xsi:type="xsd:int">3</x><y xsi:type="xsd:float">1.5</y>`,
	} {
		if !strings.Contains(body, frag) {
			t.Errorf("request lacks %s:\n%s", frag, body)
		}
	}
	if got := srv.last().Header.Get("SOAPAction"); got != `"urn:math#multiply"` {
		t.Errorf("SOAPAction %q", got)
	}
	want(t, call(t, b, "GET", "stats?label=hello", ""), 200, `{"count":5,"ok":true}`)
}

func TestWithoutWSDL(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"options": map[string]any{"location": srv.URL + "/rpc", "uri": "urn:math"}}, soap.Settings{})
	want(t, call(t, b, "GET", "", ""), 200, `{"resource":[]}`)
	want(t, call(t, b, "POST", "multiply", `{"x":3,"y":2}`), 200, `{"multiplyResult":6}`)
	if got := srv.last().Header.Get("SOAPAction"); got != `"urn:math#multiply"` {
		t.Errorf("SOAPAction %q", got)
	}
}

func TestWSDLCacheNone(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl", "options": map[string]any{"cache_wsdl": "WSDL_CACHE_NONE"}}, soap.Settings{})
	call(t, b, "GET", "", "")
	call(t, b, "GET", "", "")
	if srv.wsdlHits != 4 {
		t.Errorf("WSDL_CACHE_NONE: %d fetches, want 4", srv.wsdlHits)
	}
}

func TestHeaders(t *testing.T) {
	srv := newTestServer(t)
	srv.wssePassword = "s3cret"
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	config := map[string]any{
		"wsdl": srv.URL + "/calc.wsdl",
		"headers": []map[string]any{
			{"type": "wsse", "name": "username", "data": "ada"},
			{"type": "wsse", "name": "password", "data": "s3cret"},
			{"type": "generic", "namespace": "urn:auth", "name": "AuthHeader", "data": `{"Token":"plat:token","App":"portcullis"}`, "mustunderstand": true, "actor": "urn:actor"},
			{"namespace": "urn:auth", "name": "Empty", "data": ""},
		},
		"wsse_username_token": "UsernameToken-1",
	}
	b := backend(t, config, soap.Settings{Now: func() time.Time { return now }})
	want(t, call(t, b, "POST", "Add?token=abc", `{"a":1,"b":2}`), 200, `{"AddResult":3}`)
	body := srv.last().Body
	for _, frag := range []string{
		`<AuthHeader xmlns="urn:auth" soap:mustUnderstand="1" soap:actor="urn:actor"><App>portcullis</App><Token>abc</Token></AuthHeader>`,
		`<wsse:Security xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"`,
		`<wsse:UsernameToken wsu:Id="UsernameToken-1"><wsse:Username>ada</wsse:Username>`,
		`<wsu:Created>2026-11-25T08:00:00Z</wsu:Created>`,
	} {
		if !strings.Contains(body, frag) {
			t.Errorf("request lacks %s:\n%s", frag, body)
		}
	}
	if strings.Contains(body, "<Empty") {
		t.Errorf("a header without data was sent")
	}
	config["headers"] = []map[string]any{
		{"type": "wsse", "name": "username", "data": "ada"},
		{"type": "wsse", "name": "password", "data": "wrong"},
	}
	bad := backend(t, config, soap.Settings{})
	got := call(t, bad, "POST", "Add", `{"a":1,"b":2}`)
	if got.status != 500 || got.message(t) != "The security token could not be authenticated [Fault code:Client]" {
		t.Errorf("wrong WSSE password: %d %s", got.status, got.body)
	}
}

func TestBasicAuth(t *testing.T) {
	srv := newTestServer(t)
	srv.basic = "ada:pw"
	b := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl", "options": map[string]any{"login": "ada", "password": "pw"}}, soap.Settings{})
	want(t, call(t, b, "POST", "Add", `{"a":1,"b":2}`), 200, `{"AddResult":3}`)
	nob := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl", "options": map[string]any{"location": srv.URL + "/soap"}}, soap.Settings{})
	got := call(t, nob, "GET", "", "")
	if got.status != 500 || !strings.Contains(got.message(t), "HTTP status 401") {
		t.Errorf("WSDL without credentials: %d %s", got.status, got.body)
	}
}

func TestNTLM(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		w.Header().Set("WWW-Authenticate", "NTLM")
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	calc := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": calc.URL + "/calc.wsdl", "options": map[string]any{
		"location": srv.URL, "ntlm_username": `DOM\ada`, "ntlm_password": "pw"}}, soap.Settings{})
	got := call(t, b, "POST", "Add", `{"a":1,"b":2}`)
	if got.status != 502 {
		t.Errorf("refused NTLM: %d %s", got.status, got.body)
	}
	negotiated := false
	for _, h := range seen {
		if strings.HasPrefix(h, "NTLM ") {
			negotiated = true
		}
	}
	if !negotiated {
		t.Errorf("no NTLM negotiation, Authorization headers %q", seen)
	}
}

func TestUpstreamFailures(t *testing.T) {
	srv := newTestServer(t)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	slow := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl", "options": map[string]any{"connection_timeout": 0.2}}, soap.Settings{})
	got := call(t, slow, "POST", "Slow", `{}`)
	if got.status != 504 {
		t.Errorf("slow: %d %s", got.status, got.body)
	}
	wsdlDown := backend(t, map[string]any{"wsdl": downURL + "/calc.wsdl"}, soap.Settings{})
	if got := call(t, wsdlDown, "GET", "", ""); got.status != 503 {
		t.Errorf("WSDL server down: %d %s", got.status, got.body)
	}
	callDown := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl", "options": map[string]any{"location": downURL + "/soap"}}, soap.Settings{})
	if got := call(t, callDown, "POST", "Add", `{"a":1,"b":2}`); got.status != 503 {
		t.Errorf("SOAP server down: %d %s", got.status, got.body)
	}
	refused := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl"}, soap.Settings{UpstreamAllow: []string{"10.0.0.0/8"}})
	got = call(t, refused, "GET", "", "")
	if got.status != 502 || !strings.Contains(got.message(t), "upstream allow list") {
		t.Errorf("allow list: %d %s", got.status, got.body)
	}
}

func TestResultCache(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl", "cache_enabled": true, "cache_ttl": 60}, soap.Settings{})
	role := func(id int64) func(context.Context) context.Context {
		return func(ctx context.Context) context.Context {
			return caller.WithIdentity(ctx, &caller.Identity{RoleID: id})
		}
	}
	count := func() int {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.requests)
	}
	want(t, call(t, b, "GET", "Add?a=1&b=2", "", role(1)), 200, `{"AddResult":3}`)
	want(t, call(t, b, "GET", "Add?b=2&a=1", "", role(1)), 200, `{"AddResult":3}`)
	if n := count(); n != 1 {
		t.Errorf("cached GET reached the server: %d calls", n)
	}
	call(t, b, "GET", "Add?a=1&b=2", "", role(2))
	call(t, b, "POST", "Add", `{"a":1,"b":2}`, role(1))
	if n := count(); n != 3 {
		t.Errorf("another role or a POST must call: %d calls", n)
	}
	_ = b.FlushCache(context.Background())
	call(t, b, "GET", "Add?a=1&b=2", "", role(1))
	if n := count(); n != 4 {
		t.Errorf("flushed cache: %d calls", n)
	}
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name, config, err string
	}{
		{"url", `{"wsdl":"https://example.org/x?wsdl"}`, ""},
		{"file", `{"wsdl":"calc.wsdl"}`, ""},
		{"no wsdl", `{"options":{"location":"http://x/"}}`, "SOAP Services require either a WSDL or both location and URI to be configured."},
		{"location and uri", `{"options":{"location":"http://x/","uri":"urn:x"}}`, ""},
		{"path", `{"wsdl":"../etc/passwd"}`, "wsdl must be an http(s) URL"},
		{"ftp", `{"wsdl":"ftp://x/y.wsdl"}`, "wsdl must be an http(s) URL"},
		{"version", `{"wsdl":"a","options":{"soap_version":"SOAP_1_2","cache_wsdl":"WSDL_CACHE_NONE"}}`, ""},
		{"bad version", `{"wsdl":"a","options":{"soap_version":3}}`, "soap_version"},
		{"verify_peer", `{"wsdl":"a","options":{"stream_context":{"ssl":{"verify_peer":false}}}}`, "switching off TLS verification is not allowed"},
		{"self signed text", `{"wsdl":"a","options":{"stream_context":"{\"ssl\":{\"allow_self_signed\":true}}"}}`, "switching off TLS verification is not allowed"},
		{"bad context", `{"wsdl":"a","options":{"stream_context":"nope"}}`, "stream_context must be a valid array"},
		{"timeout", `{"wsdl":"a","options":{"connection_timeout":"x"}}`, "connection_timeout"},
		{"header type", `{"wsdl":"a","headers":[{"type":"saml"}]}`, "type must be 'generic' or 'wsse'"},
		{"wsse name", `{"wsdl":"a","headers":[{"type":"wsse","name":"user"}]}`, "a wsse header's name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := soap.Type{}.ValidateConfig(json.RawMessage(tc.config))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}
