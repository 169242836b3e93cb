package proxy_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/handlers/ratelimit"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/identity"
	"github.com/portcullis-dev/portcullis/proxy/proxytest"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
	"github.com/portcullis-dev/portcullis/proxy/user"
)

// rlEchoType is a service type whose backend answers 200 with what the
// pipeline told it: the caller and the target.
type rlEchoType struct{}

func (rlEchoType) Info() service.Info {
	return service.Info{Name: "rlecho", Label: "Limits echo", Group: "Test"}
}
func (rlEchoType) ValidateConfig(json.RawMessage) error { return nil }
func (rlEchoType) New(context.Context, *store.Service, service.Deps) (service.Backend, error) {
	return rlEchoBackend{}, nil
}

type rlEchoBackend struct{}

func (rlEchoBackend) Close() error { return nil }
func (rlEchoBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := service.TargetFrom(r.Context())
	out := map[string]any{"resource": t.Resource, "verb": t.Verb}
	if id := caller.IdentityFrom(r.Context()); id != nil {
		out["user_id"], out["role_id"], out["admin"] = id.UserID, id.RoleID, id.Admin
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// limitsEnv is an instance with two echo services, an app whose default
// role (keyrole) reaches them, two more roles and three users signed in
// through that app (alice and carol in role staff, bob in role guest), plus
// an administrator's session.
type limitsEnv struct {
	in          *proxytest.Instance
	key         string // the app's API key
	echo, other int64  // service ids
	staff, gst  int64  // role ids
	users       map[string]int64
	admin       *proxytest.Client
	clients     map[string]*proxytest.Client // by user name, and "key" for the API key alone
}

const userPassword = "user-password-1"

func newLimitsEnv(t *testing.T, sys dialects.Config, adjust func(*proxy.Config)) *limitsEnv {
	t.Helper()
	in := proxytest.Start(t, sys, adjust, proxy.WithTypes(rlEchoType{}))
	ctx := t.Context()
	db := in.Store.DB
	env := &limitsEnv{in: in, users: map[string]int64{}, clients: map[string]*proxytest.Client{}}
	mustExec := func(_ sql.Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	var services []int64
	for _, name := range []string{"echo", "other"} {
		svc := &store.Service{Name: name, Label: name, Type: "rlecho", IsActive: true, Mutable: true, Deletable: true, Config: "{}"}
		mustExec(db.NewInsert().Model(svc).Exec(ctx))
		services = append(services, svc.ID)
	}
	env.echo, env.other = services[0], services[1]
	// Every role reaches both services with every verb, from clients and
	// scripts alike.
	roles := map[string]int64{}
	for _, name := range []string{"staff", "guest", "keyrole"} {
		r := &store.Role{Name: name, IsActive: true}
		mustExec(db.NewInsert().Model(r).Exec(ctx))
		roles[name] = r.ID
		for _, sid := range services {
			for _, comp := range []string{"", "*"} {
				mustExec(db.NewInsert().Model(&store.RoleServiceAccess{RoleID: r.ID, ServiceID: &sid, Component: comp,
					VerbMask: 31, RequestorMask: 3, FilterOp: "AND"}).Exec(ctx))
			}
		}
	}
	env.staff, env.gst = roles["staff"], roles["guest"]
	keyRole := roles["keyrole"]
	app := &store.App{Name: "limits", Label: "limits", IsActive: true, APIKey: store.NewAPIKey(), RoleID: &keyRole}
	mustExec(db.NewInsert().Model(app).Exec(ctx))
	env.key = app.APIKey

	// Passwords hashed at bcrypt's minimum cost: logins stay fast under
	// the race detector.
	hash, err := bcrypt.GenerateFromPassword([]byte(userPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		name string
		role int64
	}{{"alice", env.staff}, {"bob", env.gst}, {"carol", env.staff}} {
		rec := &store.User{Name: u.name, Email: u.name + "@example.com", Password: string(hash), IsActive: true}
		mustExec(db.NewInsert().Model(rec).Exec(ctx))
		mustExec(db.NewInsert().Model(&store.UserAppRole{UserID: rec.ID, AppID: app.ID, RoleID: u.role}).Exec(ctx))
		env.users[u.name] = rec.ID
	}
	mustExec(db.NewUpdate().Model((*store.User)(nil)).Set("password = ?", string(hash)).Where("email = ?", proxytest.AdminEmail).Exec(ctx))
	if err := in.Store.Touch(ctx); err != nil {
		t.Fatal(err)
	}
	if err := in.Proxy.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	for name := range env.users {
		env.clients[name] = &proxytest.Client{Inst: in, APIKey: env.key, Session: userSession(t, in, env.key, name+"@example.com")}
	}
	env.clients["key"] = &proxytest.Client{Inst: in, APIKey: env.key}
	env.admin = &proxytest.Client{Inst: in, APIKey: env.key, Session: adminSession(t, in, env.key)}
	return env
}

// userSession signs a user in through /api/v2/user/session.
func userSession(t *testing.T, in *proxytest.Instance, key, email string) string {
	t.Helper()
	c := &proxytest.Client{Inst: in, APIKey: key}
	r := c.Do(t, http.MethodPost, "/api/v2/user/session", map[string]string{"email": email, "password": userPassword})
	if r.Status != http.StatusOK {
		t.Fatalf("login %s: %d %s", email, r.Status, r.Body)
	}
	var s struct {
		SessionToken string `json:"session_token"`
	}
	r.JSON(t, &s)
	return s.SessionToken
}

// adminSession signs the administrator in through
// /api/v2/system/admin/session; while that route is not wired, it asks
// the identity engine directly (the token is signed with the instance's key, so the
// session stage accepts it the same way).
func adminSession(t *testing.T, in *proxytest.Instance, key string) string {
	t.Helper()
	body := map[string]string{"email": proxytest.AdminEmail, "password": userPassword}
	c := &proxytest.Client{Inst: in, APIKey: key}
	r := c.Do(t, http.MethodPost, "/api/v2/system/admin/session", body)
	if r.Status != http.StatusOK {
		a, err := identity.New(in.Store, identity.Options{Snapshot: in.Proxy.Snapshot})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(body)
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v2/system/admin/session", bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/json")
		app := in.Proxy.Snapshot().AppByKey(key)
		req = req.WithContext(caller.WithIdentity(req.Context(), &caller.Identity{AppID: app.ID, AppName: app.Name, Requestor: caller.API}))
		rec := httptest.NewRecorder()
		user.NewSignIn(a, true).Login().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("admin login: %d %s", rec.Code, rec.Body)
		}
		r = &proxytest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	}
	var s struct {
		SessionToken string `json:"session_token"`
	}
	r.JSON(t, &s)
	if s.SessionToken == "" {
		t.Fatalf("admin login: no token in %s", r.Body)
	}
	return s.SessionToken
}

// createLimit creates a limit through the system API and returns its id.
func (env *limitsEnv) createLimit(t *testing.T, rec map[string]any) int64 {
	t.Helper()
	if _, ok := rec["name"]; !ok {
		rec["name"] = fmt.Sprintf("limit %v %d", rec["type"], time.Now().UnixNano())
	}
	if _, ok := rec["period"]; !ok {
		rec["period"] = "minute"
	}
	r := env.admin.Do(t, http.MethodPost, "/api/v2/system/limit", map[string]any{"resource": []any{rec}})
	if r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("create limit %v: %d %s", rec, r.Status, r.Body)
	}
	var out struct {
		Resource []struct {
			ID int64 `json:"id"`
		} `json:"resource"`
	}
	r.JSON(t, &out)
	if len(out.Resource) != 1 || out.Resource[0].ID == 0 {
		t.Fatalf("create limit: %s", r.Body)
	}
	return out.Resource[0].ID
}

// clearLimits deletes every limit through the system API.
func (env *limitsEnv) clearLimits(t *testing.T) {
	t.Helper()
	var ids []string
	for _, l := range env.in.Proxy.Snapshot().Limits {
		ids = append(ids, strconv.FormatInt(l.ID, 10))
	}
	if len(ids) == 0 {
		return
	}
	r := env.admin.Do(t, http.MethodDelete, "/api/v2/system/limit?ids="+strings.Join(ids, ","), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("delete limits: %d %s", r.Status, r.Body)
	}
}

// req is one call of a scenario: who calls what, and the status expected.
type req struct {
	who    string // alice, bob, carol, key (API key alone) or admin
	method string // default GET
	path   string // below /api/v2/
	want   int
}

func (env *limitsEnv) client(who string) *proxytest.Client {
	if who == "admin" {
		return env.admin
	}
	return env.clients[who]
}

func (env *limitsEnv) run(t *testing.T, steps []req) []*proxytest.Response {
	t.Helper()
	var out []*proxytest.Response
	for i, s := range steps {
		m := s.method
		if m == "" {
			m = http.MethodGet
		}
		r := env.client(s.who).Do(t, m, "/api/v2/"+s.path, nil)
		if r.Status != s.want {
			t.Fatalf("step %d: %s %s %s: %d, want %d; body %s", i, s.who, m, s.path, r.Status, s.want, r.Body)
		}
		out = append(out, r)
	}
	return out
}

func TestLimitsEndToEnd(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		env := newLimitsEnv(t, sys, nil)
		t.Run("types", func(t *testing.T) { testLimitTypes(t, env) })
		t.Run("verb", func(t *testing.T) { testLimitVerb(t, env) })
		t.Run("inactive", func(t *testing.T) { testLimitInactive(t, env) })
		t.Run("override", func(t *testing.T) { testLimitOverride(t, env) })
		t.Run("exemptions and headers", func(t *testing.T) { testLimitHeaders(t, env) })
		t.Run("limit_cache", func(t *testing.T) { testLimitCache(t, env) })
		t.Run("changes without restart", func(t *testing.T) { testLimitChanges(t, env) })
	})
}

