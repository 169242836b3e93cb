package apikey

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

const (
	goodKey     = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	inactiveKey = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

func apps() Static {
	return NewStatic(
		App{ID: 1, Name: "admin", APIKey: goodKey, Active: true, RoleID: 7, RoleName: "readers"},
		App{ID: 2, Name: "old", APIKey: inactiveKey, Active: false},
	)
}

// serve runs r through the stage and returns the status, the error message
// and the identity the next handler saw.
func serve(t *testing.T, r *http.Request) (int, string, *caller.Identity) {
	t.Helper()
	stage, err := New(Options{Apps: apps()})
	if err != nil {
		t.Fatal(err)
	}
	var seen *caller.Identity
	h := stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = caller.IdentityFrom(r.Context())
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	msg := ""
	if w.Code != http.StatusOK {
		var env struct {
			Error struct {
				Message string `json:"message"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Error.Code != w.Code {
			t.Fatalf("not an error envelope: %s", w.Body)
		}
		msg = env.Error.Message
	}
	return w.Code, msg, seen
}

func TestStage(t *testing.T) {
	want := &caller.Identity{AppID: 1, AppName: "admin", RoleID: 7, RoleName: "readers", Requestor: caller.API}
	cases := []struct {
		name   string
		setup  func(r *http.Request)
		target string
		status int
		msg    string
	}{
		{"platform header", func(r *http.Request) { r.Header.Set(Header, goodKey) }, "/", 200, ""},
		{"DreamFactory header", func(r *http.Request) { r.Header.Set(HeaderDF, goodKey) }, "/", 200, ""},
		{"header with spaces", func(r *http.Request) { r.Header.Set(Header, " "+goodKey+" ") }, "/", 200, ""},
		{"query", nil, "/?api_key=" + goodKey, 200, ""},
		{"header wins over query", func(r *http.Request) { r.Header.Set(Header, goodKey) }, "/?api_key=nope", 200, ""},
		{"nothing", nil, "/", 401, MsgNoCredentials},
		{"token but no key", func(r *http.Request) { r.Header.Set("X-Platform-Session-Token", "a.b.c") }, "/", 401, MsgNoKey},
		{"bearer but no key", func(r *http.Request) { r.Header.Set("Authorization", "Bearer a.b.c") }, "/", 401, MsgNoKey},
		{"query token but no key", nil, "/?session_token=a.b.c", 401, MsgNoKey},
		{"unknown key", func(r *http.Request) { r.Header.Set(Header, strings.Repeat("0", 64)) }, "/", 401, MsgUnknownKey},
		{"key with a different case", func(r *http.Request) { r.Header.Set(Header, strings.ToUpper(goodKey)) }, "/", 401, MsgUnknownKey},
		{"prefix of a key", func(r *http.Request) { r.Header.Set(Header, goodKey[:63]) }, "/", 401, MsgUnknownKey},
		{"huge key", func(r *http.Request) { r.Header.Set(Header, strings.Repeat("a", 10000)) }, "/", 401, MsgUnknownKey},
		{"inactive app", func(r *http.Request) { r.Header.Set(Header, inactiveKey) }, "/", 403, MsgAppInactive},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tc.target, nil)
			if tc.setup != nil {
				tc.setup(r)
			}
			status, msg, seen := serve(t, r)
			if status != tc.status || msg != tc.msg {
				t.Fatalf("got %d %q, want %d %q", status, msg, tc.status, tc.msg)
			}
			if status == 200 {
				if diff := cmp.Diff(want, seen); diff != "" {
					t.Errorf("identity (-want +got):\n%s", diff)
				}
			} else if seen != nil {
				t.Error("the next handler ran after a refusal")
			}
		})
	}
}

func TestScriptCallsKeepTheirIdentity(t *testing.T) {
	inherited := &caller.Identity{AppID: 9, UserID: 3, Requestor: caller.Script}
	r := httptest.NewRequest("GET", "/", nil)
	r = r.WithContext(caller.WithIdentity(r.Context(), inherited))
	status, _, seen := serve(t, r)
	if status != 200 || seen != inherited {
		t.Fatalf("script call = %d %+v", status, seen)
	}
	// An API identity in the context is not trusted as a key.
	r = httptest.NewRequest("GET", "/", nil)
	r = r.WithContext(caller.WithIdentity(r.Context(), &caller.Identity{AppID: 9, Requestor: caller.API}))
	if status, _, _ := serve(t, r); status != 401 {
		t.Errorf("API identity without key = %d", status)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without Apps succeeded")
	}
}

func TestKeyFromRequest(t *testing.T) {
	r := httptest.NewRequest("GET", "/?api_key=q", nil)
	if k := KeyFromRequest(r); k != "q" {
		t.Errorf("query key = %q", k)
	}
	r.Header.Set(HeaderDF, "d")
	if k := KeyFromRequest(r); k != "d" {
		t.Errorf("DreamFactory header = %q", k)
	}
	r.Header.Set(Header, "p")
	if k := KeyFromRequest(r); k != "p" {
		t.Errorf("platform header = %q", k)
	}
}

func TestDreamFactoryKeyless(t *testing.T) {
	stage, err := New(Options{Apps: apps(), Keyless: DreamFactoryKeyless})
	if err != nil {
		t.Fatal(err)
	}
	svc := map[string]*store.Service{
		"system": {Name: "system", Type: "system"}, "user": {Name: "user", Type: "user"},
		"login": {Name: "login", Type: "user"}, "db": {Name: "db", Type: "sqlite"},
	}
	keyless := &caller.Identity{Requestor: caller.API}
	for _, tc := range []struct {
		name, method, svc, res string
		header                 map[string]string
		status                 int
		want                   *caller.Identity
	}{
		{"admin login", "POST", "system", "admin/session", nil, 200, keyless},
		{"admin reset", "POST", "system", "admin/password", nil, 200, keyless},
		{"user login", "POST", "user", "session", nil, 200, keyless},
		{"login on a user service named otherwise", "POST", "login", "session", nil, 200, keyless},
		{"register", "POST", "user", "register", nil, 200, keyless},
		{"user reset", "POST", "user", "password", nil, 200, keyless},
		{"session read needs a token", "GET", "system", "admin/session", nil, 401, nil},
		{"profile needs a token", "POST", "user", "profile", nil, 401, nil},
		{"data needs a key or a token", "GET", "db", "_table/x", nil, 401, nil},
		{"system resource needs a key or a token", "POST", "system", "app", nil, 401, nil},
		{"token alone", "GET", "db", "_table/x", map[string]string{"X-DreamFactory-Session-Token": "t"}, 200, keyless},
		{"bearer alone", "GET", "system", "app", map[string]string{"Authorization": "Bearer t"}, 200, keyless},
		{"a bad key is still refused", "POST", "system", "admin/session", map[string]string{"X-DreamFactory-API-Key": "nope"}, 401, nil},
		{"a good key still names its app", "POST", "user", "session", map[string]string{"X-DreamFactory-API-Key": goodKey}, 200,
			&caller.Identity{AppID: 1, AppName: "admin", RoleID: 7, RoleName: "readers", Requestor: caller.API}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/api/v2/"+tc.svc+"/"+tc.res, nil)
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			r = r.WithContext(service.WithTarget(r.Context(), &service.Target{Service: svc[tc.svc], Resource: tc.res, Verb: tc.method}))
			var seen *caller.Identity
			w := httptest.NewRecorder()
			stage(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = caller.IdentityFrom(r.Context()) })).ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if diff := cmp.Diff(tc.want, seen); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
		})
	}
	// Without the option every one of them needs a key.
	r := httptest.NewRequest("POST", "/api/v2/system/admin/session", nil)
	r = r.WithContext(service.WithTarget(r.Context(), &service.Target{Service: svc["system"], Resource: "admin/session", Verb: "POST"}))
	if code, msg, _ := serve(t, r); code != 401 || msg != MsgNoCredentials {
		t.Errorf("spec mode: %d %q", code, msg)
	}
}
