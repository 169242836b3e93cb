package session

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/handlers"
	"github.com/portcullis-dev/portcullis/handlers/apikey"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/user"
)

const (
	adminEmail    = "admin@example.com"
	adminPassword = "admin-password-1"
	userEmail     = "user@example.com"
	userPassword  = "user-password-1"
	apiKey        = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

// fixture is a store with an administrator, a user mapped to a role for
// app 1, a role-less user, an identity engine and tokens for them.
type fixture struct {
	st        *store.Store
	auth      *identity.Engine
	snap      *store.Snapshot
	appID     int64
	admin     *store.User
	user      *store.User
	loner     *store.User
	role, off *store.Role
}

func newFixture(t testing.TB, cfg dialects.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Init(ctx, store.InitOptions{Email: adminEmail, Password: adminPassword, AdminAPIKey: apiKey}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st}
	// The lowest bcrypt cost keeps the race detector fast.
	fast := func(pw string) string {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		return string(h)
	}
	if _, err := st.DB.NewUpdate().Model((*store.User)(nil)).Set("password = ?", fast(adminPassword)).
		Where("email = ?", adminEmail).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	hash := fast(userPassword)
	f.user = &store.User{Name: "User", Email: userEmail, Password: hash, IsActive: true}
	f.loner = &store.User{Name: "Loner", Email: "loner@example.com", Password: hash, IsActive: true}
	f.role = &store.Role{Name: "editors", IsActive: true}
	f.off = &store.Role{Name: "retired", IsActive: true}
	for _, m := range []any{f.user, f.loner, f.role, f.off} {
		if _, err := st.DB.NewInsert().Model(m).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DB.NewUpdate().Model((*store.Role)(nil)).Set("is_active = ?", false).Where("id = ?", f.off.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var app store.App
	if err := st.DB.NewSelect().Model(&app).Where("name = ?", "admin").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	f.appID = app.ID
	if _, err := st.DB.NewInsert().Model(&store.UserAppRole{UserID: f.user.ID, AppID: app.ID, RoleID: f.role.ID}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	f.admin = new(store.User)
	if err := st.DB.NewSelect().Model(f.admin).Where("email = ?", adminEmail).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	f.reload(t)
	f.auth, err = identity.New(st, identity.Options{Snapshot: func() *store.Snapshot { return f.snap }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) reload(t testing.TB) {
	t.Helper()
	snap, err := f.st.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f.snap = snap
}

// token logs in through the identity engine.
func (f *fixture) token(t testing.TB, admin bool, email, password string, a *identity.Engine) string {
	t.Helper()
	if a == nil {
		a = f.auth
	}
	ctx := caller.WithIdentity(context.Background(), &caller.Identity{AppID: f.appID, Requestor: caller.API})
	in, err := a.Login(ctx, admin, identity.Fields{"email": email, "password": password}, "192.0.2.1")
	if err != nil {
		t.Fatalf("login %s: %v", email, err)
	}
	return in.Response.SessionToken
}

// verifier is the identity engine's Verifier, as proxy.New wires it.
func (f *fixture) verifier() Verifier { return user.NewSignIn(f.auth, false) }

// stack chains the apikey stage (app 1 with no default role) and the
// session stage, ending in a handler that records the identity.
func (f *fixture) stack(t testing.TB, users *[]string) (http.Handler, **caller.Identity) {
	t.Helper()
	keys, err := apikey.New(apikey.Options{Apps: apikey.NewStatic(apikey.App{ID: f.appID, Name: "admin", APIKey: apiKey, Active: true})})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Verifier: f.verifier()}
	if users != nil {
		opts.SetUser = func(_ context.Context, u string) { *users = append(*users, u) }
	}
	sess, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var seen *caller.Identity
	return handlers.Chain(keys, sess)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = caller.IdentityFrom(r.Context())
	})), &seen
}

type result struct {
	status int
	msg    string
}

func call(t testing.TB, h http.Handler, r *http.Request) result {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	res := result{status: w.Code}
	if w.Code != 200 {
		var env struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Fatalf("not an error envelope: %q", w.Body)
		}
		res.msg = env.Error.Message
	}
	return res
}

func TestStage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		f := newFixture(t, cfg)
		admin := f.token(t, true, adminEmail, adminPassword, nil)
		user := f.token(t, false, userEmail, userPassword, nil)
		loner := f.token(t, false, "loner@example.com", userPassword, nil)
		past, err := identity.New(f.st, identity.Options{Now: func() time.Time { return time.Now().Add(-25 * time.Hour) }})
		if err != nil {
			t.Fatal(err)
		}
		expired := f.token(t, false, userEmail, userPassword, past)
		revoked := f.token(t, false, userEmail, userPassword, nil)
		if err := f.auth.Logout(context.Background(), false, revoked); err != nil {
			t.Fatalf("logout: %v", err)
		}
		base := caller.Identity{AppID: f.appID, AppName: "admin", Requestor: caller.API}
		with := func(mod func(*caller.Identity)) *caller.Identity {
			id := base
			mod(&id)
			return &id
		}
		cases := []struct {
			name   string
			header map[string]string
			query  string
			status int
			msg    string
			want   *caller.Identity
		}{
			{"key only", nil, "", 200, "", &base},
			{"admin", map[string]string{"X-Platform-Session-Token": admin}, "", 200, "", with(func(id *caller.Identity) {
				id.UserID, id.UserEmail, id.UserName, id.Admin = f.admin.ID, adminEmail, f.admin.Name, true
			})},
			{"user with a role for the app", map[string]string{"Authorization": "Bearer " + user}, "", 200, "", with(func(id *caller.Identity) {
				id.UserID, id.UserEmail, id.UserName, id.RoleID, id.RoleName = f.user.ID, userEmail, "User", f.role.ID, "editors"
			})},
			{"user by DreamFactory header", map[string]string{"X-DreamFactory-Session-Token": loner}, "", 200, "", with(func(id *caller.Identity) {
				id.UserID, id.UserEmail, id.UserName = f.loner.ID, "loner@example.com", "Loner"
			})},
			{"user by query", nil, "session_token=" + url.QueryEscape(loner), 200, "", with(func(id *caller.Identity) {
				id.UserID, id.UserEmail, id.UserName = f.loner.ID, "loner@example.com", "Loner"
			})},
			{"expired", map[string]string{"X-Platform-Session-Token": expired}, "", 401, identity.MsgTokenExpired, nil},
			{"revoked", map[string]string{"X-Platform-Session-Token": revoked}, "", 401, identity.MsgTokenRevoked, nil},
			{"garbage", map[string]string{"X-Platform-Session-Token": "garbage"}, "", 401, "", nil},
			{"token without key", map[string]string{"X-Platform-Session-Token": admin, "X-Platform-API-Key": ""}, "", 401, apikey.MsgNoKey, nil},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var users []string
				h, seen := f.stack(t, &users)
				r := httptest.NewRequest("GET", "/?"+tc.query, nil)
				r.Header.Set(apikey.Header, apiKey)
				for k, v := range tc.header {
					if v == "" {
						r.Header.Del(k)
						continue
					}
					r.Header.Set(k, v)
				}
				res := call(t, h, r)
				if res.status != tc.status || (tc.msg != "" && res.msg != tc.msg) {
					t.Fatalf("got %d %q, want %d %q", res.status, res.msg, tc.status, tc.msg)
				}
				if tc.status != 200 {
					if *seen != nil {
						t.Error("the next handler ran after a refusal")
					}
					return
				}
				got := *seen
				if got.SessionID != "" && tc.want.UserID != 0 {
					tc.want.SessionID = got.SessionID
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("identity (-want +got):\n%s", diff)
				}
				if tc.want.UserID != 0 && (len(users) != 1 || users[0] == "" || got.SessionID == "") {
					t.Errorf("SetUser calls %v, session id %q", users, got.SessionID)
				}
			})
		}

		// The user's role turns inactive: 403.
		if _, err := f.st.DB.NewUpdate().Model((*store.UserAppRole)(nil)).Set("role_id = ?", f.off.ID).Where("user_id = ?", f.user.ID).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		f.reload(t)
		h, _ := f.stack(t, nil)
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set(apikey.Header, apiKey)
		r.Header.Set(service.HeaderSessionToken, user)
		if res := call(t, h, r); res.status != 403 || res.msg != identity.MsgRoleInactive {
			t.Errorf("inactive role = %+v", res)
		}
	})
}