const (
	ok   = http.StatusOK
	over = http.StatusTooManyRequests
)

func testLimitTypes(t *testing.T, env *limitsEnv) {
	tests := []struct {
		name  string
		limit map[string]any
		steps []req
	}{
		{"instance", map[string]any{"type": "instance", "rate": 3}, []req{
			{who: "alice", path: "echo", want: ok}, {who: "key", path: "other", want: ok},
			{who: "bob", path: "echo/x", want: ok}, {who: "carol", path: "other", want: over}, {who: "key", path: "echo", want: over},
		}},
		{"instance.user", map[string]any{"type": "instance.user", "rate": 1, "user_id": env.users["alice"]}, []req{
			{who: "alice", path: "echo", want: ok}, {who: "bob", path: "echo", want: ok}, {who: "key", path: "echo", want: ok},
			{who: "alice", path: "other", want: over}, {who: "bob", path: "echo", want: ok},
		}},
		{"instance.each_user", map[string]any{"type": "instance.each_user", "rate": 1}, []req{
			{who: "alice", path: "echo", want: ok}, {who: "bob", path: "other", want: ok}, {who: "key", path: "echo", want: ok},
			{who: "key", path: "echo", want: ok}, {who: "alice", path: "other", want: over}, {who: "bob", path: "echo", want: over},
			{who: "carol", path: "echo", want: ok},
		}},
		{"instance.role", map[string]any{"type": "instance.role", "rate": 2, "role_id": env.staff}, []req{
			{who: "alice", path: "echo", want: ok}, {who: "bob", path: "echo", want: ok}, {who: "key", path: "echo", want: ok},
			{who: "carol", path: "other", want: ok}, {who: "alice", path: "echo", want: over}, {who: "bob", path: "echo", want: ok},
		}},
		{"instance.service", map[string]any{"type": "instance.service", "rate": 2, "service_id": env.echo}, []req{
			{who: "alice", path: "echo", want: ok}, {who: "bob", path: "other", want: ok}, {who: "key", path: "echo/_table/x", want: ok},
			{who: "carol", path: "echo", want: over}, {who: "carol", path: "other", want: ok},
		}},
		{"instance.user.service", map[string]any{"type": "instance.user.service", "rate": 1, "user_id": env.users["alice"], "service_id": env.echo}, []req{
			{who: "alice", path: "echo", want: ok}, {who: "alice", path: "other", want: ok}, {who: "bob", path: "echo", want: ok},
			{who: "alice", path: "echo/a/b", want: over},
		}},
		{"instance.each_user.service", map[string]any{"type": "instance.each_user.service", "rate": 1, "service_id": env.echo}, []req{
			{who: "alice", path: "echo", want: ok}, {who: "bob", path: "echo", want: ok}, {who: "alice", path: "other", want: ok},
			{who: "key", path: "echo", want: ok}, {who: "alice", path: "echo", want: over}, {who: "bob", path: "echo/z", want: over},
		}},
		{"instance.service.endpoint", map[string]any{"type": "instance.service.endpoint", "rate": 2, "service_id": env.echo, "endpoint": "_table/contact/:id"}, []req{
			{who: "alice", path: "echo/_table/contact/17", want: ok}, {who: "bob", path: "echo/_table/contact", want: ok},
			{who: "bob", path: "other/_table/contact/17", want: ok}, {who: "key", path: "echo/_table/contact/18", want: ok},
			{who: "carol", path: "echo/_table/Contact/19/", want: over},
		}},
		{"instance.service.endpoint uuid and hash", map[string]any{"type": "instance.service.endpoint", "rate": 1, "service_id": env.echo, "endpoint": "_table/doc/:uuid"}, []req{
			{who: "alice", path: "echo/_table/doc/123e4567-e89b-12d3-a456-426614174000", want: ok},
			{who: "alice", path: "echo/_table/doc/d41d8cd98f00b204e9800998ecf8427e", want: ok}, // a :hash, another bucket
			{who: "bob", path: "echo/_table/doc/AAAAAAAA-E89B-12D3-A456-426614174000", want: over},
		}},
		{"instance.user.service.endpoint", map[string]any{"type": "instance.user.service.endpoint", "rate": 1, "user_id": env.users["bob"], "service_id": env.echo, "endpoint": "_table/*"}, []req{
			{who: "bob", path: "echo/_table/todo/1", want: ok}, {who: "alice", path: "echo/_table/todo/1", want: ok},
			{who: "bob", path: "echo/_schema", want: ok}, {who: "bob", path: "echo/_table", want: over},
		}},
		{"instance.each_user.service.endpoint", map[string]any{"type": "instance.each_user.service.endpoint", "rate": 1, "service_id": env.echo, "endpoint": "_table/todo"}, []req{
			{who: "alice", path: "echo/_table/todo", want: ok}, {who: "bob", path: "echo/_table/todo", want: ok},
			{who: "alice", path: "echo/_table/contact", want: ok}, {who: "key", path: "echo/_table/todo", want: ok},
			{who: "alice", path: "echo/_table/todo", want: over}, {who: "carol", path: "echo/_table/todo", want: ok},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env.clearLimits(t)
			env.createLimit(t, tt.limit)
			env.run(t, tt.steps)
		})
	}
	env.clearLimits(t)
}

