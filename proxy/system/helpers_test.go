package system

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

// fakeType is an implemented service type for tests; database types
// require a "database" key in their configuration.
type fakeType struct {
	info service.Info
}

func (f fakeType) Info() service.Info { return f.info }

func (f fakeType) ValidateConfig(raw json.RawMessage) error {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return errors.New("config must be a JSON object")
	}
	if f.info.Group == service.GroupDatabase {
		var errs []error
		if s, _ := m["database"].(string); s == "" {
			errs = append(errs, errors.New("database is required"))
		}
		if p, ok := m["port"]; ok {
			if n, ok := p.(float64); !ok || n < 1 || n > 65535 {
				errs = append(errs, errors.New("port must be between 1 and 65535"))
			}
		}
		return errors.Join(errs...)
	}
	return nil
}

func (f fakeType) New(context.Context, *store.Service, service.Deps) (service.Backend, error) {
	return &fakeBackend{}, nil
}

// fakeBackend caches and lists events.
type fakeBackend struct {
	mu      sync.Mutex
	flushes int
}

func (f *fakeBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {}
func (f *fakeBackend) Close() error                                     { return nil }
func (f *fakeBackend) FlushCache(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushes++
	return nil
}
func (f *fakeBackend) Events(context.Context) ([]service.EventPath, error) {
	return []service.EventPath{
		{Path: "_table", Verbs: []string{"get"}},
		{Path: "_table/{table_name}", Verbs: []string{"get", "post"}, Parameter: map[string][]string{"table_name": {"contact", "todo"}}},
	}, nil
}

// plainBackend neither caches nor lists events.
type plainBackend struct{}

func (plainBackend) ServeHTTP(http.ResponseWriter, *http.Request) {}
func (plainBackend) Close() error                                 { return nil }

type plainType struct{ fakeType }

func (p plainType) New(context.Context, *store.Service, service.Deps) (service.Backend, error) {
	return plainBackend{}, nil
}

// registry is a service.Registry over a store, with a few types.
type registry struct {
	st      *store.Store
	types   map[string]service.Type
	mu      sync.Mutex
	snap    *store.Snapshot
	backend map[string]service.Backend
	reloads int
}

func newRegistry(t testing.TB, st *store.Store, sys *Type) *registry {
	r := &registry{st: st, types: map[string]service.Type{"system": sys}}
	for _, info := range service.Generic {
		switch info.Name {
		case "sqlite", "pgsql", "mysql", "user", "swagger":
			r.types[info.Name] = fakeType{info}
		case "local_file":
			r.types[info.Name] = plainType{fakeType{info}}
		}
	}
	if err := r.Reload(t.Context()); err != nil {
		t.Fatalf("reload: %v", err)
	}
	return r
}

func (r *registry) Types() []service.Info {
	out := append([]service.Info(nil), service.Generic...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (r *registry) Type(name string) (service.Type, bool) {
	t, ok := r.types[name]
	return t, ok
}

func (r *registry) Snapshot() *store.Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snap
}

func (r *registry) Backend(name string) (service.Backend, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.backend[name]
	return b, ok
}

func (r *registry) Reload(ctx context.Context) error {
	snap, err := r.st.Load(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.backend
	r.snap, r.backend, r.reloads = snap, map[string]service.Backend{}, r.reloads+1
	for _, s := range snap.Services {
		typ, ok := r.types[s.Type]
		if !ok || !s.IsActive || s.Type == "system" {
			continue
		}
		if b, ok := old[s.Name]; ok {
			r.backend[s.Name] = b
			continue
		}
		b, err := typ.New(ctx, s, service.Deps{})
		if err == nil {
			r.backend[s.Name] = b
		}
	}
	return nil
}

func (r *registry) Handler() http.Handler { return http.NotFoundHandler() }

// env is one system backend over a fresh, initialised system store.
type env struct {
	t       *testing.T
	st      *store.Store
	reg     *registry
	b       *Backend
	sys     *store.Service
	admin   *caller.Identity
	adminID int64
	limits  *limiter.Store
}

const (
	testAdminEmail    = "admin@example.com"
	testAdminPassword = "admin-password-1"
)

func newEnv(t *testing.T, cfg dialects.Config) *env {
	t.Helper()
	ctx := t.Context()
	st, err := store.OpenConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Init(ctx, store.InitOptions{Email: testAdminEmail, Password: testAdminPassword, Name: "Test Admin"}); err != nil {
		t.Fatalf("init: %v", err)
	}
	e := &env{t: t, st: st, limits: limiter.NewMemoryStore(limiter.MemoryOptions{})}
	typ := NewType(Options{LimitStore: e.limits})
	e.reg = newRegistry(t, st, typ)
	e.sys = e.reg.Snapshot().Service("system")
	be, err := typ.New(ctx, e.sys, service.Deps{Store: st, Registry: e.reg, Version: "9.9.9-test"})
	if err != nil {
		t.Fatalf("new backend: %v", err)
	}
	e.b = be.(*Backend)
	var admin store.User
	if err := st.DB.NewSelect().Model(&admin).Where("email = ?", testAdminEmail).Scan(ctx); err != nil {
		t.Fatalf("admin: %v", err)
	}
	e.adminID = admin.ID
	e.admin = &caller.Identity{UserID: admin.ID, UserEmail: admin.Email, Admin: true, Requestor: caller.API}
	return e
}

// resp is a decoded response.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r *resp) json(t testing.TB) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
	return v
}

func (r *resp) obj(t testing.TB) map[string]any {
	t.Helper()
	m, ok := r.json(t).(map[string]any)
	if !ok {
		t.Fatalf("response is not an object: %s", r.body)
	}
	return m
}

// list returns the resource array of a wrapped response.
func (r *resp) list(t testing.TB) []map[string]any {
	t.Helper()
	m := r.obj(t)
	raw, ok := m["resource"].([]any)
	if !ok {
		t.Fatalf("response has no resource array: %s", r.body)
	}
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i], _ = x.(map[string]any)
	}
	return out
}

