package system

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
)

func TestScriptTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
	list := e.must(http.StatusOK, http.MethodGet, "script_type", nil).list(t)
	byName := map[string]map[string]any{}
	var names []string
	for _, x := range list {
		byName[x["name"].(string)] = x
		names = append(names, x["name"].(string))
	}
	if diff := cmp.Diff([]string{"lua", "javascript", "nodejs", "python3", "php"}, names); diff != "" {
		t.Fatal(diff)
	}
	// The embedded engines are always there.
	for _, n := range []string{"lua", "javascript"} {
		if x := byName[n]; x["available"] != true || x["sandboxed"] != true || x["supports_inline_execution"] != true {
			t.Errorf("%s = %v", n, x)
		}
	}
	if got := byName["javascript"]["aliases"]; !cmp.Equal(got, []any{"v8js"}) {
		t.Errorf("javascript aliases = %v", got)
	}
	got := e.must(http.StatusOK, http.MethodGet, "script_type/v8js?fields=name,available", nil).obj(t)
	if diff := cmp.Diff(map[string]any{"name": "javascript", "available": true}, got); diff != "" {
		t.Error(diff)
	}
	e.must(http.StatusNotFound, http.MethodGet, "script_type/cobol", nil)
	e.must(http.StatusBadRequest, http.MethodGet, "script_type?fields=secret", nil)
	e.must(http.StatusMethodNotAllowed, http.MethodPost, "script_type", nil)
	// It is in the system OpenAPI document.
	doc, err := e.b.OpenAPI(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/script_type", "/script_type/{name}"} {
		if doc.Paths.Find(p) == nil || doc.Paths.Find(p).Get == nil {
			t.Errorf("the OpenAPI document lacks GET %s", p)
		}
	}
	if doc.Components.Schemas["ScriptType"] == nil {
		t.Error("the OpenAPI document lacks the ScriptType schema")
	}
}

func TestEventsListScripts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, dbtest.Fresh(t, dialects.SQLite))
	e.must(http.StatusCreated, http.MethodPost, "event_script/db._table.contact.get.pre_process",
		map[string]any{"type": "v8js", "content": "return", "is_active": true})
	e.must(http.StatusCreated, http.MethodPost, "event_script/db._table.{table_name}.post.queued",
		map[string]any{"type": "lua", "content": "return", "is_active": false, "allow_event_modification": true})
	e.must(http.StatusCreated, http.MethodPost, "event_script/db.nowhere.get.pre_process",
		map[string]any{"type": "lua", "content": "return", "is_active": true})
	got := e.must(http.StatusOK, http.MethodGet, "event?service=db", nil).obj(t)["db"].(map[string]any)
	want := map[string]any{
		"db._table": map[string]any{"type": "api", "endpoints": []any{"db._table.get"}, "parameter": nil},
		"db._table.{table_name}": map[string]any{"type": "api", "endpoints": []any{"db._table.{table_name}.get", "db._table.{table_name}.post"},
			"parameter": map[string]any{"table_name": []any{"contact", "todo"}},
			"scripts": []any{
				map[string]any{"name": "db._table.contact.get.pre_process", "type": "javascript", "source": "record", "is_active": true,
					"allow_event_modification": false, "in_force": true},
				map[string]any{"name": "db._table.{table_name}.post.queued", "type": "lua", "source": "record", "is_active": false,
					"allow_event_modification": true, "in_force": false},
			}},
		"db.nowhere": map[string]any{"type": "api", "endpoints": []any{"db.nowhere.get"}, "parameter": nil,
			"scripts": []any{map[string]any{"name": "db.nowhere.get.pre_process", "type": "lua", "source": "record", "is_active": true,
				"allow_event_modification": false, "in_force": true}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}