func testLimitVerb(t *testing.T, env *limitsEnv) {
	defer env.clearLimits(t)
	env.createLimit(t, map[string]any{"type": "instance.each_user", "rate": 1, "verb": "delete"})
	env.run(t, []req{
		{who: "alice", path: "echo", want: ok}, {who: "alice", method: "POST", path: "echo", want: ok},
		{who: "alice", method: "DELETE", path: "echo/1", want: ok}, {who: "alice", path: "echo", want: ok},
		{who: "alice", method: "DELETE", path: "echo/2", want: over}, {who: "bob", method: "DELETE", path: "echo", want: ok},
	})
	// A tunnelled DELETE (POST with X-HTTP-Method) counts as a DELETE.
	c := *env.clients["bob"]
	c.Header = http.Header{"X-Http-Method": {"DELETE"}}
	if r := c.Do(t, http.MethodPost, "/api/v2/echo/3", nil); r.Status != over {
		t.Fatalf("tunnelled DELETE: %d %s, want 429", r.Status, r.Body)
	}
}

func testLimitInactive(t *testing.T, env *limitsEnv) {
	defer env.clearLimits(t)
	id := env.createLimit(t, map[string]any{"type": "instance.user", "rate": 1, "user_id": env.users["carol"], "is_active": false})
	env.run(t, []req{{who: "carol", path: "echo", want: ok}, {who: "carol", path: "echo", want: ok}})
	for _, r := range env.run(t, []req{{who: "carol", path: "echo", want: ok}}) {
		if v := r.Header.Get(ratelimit.HeaderLimit); v != "" {
			t.Errorf("inactive limit sent %s: %q", ratelimit.HeaderLimit, v)
		}
	}
	patchLimit(t, env, id, map[string]any{"is_active": true})
	env.run(t, []req{{who: "carol", path: "echo", want: ok}, {who: "carol", path: "echo", want: over}})
	patchLimit(t, env, id, map[string]any{"is_active": false})
	env.run(t, []req{{who: "carol", path: "echo", want: ok}})
}