// errMsg returns the error envelope's message.
func (r *resp) errMsg(t testing.TB) string {
	t.Helper()
	m := r.obj(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("response is not an error: %s", r.body)
	}
	s, _ := e["message"].(string)
	return s
}

// do calls the backend as id (nil: the admin) with body (nil, a string or
// a value encoded as JSON).
func (e *env) do(method, path string, body any) *resp {
	return e.doAs(e.admin, method, path, body)
}

func (e *env) doAs(id *caller.Identity, method, path string, body any) *resp {
	e.t.Helper()
	return e.doCtx(id, false, method, path, body)
}

// doCtx is doAs with the RBAC stage's mark of a call granted by the
// caller's role.
func (e *env) doCtx(id *caller.Identity, granted bool, method, path string, body any) *resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatalf("encode: %v", err)
		}
		rd = bytes.NewReader(data)
	}
	u, err := url.Parse("http://local/api/v2/system/" + strings.TrimPrefix(path, "/"))
	if err != nil {
		e.t.Fatalf("url: %v", err)
	}
	req := httptest.NewRequestWithContext(e.t.Context(), method, u.String(), rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	ctx := service.WithTarget(req.Context(), &service.Target{Service: e.sys, Resource: strings.Trim(u.Path[len("/api/v2/system/"):], "/"), Verb: method})
	if id != nil {
		ctx = caller.WithIdentity(ctx, id)
	}
	if granted {
		ctx = caller.WithRoleGranted(ctx, true)
	}
	rec := httptest.NewRecorder()
	e.b.ServeHTTP(rec, req.WithContext(ctx))
	return &resp{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// must checks the status and returns the response.
func (e *env) must(status int, method, path string, body any) *resp {
	e.t.Helper()
	r := e.do(method, path, body)
	if r.status != status {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.body)
	}
	return r
}

// createID creates one record and returns its id.
func (e *env) createID(resource string, rec any) int64 {
	e.t.Helper()
	r := e.must(http.StatusCreated, http.MethodPost, resource, map[string]any{"resource": []any{rec}})
	list := r.list(e.t)
	if len(list) != 1 {
		e.t.Fatalf("create %s: %s", resource, r.body)
	}
	n, err := list[0]["id"].(json.Number).Int64()
	if err != nil {
		e.t.Fatalf("create %s: id %v", resource, list[0]["id"])
	}
	return n
}

func num(t testing.TB, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	return i
}

// version returns the configuration version.
func (e *env) version() int64 {
	e.t.Helper()
	v, err := e.st.Version(e.t.Context())
	if err != nil {
		e.t.Fatalf("version: %v", err)
	}
	return v
}

// count counts the rows of model M matching where.
func count[M any](e *env, where string, args ...any) int64 {
	e.t.Helper()
	q := e.st.DB.NewSelect().Model((*M)(nil))
	if where != "" {
		q = q.Where(where, args...)
	}
	n, err := q.Count(e.t.Context())
	if err != nil {
		e.t.Fatalf("count: %v", err)
	}
	return n
}
