package system

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

func TestServiceResource(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		e := newEnv(t, cfg)

		t.Run("list shows the built-in services", func(t *testing.T) {
			list := e.must(http.StatusOK, http.MethodGet, "service", nil).list(t)
			var names []string
			for _, s := range list {
				names = append(names, s["name"].(string))
				if _, ok := s["config"].(map[string]any); !ok {
					t.Errorf("service %v: config is not an object: %v", s["name"], s["config"])
				}
			}
			want := "system,api_docs,files,logs,db,email,user"
			if strings.Join(names, ",") != want {
				t.Fatalf("services = %v, want %s", names, want)
			}
		})

		v := e.version()
		reloads := e.reg.reloads
		id := e.createID("service", map[string]any{"name": "crm", "label": "CRM", "type": "sqlite", "config": map[string]any{"database": "crm.db"}})

		t.Run("a write bumps the version and reloads the registry", func(t *testing.T) {
			if e.version() <= v {
				t.Errorf("version %d not bumped from %d", e.version(), v)
			}
			if e.reg.reloads <= reloads {
				t.Errorf("registry not reloaded")
			}
			if e.reg.Snapshot().Service("crm") == nil {
				t.Errorf("the writer's registry does not see the new service")
			}
		})

		t.Run("get by id", func(t *testing.T) {
			got := e.must(http.StatusOK, http.MethodGet, "service/"+itoa(id), nil).obj(t)
			if got["name"] != "crm" || got["is_active"] != true || got["type"] != "sqlite" {
				t.Fatalf("got %v", got)
			}
			if cfg := got["config"].(map[string]any); cfg["database"] != "crm.db" {
				t.Fatalf("config %v", cfg)
			}
		})

		t.Run("fields", func(t *testing.T) {
			got := e.must(http.StatusOK, http.MethodGet, "service/1?fields=id,name,label", nil).obj(t)
			if len(got) != 3 || got["name"] != "system" || got["label"] != "System Management" {
				t.Fatalf("got %v", got)
			}
		})

		t.Run("patch merges the config and returns the record", func(t *testing.T) {
			got := e.must(http.StatusOK, http.MethodPatch, "service/"+itoa(id), map[string]any{"label": "Customers", "config": map[string]any{"port": 5432}}).obj(t)
			cfg := got["config"].(map[string]any)
			if got["label"] != "Customers" || cfg["database"] != "crm.db" || cfg["port"] == nil {
				t.Fatalf("got %v", got)
			}
			got = e.must(http.StatusOK, http.MethodPut, "service/"+itoa(id), map[string]any{"description": "via PUT"}).obj(t)
			if got["description"] != "via PUT" || got["label"] != "Customers" {
				t.Fatalf("PUT did not merge: %v", got)
			}
		})

		t.Run("validation lists every problem", func(t *testing.T) {
			r := e.must(http.StatusBadRequest, http.MethodPost, "service", map[string]any{"resource": []any{
				map[string]any{"name": "Bad Name", "type": "sqlite", "config": map[string]any{"port": 70000}},
			}})
			msg := r.errMsg(t)
			for _, want := range []string{"service name 'Bad Name' is invalid", "label is required", "database is required", "port must be between"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			ctx := r.obj(t)["error"].(map[string]any)["context"].(map[string]any)
			if ctx["name"] == nil || ctx["label"] == nil || ctx["config"] == nil {
				t.Errorf("context %v", ctx)
			}
		})

		t.Run("unknown and unimplemented types", func(t *testing.T) {
			r := e.must(http.StatusBadRequest, http.MethodPost, "service", map[string]any{"name": "x", "label": "X", "type": "nope"})
			if !strings.Contains(r.errMsg(t), "Service type 'nope' not found.") {
				t.Errorf("message %q", r.errMsg(t))
			}
			r = e.must(http.StatusNotImplemented, http.MethodPost, "service", map[string]any{"name": "x", "label": "X", "type": "cassandra"})
			if !strings.Contains(r.errMsg(t), "not implemented") {
				t.Errorf("message %q", r.errMsg(t))
			}
		})

		t.Run("duplicate name is a conflict", func(t *testing.T) {
			e.must(http.StatusConflict, http.MethodPost, "service", map[string]any{"name": "crm", "label": "Again", "type": "sqlite", "config": map[string]any{"database": "x"}})
		})

		t.Run("singleton types", func(t *testing.T) {
			r := e.must(http.StatusBadRequest, http.MethodPost, "service", map[string]any{"name": "users2", "label": "U", "type": "user"})
			if !strings.Contains(r.errMsg(t), "only one service of type 'user'") {
				t.Errorf("message %q", r.errMsg(t))
			}
		})

		t.Run("built-ins cannot be deleted, renamed or switched off", func(t *testing.T) {
			sys := e.reg.Snapshot().Service("system")
			r := e.must(http.StatusBadRequest, http.MethodDelete, "service/"+itoa(sys.ID), nil)
			if !strings.Contains(r.errMsg(t), "cannot be deleted") {
				t.Errorf("message %q", r.errMsg(t))
			}
			r = e.must(http.StatusBadRequest, http.MethodPatch, "service/"+itoa(sys.ID), map[string]any{"name": "sys", "is_active": false})
			for _, want := range []string{"cannot be renamed", "cannot be deactivated"} {
				if !strings.Contains(r.errMsg(t), want) {
					t.Errorf("message %q lacks %q", r.errMsg(t), want)
				}
			}
			// Built-ins of types this build does not implement can still be edited.
			files := e.reg.Snapshot().Service("files")
			e.must(http.StatusOK, http.MethodPatch, "service/"+itoa(files.ID), map[string]any{"label": "Files"})
		})

		t.Run("POST by id is refused", func(t *testing.T) {
			e.must(http.StatusBadRequest, http.MethodPost, "service/"+itoa(id), map[string]any{"label": "x"})
		})

		t.Run("delete by id returns the record", func(t *testing.T) {
			got := e.must(http.StatusOK, http.MethodDelete, "service/"+itoa(id), nil).obj(t)
			if got["name"] != "crm" {
				t.Fatalf("got %v", got)
			}
			e.must(http.StatusNotFound, http.MethodGet, "service/"+itoa(id), nil)
			if e.reg.Snapshot().Service("crm") != nil {
				t.Errorf("registry still has the deleted service")
			}
		})

		t.Run("the store holds what the API shows", func(t *testing.T) {
			if n := count[store.Service](e, "name = ?", "crm"); n != 0 {
				t.Errorf("%d rows left", n)
			}
		})
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
