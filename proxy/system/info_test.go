package system

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/limiter"
	"github.com/portcullis-dev/portcullis/proxy/caller"
	"github.com/portcullis-dev/portcullis/proxy/service"
)

func TestAccessControl(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
	user := &caller.Identity{UserID: 42, AppID: 1, RoleID: 3, Requestor: caller.API}
	for _, who := range []struct {
		name string
		id   *caller.Identity
	}{{"anonymous", nil}, {"signed-in user", user}, {"API key only", &caller.Identity{AppID: 1}}} {
		t.Run(who.name, func(t *testing.T) {
			for _, c := range []struct{ method, path string }{
				{http.MethodGet, "app"}, {http.MethodPost, "role"}, {http.MethodGet, "service/1"},
				{http.MethodDelete, "admin/1"}, {http.MethodGet, ""}, {http.MethodGet, "package"},
				{http.MethodGet, "nope"}, {http.MethodPut, "service_type"}, {http.MethodGet, "limit_cache"},
			} {
				r := e.doAs(who.id, c.method, c.path, nil)
				if r.status != http.StatusForbidden || !strings.Contains(r.errMsg(t), "Admin endpoint used by non-admin") {
					t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
				}
			}
			if r := e.doAs(who.id, http.MethodGet, "environment", nil); r.status != http.StatusOK {
				t.Errorf("environment: %d %s", r.status, r.body)
			}
		})
	}
	t.Run("a call granted by the caller's role is admitted", func(t *testing.T) {
		r := e.doCtx(user, true, http.MethodGet, "role", nil)
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})
	t.Run("admins get 404 and 405 for what does not exist", func(t *testing.T) {
		e.must(http.StatusNotFound, http.MethodGet, "nope", nil)
		e.must(http.StatusMethodNotAllowed, http.MethodPost, "environment", nil)
		e.must(http.StatusMethodNotAllowed, http.MethodPut, "service_type", nil)
	})
	t.Run("root lists the resources", func(t *testing.T) {
		r := e.must(http.StatusOK, http.MethodGet, "?as_list=true", nil).obj(t)
		names := r["resource"].([]any)
		for _, want := range []string{"admin", "user", "app", "service", "role", "cors", "limit", "lookup", "custom", "email_template", "event_script", "environment", "package"} {
			if !slices.Contains(names, any(want)) {
				t.Errorf("root lacks %s: %v", want, names)
			}
		}
	})
}

func TestServiceTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
	// Only the types the build implements are listed.
	list := e.must(http.StatusOK, http.MethodGet, "service_type", nil).list(t)
	byName := map[string]map[string]any{}
	for _, x := range list {
		byName[x["name"].(string)] = x
		if x["implemented"] != true {
			t.Errorf("listed but not implemented: %v", x)
		}
	}
	if len(list) != len(e.reg.types) {
		t.Errorf("%d types listed, %d implemented", len(list), len(e.reg.types))
	}
	if s := byName["sqlite"]; s["group"] != "Database" || s["label"] != "SQLite" {
		t.Errorf("sqlite = %v", s)
	}
	if _, ok := byName["cassandra"]; ok {
		t.Errorf("cassandra is listed without an implementation")
	}
	got := e.must(http.StatusOK, http.MethodGet, "service_type?fields=name,label,group&group=database", nil).list(t)
	want := []map[string]any{{"name": "mysql", "label": "MySQL", "group": "Database"}, {"name": "pgsql", "label": "PostgreSQL", "group": "Database"}, {"name": "sqlite", "label": "SQLite", "group": "Database"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	one := e.must(http.StatusOK, http.MethodGet, "service_type/system", nil).obj(t)
	if one["singleton"] != true {
		t.Errorf("system = %v", one)
	}
	e.must(http.StatusNotFound, http.MethodGet, "service_type/nope", nil)
	if msg := e.must(http.StatusNotFound, http.MethodGet, "service_type/cassandra", nil).errMsg(t); !strings.Contains(msg, "not available in this build") {
		t.Errorf("cassandra = %s", msg)
	}
	e.must(http.StatusBadRequest, http.MethodGet, "service_type?fields=secret", nil)
}

func TestEnvironment(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
	anon := e.doAs(nil, http.MethodGet, "environment", nil).obj(t)
	p := anon["platform"].(map[string]any)
	if p["version"] != "9.9.9-test" || p["is_hosted"] != false || p["license"] != "OPEN SOURCE" || p["api_version"] != "2.0" {
		t.Errorf("platform = %v", p)
	}
	if _, ok := p["db_driver"]; ok {
		t.Errorf("anonymous caller sees the database driver")
	}
	if _, ok := anon["server"]; ok {
		t.Errorf("anonymous caller sees the server")
	}
	auth := anon["authentication"].(map[string]any)
	if auth["allow_open_registration"] != false || auth["login_attribute"] != "email" {
		t.Errorf("authentication = %v", auth)
	}
	if a := auth["admin"].(map[string]any); a["path"] != "system/admin/session" || a["verb"] != "POST" {
		t.Errorf("admin login = %v", a)
	}
	if apps := anon["apps"].([]any); len(apps) != 0 {
		t.Errorf("anonymous apps = %v", apps)
	}

	userSvc := e.reg.Snapshot().Service("user")
	e.must(http.StatusOK, http.MethodPatch, "service/"+itoa(userSvc.ID), map[string]any{"config": map[string]any{"allow_open_registration": true}})
	admin := e.must(http.StatusOK, http.MethodGet, "environment", nil).obj(t)
	if admin["authentication"].(map[string]any)["allow_open_registration"] != true {
		t.Errorf("open registration not read from the user service")
	}
	if admin["platform"].(map[string]any)["db_driver"] != "sqlite" || admin["server"] == nil {
		t.Errorf("admin environment = %v", admin)
	}
	if apps := admin["apps"].([]any); len(apps) != 3 {
		t.Errorf("admin apps = %v", apps)
	}
}

func TestConstants(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
	list := e.must(http.StatusOK, http.MethodGet, "constant", nil).list(t)
	if len(list) < 5 {
		t.Fatalf("constants = %v", list)
	}
	vm := e.must(http.StatusOK, http.MethodGet, "constant/verb_mask", nil).obj(t)
	if num(t, vm["GET"]) != 1 || num(t, vm["DELETE"]) != 16 || num(t, vm["CONNECT"]) != 512 {
		t.Errorf("verb_mask = %v", vm)
	}
	lt := e.must(http.StatusOK, http.MethodGet, "constant/limit_type", nil).obj(t)
	if len(lt) != len(limiter.Types()) {
		t.Errorf("limit_type = %v", lt)
	}
	e.must(http.StatusNotFound, http.MethodGet, "constant/nope", nil)
	e.must(http.StatusMethodNotAllowed, http.MethodPost, "constant", map[string]any{})
}

func TestEventsAndCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
	db := e.reg.Snapshot().Service("db")

	t.Run("events per service", func(t *testing.T) {
		got := e.must(http.StatusOK, http.MethodGet, "event?service=db", nil).obj(t)
		want := map[string]any{"db": map[string]any{
			"db._table": map[string]any{"type": "api", "endpoints": []any{"db._table.get"}, "parameter": nil},
			"db._table.{table_name}": map[string]any{"type": "api", "endpoints": []any{"db._table.{table_name}.get", "db._table.{table_name}.post"},
				"parameter": map[string]any{"table_name": []any{"contact", "todo"}}},
		}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("scriptable flat list with resolved names", func(t *testing.T) {
		list := e.must(http.StatusOK, http.MethodGet, "event?service=db&scriptable=true&as_list=true", nil).obj(t)["resource"].([]any)
		for _, want := range []string{"db._table.get.pre_process", "db._table.{table_name}.post.post_process", "db._table.contact.get.pre_process", "db._table.todo.post.queued"} {
			if !slices.Contains(list, any(want)) {
				t.Errorf("list lacks %s", want)
			}
		}
	})
	t.Run("system's own events and fallbacks", func(t *testing.T) {
		got := e.must(http.StatusOK, http.MethodGet, "event", nil).obj(t)
		sys := got["system"].(map[string]any)
		if ep := sys["system.role"].(map[string]any)["endpoints"].([]any); !slices.Contains(ep, any("system.role.post")) {
			t.Errorf("system.role = %v", ep)
		}
		files := got["files"].(map[string]any)["files"].(map[string]any)["endpoints"].([]any)
		if len(files) != 5 {
			t.Errorf("files fallback = %v", files)
		}
		names := e.must(http.StatusOK, http.MethodGet, "event?services_only=true", nil).obj(t)["resource"].([]any)
		if !slices.Contains(names, any("db")) || !slices.Contains(names, any("system")) {
			t.Errorf("services = %v", names)
		}
		e.must(http.StatusNotFound, http.MethodGet, "event?service=nope", nil)
	})

	t.Run("cache", func(t *testing.T) {
		be, _ := e.reg.Backend("db")
		fb := be.(*fakeBackend)
		list := e.must(http.StatusOK, http.MethodGet, "cache", nil).list(t)
		var names []string
		for _, x := range list {
			names = append(names, x["name"].(string))
		}
		if !slices.Contains(names, "db") || slices.Contains(names, "files") {
			t.Errorf("caching services = %v", names)
		}
		e.must(http.StatusOK, http.MethodDelete, "cache/db", nil)
		e.must(http.StatusOK, http.MethodDelete, "cache", nil)
		if fb.flushes != 2 {
			t.Errorf("flushes = %d", fb.flushes)
		}
		r := e.must(http.StatusNotImplemented, http.MethodDelete, "cache/files", nil)
		if r.errMsg(t) != "Service does not implement API controlled cache." {
			t.Errorf("message %q", r.errMsg(t))
		}
		e.must(http.StatusNotFound, http.MethodDelete, "cache/nope", nil)
		e.must(http.StatusNotFound, http.MethodDelete, "cache/_event/db._table.get", nil)
		_ = db
	})
}

func TestLimitCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
	u1 := e.createID("user", map[string]any{"email": "a@example.com", "name": "A"})
	u2 := e.createID("user", map[string]any{"email": "b@example.com", "name": "B"})
	inst := e.createID("limit", map[string]any{"name": "all", "type": "instance", "rate": 5, "period": "minute"})
	each := e.createID("limit", map[string]any{"name": "each", "type": "instance.each_user", "rate": 2, "period": "hour"})

	// Count requests the way the rate-limit stage does, in the shared store.
	var ls []limiter.Limit
	for _, l := range e.reg.Snapshot().Limits {
		ls = append(ls, toLimiter(l))
	}
	eng, err := limiter.New(ls, e.limits)
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range []int64{u1, u1, u2} {
		if _, err := eng.Evaluate(t.Context(), limiter.Request{UserID: uid, ServiceID: 1, Verb: "GET"}); err != nil {
			t.Fatal(err)
		}
	}
	counters := func() map[string]int64 {
		out := map[string]int64{}
		for _, c := range e.must(http.StatusOK, http.MethodGet, "limit_cache", nil).list(t) {
			k := c["name"].(string)
			if uid, ok := c["user_id"]; ok {
				k += ":" + itoa(num(t, uid))
			}
			out[k] = num(t, c["attempts"])
		}
		return out
	}
	want := map[string]int64{"all": 3, "each:" + itoa(u1): 2, "each:" + itoa(u2): 1}
	if diff := cmp.Diff(want, counters()); diff != "" {
		t.Error(diff)
	}
	one := e.must(http.StatusOK, http.MethodGet, "limit_cache/"+itoa(inst), nil).obj(t)
	if num(t, one["max"]) != 5 || num(t, one["remaining"]) != 2 || one["key"] != "instance.minute" {
		t.Errorf("one = %v", one)
	}
	e.must(http.StatusNotFound, http.MethodGet, "limit_cache/999", nil)
	if got := e.must(http.StatusOK, http.MethodDelete, "limit_cache/"+itoa(each), nil).obj(t); num(t, got["id"]) != each {
		t.Errorf("delete = %v", got)
	}
	want = map[string]int64{"all": 3, "each:" + itoa(u1): 0, "each:" + itoa(u2): 0}
	if diff := cmp.Diff(want, counters()); diff != "" {
		t.Error(diff)
	}
	e.must(http.StatusBadRequest, http.MethodDelete, "limit_cache", nil)
	e.must(http.StatusOK, http.MethodDelete, "limit_cache?force=true", nil)
	if counters()["all"] != 0 {
		t.Errorf("counters not reset")
	}

	t.Run("without a counter store limit_cache is 501", func(t *testing.T) {
		e.b.opts.LimitStore = nil
		defer func() { e.b.opts.LimitStore = e.limits }()
		e.must(http.StatusNotImplemented, http.MethodGet, "limit_cache", nil)
	})
}

func TestExtensions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
	ext := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"resource":"` + service.TargetFrom(r.Context()).Resource + `"}`))
	})
	typ := NewType(Options{Extensions: map[string]http.Handler{"widget": ext}})
	be, err := typ.New(t.Context(), e.sys, service.Deps{Store: e.st, Registry: e.reg})
	if err != nil {
		t.Fatal(err)
	}
	e.b = be.(*Backend)
	got := e.must(http.StatusOK, http.MethodGet, "widget/db/tables", nil).obj(t)
	if got["resource"] != "widget/db/tables" {
		t.Errorf("got %v", got)
	}
	e.must(http.StatusOK, http.MethodPatch, "widget", map[string]any{})
	if r := e.doAs(nil, http.MethodGet, "widget/db", nil); r.status != http.StatusForbidden {
		t.Errorf("anonymous: %d", r.status)
	}
	if r := e.must(http.StatusOK, http.MethodHead, "role", nil); len(r.body) == 0 {
		// httptest's recorder keeps the body; a real server drops it.
		t.Errorf("HEAD gave no answer")
	}
	for _, name := range []string{"role", "schema_contract", "a/b", ""} {
		if _, err := NewType(Options{Extensions: map[string]http.Handler{name: ext}}).New(t.Context(), e.sys, service.Deps{Store: e.st, Registry: e.reg}); err == nil {
			t.Errorf("extension %q accepted", name)
		}
	}
}