func TestLoginRoutesIgnoreTokens(t *testing.T) {
	f := newFixture(t, dbtest.Fresh(t, dialects.SQLite))
	h, seen := f.stack(t, nil)
	cases := []struct {
		svcType, resource, method string
		bypass                    bool
	}{
		{"system", "admin/session", "POST", true},
		{"system", "admin/session", "PUT", true},
		{"system", "admin/session", "GET", false},
		{"system", "admin/session", "DELETE", false},
		{"user", "session", "POST", true},
		{"user", "session", "PUT", true},
		{"user", "session", "GET", false},
		{"user", "profile", "POST", false},
		{"sqlite", "session", "POST", false},
		{"system", "user", "POST", false},
	}
	for _, tc := range cases {
		t.Run(tc.svcType+" "+tc.method+" "+tc.resource, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/", nil)
			r.Header.Set(apikey.Header, apiKey)
			r.Header.Set(service.HeaderSessionToken, "stale.garbage.token")
			target := &service.Target{Service: &store.Service{Name: "svc", Type: tc.svcType}, Resource: tc.resource, Verb: tc.method}
			r = r.WithContext(service.WithTarget(r.Context(), target))
			*seen = nil
			res := call(t, h, r)
			if tc.bypass {
				if res.status != 200 || (*seen).UserID != 0 {
					t.Fatalf("login route: %+v", res)
				}
				return
			}
			if res.status != 401 {
				t.Fatalf("non-login route with a bad token: %+v", res)
			}
		})
	}
}

func TestScriptCallsKeepTheirIdentity(t *testing.T) {
	f := newFixture(t, dbtest.Fresh(t, dialects.SQLite))
	h, seen := f.stack(t, nil)
	inherited := &caller.Identity{AppID: f.appID, UserID: f.user.ID, Requestor: caller.Script}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set(service.HeaderSessionToken, "ignored")
	r = r.WithContext(caller.WithIdentity(r.Context(), inherited))
	if res := call(t, h, r); res.status != 200 || *seen != inherited {
		t.Fatalf("script call: %+v %+v", res, *seen)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without Auth succeeded")
	}
}