func patchLimit(t *testing.T, env *limitsEnv, id int64, fields map[string]any) {
	t.Helper()
	r := env.admin.Do(t, http.MethodPatch, fmt.Sprintf("/api/v2/system/limit/%d", id), fields)
	if r.Status != http.StatusOK {
		t.Fatalf("patch limit %d: %d %s", id, r.Status, r.Body)
	}
}

func testLimitOverride(t *testing.T, env *limitsEnv) {
	defer env.clearLimits(t)
	env.createLimit(t, map[string]any{"type": "instance.each_user.service", "rate": 1, "service_id": env.echo})
	env.createLimit(t, map[string]any{"type": "instance.user.service", "rate": 3, "service_id": env.echo, "user_id": env.users["alice"]})
	env.run(t, []req{
		{who: "bob", path: "echo", want: ok}, {who: "bob", path: "echo", want: over},
		{who: "alice", path: "echo", want: ok}, {who: "alice", path: "echo", want: ok}, {who: "alice", path: "echo", want: ok},
		{who: "alice", path: "echo", want: over},
	})
}

func testLimitHeaders(t *testing.T, env *limitsEnv) {
	defer env.clearLimits(t)
	id := env.createLimit(t, map[string]any{"type": "instance", "rate": 2, "name": "two a minute"})
	start := time.Now().Unix()
	// Administrators' sessions are exempt: not counted, no headers. The API
	// key alone is not an administrator.
	for _, r := range env.run(t, []req{{who: "admin", path: "echo", want: ok}, {who: "admin", path: "echo", want: ok}, {who: "admin", path: "echo", want: ok}}) {
		if v := r.Header.Get(ratelimit.HeaderLimit); v != "" {
			t.Errorf("administrator got %s: %q", ratelimit.HeaderLimit, v)
		}
		var body map[string]any
		r.JSON(t, &body)
		if body["admin"] != true {
			t.Fatalf("the admin session is not an administrator's: %s", r.Body)
		}
	}
	rs := env.run(t, []req{{who: "key", path: "echo", want: ok}, {who: "alice", path: "echo", want: ok}, {who: "bob", path: "echo", want: over}})
	for i, wantRemaining := range []string{"1", "0", "0"} {
		h := rs[i].Header
		if h.Get(ratelimit.HeaderLimit) != "2" || h.Get(ratelimit.HeaderRemaining) != wantRemaining {
			t.Errorf("response %d: limit %q remaining %q, want 2 and %s", i, h.Get(ratelimit.HeaderLimit), h.Get(ratelimit.HeaderRemaining), wantRemaining)
		}
		reset, err := strconv.ParseInt(h.Get(ratelimit.HeaderReset), 10, 64)
		if err != nil || reset < start+59 || reset > time.Now().Unix()+61 {
			t.Errorf("response %d: X-RateLimit-Reset %q, want a Unix time about a minute ahead", i, h.Get(ratelimit.HeaderReset))
		}
	}
	if ra, err := strconv.Atoi(rs[2].Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After %q", rs[2].Header.Get("Retry-After"))
	}
	if rs[0].Header.Get("Retry-After") != "" {
		t.Errorf("Retry-After on a 200")
	}
	var env429 struct {
		Error struct {
			Code       int              `json:"code"`
			Message    string           `json:"message"`
			StatusCode int              `json:"status_code"`
			Context    []map[string]any `json:"context"`
		} `json:"error"`
	}
	rs[2].JSON(t, &env429)
	e := env429.Error
	if e.Code != 429 || e.StatusCode != 429 || e.Message != "API limit(s) exceeded. " || len(e.Context) != 1 {
		t.Fatalf("429 envelope: %s", rs[2].Body)
	}
	c := e.Context[0]
	if c["id"] != float64(id) || c["name"] != "two a minute" || c["type"] != "instance" || c["rate"] != float64(2) ||
		c["period"] != "minute" || c["key_text"] != "instance.minute" {
		t.Errorf("429 context: %v", c)
	}
}

// limitCounter is one entry of GET /system/limit_cache.
type limitCounter struct {
	ID        int64  `json:"id"`
	Key       string `json:"key"`
	Max       int64  `json:"max"`
	Attempts  int64  `json:"attempts"`
	Remaining int64  `json:"remaining"`
	UserID    int64  `json:"user_id"`
}

func (env *limitsEnv) counters(t *testing.T) map[[2]int64]limitCounter {
	t.Helper()
	r := env.admin.Do(t, http.MethodGet, "/api/v2/system/limit_cache", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("limit_cache: %d %s", r.Status, r.Body)
	}
	var out struct {
		Resource []limitCounter `json:"resource"`
	}
	r.JSON(t, &out)
	m := map[[2]int64]limitCounter{}
	for _, c := range out.Resource {
		m[[2]int64{c.ID, c.UserID}] = c
	}
	return m
}

func testLimitCache(t *testing.T, env *limitsEnv) {
	defer env.clearLimits(t)
	a := env.createLimit(t, map[string]any{"type": "instance.service", "rate": 2, "service_id": env.other})
	b := env.createLimit(t, map[string]any{"type": "instance.each_user", "rate": 1})
	env.run(t, []req{
		{who: "key", path: "other", want: ok}, {who: "key", path: "other", want: ok}, {who: "key", path: "other", want: over},
		{who: "alice", path: "echo", want: ok}, {who: "alice", path: "echo", want: over},
	})
	cs := env.counters(t)
	if c := cs[[2]int64{a, 0}]; c.Max != 2 || c.Attempts != 3 || c.Remaining != 0 {
		t.Errorf("service counter %+v, want max 2, attempts 3, remaining 0", c)
	}
	if c := cs[[2]int64{b, env.users["alice"]}]; c.Max != 1 || c.Attempts != 2 || c.Remaining != 0 {
		t.Errorf("alice's counter %+v, want max 1, attempts 2", c)
	}
	if c, found := cs[[2]int64{b, env.users["bob"]}]; !found || c.Attempts != 0 || c.Remaining != 1 {
		t.Errorf("bob's counter %+v (listed %v), want attempts 0, remaining 1", c, found)
	}

	// The same counters through the limits, as DreamFactory's related
	// limit_cache_by_limit_id.
	r := env.admin.Do(t, http.MethodGet, fmt.Sprintf("/api/v2/system/limit?ids=%d,%d&related=limit_cache_by_limit_id", a, b), nil)
	var withCache struct {
		Resource []struct {
			ID       int64          `json:"id"`
			Counters []limitCounter `json:"limit_cache_by_limit_id"`
		} `json:"resource"`
	}
	r.JSON(t, &withCache)
	if len(withCache.Resource) != 2 {
		t.Fatalf("limits with counters: %d %s", r.Status, r.Body)
	}
	for _, l := range withCache.Resource {
		for _, c := range l.Counters {
			if c.ID != l.ID || c != cs[[2]int64{c.ID, c.UserID}] {
				t.Errorf("limit %d lists counter %+v, limit_cache has %+v", l.ID, c, cs[[2]int64{c.ID, c.UserID}])
			}
		}
		if want := map[int64]int{a: 1, b: len(env.users)}[l.ID]; len(l.Counters) < 1 || l.ID == a && len(l.Counters) != want {
			t.Errorf("limit %d lists %d counters: %s", l.ID, len(l.Counters), r.Body)
		}
	}

	// Reset one limit: its counter starts again, the other's does not.
	if r := env.admin.Do(t, http.MethodDelete, fmt.Sprintf("/api/v2/system/limit_cache/%d", a), nil); r.Status != http.StatusOK {
		t.Fatalf("reset %d: %d %s", a, r.Status, r.Body)
	}
	env.run(t, []req{{who: "key", path: "other", want: ok}, {who: "alice", path: "echo", want: over}})
	// Reset everything.
	if r := env.admin.Do(t, http.MethodDelete, "/api/v2/system/limit_cache?force=true", nil); r.Status != http.StatusOK {
		t.Fatalf("reset all: %d %s", r.Status, r.Body)
	}
	env.run(t, []req{{who: "alice", path: "echo", want: ok}, {who: "key", path: "other", want: ok}, {who: "key", path: "other", want: ok}, {who: "key", path: "other", want: over}})
}

func testLimitChanges(t *testing.T, env *limitsEnv) {
	defer env.clearLimits(t)
	id := env.createLimit(t, map[string]any{"type": "instance.user", "rate": 1, "user_id": env.users["alice"]})
	env.run(t, []req{{who: "alice", path: "echo", want: ok}, {who: "alice", path: "echo", want: over}})

	// A new rate applies at once and keeps the counter (2 so far).
	patchLimit(t, env, id, map[string]any{"rate": 3})
	env.run(t, []req{{who: "alice", path: "echo", want: ok}, {who: "alice", path: "echo", want: over}})

	// Moving the limit to another user starts a fresh counter for bob.
	patchLimit(t, env, id, map[string]any{"user_id": env.users["bob"]})
	env.run(t, []req{
		{who: "alice", path: "echo", want: ok}, {who: "bob", path: "echo", want: ok}, {who: "bob", path: "echo", want: ok},
		{who: "bob", path: "echo", want: ok}, {who: "bob", path: "echo", want: over},
	})

	// A change made behind the API's back (another instance, a script
	// against the database) is picked up by the configuration poll.
	ctx := t.Context()
	if _, err := env.in.Store.DB.NewUpdate().Model((*store.Limit)(nil)).Set("rate = ?", 5).Where("id = ?", id).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.in.Store.Touch(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return limitRate(env.in.Proxy, id) == 5 })
	env.run(t, []req{{who: "bob", path: "echo", want: ok}, {who: "bob", path: "echo", want: over}})

	// Deleting the limit removes it, and its counters with it: a new limit
	// of the same shape starts from zero.
	env.clearLimits(t)
	env.run(t, []req{{who: "bob", path: "echo", want: ok}, {who: "bob", path: "echo", want: ok}})
	env.createLimit(t, map[string]any{"type": "instance.user", "rate": 1, "user_id": env.users["bob"]})
	env.run(t, []req{{who: "bob", path: "echo", want: ok}, {who: "bob", path: "echo", want: over}})
}

// limitRate returns the rate of a limit in the engine in force, 0 if none.
func limitRate(p *proxy.Server, id int64) int64 {
	for _, l := range p.Limits().Limits() {
		if l.ID == id {
			return l.Rate
		}
	}
	return 0
}

// fire sends n requests at once, round robin over the clients, and returns
// how many got 200 and how many 429.
func fire(t *testing.T, n int, clients []*proxytest.Client, path string) (passed, rejected int64) {
	t.Helper()
	var p, r, other atomic.Int64
	var mu sync.Mutex
	others := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		c := clients[i%len(clients)]
		wg.Go(func() {
			<-start
			switch s := doQuiet(c, path); s {
			case ok:
				p.Add(1)
			case over:
				r.Add(1)
			default:
				other.Add(1)
				mu.Lock()
				others[s]++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if other.Load() != 0 {
		t.Fatalf("%d requests got neither 200 nor 429: %v (status: count; -1 a transport error)", other.Load(), others)
	}
	return p.Load(), r.Load()
}

// doQuiet is Client.Do for many goroutines: it returns the status, or -1
// on a transport error, instead of failing the test from a goroutine.
func doQuiet(c *proxytest.Client, path string) int {
	req, err := http.NewRequest(http.MethodGet, c.Inst.URL+path, nil)
	if err != nil {
		return -1
	}
	req.Header.Set("X-Platform-API-Key", c.APIKey)
	if c.Session != "" {
		req.Header.Set("X-Platform-Session-Token", c.Session)
	}
	resp, err := c.Inst.Server.Client().Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	_, _ = bytes.NewBuffer(nil).ReadFrom(resp.Body)
	return resp.StatusCode
}

func TestLimitsConcurrencyMemory(t *testing.T) {
	const rate, n = 40, 400
	env := newLimitsEnv(t, dbtest.Fresh(t, dialects.SQLite), nil)
	env.createLimit(t, map[string]any{"type": "instance.each_user.service", "rate": rate, "service_id": env.echo})
	env.createLimit(t, map[string]any{"type": "instance.service", "rate": 2 * rate, "service_id": env.other})
	// One user hammers echo; everyone hammers other.
	if p, r := fire(t, n, []*proxytest.Client{env.clients["alice"]}, "/api/v2/echo/_table/x"); p != rate || r != n-rate {
		t.Fatalf("each_user.service: %d passed, %d rejected; want %d and %d", p, r, rate, n-rate)
	}
	clients := []*proxytest.Client{env.clients["alice"], env.clients["bob"], env.clients["key"]}
	if p, r := fire(t, n, clients, "/api/v2/other"); p != 2*rate || r != n-2*rate {
		t.Fatalf("service: %d passed, %d rejected; want %d and %d", p, r, 2*rate, n-2*rate)
	}
}

// TestLimitsConcurrencyRedis runs two instances on one system database and
// one Redis: requests fired at both at once share the counters, so exactly
// the limit succeed in total, and a reset through one instance reaches the
// other.
func TestLimitsConcurrencyRedis(t *testing.T) {
	url := dbtest.RedisURL(t)
	dbtest.Each(t, func(t *testing.T, sys dialects.Config) {
		prefix := dbtest.Name("pctest:limits:")
		t.Cleanup(func() { dropKeys(t, url, prefix) })
		env := newLimitsEnv(t, sys, func(c *proxy.Config) { c.RedisURL, c.RedisPrefix = url, prefix })
		if k := env.in.Proxy.LimitStore().Kind(); k != "redis" {
			t.Fatalf("first instance counts in %s, want redis", k)
		}
		// The second instance: its own Redis client and store, same prefix.
		c, err := limiter.OpenRedis(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		st, err := limiter.NewRedisStore(t.Context(), c, limiter.RedisOptions{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		b, err := proxy.New(t.Context(), proxy.Config{DataDir: t.TempDir(), Store: env.in.Store, LimitStore: st,
			ReloadInterval: 50 * time.Millisecond, Logger: proxytest.Logger(t)}, proxy.WithTypes(rlEchoType{}))
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(b)
		t.Cleanup(func() { hs.Close(); b.Close() })
		bInst := &proxytest.Instance{Server: hs, Proxy: b, Store: env.in.Store, AdminKey: env.in.AdminKey}

		const rate, n = 30, 300
		id := env.createLimit(t, map[string]any{"type": "instance.each_user", "rate": rate})
		waitFor(t, func() bool { return limitRate(b, id) == rate })
		alice := env.clients["alice"]
		aliceB := &proxytest.Client{Inst: bInst, APIKey: alice.APIKey, Session: alice.Session}
		if p, r := fire(t, n, []*proxytest.Client{alice, aliceB}, "/api/v2/echo"); p != rate || r != n-rate {
			t.Fatalf("two instances: %d passed, %d rejected; want %d and %d", p, r, rate, n-rate)
		}
		// Bob has his own counter, shared as well.
		bob := env.clients["bob"]
		bobB := &proxytest.Client{Inst: bInst, APIKey: bob.APIKey, Session: bob.Session}
		if p, _ := fire(t, 3*rate, []*proxytest.Client{bob, bobB}, "/api/v2/echo"); p != rate {
			t.Fatalf("bob: %d passed, want %d", p, rate)
		}

		// The counters the first instance reports are the shared ones.
		cs := env.counters(t)
		if c := cs[[2]int64{id, env.users["bob"]}]; c.Attempts != 3*rate {
			t.Errorf("bob's shared counter: %+v, want %d attempts", c, 3*rate)
		}

		// A reset through the first instance reaches the second within the
		// store's refresh interval.
		if r := env.admin.Do(t, http.MethodDelete, fmt.Sprintf("/api/v2/system/limit_cache/%d", id), nil); r.Status != http.StatusOK {
			t.Fatalf("reset: %d %s", r.Status, r.Body)
		}
		waitFor(t, func() bool { return doQuiet(aliceB, "/api/v2/echo") == ok })
		if p, _ := fire(t, 2*rate, []*proxytest.Client{bob, bobB}, "/api/v2/echo"); p != rate {
			t.Fatalf("bob after the reset: %d passed, want %d", p, rate)
		}
	})
}

// dropKeys removes the keys of one test's prefix.
func dropKeys(t *testing.T, url, prefix string) {
	c, err := limiter.OpenRedis(url)
	if err != nil {
		return
	}
	defer c.Close()
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+":*", 500).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		_ = c.Del(ctx, keys...).Err()
	}
}

// TestLimitsRedisUnreachableAtStart checks that a configured but
// unreachable Redis stops the server from starting, with a clear error.
func TestLimitsRedisUnreachableAtStart(t *testing.T) {
	// An address nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = proxy.New(t.Context(), proxy.Config{DataDir: t.TempDir(), SystemDB: "sqlite://" + t.TempDir() + "/s.db",
		RedisURL: "redis://" + addr + "/0", Logger: proxytest.Logger(t)})
	if err == nil || !strings.Contains(err.Error(), "rate-limit counters") {
		t.Fatalf("New with Redis down: %v, want a rate-limit counters error", err)
	}
	if _, err := proxy.New(t.Context(), proxy.Config{DataDir: t.TempDir(), RedisURL: "http://nope"}); err == nil {
		t.Fatal("New with a bad Redis URL: no error")
	}
}
